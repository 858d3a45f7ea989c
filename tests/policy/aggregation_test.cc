// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the aggregations: immediate, and BSP's round-average (exact cases, then random
// rounds with membership changes, and an end-to-end check that BSP with round averaging
// equals sequential steps on the round means).

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/policy.h"

namespace kairos::policy {
namespace {

using ::testing::IsEmpty;
using Kind = AggregateDecision::Kind;

const absl::Time kT0 = absl::UnixEpoch();

std::unique_ptr<Aggregation> MakeRoundAverage() {
  return MakeAggregation(*ParsePolicySpec("bsp"), 0);
}

void SetClocks(WorkerClocks& clocks, const std::vector<Tick>& values) {
  for (size_t w = 0; w < values.size(); ++w) clocks.SetClock(static_cast<int>(w), values[w]);
}

TEST(ImmediateAggregationTest, AppliesEveryPushNow) {
  auto agg = MakeAggregation(*ParsePolicySpec("asp"), 2);
  for (Tick c = 0; c < 5; ++c) {
    const AggregateDecision d = agg->OnPush(static_cast<WorkerId>(c % 2), c);
    EXPECT_EQ(d.kind, Kind::kApplyNow);
  }
  WorkerClocks clocks(2);
  SetClocks(clocks, {9, 9});
  EXPECT_THAT(agg->TakeReady(clocks), IsEmpty());
  EXPECT_EQ(agg->num_pending(), 0);
}

TEST(RoundAverageAggregationTest, AccumulatesAPushIntoTheBucketOfItsClock) {
  auto agg = MakeRoundAverage();
  const AggregateDecision d = agg->OnPush(1, 7);
  EXPECT_EQ(d.kind, Kind::kAccumulate);
  EXPECT_EQ(d.bucket, 7);
  EXPECT_EQ(agg->num_pending(), 1);
}

TEST(RoundAverageAggregationTest, BucketIsReadyOnlyWhenEveryActiveWorkerPassedTheRound) {
  auto agg = MakeRoundAverage();
  WorkerClocks clocks(3);
  for (WorkerId w = 0; w < 3; ++w) agg->OnPush(w, 0);
  EXPECT_THAT(agg->TakeReady(clocks), IsEmpty());
  SetClocks(clocks, {1, 1, 0});
  EXPECT_THAT(agg->TakeReady(clocks), IsEmpty());
  SetClocks(clocks, {1, 1, 1});
  const std::vector<ReadyBucket> ready = agg->TakeReady(clocks);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].bucket, 0);
  EXPECT_EQ(ready[0].contributions, 3);
  EXPECT_EQ(ready[0].divisor, 3.0f);
  EXPECT_EQ(agg->num_pending(), 0);
}

TEST(RoundAverageAggregationTest, DivisorCountsDistinctWorkersNotPushes) {
  auto agg = MakeRoundAverage();
  WorkerClocks clocks(3);
  agg->OnPush(0, 0);
  agg->OnPush(0, 0);
  agg->OnPush(2, 0);
  SetClocks(clocks, {1, 1, 1});
  const std::vector<ReadyBucket> ready = agg->TakeReady(clocks);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].contributions, 3);
  EXPECT_EQ(ready[0].divisor, 2.0f);
}

TEST(RoundAverageAggregationTest, ReturnsReadyBucketsInOrderAndOnlyOnce) {
  auto agg = MakeRoundAverage();
  WorkerClocks clocks(2);
  agg->OnPush(0, 2);
  agg->OnPush(0, 0);
  agg->OnPush(1, 1);
  agg->OnPush(1, 3);
  SetClocks(clocks, {3, 3});
  const std::vector<ReadyBucket> ready = agg->TakeReady(clocks);
  ASSERT_EQ(ready.size(), 3u);
  EXPECT_EQ(ready[0].bucket, 0);
  EXPECT_EQ(ready[1].bucket, 1);
  EXPECT_EQ(ready[2].bucket, 2);
  EXPECT_THAT(agg->TakeReady(clocks), IsEmpty());
  EXPECT_EQ(agg->num_pending(), 1);  // bucket 3 waits for round 3 to end
}

TEST(RoundAverageAggregationTest, DepartedWorkerDoesNotHoldTheRound) {
  auto agg = MakeRoundAverage();
  WorkerClocks clocks(3);
  agg->OnPush(0, 0);
  agg->OnPush(1, 0);
  SetClocks(clocks, {1, 1, 0});
  EXPECT_THAT(agg->TakeReady(clocks), IsEmpty());
  clocks.SetState(2, MemberState::kDead);
  const std::vector<ReadyBucket> ready = agg->TakeReady(clocks);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].divisor, 2.0f);
}

TEST(RoundAverageAggregationTest, EveryBucketIsReadyWhenNoWorkerIsActive) {
  auto agg = MakeRoundAverage();
  WorkerClocks clocks(2);
  agg->OnPush(0, 4);
  agg->OnPush(1, 9);
  clocks.SetState(0, MemberState::kFinished);
  clocks.SetState(1, MemberState::kFinished);
  const std::vector<ReadyBucket> ready = agg->TakeReady(clocks);
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_EQ(ready[0].bucket, 4);
  EXPECT_EQ(ready[1].bucket, 9);
}

