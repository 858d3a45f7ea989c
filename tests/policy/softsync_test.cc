// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of n-softsync aggregation (SA-ASGD, docs/references.md SA-ASGD-2): exact cases, then
// random push sequences from random workers (exactly floor(pushes / c) buckets, each of c
// pushes), with departures against an independent model, and SA-ASGD's staleness property
// (SA-ASGD-3).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/policy.h"

namespace kairos::policy {
namespace {

using ::testing::IsEmpty;
using Kind = AggregateDecision::Kind;

std::unique_ptr<Aggregation> MakeSoftSync(int num_workers, int n) {
  absl::StatusOr<PolicySpec> spec = ParsePolicySpec(absl::StrCat("sa-asgd:n=", n));
  EXPECT_TRUE(spec.ok()) << spec.status();
  return MakeAggregation(*spec, num_workers);
}

// Pushes once from w and takes what is ready, as the server does after each accumulate.
std::vector<ReadyBucket> PushAndTake(Aggregation& agg, const WorkerClocks& clocks, WorkerId w,
                                     int64_t expected_bucket) {
  const AggregateDecision d = agg.OnPush(w, clocks.clock(w));
  EXPECT_EQ(d.kind, Kind::kAccumulate);
  EXPECT_EQ(d.bucket, expected_bucket);
  return agg.TakeReady(clocks);
}

void ExpectBucket(const std::vector<ReadyBucket>& ready, int64_t bucket, int count) {
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].bucket, bucket);
  EXPECT_EQ(ready[0].contributions, count);
  EXPECT_EQ(ready[0].divisor, static_cast<float>(count));
}

TEST(SoftSyncAggregationTest, ABucketHoldsFloorOfWorkersOverNPushes) {
  WorkerClocks clocks(8);
  auto agg = MakeSoftSync(8, 3);  // c = floor(8 / 3) = 2
  EXPECT_THAT(PushAndTake(*agg, clocks, 5, 0), IsEmpty());
  EXPECT_EQ(agg->num_pending(), 1);
  ExpectBucket(PushAndTake(*agg, clocks, 1, 0), 0, 2);
  EXPECT_EQ(agg->num_pending(), 0);
  EXPECT_THAT(PushAndTake(*agg, clocks, 1, 1), IsEmpty());
  ExpectBucket(PushAndTake(*agg, clocks, 1, 1), 1, 2);  // a fast worker fills it alone
}

TEST(SoftSyncAggregationTest, OneSoftSyncWaitsForWPushesAndWSoftSyncIsAsync) {
  WorkerClocks clocks(4);
  auto one = MakeSoftSync(4, 1);  // c = 4
  for (int i = 0; i < 3; ++i) EXPECT_THAT(PushAndTake(*one, clocks, i, 0), IsEmpty());
  ExpectBucket(PushAndTake(*one, clocks, 0, 0), 0, 4);

  auto async = MakeSoftSync(4, 4);  // c = 1: every push is its own update
  for (int i = 0; i < 5; ++i) ExpectBucket(PushAndTake(*async, clocks, i % 4, i), i, 1);
  auto beyond = MakeSoftSync(4, 9);  // n > W: c = max(1, 0) = 1
  ExpectBucket(PushAndTake(*beyond, clocks, 2, 0), 0, 1);
}

TEST(SoftSyncAggregationTest, ClocksDoNotMatter) {
  WorkerClocks clocks(2);
  auto agg = MakeSoftSync(2, 1);  // c = 2
  EXPECT_EQ(agg->OnPush(0, 17).bucket, 0);
  clocks.SetClock(0, 100);
  EXPECT_THAT(agg->TakeReady(clocks), IsEmpty());
  EXPECT_EQ(agg->OnPush(0, 0).bucket, 0);
  ExpectBucket(agg->TakeReady(clocks), 0, 2);
}

