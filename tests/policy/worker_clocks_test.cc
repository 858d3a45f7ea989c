// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of WorkerClocks: clocks, membership, and the minimum over active workers.

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/policy.h"

namespace kairos::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Workers 0, 1, ... active at the given clocks, set in worker order.
WorkerClocks ClocksAt(std::initializer_list<Tick> ticks) {
  WorkerClocks clocks(static_cast<int>(ticks.size()));
  WorkerId w = 0;
  for (Tick t : ticks) clocks.SetClock(w++, t);
  return clocks;
}

TEST(WorkerClocksTest, StartsWithEveryWorkerActiveAtZero) {
  WorkerClocks clocks(3);
  EXPECT_EQ(clocks.num_workers(), 3);
  EXPECT_EQ(clocks.num_active(), 3);
  for (WorkerId w = 0; w < 3; ++w) {
    EXPECT_EQ(clocks.clock(w), 0);
    EXPECT_EQ(clocks.state(w), MemberState::kActive);
    EXPECT_TRUE(clocks.active(w));
  }
  EXPECT_EQ(clocks.MinActiveClock(), 0);
  EXPECT_EQ(clocks.MaxActiveClock(), 0);
}

TEST(WorkerClocksTest, ContainsOnlyValidIds) {
  WorkerClocks clocks(2);
  EXPECT_FALSE(clocks.Contains(-1));
  EXPECT_TRUE(clocks.Contains(0));
  EXPECT_TRUE(clocks.Contains(1));
  EXPECT_FALSE(clocks.Contains(2));
}

TEST(WorkerClocksTest, ClocksNeverGoBack) {
  WorkerClocks clocks(1);
  clocks.SetClock(0, 5);
  clocks.SetClock(0, 3);
  EXPECT_EQ(clocks.clock(0), 5);
  clocks.SetClock(0, 5);
  EXPECT_EQ(clocks.clock(0), 5);
  clocks.SetClock(0, 6);
  EXPECT_EQ(clocks.clock(0), 6);
}

TEST(WorkerClocksTest, MinAndMaxAreOverActiveWorkersOnly) {
  WorkerClocks clocks = ClocksAt({7, 2, 9, 4});
  EXPECT_EQ(clocks.MinActiveClock(), 2);
  EXPECT_EQ(clocks.MaxActiveClock(), 9);
  clocks.SetState(1, MemberState::kDead);
  clocks.SetState(2, MemberState::kFinished);
  EXPECT_EQ(clocks.num_active(), 2);
  EXPECT_EQ(clocks.MinActiveClock(), 4);
  EXPECT_EQ(clocks.MaxActiveClock(), 7);
}

TEST(WorkerClocksTest, MinIsUnboundedAndMaxZeroWhenNoneIsActive) {
  WorkerClocks clocks(2);
  clocks.SetClock(0, 3);
  clocks.SetState(0, MemberState::kFinished);
  clocks.SetState(1, MemberState::kDead);
  EXPECT_EQ(clocks.num_active(), 0);
  EXPECT_EQ(clocks.MinActiveClock(), kUnbounded);
  EXPECT_EQ(clocks.MaxActiveClock(), 0);
  EXPECT_THAT(clocks.ActiveBelow(kUnbounded), IsEmpty());
}

TEST(WorkerClocksTest, ZeroWorkersHaveNoMinimum) {
  WorkerClocks clocks(0);
  EXPECT_EQ(clocks.num_workers(), 0);
  EXPECT_EQ(clocks.num_active(), 0);
  EXPECT_EQ(clocks.MinActiveClock(), kUnbounded);
}

TEST(WorkerClocksTest, ActiveBelowListsActiveWorkersBelowInIdOrder) {
  WorkerClocks clocks = ClocksAt({3, 1, 1, 2, 0});
  clocks.SetState(2, MemberState::kDead);
  EXPECT_THAT(clocks.ActiveBelow(2), ElementsAre(1, 4));
  EXPECT_THAT(clocks.ActiveBelow(3), ElementsAre(1, 3, 4));
  EXPECT_THAT(clocks.ActiveBelow(0), IsEmpty());
}

TEST(WorkerClocksTest, ReactivatedWorkerCountsAgain) {
  WorkerClocks clocks = ClocksAt({1, 8});
  clocks.SetState(0, MemberState::kDead);
  EXPECT_EQ(clocks.MinActiveClock(), 8);
  clocks.SetState(0, MemberState::kActive);
  EXPECT_EQ(clocks.MinActiveClock(), 1);
}

TEST(WorkerClocksTest, ClockOfLeftWorkerIsKept) {
  WorkerClocks clocks(2);
  clocks.SetState(1, MemberState::kFinished);
  clocks.SetClock(1, 4);
  EXPECT_EQ(clocks.clock(1), 4);
  EXPECT_EQ(clocks.MinActiveClock(), 0);
}

