// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the input-checking helpers: saturating arithmetic, the non-finite scan (every
// position, every kind of bad value, blocks on both sides of a boundary), the memory
// budget, and the bounded log-once set.

#include "common/limits.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

TEST(SaturatingTest, SaturatesInsteadOfWrapping) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(SaturatingAdd(2, 3), 5u);
  EXPECT_EQ(SaturatingAdd(max, 1), max);
  EXPECT_EQ(SaturatingMul(uint64_t{1} << 40, 4), uint64_t{1} << 42);
  EXPECT_EQ(SaturatingMul(uint64_t{1} << 62, 4), max);
  EXPECT_EQ(SaturatingMul(0, max), 0u);
}

TEST(FirstNonFiniteTest, FindsTheFirstBadValueAnywhere) {
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::signaling_NaN(),
                       std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity(), -std::nanf("0x7")};
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1024}, std::size_t{1025},
                        std::size_t{5000}}) {
    std::vector<float> v(n, 1.5f);
    EXPECT_EQ(FirstNonFinite(v), n);
    for (std::size_t at : {std::size_t{0}, n / 2, n - 1}) {
      for (float b : bad) {
        v[at] = b;
        EXPECT_EQ(FirstNonFinite(v), at) << n << " " << at;
        v[at] = 1.5f;
      }
    }
    if (n > 3) {
      v[n - 1] = bad[0];
      v[2] = bad[2];
      EXPECT_EQ(FirstNonFinite(v), 2u);  // the first one
    }
  }
  EXPECT_EQ(FirstNonFinite({}), 0u);
  // The largest finite values, denormals and zeros are finite.
  const std::vector<float> edge = {std::numeric_limits<float>::max(),
                                   std::numeric_limits<float>::lowest(),
                                   std::numeric_limits<float>::denorm_min(), -0.0f, 0.0f};
  EXPECT_EQ(FirstNonFinite(edge), edge.size());
}

TEST(MemoryTest, TheDefaultBudgetIsFourFifthsOfUsableMemory) {
  const uint64_t usable = UsableMemoryBytes();
  EXPECT_GT(usable, uint64_t{64} << 20);
  EXPECT_EQ(DefaultMemoryBudget(), usable / 5 * 4);
}

TEST(LogOnceTest, LogsEachPeerOnceAndStaysBounded) {
  LogOnce log(3);
  EXPECT_EQ(log.Check(10), LogOnce::Verdict::kLog);
  EXPECT_EQ(log.Check(10), LogOnce::Verdict::kQuiet);
  EXPECT_EQ(log.Check(11), LogOnce::Verdict::kLog);
  EXPECT_EQ(log.Check(12), LogOnce::Verdict::kLog);
  EXPECT_EQ(log.Check(13), LogOnce::Verdict::kLogLast);  // full: said once
  EXPECT_EQ(log.Check(14), LogOnce::Verdict::kQuiet);
  EXPECT_EQ(log.Check(11), LogOnce::Verdict::kQuiet);
}

}  // namespace
}  // namespace kairos::internal
