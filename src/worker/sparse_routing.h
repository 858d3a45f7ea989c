// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Sparse requests (docs/sparse.md): a call's keys deduplicated and grouped by the shard
// that owns each (ShardOfKey), then one PUSH_SPARSE or PULL_SPARSE per shard carrying that
// shard's distinct keys (and for a push their rows, the rows of a repeated key summed).
//
// Pure functions: no I/O, no clock. Thread-safe.

#ifndef KAIROS_WORKER_SPARSE_ROUTING_H_
#define KAIROS_WORKER_SPARSE_ROUTING_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kairos/buffer.h"
#include "worker/routing.h"

namespace kairos::internal {

// A call's keys as they travel: the distinct keys grouped by shard ("plan order").
struct SparsePlan {
  struct Group {
    int shard = 0;
    uint64_t first = 0;  // its keys are distinct[first, first + count)
    uint64_t count = 0;
  };
  std::vector<uint64_t> distinct;  // plan order
  std::vector<uint32_t> position;  // caller key i is distinct[position[i]]
  std::vector<Group> groups;       // by shard, only shards with keys
};

// A PUSH_SPARSE's or PULL_SPARSE's keys payload: the keys as little-endian uint64 in a
// Buffer's float storage (this is a little-endian build, as the floats are), and back.
Buffer KeysPayload(std::span<const uint64_t> keys);
inline std::span<const uint64_t> KeysOf(const Buffer& payload) {
  return {reinterpret_cast<const uint64_t*>(payload.data()),
          payload.size() * sizeof(float) / sizeof(uint64_t)};
}

// REQUIRES: num_shards > 0; keys.size() < 2^32.
SparsePlan PlanSparse(std::span<const uint64_t> keys, int num_shards);

// The rows of the distinct keys in plan order, each the sum of the caller's rows of its
// key (rows: keys.size() x width, row-major).
Buffer SumRows(const SparsePlan& plan, std::span<const float> rows, uint32_t width);

// One message per group: PUSH_SPARSE (with `rows` in plan order, sliced, not copied) or
// PULL_SPARSE (its reply, group g's rows, lands at g.first x width of the request's
// gathered result).
Batch RouteSparse(wire::Kind kind, uint32_t table, uint32_t width, const SparsePlan& plan,
                  const Buffer& rows, const Stamp& stamp,
                  const std::shared_ptr<RequestState>& state);

// A compressed table's push (TableSpec::compression): each PUSH_SPARSE's rows encoded
// (wire/encoding.h), without error feedback: a row's residual would have to be kept for
// every key the worker ever pushed. Nothing changes for kNone.
void EncodeSparseRows(Compression compression, Batch& batch);

}  // namespace kairos::internal

#endif  // KAIROS_WORKER_SPARSE_ROUTING_H_
