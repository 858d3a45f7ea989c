// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// PushMerger: client-side merging of pushes (TableSpec::merge_pushes). On the worker's I/O
// thread, a push message to a merging table does not leave at once: it waits, one per
// chunk range (one per shard for a sparse table), until the end of the thread's pass over
// what the callers posted and what the sockets brought (Transport::SetBatchHandler). A push
// to the same table, range, clock and scale that comes in meanwhile is added into it (a
// sparse one: its rows into the rows of the same keys, its other keys added) instead of
// being sent; its request then
// completes, or fails, with the message it joined (Part::merged). Anything else for that
// shard (a pull, a CLOCK, an assign) first sends the shard's waiting pushes, in the order
// they began to wait, so a read still sees every push issued before it. Waiting pushes of
// different ranges may reach the shard in another order than their own: they change
// different chunks, with no read between them, so the order changes nothing.
//
// The first merge copies the waiting push's values into a buffer of the merger's own (the
// caller's memory is never written); each further push adds into it.
//
// Thread-safety: none; the worker's I/O thread owns it (and the node's destructor, once
// the I/O thread has stopped).

#ifndef KAIROS_WORKER_PUSH_MERGER_H_
#define KAIROS_WORKER_PUSH_MERGER_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "wire/message.h"
#include "worker/range_key.h"
#include "worker/routing.h"
#include "worker/summed_rows.h"

namespace kairos::internal {

class PushMerger {
 public:
  // Where a push goes once it stops waiting: registered and sent (WorkerNode).
  using Send = absl::FunctionRef<void(Part, Message)>;

  explicit PushMerger(int num_shards) : waiting_(static_cast<std::size_t>(num_shards)) {}

  // Whether `message` (with `part`) may wait to be merged: a PUSH to a shard of float32
  // values in one payload, or a PUSH_SPARSE of float32 rows, whose reply carries nothing
  // (not an eager push+pull). The caller checks that its table merges
  // (TableInfo::merge_pushes).
  static bool Mergeable(const Part& part, const Message& message);

  // Holds the push (REQUIRES: Mergeable): added into the waiting push of the same range
  // when that one has the same clock and scale and a deadline no later than this one's;
  // otherwise, with one of the range waiting, the shard's waiting pushes go to `send`
  // first; then this one waits.
  void Hold(Part part, Message message, Send send);
  // The shard's waiting pushes, if any, go to `send`: before anything else is sent to it.
  void Release(int shard, Send send);
  // Every waiting push goes to `send` (the end of a pass).
  void ReleaseAll(Send send);
  // Fails the waiting pushes (and those merged into them) with `status`, and forgets them.
  void FailAll(const absl::Status& status);

  // Pushes added into another one's message so far.
  uint64_t merged() const { return merged_; }
  // Whether any push is waiting.
  bool empty() const { return waiting_count_ == 0; }

 private:
  struct Waiting {
    Part part;
    Message message;
    bool owned = false;  // the values are the merger's buffer (a merge happened)
    // A sparse push that others joined: the rows by key, put into the message when it
    // leaves.
    std::optional<SummedRows> rows{};
  };
  // Whether `next` can be added into `w`.
  static bool Joins(const Waiting& w, const Part& part, const Message& next);
  void Add(Waiting& w, Part part, const Message& next);

  // By shard, in the order they began to wait; `index_` finds one by its shard and range.
  std::vector<std::vector<Waiting>> waiting_;
  absl::flat_hash_map<std::pair<int, RangeKey>, std::size_t> index_;  // -> waiting_[shard]
  int waiting_count_ = 0;
  uint64_t merged_ = 0;
};

}  // namespace kairos::internal

#endif  // KAIROS_WORKER_PUSH_MERGER_H_
