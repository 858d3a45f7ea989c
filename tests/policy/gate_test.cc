// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the gates (SSP, with BSP = SSP(0) and ASP = SSP(unbounded)): exact cases, then
// property tests that drive random interleavings of W workers against a reference model.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/policy.h"

namespace kairos::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kT0 = absl::UnixEpoch();

PolicySpec SspSpec(Tick s) {
  PolicySpec spec;
  spec.gate.staleness = s;
  return spec;
}

std::unique_ptr<Gate> MakeSsp(Tick s, int num_workers) { return MakeGate(SspSpec(s), num_workers); }

TEST(SspGateTest, AdmitsReadAtMostSAheadOfSlowest) {
  auto gate = MakeSsp(2, 3);
  gate->OnClock(0, 2, kT0);
  EXPECT_TRUE(gate->Admits(0, 2));
  EXPECT_THAT(gate->Blockers(0, 2), IsEmpty());
}

// A worker that left and rejoins (Gate::OnRejoin's default): active again from the clock
// it is given, holding the others back from there.
TEST(SspGateTest, ARejoinedWorkerHoldsTheOthersFromItsNewClock) {
  auto gate = MakeSsp(0, 2);
  gate->OnClock(0, 1, kT0);
  gate->OnLeave(1, MemberState::kDead);
  gate->OnClock(0, 3, kT0);
  EXPECT_TRUE(gate->Admits(0, 3));  // nobody else is active
  gate->OnRejoin(1, 2, kT0);
  EXPECT_TRUE(gate->clocks().active(1));
  EXPECT_EQ(gate->clocks().clock(1), 2);
  EXPECT_EQ(gate->clocks().MinActiveClock(), 2);
  EXPECT_FALSE(gate->Admits(0, 3));
  EXPECT_THAT(gate->Blockers(0, 3), ElementsAre(1));
  EXPECT_TRUE(gate->Admits(1, 2));
  gate->OnClock(1, 3, kT0);
  EXPECT_TRUE(gate->Admits(0, 3));
}

TEST(SspGateTest, BlocksReadMoreThanSAhead) {
  auto gate = MakeSsp(2, 3);
  gate->OnClock(0, 3, kT0);
  gate->OnClock(1, 1, kT0);
  EXPECT_FALSE(gate->Admits(0, 3));
  // Clock 3 - s 2 = 1: worker 2 (clock 0) holds the minimum; worker 1 (clock 1) does not.
  EXPECT_THAT(gate->Blockers(0, 3), ElementsAre(2));
}

TEST(SspGateTest, ReleasesReadWhenSlowestAdvances) {
  auto gate = MakeSsp(1, 2);
  gate->OnClock(0, 2, kT0);
  EXPECT_FALSE(gate->Admits(0, 2));
  EXPECT_THAT(gate->Blockers(0, 2), ElementsAre(1));
  gate->OnClock(1, 1, kT0);
  EXPECT_TRUE(gate->Admits(0, 2));
  EXPECT_THAT(gate->Blockers(0, 2), IsEmpty());
}

TEST(SspGateTest, BlockersListEveryWorkerBelowTheBoundSorted) {
  auto gate = MakeSsp(1, 5);
  gate->OnClock(0, 5, kT0);
  gate->OnClock(1, 3, kT0);
  gate->OnClock(2, 4, kT0);
  gate->OnClock(3, 2, kT0);
  gate->OnClock(4, 1, kT0);
  EXPECT_FALSE(gate->Admits(0, 5));
  EXPECT_THAT(gate->Blockers(0, 5), ElementsAre(1, 3, 4));
}

TEST(SspGateTest, DeadWorkerLeavesTheMinimum) {
  auto gate = MakeSsp(0, 3);
  gate->OnClock(0, 1, kT0);
  gate->OnClock(1, 1, kT0);
  EXPECT_FALSE(gate->Admits(0, 1));
  EXPECT_THAT(gate->Blockers(0, 1), ElementsAre(2));
  gate->OnLeave(2, MemberState::kDead);
  EXPECT_TRUE(gate->Admits(0, 1));
  EXPECT_THAT(gate->Blockers(0, 1), IsEmpty());
  EXPECT_EQ(gate->clocks().state(2), MemberState::kDead);
}

TEST(SspGateTest, FinishedWorkerLeavesTheMinimum) {
  auto gate = MakeSsp(2, 2);
  gate->OnClock(0, 10, kT0);
  gate->OnLeave(1, MemberState::kFinished);
  EXPECT_TRUE(gate->Admits(0, 10));
  EXPECT_EQ(gate->clocks().state(1), MemberState::kFinished);
}

TEST(SspGateTest, AdmitsEveryReadWhenNoWorkerIsActive) {
  auto gate = MakeSsp(0, 2);
  gate->OnLeave(0, MemberState::kFinished);
  gate->OnLeave(1, MemberState::kDead);
  EXPECT_TRUE(gate->Admits(0, 100));
  EXPECT_TRUE(gate->Admits(1, kUnbounded));
  EXPECT_THAT(gate->Blockers(0, 100), IsEmpty());
}

