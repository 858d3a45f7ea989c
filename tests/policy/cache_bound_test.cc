// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "policy/cache_bound.h"

#include <gtest/gtest.h>

namespace kairos::policy {
namespace {

TEST(CacheBoundTest, BothLimitsHoldAtTheirEdge) {
  const CacheBound b{/*cache_clocks=*/2, /*staleness=*/3};
  // Read at 10 when the slowest was at 8.
  EXPECT_TRUE(b.Serves(10, 10, 8));
  EXPECT_TRUE(b.Serves(11, 10, 8));   // 11 - 8 = 3 = s
  EXPECT_FALSE(b.Serves(12, 10, 8));  // 12 - 8 > s although 12 - 10 = cache_clocks
  // The slowest was level with the read: the table's own limit decides.
  EXPECT_TRUE(b.Serves(12, 10, 10));
  EXPECT_FALSE(b.Serves(13, 10, 10));
  // A read before the copy's own clock (a worker that went back) never takes it.
  EXPECT_FALSE(b.Serves(9, 10, 8));
}

TEST(CacheBoundTest, BspServesOnlyWhileEveryoneIsLevel) {
  const CacheBound b{5, 0};
  EXPECT_TRUE(b.Serves(4, 4, 4));
  EXPECT_FALSE(b.Serves(5, 4, 4));
  EXPECT_FALSE(b.Serves(4, 4, 3));
}

TEST(CacheBoundTest, AspHasOnlyTheTablesLimit) {
  const CacheBound b{3, kUnbounded};
  EXPECT_TRUE(b.Serves(103, 100, 0));
  EXPECT_FALSE(b.Serves(104, 100, 0));
  EXPECT_FALSE((CacheBound{0, kUnbounded}.Serves(100, 100, 100)));
}

TEST(CacheBoundTest, GateStalenessOfEachGate) {
  EXPECT_EQ(GateStaleness("bsp"), 0);
  EXPECT_EQ(GateStaleness("asp"), kUnbounded);
  EXPECT_EQ(GateStaleness("ssp:s=3"), 3);
  EXPECT_EQ(GateStaleness("ssp:s=3+pull=eager"), 3);
  EXPECT_EQ(GateStaleness("dssp:s=3,r=12"), 3) << "the lower bound";
  EXPECT_EQ(GateStaleness("not a policy"), 0);
}

}  // namespace
}  // namespace kairos::policy
