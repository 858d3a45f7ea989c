// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ChunkWork: where and in what order the float work of a shard's chunks runs. A chunk's
// work (apply an update, add into a round sum, share its values with a read) runs on the
// chunk's lane, or on the engine's thread for chunks smaller than inline_apply_bytes, so
// that two jobs of one chunk never race and run in the order they were decided. Pushes that
// queue up behind a busy lane are applied in one pass (Updater::ApplyMany), and a read runs
// on the engine's thread when the chunk's lane has none of the chunk's work.
//
// Thread-safety: Run, Read and Apply are called on the engine's thread only (they count a
// chunk's lane jobs, which only that thread adds); the jobs run where the host runs them.

#ifndef KAIROS_ENGINE_CHUNK_WORK_H_
#define KAIROS_ENGINE_CHUNK_WORK_H_

#include <atomic>
#include <cstdint>
#include <functional>

#include "engine/shard.h"

namespace kairos::internal {

class EngineHost;

class ChunkWork {
 public:
  // `host` runs the lane jobs and must outlive this.
  explicit ChunkWork(EngineHost* host) : host_(host) {}

  // Runs `job` where chunk `c`'s floats are worked on: at once for an inline chunk, else
  // on its lane.
  void Run(const ShardChunk& c, std::function<void()> job);
  // A read only shares the values (and resets VSGD's drift): it runs at once unless the
  // chunk's lane has work of the chunk that must come first; that saves two thread
  // hand-offs per pull.
  void Read(const ShardChunk& c, std::function<void()> job);
  // Adds a push to chunk `c`'s queue, and schedules a drain on its lane unless one is
  // scheduled already (it will take this push too). REQUIRES: `c` is not inline.
  void Apply(const ShardTable& t, ShardChunk& c, PendingApply p);
  // Runs `job` where chunk `c`'s floats are worked on: after every push and job of the
  // chunk decided before it, and before every one decided after it, pushes waiting in the
  // chunk's queue included (Run alone would let a push that arrives later join a drain
  // scheduled earlier, and overtake the job). For an inline chunk: at once.
  void RunInOrder(const ShardTable& t, ShardChunk& c, std::function<void()> job);

  // Pushes applied together with an earlier one of the same drain.
  uint64_t coalesced() const { return coalesced_.load(std::memory_order_relaxed); }

 private:
  // Queues `job` on chunk `c`'s lane, counted in ApplyQueue::lane_jobs until it has run.
  void OnLane(const ShardChunk& c, std::function<void()> job);
  // On the chunk's lane: applies every queued push in arrival order, consecutive pushes of
  // the same range in one pass, then answers them in order; a queued job runs in its place.
  void Drain(const ShardTable& t, ShardChunk& c);

  EngineHost* const host_;
  std::atomic<uint64_t> coalesced_{0};
};

}  // namespace kairos::internal

#endif  // KAIROS_ENGINE_CHUNK_WORK_H_