TEST(SspGateTest, AnswersTheSameUntilTheNextEvent) {
  auto gate = MakeSsp(1, 2);
  gate->OnClock(0, 3, kT0);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(gate->Admits(0, 3));
  gate->OnClock(1, 2, kT0);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(gate->Admits(0, 3));
}

TEST(SspGateTest, PushesAndStaleClockReportsDoNotChangeDecisions) {
  auto gate = MakeSsp(0, 2);
  gate->OnClock(0, 2, kT0);
  gate->OnClock(1, 1, kT0);
  gate->OnPush(1, 1, kT0 + absl::Seconds(1));
  gate->OnClock(1, 0, kT0 + absl::Seconds(2));  // late duplicate: clocks never go back
  EXPECT_EQ(gate->clocks().clock(1), 1);
  EXPECT_FALSE(gate->Admits(0, 2));
  EXPECT_TRUE(gate->Admits(1, 1));
}

TEST(SspGateTest, HugeStalenessNearTheLimitDoesNotOverflow) {
  auto gate = MakeSsp(kUnbounded - 1, 2);
  gate->OnClock(0, kUnbounded, kT0);
  EXPECT_FALSE(gate->Admits(0, kUnbounded));  // kUnbounded - 0 > kUnbounded - 1
  EXPECT_THAT(gate->Blockers(0, kUnbounded), ElementsAre(1));
  EXPECT_TRUE(gate->Admits(0, kUnbounded - 1));
}

TEST(BspGateTest, ReadAtClockCWaitsUntilEveryActiveWorkerCompletedC) {
  auto gate = MakeGate(*ParsePolicySpec("bsp"), 3);
  EXPECT_TRUE(gate->Admits(0, 0));  // first read: nobody has to finish anything
  gate->OnClock(0, 1, kT0);
  gate->OnClock(1, 1, kT0);
  EXPECT_FALSE(gate->Admits(0, 1));
  EXPECT_THAT(gate->Blockers(0, 1), ElementsAre(2));
  gate->OnClock(2, 1, kT0);
  EXPECT_TRUE(gate->Admits(0, 1));
  EXPECT_TRUE(gate->Admits(2, 1));
}

TEST(AspGateTest, NeverWaitsEvenAtTheLargestClock) {
  auto gate = MakeGate(*ParsePolicySpec("asp"), 3);
  gate->OnClock(0, 1000000, kT0);
  EXPECT_TRUE(gate->Admits(0, 1000000));
  EXPECT_TRUE(gate->Admits(0, kUnbounded));
  EXPECT_THAT(gate->Blockers(0, kUnbounded), IsEmpty());
  EXPECT_THAT(gate->Blockers(0, 0), IsEmpty());
}

// ------------------------------------------------------------------ property tests

// Independent reference: clocks and membership as plain arrays.
struct Reference {
  std::vector<Tick> clock;
  std::vector<bool> active;

  Tick Min() const {
    Tick min = kUnbounded;
    for (size_t w = 0; w < clock.size(); ++w) {
      if (active[w]) min = std::min(min, clock[w]);
    }
    return min;
  }
  Tick Max() const {
    Tick max = 0;
    for (size_t w = 0; w < clock.size(); ++w) {
      if (active[w]) max = std::max(max, clock[w]);
    }
    return max;
  }
  bool Admits(Tick c, Tick s) const {
    const Tick min = Min();
    return min == kUnbounded || s == kUnbounded || c - min <= s;
  }
  std::vector<WorkerId> Blockers(Tick c, Tick s) const {
    std::vector<WorkerId> out;
    for (size_t w = 0; w < clock.size(); ++w) {
      if (active[w] && s != kUnbounded && clock[w] < c - s) out.push_back(static_cast<int>(w));
    }
    return out;
  }
};

// W workers loop "read at clock c (wait for the gate) -> compute -> report clock c + 1".
// Each step advances one random worker; a few workers die or finish on the way.
struct SimStats {
  int64_t admitted = 0;
  int64_t refused = 0;
};

