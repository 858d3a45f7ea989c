// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Host: processor sharing on a number of cores, with a background job of a lower priority,
// or jobs run to completion.

#include "sim/host.h"

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kairos::sim {
namespace {

const absl::Time kT0 = absl::UnixEpoch();
absl::Time At(double ms) { return kT0 + absl::Microseconds(1000 * ms); }
absl::Duration Ms(double ms) { return absl::Microseconds(1000 * ms); }
using Ids = std::vector<uint64_t>;

// Advances to the next end and takes what ended there.
Ids Next(Host& host, absl::Time* when) {
  *when = host.NextEnd();
  host.Advance(*when);
  return host.TakeEnded();
}

TEST(HostTest, AJobAloneRunsAtFullSpeed) {
  Host host(1, 0);
  EXPECT_EQ(host.NextEnd(), absl::InfiniteFuture());
  EXPECT_EQ(host.Add(Ms(2), At(1)), 1u);
  absl::Time when;
  EXPECT_EQ(Next(host, &when), Ids{1});
  EXPECT_EQ(when, At(3));
  EXPECT_EQ(host.running(), 0);
}

TEST(HostTest, JobsBeyondTheCoresShareThem) {
  // Three jobs of 1 ms on two cores each run at 2/3: all end at 1.5 ms.
  Host host(2, 0);
  host.Add(Ms(1), At(0));
  host.Add(Ms(1), At(0));
  host.Add(Ms(1), At(0));
  EXPECT_DOUBLE_EQ(host.Rate(), 2.0 / 3);
  absl::Time when;
  EXPECT_EQ(Next(host, &when), (Ids{1, 2, 3}));
  EXPECT_EQ(when, At(1.5));
}

TEST(HostTest, AJobThatArrivesSlowsTheOthersFromThen) {
  // One core: job 1 (2 ms) alone for 1 ms, then with job 2 (0.5 ms) at half speed: job 2
  // ends at 2 ms, job 1 (0.5 ms left at 2 ms) at 2.5 ms.
  Host host(1, 0);
  host.Add(Ms(2), At(0));
  EXPECT_EQ(host.NextEnd(), At(2));
  const uint64_t version = host.version();
  host.Add(Ms(0.5), At(1));
  EXPECT_NE(host.version(), version);  // the end asked for before is stale
  absl::Time when;
  EXPECT_EQ(Next(host, &when), Ids{2});
  EXPECT_EQ(when, At(2));
  EXPECT_EQ(Next(host, &when), Ids{1});
  EXPECT_EQ(when, At(2.5));
}

TEST(HostTest, RunToCompletionJobsWaitForACoreInTheOrderTheyCame) {
  // Two cores, jobs of 1, 2 and 1 ms at 0 and 0.5 ms at 0.5: jobs 1 and 2 run at full
  // speed; 3 and 4 wait; 3 takes job 1's core when it ends (1 ms) and ends at 2 ms, when 2
  // ends too; 4 starts then and ends at 2.5 ms. Shared instead, the first three would each
  // run at 2/3 at once (the control).
  Host host(2, 0, /*run_to_completion=*/true);
  host.Add(Ms(1), At(0));
  host.Add(Ms(2), At(0));
  host.Add(Ms(1), At(0));
  EXPECT_EQ(host.running(), 2);
  EXPECT_EQ(host.waiting(), 1);
  EXPECT_DOUBLE_EQ(host.Rate(), 1.0);
  host.Add(Ms(0.5), At(0.5));
  EXPECT_EQ(host.waiting(), 2);
  absl::Time when;
  EXPECT_EQ(Next(host, &when), Ids{1});
  EXPECT_EQ(when, At(1));
  EXPECT_EQ(host.running(), 2);  // job 3 started
  EXPECT_EQ(Next(host, &when), (Ids{2, 3}));
  EXPECT_EQ(when, At(2));
  EXPECT_EQ(Next(host, &when), Ids{4});
  EXPECT_EQ(when, At(2.5));
  EXPECT_EQ(host.running() + host.waiting(), 0);

  Host shared(2, 0);
  shared.Add(Ms(1), At(0));
  shared.Add(Ms(2), At(0));
  shared.Add(Ms(1), At(0));
  EXPECT_DOUBLE_EQ(shared.Rate(), 2.0 / 3);
  EXPECT_EQ(shared.waiting(), 0);
}

TEST(HostTest, RunToCompletionOnAFractionOfACoreRunsOneJobAtThatRate) {
  // 0.5 core: one job at a time, at half speed (a job of 1 ms takes 2).
  Host host(0.5, 0, /*run_to_completion=*/true);
  host.Add(Ms(1), At(0));
  host.Add(Ms(0), At(0));
  absl::Time when;
  EXPECT_EQ(Next(host, &when), Ids{1});
  EXPECT_EQ(when, At(2));
  EXPECT_EQ(Next(host, &when), Ids{2});  // the job of no work, once it had the core
  EXPECT_EQ(when, At(2));
}

TEST(HostTest, TheBackgroundTakesOnlyWhatTheJobsLeaveUntilTheyOutnumberTheCores) {
  // Two cores and a background of weight 0.5: one job runs at full speed (1 + 0.5 <= 2),
  // two at 2 / 2.5 = 0.8.
  Host host(2, 0.5);
  host.Add(Ms(1), At(0));
  EXPECT_DOUBLE_EQ(host.Rate(), 1.0);
  absl::Time when;
  EXPECT_EQ(Next(host, &when), Ids{1});
  EXPECT_EQ(when, At(1));
  host.Add(Ms(1), At(1));
  host.Add(Ms(1), At(1));
  EXPECT_DOUBLE_EQ(host.Rate(), 0.8);
  EXPECT_EQ(Next(host, &when), (Ids{2, 3}));
  EXPECT_EQ(when, At(2.25));
}

TEST(HostTest, AJobOfNoWorkEndsWhereItStarts) {
  Host host(1, 0);
  host.Add(Ms(1), At(0));
  host.Add(absl::ZeroDuration(), At(0.5));
  absl::Time when;
  EXPECT_EQ(Next(host, &when), Ids{2});
  EXPECT_EQ(when, At(0.5));
  EXPECT_EQ(Next(host, &when), Ids{1});
  EXPECT_EQ(when, At(1));  // job 1 alone again after the empty job
}

TEST(HostTest, AnEndedJobNotTakenHoldsTheNextEnd) {
  Host host(1, 0);
  host.Add(Ms(1), At(0));
  host.Add(Ms(3), At(0));
  host.Advance(At(2));  // job 1 ends at 2 (both at half speed)
  EXPECT_EQ(host.NextEnd(), At(2));
  host.Add(Ms(1), At(2));  // added before job 1 was taken: job 1 stays ended
  EXPECT_EQ(host.TakeEnded(), Ids{1});
  absl::Time when;
  EXPECT_EQ(Next(host, &when), Ids{3});  // 1 ms at 1/2
  EXPECT_EQ(when, At(4));
  EXPECT_EQ(Next(host, &when), Ids{2});  // 2 ms left: 1 at 1/2, the last alone
  EXPECT_EQ(when, At(5));
}

}  // namespace
}  // namespace kairos::sim
