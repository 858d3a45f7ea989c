// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The BSP job of the durability tests (checkpoints, server restarts): a dense table "w" of
// 300 elements with momentum and a sparse table "emb" of rows of 3 with adagrad, chunks of
// 64 elements; each iteration a worker pushes a gradient of both (its own, by rank and
// iteration) and ends its clock. Rank 0 reads every value at the end, which the tests
// compare bit for bit between runs.

#ifndef KAIROS_TESTS_CLUSTER_TWO_TABLE_JOB_H_
#define KAIROS_TESTS_CLUSTER_TWO_TABLE_JOB_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kairos/kairos.h"

namespace kairos::testing {

inline constexpr uint64_t kDense = 300;
inline constexpr uint64_t kKeys = 64;
inline constexpr uint32_t kWidth = 3;

inline float Gradient(int rank, int t, uint64_t i) {
  return std::sin(0.37f * static_cast<float>(i) + 1.3f * static_cast<float>(t) +
                  0.5f * static_cast<float>(rank));
}

// Keys rank pushes at iteration t: 16 of 0..63, overlapping between the workers.
inline std::vector<uint64_t> KeysOf(int rank, int t) {
  std::vector<uint64_t> keys;
  for (uint64_t j = 0; j < 16; ++j) keys.push_back((j * 5 + 7 * t + 3 * rank) % kKeys);
  return keys;
}

inline JobConfig TwoTableJob() {
  JobConfig job;
  job.policy = "bsp";
  job.chunk_elements = 64;
  job.tables.push_back({"w", kDense, Initializer::Constant(0.25f), {"momentum", 0.05f}});
  job.tables.push_back(TableSpec::Sparse("emb", kWidth, Initializer::Normal(0.0f, 0.1f, 9),
                                         {"adagrad", 0.1f}));
  return job;
}

// Iteration t of worker `w`: a dense push, a sparse push, the clock.
inline absl::Status PushIteration(Worker& w, int t) {
  const int rank = w.rank();
  std::vector<float> grad(kDense);
  for (uint64_t i = 0; i < kDense; ++i) grad[i] = Gradient(rank, t, i);
  const std::vector<uint64_t> keys = KeysOf(rank, t);
  std::vector<float> rows;
  for (uint64_t k : keys) {
    for (uint32_t c = 0; c < kWidth; ++c) rows.push_back(Gradient(rank, t, k * 7 + c));
  }
  KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
  KAIROS_RETURN_IF_ERROR(w.PushSparse("emb", keys, rows));
  return w.AdvanceClock();
}

struct TableValues {
  std::vector<float> dense;
  std::vector<float> rows;  // keys 0..kKeys-1
};

// Every value of both tables, as `w` reads them now.
inline absl::StatusOr<TableValues> ReadAll(Worker& w) {
  TableValues v;
  v.dense.resize(kDense);
  KAIROS_RETURN_IF_ERROR(w.Pull("w", v.dense));
  std::vector<uint64_t> all;
  for (uint64_t k = 0; k < kKeys; ++k) all.push_back(k);
  v.rows.resize(kKeys * kWidth);
  KAIROS_RETURN_IF_ERROR(w.PullSparse("emb", all, v.rows));
  return v;
}

}  // namespace kairos::testing

#endif  // KAIROS_TESTS_CLUSTER_TWO_TABLE_JOB_H_
