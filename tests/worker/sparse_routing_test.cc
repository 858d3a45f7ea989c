// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Sparse routing on the worker: keys deduplicated and grouped by their shard, a push's rows
// of a repeated key summed, one message per shard with a key frame and (push) its rows.

#include "worker/sparse_routing.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "common/partition.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

TEST(PlanSparseTest, DistinctKeysGroupedByShardAndEveryCallerKeyMapped) {
  const std::vector<uint64_t> keys = {9, 1, 9, 42, 1, 7, ~uint64_t{0}};
  const SparsePlan plan = PlanSparse(keys, 3);
  ASSERT_EQ(plan.distinct.size(), 5u);
  ASSERT_EQ(plan.position.size(), keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(plan.distinct[plan.position[i]], keys[i]);
  uint64_t covered = 0;
  int last_shard = -1;
  for (const SparsePlan::Group& g : plan.groups) {
    EXPECT_GT(g.shard, last_shard);
    last_shard = g.shard;
    EXPECT_EQ(g.first, covered);
    for (uint64_t j = g.first; j < g.first + g.count; ++j) {
      EXPECT_EQ(ShardOfKey(plan.distinct[j], 3), g.shard);
    }
    covered += g.count;
  }
  EXPECT_EQ(covered, 5u);
}

TEST(PlanSparseTest, RepeatedKeysRowsAreSummed) {
  const std::vector<uint64_t> keys = {4, 4, 5};
  const SparsePlan plan = PlanSparse(keys, 1);
  const std::vector<float> rows = {1, 2, 10, 20, 100, 200};
  const Buffer summed = SumRows(plan, rows, 2);
  ASSERT_EQ(summed.size(), 4u);
  EXPECT_EQ(summed[plan.position[0] * 2], 11.0f);
  EXPECT_EQ(summed[plan.position[0] * 2 + 1], 22.0f);
  EXPECT_EQ(summed[plan.position[2] * 2], 100.0f);
}

TEST(RouteSparseTest, OneMessagePerShardWithItsKeysAndRows) {
  const std::vector<uint64_t> keys = {0, 1, 2, 3, 4, 5, 6, 7};
  const SparsePlan plan = PlanSparse(keys, 2);
  std::vector<float> rows(keys.size());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<float>(keys[i]);
  const Buffer summed = SumRows(plan, rows, 1);
  auto state = std::make_shared<RequestState>(RequestLabel{"sparse push", "emb", 0, 8},
                                              absl::InfiniteFuture(),
                                              static_cast<int>(plan.groups.size()));
  const Batch batch = RouteSparse(wire::PUSH_SPARSE, 3, 1, plan, summed,
                                  Stamp{.sender = 4, .clock = 2, .first_id = 100}, state);
  ASSERT_EQ(batch.size(), 2u);
  for (std::size_t b = 0; b < batch.size(); ++b) {
    const auto& [part, m] = batch[b];
    EXPECT_EQ(m.header.kind(), wire::PUSH_SPARSE);
    EXPECT_EQ(m.header.request_id(), 100 + b);
    EXPECT_EQ(m.header.table(), 3u);
    ASSERT_EQ(m.payloads.size(), 2u);
    const uint64_t n = m.header.length();
    ASSERT_EQ(m.payloads[0].size(), 2 * n);
    ASSERT_EQ(m.payloads[1].size(), n);
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t key;
      std::memcpy(&key, reinterpret_cast<const char*>(m.payloads[0].data()) + 8 * i, 8);
      EXPECT_EQ(ShardOfKey(key, 2), part.shard);
      EXPECT_EQ(m.payloads[1][i], static_cast<float>(key));
    }
  }
}

}  // namespace
}  // namespace kairos::internal
