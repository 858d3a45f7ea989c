// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Sparse-table workloads (kairos_sparse_bench, docs/sparse.md): batches of row keys pushed
// and pulled through a real job over tcp loopback, the same lookups and updates done by one
// thread on an absl::flat_hash_map in this process (the local ceiling), and the resident
// memory of a kairos-server child process per million rows.
//
// Thread-safety: one call at a time; the Run* functions start and join their own threads.

#ifndef KAIROS_BENCH_SPARSE_WORKLOADS_H_
#define KAIROS_BENCH_SPARSE_WORKLOADS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/bench_report.h"
#include "bench/kairos_workloads.h"

namespace kairos::bench {

// The key of row index i of a key space: an odd multiplier, so distinct indices give
// distinct keys spread over all of 2^64 (as hashed feature ids are).
inline uint64_t SparseKey(uint64_t index) { return index * 0x9E3779B97F4A7C15ull; }

// `count` batches of `batch` distinct keys each, drawn uniformly from the first
// `key_space` rows (SparseKey), deterministic in `seed`. REQUIRES: batch <= key_space.
std::vector<std::vector<uint64_t>> MakeKeyBatches(uint64_t key_space, uint32_t batch, int count,
                                                  uint64_t seed);

// kPushNew: pushes of keys no request used before (each request's batch shifted by its
// number), so every row is created: a stream of new ids, as RowEviction is for.
enum class SparseOp { kPush, kPull, kPushNew };
const char* SparseOpName(SparseOp op);

// Keys per second (and the process's CPU time per key) of a measured interval.
struct KeyThroughput {
  uint64_t keys = 0;
  double seconds = 0;
  double keys_per_s = 0;
  double cpu_ns_per_key = 0;  // every thread of this process, user + system
};

// The local ceiling: one thread, an absl::flat_hash_map from key to row slot over rows of
// `width` floats, every row of `key_space` present. A pull finds each key of a batch and
// copies its row out; a push finds each key (inserting it if absent) and applies
// row -= 0.01 x gradient. Cycles through `batches` for budget.warmup_s + budget.seconds.
KeyThroughput RunLocalCeiling(SparseOp op, uint32_t width, uint64_t key_space,
                              const std::vector<std::vector<uint64_t>>& batches,
                              const Budget& budget);

// Fills every row of the first `key_space` keys of the cluster's sparse table (worker 0
// pushes zero gradients in batches of at most 16384 keys), so that the measured pulls read
// rows that exist and the pushes update them, as the ceiling does.
absl::Status PopulateSparseTable(BenchCluster& cluster, uint32_t width, uint64_t key_space);

// Every worker of `cluster` (a job of one sparse table of rows of `width` floats), on its
// own thread, keeps `window` PushSparseAsync or PullSparseAsync requests of one batch each
// outstanding, cycling through `batches` (worker i starts at batch i), for
// budget.warmup_s + budget.seconds, and counts the keys of the requests that complete in
// the measured interval.
absl::StatusOr<KeyThroughput> RunSparsePipelined(BenchCluster& cluster, SparseOp op,
                                                 uint32_t width,
                                                 const std::vector<std::vector<uint64_t>>& batches,
                                                 int window, const Budget& budget);

}  // namespace kairos::bench

#endif  // KAIROS_BENCH_SPARSE_WORKLOADS_H_
