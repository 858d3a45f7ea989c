// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_sparse_bench's workloads (docs/benchmarks.md): the key batches, the local ceiling,
// and a tiny push/pull run through a real job whose rows are then read back exactly.

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "bench/kairos_workloads.h"
#include "bench/sparse_workloads.h"
#include "gtest/gtest.h"

namespace kairos::bench {
namespace {

TEST(MakeKeyBatchesTest, BatchesHoldDistinctKeysOfTheKeySpaceAndRepeatPerSeed) {
  const auto a = MakeKeyBatches(/*key_space=*/100, /*batch=*/100, /*count=*/3, /*seed=*/7);
  ASSERT_EQ(a.size(), 3u);
  absl::flat_hash_set<uint64_t> space;
  for (uint64_t i = 0; i < 100; ++i) space.insert(SparseKey(i));
  for (const auto& b : a) {
    ASSERT_EQ(b.size(), 100u);
    // A batch as large as the key space holds every key once.
    EXPECT_EQ(absl::flat_hash_set<uint64_t>(b.begin(), b.end()), space);
  }
  EXPECT_EQ(MakeKeyBatches(1000, 10, 3, 7), MakeKeyBatches(1000, 10, 3, 7));
  EXPECT_NE(MakeKeyBatches(1000, 10, 3, 7), MakeKeyBatches(1000, 10, 3, 8));
}

TEST(SparseKeyTest, DistinctIndicesGiveDistinctKeys) {
  absl::flat_hash_set<uint64_t> keys;
  for (uint64_t i = 0; i < 100000; ++i) keys.insert(SparseKey(i));
  EXPECT_EQ(keys.size(), 100000u);
}

TEST(LocalCeilingTest, CountsWholeBatches) {
  const auto batches = MakeKeyBatches(1000, 100, 4, 1);
  for (const SparseOp op : {SparseOp::kPull, SparseOp::kPush}) {
    const KeyThroughput t = RunLocalCeiling(op, 8, 1000, batches, Budget{0.0, 0.02});
    EXPECT_GT(t.keys, 0u);
    EXPECT_EQ(t.keys % 100, 0u);
    EXPECT_GT(t.keys_per_s, 0);
  }
}

TEST(SparsePipelinedTest, PushesUpdateThePopulatedRows) {
  ClusterSettings settings;
  settings.sparse_row_width = 4;
  auto cluster = BenchCluster::Create(2, 1, 0, settings);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE(PopulateSparseTable(**cluster, 4, 64).ok());
  const auto batches = MakeKeyBatches(64, 16, 4, 1);
  auto pushed = RunSparsePipelined(**cluster, SparseOp::kPush, 4, batches, 2, Budget{0.0, 0.05});
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  auto pulled = RunSparsePipelined(**cluster, SparseOp::kPull, 4, batches, 2, Budget{0.0, 0.05});
  ASSERT_TRUE(pulled.ok()) << pulled.status();
  EXPECT_EQ(pulled->keys % 16, 0u);
  // Every row started at 0 and each push subtracted lr (0.01, sgd) x 1e-6 per element, so a
  // row is a non-positive multiple of 1e-8, the same in each of its 4 elements.
  std::vector<uint64_t> keys;
  for (uint64_t i = 0; i < 64; ++i) keys.push_back(SparseKey(i));
  std::vector<float> rows(64 * 4);
  ASSERT_TRUE((*cluster)->worker(0).PullSparse(kTable, keys, rows).ok());
  int moved = 0;
  for (std::size_t r = 0; r < 64; ++r) {
    EXPECT_LE(rows[r * 4], 0.0f);
    moved += rows[r * 4] < 0.0f;
    for (int c = 1; c < 4; ++c) EXPECT_EQ(rows[r * 4 + c], rows[r * 4]) << "row " << r;
  }
  EXPECT_GT(moved, 0);  // the measured pushes reached the rows
  ASSERT_TRUE((*cluster)->Shutdown().ok());
}

}  // namespace
}  // namespace kairos::bench