// The minimum is cached: it advances only once every active worker at it has moved on.
TEST(WorkerClocksTest, MinAdvancesWhenTheLastWorkerAtItMovesOn) {
  WorkerClocks clocks(3);
  clocks.SetClock(0, 2);
  EXPECT_EQ(clocks.MinActiveClock(), 0);
  clocks.SetClock(1, 1);
  EXPECT_EQ(clocks.MinActiveClock(), 0);
  clocks.SetClock(2, 1);
  EXPECT_EQ(clocks.MinActiveClock(), 1);  // the last worker at 0 moved on
  clocks.SetClock(1, 3);
  EXPECT_EQ(clocks.MinActiveClock(), 1);  // worker 2 is still at 1
  clocks.SetClock(2, 5);
  EXPECT_EQ(clocks.MinActiveClock(), 2);  // skips to the next clock present (worker 0)
  clocks.SetClock(0, 2);                  // not a rise: nothing changes
  EXPECT_EQ(clocks.MinActiveClock(), 2);
  clocks.SetClock(0, 1);  // lower: ignored
  EXPECT_EQ(clocks.MinActiveClock(), 2);
  EXPECT_EQ(clocks.clock(0), 2);
  clocks.SetClock(0, 9);
  EXPECT_EQ(clocks.MinActiveClock(), 3);
}

TEST(WorkerClocksTest, LeavingWorkersAtTheMinimumRaiseItOnlyWhenTheLastLeaves) {
  WorkerClocks clocks = ClocksAt({1, 1, 4, 6});
  EXPECT_EQ(clocks.MinActiveClock(), 1);
  clocks.SetState(0, MemberState::kDead);
  EXPECT_EQ(clocks.num_active(), 3);
  EXPECT_EQ(clocks.MinActiveClock(), 1);
  clocks.SetState(1, MemberState::kFinished);
  EXPECT_EQ(clocks.num_active(), 2);
  EXPECT_EQ(clocks.MinActiveClock(), 4);
  clocks.SetState(3, MemberState::kDead);  // above the minimum: the minimum stays
  EXPECT_EQ(clocks.MinActiveClock(), 4);
  clocks.SetState(2, MemberState::kDead);
  EXPECT_EQ(clocks.num_active(), 0);
  EXPECT_EQ(clocks.MinActiveClock(), kUnbounded);
}

TEST(WorkerClocksTest, TransitionsBetweenInactiveStatesChangeNothing) {
  WorkerClocks clocks = ClocksAt({3, 5});
  clocks.SetState(0, MemberState::kDead);
  clocks.SetState(0, MemberState::kFinished);
  clocks.SetState(0, MemberState::kDead);
  EXPECT_EQ(clocks.num_active(), 1);
  EXPECT_EQ(clocks.MinActiveClock(), 5);
  clocks.SetState(1, MemberState::kActive);  // already active: a no-op
  EXPECT_EQ(clocks.num_active(), 1);
  EXPECT_EQ(clocks.MinActiveClock(), 5);
}

TEST(WorkerClocksTest, ReactivatedWorkerJoinsOrLowersTheMinimum) {
  WorkerClocks clocks = ClocksAt({2, 2, 7});
  clocks.SetState(0, MemberState::kDead);
  clocks.SetState(1, MemberState::kDead);
  EXPECT_EQ(clocks.MinActiveClock(), 7);
  // A dead worker's clock still rises; it counts at that clock when it comes back.
  clocks.SetClock(1, 7);
  clocks.SetState(1, MemberState::kActive);  // joins the workers at the minimum
  EXPECT_EQ(clocks.MinActiveClock(), 7);
  EXPECT_EQ(clocks.num_active(), 2);
  clocks.SetClock(2, 8);  // worker 1 still holds the minimum at 7
  EXPECT_EQ(clocks.MinActiveClock(), 7);
  clocks.SetState(0, MemberState::kActive);  // lowers it
  EXPECT_EQ(clocks.MinActiveClock(), 2);
  EXPECT_EQ(clocks.num_active(), 3);
  clocks.SetClock(0, 10);
  EXPECT_EQ(clocks.MinActiveClock(), 7);
}

TEST(WorkerClocksTest, AllLeaveThenOneReturns) {
  WorkerClocks clocks = ClocksAt({4, 6});
  clocks.SetState(0, MemberState::kFinished);
  clocks.SetState(1, MemberState::kDead);
  EXPECT_EQ(clocks.MinActiveClock(), kUnbounded);
  clocks.SetState(1, MemberState::kActive);
  EXPECT_EQ(clocks.num_active(), 1);
  EXPECT_EQ(clocks.MinActiveClock(), 6);
}

TEST(WorkerClocksTest, ActiveWorkerAtUnboundedClock) {
  WorkerClocks clocks(2);
  clocks.SetClock(0, kUnbounded);
  EXPECT_EQ(clocks.MinActiveClock(), 0);
  clocks.SetClock(1, kUnbounded);
  EXPECT_EQ(clocks.MinActiveClock(), kUnbounded);
  EXPECT_EQ(clocks.num_active(), 2);
  clocks.SetState(0, MemberState::kDead);
  EXPECT_EQ(clocks.MinActiveClock(), kUnbounded);
  clocks.SetState(1, MemberState::kDead);
  EXPECT_EQ(clocks.MinActiveClock(), kUnbounded);
  EXPECT_EQ(clocks.num_active(), 0);
  clocks.SetState(0, MemberState::kActive);
  EXPECT_EQ(clocks.MinActiveClock(), kUnbounded);
  EXPECT_EQ(clocks.num_active(), 1);
}