SimStats RunRandomInterleaving(uint64_t seed, Tick s, int num_workers, int steps,
                               double leave_probability) {
  std::mt19937_64 rng(seed);
  auto gate = MakeSsp(s, num_workers);
  Reference ref{std::vector<Tick>(num_workers, 0), std::vector<bool>(num_workers, true)};
  std::vector<bool> running(num_workers, false);  // false: waiting for its read at clock[w]
  SimStats stats;
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  for (int step = 0; step < steps; ++step) {
    const WorkerId w = static_cast<WorkerId>(rng() % num_workers);
    if (!ref.active[w]) continue;
    if (coin(rng) < leave_probability) {
      const MemberState why = rng() % 2 ? MemberState::kDead : MemberState::kFinished;
      gate->OnLeave(w, why);
      ref.active[w] = false;
      continue;
    }
    if (running[w]) {  // finish the iteration, then issue the next read
      gate->OnPush(w, ref.clock[w], kT0 + absl::Milliseconds(step));
      ++ref.clock[w];
      gate->OnClock(w, ref.clock[w], kT0 + absl::Milliseconds(step));
      running[w] = false;
      continue;
    }
    const Tick c = ref.clock[w];
    const bool admitted = gate->Admits(w, c);
    EXPECT_EQ(admitted, ref.Admits(c, s)) << "seed " << seed << " step " << step;
    EXPECT_EQ(gate->Blockers(w, c), ref.Blockers(c, s)) << "seed " << seed;
    EXPECT_EQ(admitted, gate->Blockers(w, c).empty()) << "seed " << seed;
    if (admitted) {
      // The SSP bound: no read more than s ahead of the slowest active worker is served.
      if (s != kUnbounded && ref.Min() != kUnbounded) {
        EXPECT_LE(c - ref.Min(), s) << "seed " << seed;
      }
      running[w] = true;
      ++stats.admitted;
    } else {
      ++stats.refused;
    }
    if (s != kUnbounded && ref.Min() != kUnbounded) {
      EXPECT_LE(ref.Max() - ref.Min(), s + 1) << "seed " << seed;
    }
    EXPECT_EQ(gate->clocks().MinActiveClock(), ref.Min()) << "seed " << seed;
  }
  return stats;
}

TEST(SspGatePropertyTest, RandomInterleavingsNeverAdmitAReadMoreThanSAhead) {
  const Tick kStaleness[] = {0, 1, 2, 3, 5, kUnbounded};
  SimStats total;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const Tick s = kStaleness[seed % std::size(kStaleness)];
    const int num_workers = 1 + static_cast<int>(seed % 8);
    const SimStats stats = RunRandomInterleaving(seed, s, num_workers, 400, 0.0);
    total.admitted += stats.admitted;
    total.refused += stats.refused;
    if (s == kUnbounded) {
      EXPECT_EQ(stats.refused, 0) << "ASP never waits, seed " << seed;
    }
  }
  EXPECT_GT(total.refused, 0);  // the runs do exercise waiting
  EXPECT_GT(total.admitted, total.refused / 10);
}

TEST(SspGatePropertyTest, RandomInterleavingsWithDeparturesMatchTheReference) {
  const Tick kStaleness[] = {0, 1, 3, kUnbounded};
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const Tick s = kStaleness[seed % std::size(kStaleness)];
    RunRandomInterleaving(seed, s, 2 + static_cast<int>(seed % 7), 400, 0.01);
  }
}

// The slowest active worker's read is always admitted, so waiting never deadlocks.
TEST(SspGatePropertyTest, SlowestActiveWorkerIsNeverBlocked) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    const int num_workers = 1 + static_cast<int>(seed % 6);
    const Tick s = static_cast<Tick>(seed % 3);
    auto gate = MakeSsp(s, num_workers);
    for (int step = 0; step < 100; ++step) {
      const WorkerId w = static_cast<WorkerId>(rng() % num_workers);
      const Tick next = gate->clocks().clock(w) + 1;
      if (gate->Admits(w, next - 1)) gate->OnClock(w, next, kT0);
      const Tick min = gate->clocks().MinActiveClock();
      for (WorkerId v = 0; v < num_workers; ++v) {
        if (gate->clocks().clock(v) == min) {
          EXPECT_TRUE(gate->Admits(v, min));
        }
      }
    }
  }
}

// Membership: once a worker is dead or finished it never appears among the blockers, and
// the survivors are never held back by it, whatever its clock.
TEST(BspGatePropertyTest, DepartedWorkerNeverBlocks) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    const int num_workers = 2 + static_cast<int>(seed % 7);
    auto gate = MakeSsp(0, num_workers);
    std::vector<bool> gone(num_workers, false);
    for (int step = 0; step < 300; ++step) {
      const WorkerId w = static_cast<WorkerId>(rng() % num_workers);
      if (gone[w]) continue;
      if (rng() % 50 == 0) {
        gate->OnLeave(w, rng() % 2 ? MemberState::kDead : MemberState::kFinished);
        gone[w] = true;
        continue;
      }
      const Tick c = gate->clocks().clock(w);
      if (gate->Admits(w, c)) gate->OnClock(w, c + 1, kT0);
      for (WorkerId blocker : gate->Blockers(w, gate->clocks().clock(w))) {
        EXPECT_FALSE(gone[blocker]) << "seed " << seed;
      }
    }
    // Let every survivor but one leave: the last one then runs freely.
    WorkerId last = -1;
    for (WorkerId w = 0; w < num_workers; ++w) {
      if (gone[w]) continue;
      if (last >= 0) gate->OnLeave(last, MemberState::kDead);
      last = w;
    }
    if (last < 0) continue;
    const Tick start = gate->clocks().clock(last);
    for (Tick c = start; c < start + 20; ++c) {
      ASSERT_TRUE(gate->Admits(last, c)) << "seed " << seed;
      gate->OnClock(last, c + 1, kT0);
    }
  }
}

}  // namespace
}  // namespace kairos::policy