TEST(SoftSyncAggregationTest, BucketsCloseInOnPushAndWaitToBeTakenInOrder) {
  WorkerClocks clocks(2);
  auto agg = MakeSoftSync(2, 2);  // c = 1
  for (int i = 0; i < 3; ++i) EXPECT_EQ(agg->OnPush(0, 0).bucket, i);
  EXPECT_EQ(agg->num_pending(), 3);
  const std::vector<ReadyBucket> ready = agg->TakeReady(clocks);
  ASSERT_EQ(ready.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(ready[i].bucket, i);
  EXPECT_THAT(agg->TakeReady(clocks), IsEmpty());
  EXPECT_EQ(agg->num_pending(), 0);
}

TEST(SoftSyncAggregationTest, ADepartureShrinksTheBucketSoThatItStillFills) {
  WorkerClocks clocks(4);
  auto agg = MakeSoftSync(4, 1);  // c = 4
  for (int i = 0; i < 3; ++i) EXPECT_THAT(PushAndTake(*agg, clocks, i, 0), IsEmpty());
  clocks.SetState(3, MemberState::kDead);  // c = 3: the open bucket holds 3 already
  ExpectBucket(agg->TakeReady(clocks), 0, 3);

  EXPECT_THAT(PushAndTake(*agg, clocks, 0, 1), IsEmpty());
  clocks.SetState(2, MemberState::kFinished);  // c = 2: one push is not enough
  EXPECT_THAT(agg->TakeReady(clocks), IsEmpty());
  ExpectBucket(PushAndTake(*agg, clocks, 1, 1), 1, 2);

  clocks.SetState(2, MemberState::kActive);  // back to 3 active: c = 3
  clocks.SetState(3, MemberState::kActive);  // 4 active: c = 4
  EXPECT_THAT(agg->TakeReady(clocks), IsEmpty());
  for (int i = 0; i < 3; ++i) EXPECT_THAT(PushAndTake(*agg, clocks, i, 2), IsEmpty());
  ExpectBucket(PushAndTake(*agg, clocks, 3, 2), 2, 4);
}

TEST(SoftSyncAggregationTest, APartialBucketIsFlushedWhenNoWorkerIsActive) {
  WorkerClocks clocks(3);
  auto agg = MakeSoftSync(3, 1);  // c = 3
  EXPECT_THAT(PushAndTake(*agg, clocks, 0, 0), IsEmpty());
  EXPECT_THAT(PushAndTake(*agg, clocks, 1, 0), IsEmpty());
  for (WorkerId w = 0; w < 3; ++w) clocks.SetState(w, MemberState::kFinished);
  ExpectBucket(agg->TakeReady(clocks), 0, 2);
  EXPECT_EQ(agg->num_pending(), 0);
  EXPECT_THAT(agg->TakeReady(clocks), IsEmpty());  // nothing open: nothing to flush
  // A late push (a worker declared dead that comes back) is applied alone.
  ExpectBucket(PushAndTake(*agg, clocks, 2, 1), 1, 1);
}

TEST(SoftSyncAggregationTest, ZeroWorkersGivesBucketsOfOne) {
  WorkerClocks clocks(0);
  auto agg = MakeSoftSync(0, 2);
  EXPECT_EQ(agg->OnPush(0, 0).bucket, 0);
  ExpectBucket(agg->TakeReady(clocks), 0, 1);
}

// With every worker active, any sequence of pushes from any workers gives exactly
// floor(pushes / c) buckets, numbered 0, 1, ..., each of c pushes with divisor c; push k
// goes to bucket floor(k / c); the rest is one open bucket.
TEST(SoftSyncAggregationPropertyTest, AppliesExactlyFloorOfPushesOverCBuckets) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    const int workers = static_cast<int>(rng() % 12 + 1);
    const int n = static_cast<int>(rng() % 14 + 1);
    const int c = std::max(1, workers / n);
    const int pushes = static_cast<int>(rng() % 200);
    const bool take_every_push = rng() % 2;
    WorkerClocks clocks(workers);
    auto agg = MakeSoftSync(workers, n);
    std::vector<ReadyBucket> taken;
    for (int k = 0; k < pushes; ++k) {
      const WorkerId w = static_cast<WorkerId>(rng() % static_cast<uint64_t>(workers));
      clocks.SetClock(w, clocks.clock(w) + static_cast<Tick>(rng() % 2));
      ASSERT_EQ(agg->OnPush(w, clocks.clock(w)).bucket, k / c) << "seed " << seed;
      if (take_every_push || rng() % 5 == 0) {
        for (const ReadyBucket& r : agg->TakeReady(clocks)) taken.push_back(r);
      }
    }
    for (const ReadyBucket& r : agg->TakeReady(clocks)) taken.push_back(r);
    ASSERT_EQ(taken.size(), static_cast<size_t>(pushes / c)) << "seed " << seed;
    for (size_t i = 0; i < taken.size(); ++i) {
      EXPECT_EQ(taken[i].bucket, static_cast<int64_t>(i));
      EXPECT_EQ(taken[i].contributions, c);
      EXPECT_EQ(taken[i].divisor, static_cast<float>(c));
    }
    EXPECT_EQ(agg->num_pending(), pushes % c == 0 ? 0 : 1) << "seed " << seed;
  }
}