// A brute-force model: every query is a scan of the plain clocks and states.
struct ClocksModel {
  std::vector<Tick> clocks;
  std::vector<MemberState> states;

  explicit ClocksModel(int n)
      : clocks(static_cast<size_t>(n), 0), states(static_cast<size_t>(n), MemberState::kActive) {}

  int NumActive() const {
    return static_cast<int>(std::count(states.begin(), states.end(), MemberState::kActive));
  }
  Tick Min() const {
    Tick min = kUnbounded;
    for (size_t w = 0; w < clocks.size(); ++w) {
      if (states[w] == MemberState::kActive) min = std::min(min, clocks[w]);
    }
    return min;
  }
  Tick Max() const {
    Tick max = 0;
    for (size_t w = 0; w < clocks.size(); ++w) {
      if (states[w] == MemberState::kActive) max = std::max(max, clocks[w]);
    }
    return max;
  }
  std::vector<WorkerId> Below(Tick clock) const {
    std::vector<WorkerId> below;
    for (size_t w = 0; w < clocks.size(); ++w) {
      if (states[w] == MemberState::kActive && clocks[w] < clock) {
        below.push_back(static_cast<WorkerId>(w));
      }
    }
    return below;
  }
};

// Property: over random sequences of SetClock (any worker, rising, equal or lower clocks,
// often the worker at the minimum, now and then kUnbounded) and SetState (any transition
// among the three states, including to the same state), MinActiveClock() and num_active()
// equal a brute-force scan after every step, as do the scanned queries and every clock.
TEST(WorkerClocksTest, CachedMinimumMatchesBruteForceOverRandomSequences) {
  constexpr std::array<MemberState, 3> kStates = {MemberState::kActive, MemberState::kDead,
                                                   MemberState::kFinished};
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    std::mt19937_64 rng(seed);
    const int num_workers = static_cast<int>(seed % 10);  // 0 .. 9
    // Share of steps that change a state: from rare (long runs of clock advances, as in a
    // training run) to frequent (membership churn).
    const int state_percent = static_cast<int>(1 + (seed % 4) * 10);
    const bool use_unbounded = seed % 5 == 0;
    WorkerClocks clocks(num_workers);
    ClocksModel model(num_workers);
    ASSERT_EQ(clocks.MinActiveClock(), model.Min()) << "seed " << seed;
    ASSERT_EQ(clocks.num_active(), model.NumActive()) << "seed " << seed;
    if (num_workers == 0) continue;
    std::uniform_int_distribution<int> pick_worker(0, num_workers - 1);
    std::uniform_int_distribution<int> percent(0, 99);
    std::uniform_int_distribution<int> pick_state(0, 2);
    std::uniform_int_distribution<int> delta(-3, 3);
    for (int step = 0; step < 400; ++step) {
      WorkerId w = pick_worker(rng);
      if (percent(rng) < state_percent) {
        const MemberState state = kStates[static_cast<size_t>(pick_state(rng))];
        clocks.SetState(w, state);
        model.states[static_cast<size_t>(w)] = state;
      } else {
        // Half of the clock reports go to a worker at the minimum (when one is active), so
        // the minimum advances often; the clock is near the worker's own, lower ones included.
        const Tick min = model.Min();
        if (min != kUnbounded && percent(rng) < 50) {
          for (WorkerId v = 0; v < num_workers; ++v) {
            if (model.states[static_cast<size_t>(v)] == MemberState::kActive &&
                model.clocks[static_cast<size_t>(v)] == min && percent(rng) < 60) {
              w = v;
              break;
            }
          }
        }
        Tick& model_clock = model.clocks[static_cast<size_t>(w)];
        Tick clock;
        if (use_unbounded && percent(rng) < 2) {
          clock = kUnbounded;
        } else if (model_clock == kUnbounded) {
          clock = static_cast<Tick>(step);
        } else {
          clock = std::max<Tick>(0, model_clock + delta(rng));
        }
        clocks.SetClock(w, clock);
        model_clock = std::max(model_clock, clock);
      }
      ASSERT_EQ(clocks.MinActiveClock(), model.Min()) << "seed " << seed << " step " << step;
      ASSERT_EQ(clocks.num_active(), model.NumActive()) << "seed " << seed << " step " << step;
      ASSERT_EQ(clocks.MaxActiveClock(), model.Max()) << "seed " << seed << " step " << step;
      const Tick probe = model.Min() == kUnbounded ? kUnbounded : model.Min() + 1;
      ASSERT_EQ(clocks.ActiveBelow(probe), model.Below(probe))
          << "seed " << seed << " step " << step;
      for (WorkerId v = 0; v < num_workers; ++v) {
        ASSERT_EQ(clocks.clock(v), model.clocks[static_cast<size_t>(v)]) << "seed " << seed;
        ASSERT_EQ(clocks.state(v), model.states[static_cast<size_t>(v)]) << "seed " << seed;
      }
    }
  }
}

}  // namespace
}  // namespace kairos::policy
