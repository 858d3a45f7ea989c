// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// IdleSpin: the spin's length, and its backoff after spins that found nothing.

#include "transport/idle_spin.h"

#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

constexpr absl::Duration kLimit = absl::Microseconds(15);

// Calls Next `periods` times, each allowed spin ending with `found`: which periods spun.
std::vector<int> SpinningPeriods(IdleSpin& spin, int periods, bool found) {
  std::vector<int> spun;
  for (int i = 0; i < periods; ++i) {
    const absl::Duration d = spin.Next();
    if (d == absl::ZeroDuration()) continue;
    EXPECT_EQ(d, kLimit);
    spun.push_back(i);
    spin.Ended(found);
  }
  return spun;
}

TEST(IdleSpinTest, ANonPositiveLimitNeverSpins) {
  for (absl::Duration limit : {absl::ZeroDuration(), absl::Microseconds(-1)}) {
    IdleSpin spin(limit);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(spin.Next(), absl::ZeroDuration());
  }
}

TEST(IdleSpinTest, SpinsThatFindWorkSpinEveryTime) {
  IdleSpin spin(kLimit);
  EXPECT_EQ(SpinningPeriods(spin, 50, /*found=*/true).size(), 50u);
}

// After k misses in a row the next spin comes 2^(k-1) idle periods later: periods 0, 1, 3,
// 7, 15, 31, 63, then every 64 (the backoff stops growing at kMaxBackoff).
TEST(IdleSpinTest, MissesBackOffExponentiallyUpToOneSpinPer64Periods) {
  IdleSpin spin(kLimit);
  const std::vector<int> spun = SpinningPeriods(spin, 254, /*found=*/false);
  EXPECT_EQ(spun, (std::vector<int>{0, 1, 3, 7, 15, 31, 63, 127, 191}));
}

TEST(IdleSpinTest, OneSpinThatFindsWorkEndsTheBackoff) {
  IdleSpin spin(kLimit);
  SpinningPeriods(spin, 200, /*found=*/false);  // backed off to one spin per 64 periods
  int waited = 0;
  while (spin.Next() == absl::ZeroDuration()) ++waited;
  EXPECT_LE(waited, 63);
  spin.Ended(/*found=*/true);
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(spin.Next(), kLimit) << "period " << i;
    spin.Ended(true);
  }
  // A lone miss between finds costs no period (answers that come in bursts leave every
  // other spin empty); the second in a row skips one.
  ASSERT_EQ(spin.Next(), kLimit);
  spin.Ended(false);
  ASSERT_EQ(spin.Next(), kLimit);
  spin.Ended(false);
  EXPECT_EQ(spin.Next(), absl::ZeroDuration());
  EXPECT_EQ(spin.Next(), kLimit);
}

}  // namespace
}  // namespace kairos::internal