// An independent model of the documented rule, driven through random pushes, departures,
// returns and TakeReady calls: the same buckets with the same counts, every push in exactly
// one bucket, and everything flushed once no worker is active.
TEST(SoftSyncAggregationPropertyTest, MatchesTheModelWithDepartures) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    const int workers = static_cast<int>(rng() % 10 + 1);
    const int n = static_cast<int>(rng() % 5 + 1);
    WorkerClocks clocks(workers);
    auto agg = MakeSoftSync(workers, n);
    // The model.
    int c = std::max(1, workers / n);
    int64_t open = 0;
    int count = 0;
    std::vector<ReadyBucket> expected;
    std::vector<ReadyBucket> taken;
    int pushes = 0;
    for (int step = 0; step < 300; ++step) {
      const uint64_t event = rng() % 10;
      const WorkerId w = static_cast<WorkerId>(rng() % static_cast<uint64_t>(workers));
      if (event < 7) {
        ++pushes;
        ASSERT_EQ(agg->OnPush(w, 0).bucket, open) << "seed " << seed;
        if (++count >= c) {
          expected.push_back({open, count, static_cast<float>(count)});
          ++open;
          count = 0;
        }
      } else if (event < 9) {
        clocks.SetState(w, clocks.active(w) ? MemberState::kDead : MemberState::kActive);
      }
      if (event >= 7 || rng() % 2) {  // the server takes after every event
        c = std::max(1, clocks.num_active() / n);
        if (count > 0 && count >= c) {
          expected.push_back({open, count, static_cast<float>(count)});
          ++open;
          count = 0;
        }
        for (const ReadyBucket& r : agg->TakeReady(clocks)) taken.push_back(r);
      }
    }
    for (WorkerId w = 0; w < workers; ++w) clocks.SetState(w, MemberState::kFinished);
    for (const ReadyBucket& r : agg->TakeReady(clocks)) taken.push_back(r);
    if (count > 0) expected.push_back({open, count, static_cast<float>(count)});
    ASSERT_EQ(taken.size(), expected.size()) << "seed " << seed;
    int total = 0;
    for (size_t i = 0; i < taken.size(); ++i) {
      EXPECT_EQ(taken[i].bucket, expected[i].bucket) << "seed " << seed;
      EXPECT_EQ(taken[i].contributions, expected[i].contributions) << "seed " << seed;
      EXPECT_EQ(taken[i].divisor, expected[i].divisor) << "seed " << seed;
      EXPECT_GE(taken[i].divisor, 1.0f);
      total += taken[i].contributions;
    }
    EXPECT_EQ(total, pushes) << "seed " << seed;
    EXPECT_EQ(agg->num_pending(), 0);
  }
}

// SA-ASGD end to end on a scalar model (docs/references.md SA-ASGD-2 to SA-ASGD-4): the
// shard's version counts applied buckets, so every push of bucket k saw version k (no update
// happens between a push and its bucket's application), and theta follows
// theta <- theta - (1/c) sum alpha0 / max(sigma_l, 1) g_l per bucket.
TEST(SoftSyncAggregationPropertyTest, SaAsgdStalenessIsMeasuredAgainstBuckets) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    const int workers = static_cast<int>(rng() % 8 + 1);
    const int n = static_cast<int>(rng() % 4 + 1);
    const int c = std::max(1, workers / n);
    const PolicySpec spec = *ParsePolicySpec(absl::StrCat("sa-asgd:n=", n));
    auto agg = MakeAggregation(spec, workers);
    auto weighting = MakeWeighting(spec, workers);
    WorkerClocks clocks(workers);
    std::vector<uint64_t> version_read(static_cast<size_t>(workers), 0);
    uint64_t version = 0;
    double theta = 1.0;
    double expected_theta = 1.0;
    double sum = 0;
    double expected_sum = 0;
    for (int k = 0; k < 150; ++k) {
      const WorkerId w = static_cast<WorkerId>(rng() % static_cast<uint64_t>(workers));
      const double g = static_cast<double>(rng() % 100) / 10.0 - 5.0;
      const StalenessInfo info{.version_read = version_read[static_cast<size_t>(w)],
                               .version_now = version};
      const AggregateDecision d = agg->OnPush(w, 0);
      ASSERT_EQ(d.bucket, static_cast<int64_t>(version)) << "seed " << seed;
      sum += weighting->Scale(w, info) * g;
      expected_sum += g / std::max<double>(1.0, static_cast<double>(version - info.version_read));
      for (const ReadyBucket& r : agg->TakeReady(clocks)) {
        ASSERT_EQ(r.divisor, static_cast<float>(c));
        theta -= sum / r.divisor;
        expected_theta -= expected_sum / c;
        sum = expected_sum = 0;
        ++version;
      }
      version_read[static_cast<size_t>(w)] = version;  // the learner pulls after its push
    }
    EXPECT_NEAR(theta, expected_theta, 1e-4 * (1 + std::abs(expected_theta))) << "seed " << seed;
    EXPECT_EQ(version, static_cast<uint64_t>(150 / c));
  }
}

}  // namespace
}  // namespace kairos::policy
