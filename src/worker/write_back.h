// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// WriteBack: the pushes a worker holds back for its write-back tables
// (TableSpec::write_back_clocks, docs/performance.md "Write-back"). A held push is summed
// into the sum held for its range (a dense push) or into the rows held for its keys (a
// sparse push), per shard, and leaves later as one message: when the worker's clock is
// about to move too far past it, when a pull of its range (or of its sparse table) goes to
// the shard, or before anything else goes to that shard. What WriteBack decides is only
// what is held and how it leaves; WorkerNode decides when, and which clock the servers are
// told meanwhile (a worker's clock report must come after every push of the clocks it
// ends).
//
// Thread-safety: none; the worker's I/O thread owns it.

#ifndef KAIROS_WORKER_WRITE_BACK_H_
#define KAIROS_WORKER_WRITE_BACK_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "kairos/buffer.h"
#include "wire/message.h"
#include "worker/range_key.h"
#include "worker/routing.h"
#include "worker/summed_rows.h"

namespace kairos::internal {

class WriteBack {
 public:
  explicit WriteBack(int num_shards) : shards_(static_cast<std::size_t>(num_shards)) {}

  // Whether `message` can be held: a PUSH of float32 values in one payload or a PUSH_SPARSE
  // of float32 rows, to a shard, whose reply carries nothing (not an eager push+pull). The
  // caller checks that its table writes back.
  static bool Holdable(const Part& part, const Message& message);

  // Adds the push (REQUIRES: Holdable) into what is held for its shard; what it joins must
  // leave before the worker reports clock `due` (its table's write_back_clocks past the
  // push's clock; the earliest due of the pushes summed). A dense push whose scale differs
  // from the held sum of its range is not added: it returns false, and the caller sends
  // the shard's held pushes first and then holds it. True: held.
  bool Hold(int shard, const Message& push, int64_t due);

  // The shard's held pushes as messages (PUSH per range, PUSH_SPARSE per table, each with
  // the latest clock of what it sums; no request id yet), forgetting them.
  std::vector<Message> Take(int shard);
  // Only what a pull needs to see: the held sums of ranges that overlap dense `range`, or
  // the rows held for `keys` of sparse `table` on the shard (one PUSH_SPARSE, none when
  // none is held).
  std::vector<Message> TakeFor(int shard, const RangeKey& range);
  std::vector<Message> TakeRows(int shard, uint32_t table, std::span<const uint64_t> keys);
  // Everything held for `table` on the shard (before an assign or a learning rate of it).
  std::vector<Message> TakeTable(int shard, uint32_t table);

  // The smallest clock of a push held, and the earliest due; nullopt when nothing is held.
  std::optional<int64_t> oldest() const;
  std::optional<int64_t> due() const;
  bool empty() const { return held_ == 0; }
  // Pushes summed into one held before them.
  uint64_t summed() const { return summed_; }

 private:
  struct Sum {
    Buffer values;            // the worker's own buffer
    int64_t clock = 0;        // the latest of the pushes summed: the message's
    int64_t first_clock = 0;  // the earliest
    int64_t due = 0;
    float scale = 0.0f;  // the header's worker_scale (0: unset, 1)
    uint32_t sender = 0;
  };
  struct Rows {
    SummedRows rows;
    int64_t clock = 0;
    int64_t first_clock = 0;
    int64_t due = 0;
    uint32_t sender = 0;
  };
  struct Shard {
    std::map<std::tuple<uint32_t, uint64_t, uint64_t>, Sum> dense;  // by (table, offset, length)
    std::map<uint32_t, Rows> sparse;                                // by table
  };

  static Message DenseMessage(const RangeKey& range, Sum sum);
  static Message SparseMessage(uint32_t table, const Rows& rows);

  std::vector<Shard> shards_;
  int held_ = 0;  // sums and row sets held
  uint64_t summed_ = 0;
};

}  // namespace kairos::internal

#endif  // KAIROS_WORKER_WRITE_BACK_H_
