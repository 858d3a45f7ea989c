// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Checkpointer: when a server writes its shard's checkpoints (docs/durability.md,
// "Checkpoints") and who waits for them. It keeps the schedule (every N clocks of the
// slowest worker, every fixed interval, and a last one when no worker is left or the job
// ends), takes one checkpoint at a time (a request while one is being written waits for
// that one; a periodic one then is skipped and counted), writes each on a thread of its
// own and tells the waiters. With deltas, it decides which checkpoints are deltas: after a
// whole one, up to Options::deltas deltas each chained to the one written before it; after
// a failed one, a whole one. The file format is engine/checkpoint.h's; the snapshot is
// the engine's (ShardEngine::Snapshot), handed in as a function so that the unit is
// tested without an engine.
//
// Thread-safety: thread-compatible. Every call is made on one thread (the server's I/O
// thread); the writer thread hands its result back through the `post` function given to
// the constructor, which must run it on that thread. counters() may be read anywhere.

#ifndef KAIROS_SERVER_CHECKPOINTER_H_
#define KAIROS_SERVER_CHECKPOINTER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/checkpoint.h"
#include "spdlog/logger.h"

namespace kairos::internal {

class Checkpointer {
 public:
  struct Options {
    std::string dir;           // ServerOptions::checkpoint_dir; empty: none taken
    bool sync = true;          // ServerOptions::checkpoint_sync
    int64_t every_clocks = 0;  // ServerOptions::checkpoint_every_clocks; 0: never
    absl::Duration every = absl::ZeroDuration();  // ServerOptions::checkpoint_every
    bool at_end = true;                           // ServerOptions::checkpoint_at_end
    int deltas = 0;                               // ServerOptions::checkpoint_deltas
  };
  struct Counters {
    uint64_t written = 0, failed = 0, skipped = 0;
    uint64_t deltas_written = 0;  // of `written`
    int64_t last_clock = -1;  // the clock of the last one written
  };
  using Done = std::function<void(absl::StatusOr<std::string>)>;
  // Takes a snapshot of the shard for a checkpoint, a delta of the checkpoint of clock
  // `delta_of` when that is not -1 (ShardEngine::SnapshotOptions), and calls its second
  // argument with it, on any thread.
  using TakeSnapshot =
      std::function<void(int64_t delta_of, std::function<void(std::shared_ptr<ShardSnapshot>)>)>;

  // `env` (the server's; it outlives this) writes the files and starts the writer thread.
  Checkpointer(const Env& env, Options options, std::function<void(std::function<void()>)> post,
               std::shared_ptr<spdlog::logger> log);
  // Joins the writer thread. The owner makes sure nothing posted by it runs afterwards
  // (the server stops its transport first).
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  // The job started: checkpoints of shard `shard` can be taken with `snapshot`; the clock
  // schedule counts from `clock` (the engine's SnapshotClock), the timed one from `now`.
  void Begin(int shard, TakeSnapshot snapshot, int64_t clock, absl::Time now);

  // A checkpoint now (or after the one being written). `done` gets the path or the error:
  // FailedPrecondition without a directory or before Begin. An empty `done` is a periodic
  // checkpoint: skipped and counted while another is written.
  void Request(Done done);
  // After a clock, a finish or a worker leaving: one when the smallest clock `clock`
  // reached the next multiple of every_clocks, and the last one when `all_left`.
  void AfterProgress(int64_t clock, bool all_left);
  // At each tick: the timed one when its interval has passed.
  void OnTick(absl::Time now);
  // The job ends: takes the last checkpoint (Options::at_end) if it was not taken, and
  // runs `then` once no checkpoint is being written (at once when none is).
  void Finish(std::function<void()> then);

  bool busy() const { return busy_; }
  Counters counters() const;

 private:
  void Write(std::shared_ptr<ShardSnapshot> snap);
  void Written(const absl::StatusOr<std::string>& path, int64_t clock, bool delta);
  void TakeLast();

  const Env& env_;
  const Options options_;
  const std::function<void(std::function<void()>)> post_;
  const std::shared_ptr<spdlog::logger> log_;
  TakeSnapshot snapshot_;  // empty before Begin
  int shard_ = -1;
  bool busy_ = false;
  bool last_taken_ = false;
  bool last_due_ = false;  // the last one, after the one being written
  int64_t next_clock_ = 0;
  int64_t chain_clock_ = -1;  // the clock of the last one written; -1: the next is whole
  int chain_deltas_ = 0;      // deltas written since the last whole one
  absl::Time next_time_ = absl::InfiniteFuture();
  std::vector<Done> waiters_;
  std::optional<std::function<void()>> then_;  // Finish's, while a checkpoint is written
  std::thread writer_;  // joined before the next starts and in the destructor
  std::atomic<uint64_t> written_{0}, failed_{0}, skipped_{0}, deltas_written_{0};
  std::atomic<int64_t> last_clock_{-1};
};

}  // namespace kairos::internal

#endif  // KAIROS_SERVER_CHECKPOINTER_H_