TEST(RoundAverageAggregationTest, LatePushForATakenRoundIsAppliedAlone) {
  auto agg = MakeRoundAverage();
  WorkerClocks clocks(2);
  agg->OnPush(0, 0);
  SetClocks(clocks, {1, 1});
  ASSERT_EQ(agg->TakeReady(clocks).size(), 1u);
  agg->OnPush(1, 0);  // e.g. from a worker that was declared dead and came back
  const std::vector<ReadyBucket> ready = agg->TakeReady(clocks);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].bucket, 0);
  EXPECT_EQ(ready[0].contributions, 1);
  EXPECT_EQ(ready[0].divisor, 1.0f);
}

// ------------------------------------------------------------------ property tests

// Random rounds: every worker pushes 0, 1 or 2 times per round, clocks advance in random
// order under the BSP gate, and workers leave. After every event the ready buckets are
// exactly the pending ones below the active minimum, with the reference's counts.
TEST(RoundAverageAggregationPropertyTest, BucketIsReadyExactlyWhenEveryActiveWorkerPassedIt) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    const int num_workers = 1 + static_cast<int>(seed % 8);
    auto gate = MakeGate(*ParsePolicySpec("bsp"), num_workers);
    auto agg = MakeRoundAverage();
    struct RefBucket {
      int contributions = 0;
      std::set<WorkerId> workers;
    };
    std::map<Tick, RefBucket> pending;
    std::set<Tick> taken;
    for (int step = 0; step < 300; ++step) {
      const WorkerId w = static_cast<WorkerId>(rng() % num_workers);
      if (!gate->clocks().active(w)) continue;
      const Tick c = gate->clocks().clock(w);
      const uint64_t roll = rng() % 100;
      if (roll < 2) {
        gate->OnLeave(w, MemberState::kDead);
      } else if (roll < 50) {
        const AggregateDecision d = agg->OnPush(w, c);
        ASSERT_EQ(d.kind, Kind::kAccumulate);
        ASSERT_EQ(d.bucket, c);
        ASSERT_EQ(taken.count(c), 0u) << "push into a round already applied, seed " << seed;
        ++pending[c].contributions;
        pending[c].workers.insert(w);
      } else if (gate->Admits(w, c)) {
        gate->OnClock(w, c + 1, kT0);
      }
      const Tick min = gate->clocks().MinActiveClock();
      std::vector<ReadyBucket> expected;
      while (!pending.empty() && pending.begin()->first < min) {
        const auto& [bucket, ref] = *pending.begin();
        expected.push_back({bucket, ref.contributions, static_cast<float>(ref.workers.size())});
        taken.insert(bucket);
        pending.erase(pending.begin());
      }
      const std::vector<ReadyBucket> ready = agg->TakeReady(gate->clocks());
      ASSERT_EQ(ready.size(), expected.size()) << "seed " << seed << " step " << step;
      for (size_t i = 0; i < ready.size(); ++i) {
        EXPECT_EQ(ready[i].bucket, expected[i].bucket) << "seed " << seed;
        EXPECT_EQ(ready[i].contributions, expected[i].contributions) << "seed " << seed;
        EXPECT_EQ(ready[i].divisor, expected[i].divisor) << "seed " << seed;
      }
      ASSERT_EQ(agg->num_pending(), static_cast<int>(pending.size())) << "seed " << seed;
    }
  }
}

// BSP end to end on a scalar parameter: each worker reads, computes a gradient on the value
// it read, pushes it and reports its clock, in a random interleaving. The owner applies the
// ready buckets after every event, before it re-checks the gate. Then every read at clock c
// sees exactly c rounds, and after round r the parameter equals r sequential steps on the
// mean of the W gradients of each round.
TEST(RoundAverageAggregationPropertyTest, BspEqualsSequentialStepsOnRoundMeans) {
  constexpr double kLearningRate = 0.1;
  constexpr int kRounds = 20;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    const int num_workers = 1 + static_cast<int>(seed % 8);
    auto gate = MakeGate(*ParsePolicySpec("bsp"), num_workers);
    auto agg = MakeRoundAverage();
    // Gradient of worker w in round r at parameter x: deterministic, different per worker.
    auto gradient = [](WorkerId w, Tick r, double x) { return x - (w + 1) * 0.5 + r * 0.01; };
    std::vector<double> reference{1.0};  // reference[r]: the parameter after r rounds
    for (Tick r = 0; r < kRounds; ++r) {
      double mean = 0;
      for (WorkerId w = 0; w < num_workers; ++w) mean += gradient(w, r, reference[r]);
      reference.push_back(reference[r] - kLearningRate * mean / num_workers);
    }
    double x = 1.0;
    std::map<Tick, double> sums;
    std::vector<double> read(num_workers, 0);
    std::vector<bool> has_read(num_workers, false);
    int done = 0;
    while (done < num_workers) {
      const WorkerId w = static_cast<WorkerId>(rng() % num_workers);
      const Tick c = gate->clocks().clock(w);
      if (c == kRounds) continue;
      if (!has_read[w]) {
        if (!gate->Admits(w, c)) continue;
        read[w] = x;
        has_read[w] = true;
        ASSERT_NEAR(read[w], reference[c], 1e-12) << "seed " << seed << " clock " << c;
        continue;
      }
      const AggregateDecision d = agg->OnPush(w, c);
      sums[d.bucket] += gradient(w, c, read[w]);
      gate->OnClock(w, c + 1, kT0);
      has_read[w] = false;
      if (c + 1 == kRounds) ++done;
      for (const ReadyBucket& b : agg->TakeReady(gate->clocks())) {
        x -= kLearningRate * sums[b.bucket] / b.divisor;
        sums.erase(b.bucket);
      }
    }
    EXPECT_NEAR(x, reference[kRounds], 1e-9) << "seed " << seed;
  }
}

}  // namespace
}  // namespace kairos::policy
