// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of DSSP (docs/references.md DSSP-1 to DSSP-7): the controller against the worked
// examples of DSSP-3 and against the O(r_max^2) definition of Algorithm 2; the gate on
// hand-made traces (exact and literal grants, strict and no bound, cold start, ties,
// departures); then property tests on virtual time: W workers of random speeds run against
// the gate and against a reference written as the paper's push/OK protocol (Algorithm 1).

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
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

using Grant = GateSpec::DsspGrant;
using Bound = GateSpec::DsspBound;

const absl::Time kT0 = absl::UnixEpoch();

absl::Time At(double seconds) { return kT0 + absl::Seconds(seconds); }

DsspHistory History(double latest, double previous) { return {At(latest), At(previous)}; }

GateSpec Dssp(Tick s_l, Tick r_max, Grant grant = Grant::kExact, Bound bound = Bound::kStrict) {
  return GateSpec{.kind = GateSpec::Kind::kDssp,
                  .staleness = s_l,
                  .r_max = r_max,
                  .grant = grant,
                  .bound = bound};
}

std::unique_ptr<Gate> MakeDssp(const GateSpec& gate, int num_workers) {
  PolicySpec spec;
  spec.gate = gate;
  EXPECT_TRUE(ValidatePolicySpec(spec).ok());
  return MakeGate(spec, num_workers);
}

// ------------------------------------------------------------------ the controller

TEST(DsspControllerTest, PapersTableRow1ExactHit) {
  // Sim_p = 10..14, Sim_s = 11, 13.5, 16, 18.5, 21: Sim_p[1] = Sim_s[0].
  EXPECT_EQ(DsspController(History(10, 9), History(8.5, 6), 4), 1);
}

TEST(DsspControllerTest, PapersTableRow2TieGoesToTheSmallestR) {
  // Sim_s = 11, 13, 15, ...: r = 1 and r = 3 both hit at distance 0.
  EXPECT_EQ(DsspController(History(10, 9), History(9, 7), 4), 1);
}

TEST(DsspControllerTest, PapersTableRow3SlowStragglerGivesALargeGrant) {
  // Sim_p = 10..22, Sim_s = 17, 25, ...: Sim_p[7] = 17.
  EXPECT_EQ(DsspController(History(10, 9), History(9, 1), 12), 7);
}

TEST(DsspControllerTest, RMaxZeroAlwaysAnswersZero) {
  EXPECT_EQ(DsspController(History(10, 9), History(9, 1), 0), 0);
}

TEST(DsspControllerTest, ZeroIntervalOfTheFastestTiesEveryRSoAnswersZero) {
  EXPECT_EQ(DsspController(History(10, 10), History(9, 1), 12), 0);
}

TEST(DsspControllerTest, ZeroIntervalOfTheSlowestAimsAtItsLatestTime) {
  // Every Sim_s[k] = 15: Sim_p[5] = 15.
  EXPECT_EQ(DsspController(History(10, 9), History(15, 15), 12), 5);
}

TEST(DsspControllerTest, TargetBeyondTheRangeGivesRMax) {
  // Sim_s[0] = 110, far after Sim_p[4] = 14.
  EXPECT_EQ(DsspController(History(10, 9), History(100, 90), 4), 4);
}

TEST(DsspControllerTest, SubSecondTimesAreExact) {
  // I_p = 0.25 s: Sim_p = 10, 10.25, ...; Sim_s[0] = 10.75 = Sim_p[3].
  EXPECT_EQ(DsspController(History(10, 9.75), History(10.5, 10.25), 6), 3);
}

// Algorithm 2 as printed: both arrays in full, every pair compared, the first (smallest) r
// kept on ties.
Tick BruteForceController(const DsspHistory& p, const DsspHistory& s, Tick r_max) {
  const absl::Duration interval_p = p.latest - p.previous;
  const absl::Duration interval_s = s.latest - s.previous;
  std::vector<absl::Time> sim_p;
  std::vector<absl::Time> sim_s;
  for (Tick i = 0; i <= r_max; ++i) {
    sim_p.push_back(p.latest + i * interval_p);
    sim_s.push_back(s.latest + interval_s + i * interval_s);
  }
  Tick best_r = 0;
  absl::Duration best = absl::InfiniteDuration();
  for (Tick r = 0; r <= r_max; ++r) {
    for (Tick k = 0; k <= r_max; ++k) {
      const absl::Duration distance = absl::AbsDuration(sim_s[k] - sim_p[r]);
      if (distance < best) {
        best = distance;
        best_r = r;
      }
    }
  }
  return best_r;
}

TEST(DsspControllerPropertyTest, MatchesTheQuadraticDefinitionOnRandomTables) {
  int nonzero = 0;
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    std::mt19937_64 rng(seed);
    // Whole milliseconds on a small grid make exact ties frequent; a few intervals are zero
    // or negative (a wall clock that stepped back), which the controller must also handle.
    auto time = [&](int64_t spread) {
      return kT0 + absl::Milliseconds(static_cast<int64_t>(rng() % spread));
    };
    const int64_t spread = seed % 3 == 0 ? 20 : 5000;
    DsspHistory p{time(spread), time(spread)};
    DsspHistory s{time(spread), time(spread)};
    if (seed % 4 != 0) {  // mostly the normal order: previous <= latest
      if (p.previous > p.latest) std::swap(p.previous, p.latest);
      if (s.previous > s.latest) std::swap(s.previous, s.latest);
    }
    const Tick r_max = static_cast<Tick>(rng() % 16);
    const Tick expected = BruteForceController(p, s, r_max);
    ASSERT_EQ(DsspController(p, s, r_max), expected) << "seed " << seed;
    if (expected > 0) ++nonzero;
  }
  EXPECT_GT(nonzero, 300);
}

// ------------------------------------------------------------------ the gate, exact traces

// The trace of row 1 of the table, s_L = 1, r_max = 4 (s_U = 5), two workers. Worker 1 ends
// iterations at 6 and 8.5 (I_s = 2.5); worker 0 at 2, 4, 9, 10 (I_p = 1), so at t = 10 it is
// at clock 4, two ahead of worker 1, and the controller answers r* = 1.
void RunRow1Trace(Gate& gate) {
  gate.OnClock(0, 1, At(2));
  EXPECT_TRUE(gate.Admits(0, 1));
  gate.OnClock(0, 2, At(4));  // gap 2, but worker 1 has no timestamp: r* = 0 (cold start)
  EXPECT_FALSE(gate.Admits(0, 2));
  gate.OnClock(1, 1, At(6));
  EXPECT_TRUE(gate.Admits(0, 2));
  gate.OnClock(1, 2, At(8.5));
  gate.OnClock(0, 3, At(9));
  EXPECT_TRUE(gate.Admits(0, 3));  // gap 1
  gate.OnClock(0, 4, At(10));
}

TEST(DsspGateTest, ExactGrantAdmitsRStarReadsBeyondTheLowerBound) {
  auto gate = MakeDssp(Dssp(1, 4), 2);
  RunRow1Trace(*gate);
  EXPECT_TRUE(gate->Admits(0, 4));  // gap 2 > s_L: the grant of r* = 1
  EXPECT_THAT(gate->Blockers(0, 4), IsEmpty());
  gate->OnClock(0, 5, At(11));  // grant used; controller: Sim_p[0] = 11 = Sim_s[0], r* = 0
  EXPECT_FALSE(gate->Admits(0, 5));
  EXPECT_THAT(gate->Blockers(0, 5), ElementsAre(1));
  gate->OnClock(1, 3, At(11));
  EXPECT_FALSE(gate->Admits(0, 5));  // gap 2: SSP(s_L) again
  gate->OnClock(1, 4, At(13.5));
  EXPECT_TRUE(gate->Admits(0, 5));
}

// counts(): each controller call of the fastest worker, its answers r* = 0 (cold start
// included) and its grants with the reads they release; nothing for the other worker.
TEST(DsspGateTest, CountsTheControllersAnswersAndGrants) {
  auto gate = MakeDssp(Dssp(1, 4), 2);
  RunRow1Trace(*gate);  // clock 2: r* = 0 (cold start); clock 4: r* = 1
  GateCounts c = gate->counts(0);
  EXPECT_EQ(c.controller_calls, 2u);
  EXPECT_EQ(c.zero_answers, 1u);
  EXPECT_EQ(c.grants, 1u);
  EXPECT_EQ(c.granted_reads, 1u);
  gate->OnClock(0, 5, At(11));  // r* = 0
  c = gate->counts(0);
  EXPECT_EQ(c.controller_calls, 3u);
  EXPECT_EQ(c.zero_answers, 2u);
  EXPECT_EQ(c.grants, 1u);
  const GateCounts slow = gate->counts(1);
  EXPECT_EQ(slow.controller_calls + slow.zero_answers + slow.grants + slow.granted_reads, 0u);
  // A gate without a controller counts nothing.
  PolicySpec ssp;
  ssp.gate.staleness = 1;
  auto reference = MakeGate(ssp, 2);
  RunRow1Trace(*reference);
  EXPECT_EQ(reference->counts(0).controller_calls, 0u);
}

// A worker that leaves and rejoins starts afresh: no grant (and a new row of table A).
TEST(DsspGateTest, ARejoinedWorkerHoldsNoGrant) {
  auto gate = MakeDssp(Dssp(1, 4), 2);
  RunRow1Trace(*gate);
  EXPECT_TRUE(gate->Admits(0, 4));  // the grant
  gate->OnLeave(0, MemberState::kDead);
  gate->OnRejoin(0, 4, At(20));
  EXPECT_TRUE(gate->clocks().active(0));
  EXPECT_EQ(gate->clocks().clock(0), 4);
  EXPECT_FALSE(gate->Admits(0, 4));  // gap 2 > s_L, and the grant is gone
  EXPECT_THAT(gate->Blockers(0, 4), ElementsAre(1));
}

TEST(DsspGateTest, LiteralGrantAdmitsOneReadMore) {
  auto gate = MakeDssp(Dssp(1, 4, Grant::kLiteral), 2);
  RunRow1Trace(*gate);
  EXPECT_TRUE(gate->Admits(0, 4));
  gate->OnClock(0, 5, At(11));  // still covered by the grant: r* + 1 = 2 reads
  EXPECT_TRUE(gate->Admits(0, 5));
  // Gap 4; Sim_p = 12..16, Sim_s = 11, 13.5, 16, ...: r* = 4, so 5 reads, cut by the strict
  // bound to s_U - 4 + 1 = 2 (clocks 6 and 7, gaps 4 and 5).
  gate->OnClock(0, 6, At(12));
  EXPECT_TRUE(gate->Admits(0, 6));
  gate->OnClock(0, 7, At(13));
  EXPECT_TRUE(gate->Admits(0, 7));
  gate->OnClock(0, 8, At(14));
  EXPECT_FALSE(gate->Admits(0, 8));  // gap 6 = s_U + 1
}

TEST(DsspGateTest, SspWouldRefuseWhereTheGrantAdmits) {
  PolicySpec ssp;
  ssp.gate.staleness = 1;
  auto reference = MakeGate(ssp, 2);
  RunRow1Trace(*reference);
  EXPECT_FALSE(reference->Admits(0, 4));
}

// A very slow straggler (row 3: I_s = 8), s_L = 1, r_max = 4, s_U = 5. At t = 10 worker 0
// is two ahead and gets r* = 4 (reads at clocks 4..7, gaps 2..5). At clock 8 (gap 6) the
// controller answers r* = 3 again: the strict bound cuts it to 0, the literal one lets
// worker 0 run to gap 8.
std::unique_ptr<Gate> RunStragglerTrace(Bound bound) {
  auto gate = MakeDssp(Dssp(1, 4, Grant::kExact, bound), 2);
  gate->OnClock(1, 1, At(1));
  gate->OnClock(0, 1, At(2));
  gate->OnClock(0, 2, At(8));
  EXPECT_TRUE(gate->Admits(0, 2));
  gate->OnClock(1, 2, At(9));
  gate->OnClock(0, 3, At(9));
  EXPECT_TRUE(gate->Admits(0, 3));
  for (Tick c = 4; c <= 7; ++c) {
    gate->OnClock(0, c, At(static_cast<double>(c + 6)));
    EXPECT_TRUE(gate->Admits(0, c)) << "clock " << c;
  }
  gate->OnClock(0, 8, At(14));
  return gate;
}

TEST(DsspGateTest, StrictBoundNeverAdmitsAGapAboveSU) {
  auto gate = RunStragglerTrace(Bound::kStrict);
  EXPECT_FALSE(gate->Admits(0, 8));
  EXPECT_THAT(gate->Blockers(0, 8), ElementsAre(1));
  EXPECT_EQ(gate->clocks().MaxActiveClock() - gate->clocks().MinActiveClock(), 6);  // s_U + 1
}

TEST(DsspGateTest, WithoutTheBoundASlowStragglerIsOutrunPastSU) {
  auto gate = RunStragglerTrace(Bound::kNone);
  EXPECT_TRUE(gate->Admits(0, 8));  // gap 6 > s_U = 5
  gate->OnClock(0, 9, At(15));
  gate->OnClock(0, 10, At(16));
  EXPECT_TRUE(gate->Admits(0, 10));  // gap 8
  gate->OnClock(0, 11, At(17));
  EXPECT_FALSE(gate->Admits(0, 11));  // Sim_p[0] = 17 = Sim_s[0]: r* = 0
}

TEST(DsspGateTest, ColdStartWaitsLikeSsp) {
  auto gate = MakeDssp(Dssp(0, 12), 2);
  gate->OnClock(0, 1, At(1));
  gate->OnClock(0, 2, At(2));  // worker 0 has an interval, worker 1 has none
  EXPECT_FALSE(gate->Admits(0, 2));
  EXPECT_THAT(gate->Blockers(0, 2), ElementsAre(1));
}

TEST(DsspGateTest, RMaxZeroIsSspOfTheLowerBound) {
  auto gate = MakeDssp(Dssp(1, 0), 2);
  RunRow1Trace(*gate);
  EXPECT_FALSE(gate->Admits(0, 4));
}

// Two workers tie for the slowest clock: the one predicted to finish last is the slowest.
// Worker 1 (A = 8.5, 6) is predicted at 11 (r* = 1); worker 2 (A = 9, 1) at 17 (r* = 4).
std::unique_ptr<Gate> RunTieTrace(bool worker2_leaves) {
  auto gate = MakeDssp(Dssp(1, 4), 3);
  gate->OnClock(2, 1, At(1));
  gate->OnClock(0, 1, At(2));
  gate->OnClock(1, 1, At(6));
  gate->OnClock(0, 2, At(6.5));
  gate->OnClock(1, 2, At(8.5));
  gate->OnClock(2, 2, At(9));
  gate->OnClock(0, 3, At(9));
  if (worker2_leaves) gate->OnLeave(2, MemberState::kDead);
  gate->OnClock(0, 4, At(10));
  EXPECT_TRUE(gate->Admits(0, 4));
  gate->OnClock(0, 5, At(11));
  return gate;
}

TEST(DsspGateTest, TieForSlowestPicksTheLatestPredictedFinish) {
  auto gate = RunTieTrace(false);
  EXPECT_TRUE(gate->Admits(0, 5));  // r* = 4 from worker 2: clocks 4..7
}

TEST(DsspGateTest, DepartedWorkerLeavesTheSlowestChoiceAndTheMinimum) {
  auto gate = RunTieTrace(true);
  EXPECT_FALSE(gate->Admits(0, 5));  // r* = 1 from worker 1: clock 4 only
  EXPECT_THAT(gate->Blockers(0, 5), ElementsAre(1));
  gate->OnLeave(1, MemberState::kFinished);
  EXPECT_TRUE(gate->Admits(0, 5));  // nobody else is active
  EXPECT_THAT(gate->Blockers(0, 5), IsEmpty());
}

TEST(DsspGateTest, OnlyAFastestWorkerGetsAGrant) {
  // Worker 2 is slow; workers 0 and 1 have intervals. Worker 1 reaches gap 2 while worker 0
  // is further ahead (on its own grant), so worker 1 just waits.
  auto gate = MakeDssp(Dssp(1, 4), 3);
  gate->OnClock(2, 1, At(1));
  gate->OnClock(0, 1, At(2));
  gate->OnClock(1, 1, At(2));
  gate->OnClock(0, 2, At(8));
  gate->OnClock(1, 2, At(8));
  gate->OnClock(2, 2, At(9));
  gate->OnClock(0, 3, At(9));
  gate->OnClock(0, 4, At(10));  // r* = 4 (row 3's straggler)
  EXPECT_TRUE(gate->Admits(0, 4));
  gate->OnClock(1, 3, At(10));
  EXPECT_TRUE(gate->Admits(1, 3));  // gap 1
  gate->OnClock(0, 5, At(11));
  EXPECT_TRUE(gate->Admits(0, 5));
  // Worker 1 is now 2 ahead, and alone it would get r* = 4 (Sim_p = 11.., Sim_s[0] = 17);
  // but worker 0 is at 5, so worker 1 is not a fastest worker and waits.
  gate->OnClock(1, 4, At(11));
  EXPECT_FALSE(gate->Admits(1, 4));
  EXPECT_THAT(gate->Blockers(1, 4), ElementsAre(2));
}

TEST(DsspGateTest, PushesDoNotMoveTheTimestamps) {
  // The row 1 trace with many chunk pushes in between: the grant is the same.
  auto gate = MakeDssp(Dssp(1, 4), 2);
  for (int i = 0; i < 5; ++i) gate->OnPush(1, 1, At(7 + 0.1 * i));
  RunRow1Trace(*gate);
  for (int i = 0; i < 5; ++i) gate->OnPush(0, 4, At(10.5 + 0.1 * i));
  EXPECT_TRUE(gate->Admits(0, 4));
  gate->OnClock(0, 5, At(11));
  EXPECT_FALSE(gate->Admits(0, 5));
}

TEST(DsspGateTest, LateOrDuplicatedClockReportsAreIgnored) {
  auto gate = MakeDssp(Dssp(1, 4), 2);
  RunRow1Trace(*gate);
  gate->OnClock(0, 4, At(11.4));  // duplicate: must not shift table A
  gate->OnClock(1, 1, At(11.4));  // late
  EXPECT_EQ(gate->clocks().clock(1), 2);
  EXPECT_TRUE(gate->Admits(0, 4));
  // A[0] = (11.5, 10): Sim_p = 11.5, 13, 14.5, 16: r* = 3 (16 = Sim_s[2]), clocks 5..7.
  // Had the duplicate shifted A[0] to (11.5, 11.4), r* would be 0.
  gate->OnClock(0, 5, At(11.5));
  EXPECT_TRUE(gate->Admits(0, 5));
}

TEST(DsspGateTest, AnswersTheSameUntilTheNextEvent) {
  auto gate = MakeDssp(Dssp(1, 4), 2);
  RunRow1Trace(*gate);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(gate->Admits(0, 4));
  gate->OnClock(0, 5, At(11));
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(gate->Admits(0, 5));
}

TEST(DsspGateTest, AdmitsEveryReadWhenNoWorkerIsActive) {
  auto gate = MakeDssp(Dssp(0, 0), 2);
  gate->OnLeave(0, MemberState::kFinished);
  gate->OnLeave(1, MemberState::kDead);
  EXPECT_TRUE(gate->Admits(0, 100));
  EXPECT_THAT(gate->Blockers(0, 100), IsEmpty());
}

TEST(DsspGateTest, UnboundedLowerBoundNeverWaits) {
  auto gate = MakeDssp(Dssp(kUnbounded, 0), 2);
  gate->OnClock(0, 1000, At(1));
  EXPECT_TRUE(gate->Admits(0, 1000));
  EXPECT_TRUE(gate->Admits(0, kUnbounded));
  EXPECT_THAT(gate->Blockers(0, kUnbounded), IsEmpty());
}

TEST(DsspGateTest, ClockJumpUsesThePerIterationInterval) {
  // Worker 1 reports clocks 1 and 3 at 4 and 9: 2.5 s per iteration, so A[1] reads as
  // (9, 6.5) and Sim_s = 11.5, 14, ... (taken as one interval of 5 s it would be 14, 19, ...).
  auto gate = MakeDssp(Dssp(1, 4), 2);
  gate->OnClock(1, 1, At(4));
  gate->OnClock(0, 1, At(5));
  gate->OnClock(0, 2, At(6));
  gate->OnClock(1, 3, At(9));
  gate->OnClock(0, 3, At(9.5));
  gate->OnClock(0, 4, At(10.5));
  EXPECT_TRUE(gate->Admits(0, 4));  // gap 1
  // Gap 2. Sim_p = 11, 11.5, ..., 13: r* = 1 (11.5 = Sim_s[0]), one read; with a 5 s
  // interval r* would be 4 and the read at clock 6 would pass too.
  gate->OnClock(0, 5, At(11));
  EXPECT_TRUE(gate->Admits(0, 5));
  gate->OnClock(0, 6, At(11.5));  // Sim_p[0] = 11.5 = Sim_s[0]: r* = 0
  EXPECT_FALSE(gate->Admits(0, 6));
}

// ------------------------------------------------------------------ property tests

// The paper's server (Algorithm 1, docs/references.md DSSP-4) in its own terms: a push
// counter t[p], the number r[p] of OKs still owed, and whether p's latest push was answered
// OK. Kept independent of the gate: it counts OKs, not clocks.
class PaperDssp {
 public:
  PaperDssp(const GateSpec& spec, int num_workers)
      : spec_(spec),
        t_(num_workers, 0),
        r_(num_workers, 0),
        ok_(num_workers, true),
        active_(num_workers, true),
        a_(num_workers) {}

  void Push(WorkerId p, absl::Time now) {
    ++t_[p];
    a_[p].push_back(now);
    ok_[p] = false;
    if (r_[p] > 0) {  // lines 3-5
      --r_[p];
      ok_[p] = true;
      return;
    }
    const Tick gap = t_[p] - Min();
    if (gap <= spec_.staleness || t_[p] != Max()) return;  // line 8 / line 11
    const Tick r_star = Controller(p);
    Tick oks = r_star == 0 ? 0 : (spec_.grant == Grant::kExact ? r_star : r_star + 1);
    if (spec_.bound == Bound::kStrict) {
      oks = std::min(oks, std::max<Tick>(0, spec_.staleness + spec_.r_max - gap + 1));
    }
    if (oks > 0) {  // line 13: one OK now, the rest owed
      ok_[p] = true;
      r_[p] = oks - 1;
    }
  }
  void Leave(WorkerId w) { active_[w] = false; }

  // Line 17: an unanswered push is answered once p is within s_L of the slowest.
  bool Admits(WorkerId p) const { return ok_[p] || t_[p] - Min() <= spec_.staleness; }
  bool HasGrant(WorkerId p) const { return ok_[p]; }

 private:
  Tick Min() const {
    Tick min = kUnbounded;
    for (size_t w = 0; w < t_.size(); ++w) {
      if (active_[w]) min = std::min(min, t_[w]);
    }
    return min;
  }
  Tick Max() const {
    Tick max = 0;
    for (size_t w = 0; w < t_.size(); ++w) {
      if (active_[w]) max = std::max(max, t_[w]);
    }
    return max;
  }
  std::optional<DsspHistory> Row(size_t w) const {
    const std::vector<absl::Time>& a = a_[w];
    if (a.size() < 2) return std::nullopt;
    return DsspHistory{a[a.size() - 1], a[a.size() - 2]};
  }
  Tick Controller(WorkerId p) const {
    // Slowest: smallest count; ties to the latest predicted next push (unknown = latest).
    std::optional<size_t> slowest;
    bool unknown = false;
    absl::Time latest_next;
    for (size_t w = 0; w < t_.size(); ++w) {
      if (!active_[w] || t_[w] != Min()) continue;
      const std::optional<DsspHistory> row = Row(w);
      if (!row) {
        unknown = true;
        break;
      }
      const absl::Time next = row->latest + (row->latest - row->previous);
      if (!slowest || next > latest_next) {
        slowest = w;
        latest_next = next;
      }
    }
    const std::optional<DsspHistory> fastest = Row(p);
    if (unknown || !fastest || spec_.r_max == 0) return 0;
    return DsspController(*fastest, *Row(*slowest), spec_.r_max);
  }

  GateSpec spec_;
  std::vector<Tick> t_;
  std::vector<Tick> r_;
  std::vector<bool> ok_;
  std::vector<bool> active_;
  std::vector<std::vector<absl::Time>> a_;  // every push time; the last two are table A
};

struct SimStats {
  int64_t reads = 0;
  int64_t refused = 0;
  int64_t granted = 0;      // admitted beyond s_L
  int64_t above_upper = 0;  // admitted beyond s_U
};

// W workers of random speeds on virtual time (whole milliseconds, so that boundaries often
// coincide; coinciding events are taken in a random order). A worker runs an iteration only
// after its read was admitted; after every event every waiting read is re-checked, in a
// random order. Checks, at every decision: the gate equals the paper's reference; a read the
// reference owes an OK is admitted; Blockers is empty exactly when the read is admitted;
// the slowest active worker is never blocked; somebody can always run; with the strict
// bound no admitted read is more than s_U ahead and max - min <= s_U + 1; with r_max = 0
// every decision and blocker list equals SSP(s_L)'s.
SimStats Simulate(uint64_t seed, const GateSpec& spec, int num_workers, int iterations,
                  double leave_probability) {
  std::mt19937_64 rng(seed);
  auto gate = MakeDssp(spec, num_workers);
  PolicySpec ssp_spec;
  ssp_spec.gate.staleness = spec.staleness;
  auto ssp = MakeGate(ssp_spec, num_workers);
  PaperDssp paper(spec, num_workers);

  // Iteration time: a base per worker (one straggler up to 20x slower), jittered.
  std::vector<int64_t> base(num_workers);
  for (int64_t& b : base) b = 1 + static_cast<int64_t>(rng() % 10);
  base[rng() % num_workers] *= 1 + static_cast<int64_t>(rng() % 20);
  auto duration = [&](WorkerId w) {
    return absl::Milliseconds(base[w] + static_cast<int64_t>(rng() % (base[w] / 4 + 1)));
  };
  std::vector<bool> active(num_workers, true);
  std::vector<std::optional<absl::Time>> finish(num_workers);  // nullopt: waiting
  const Tick upper = spec.staleness + spec.r_max;
  SimStats stats;
  absl::Time now = kT0;

  auto check_all_waiting = [&] {
    std::vector<WorkerId> order(num_workers);
    for (WorkerId w = 0; w < num_workers; ++w) order[w] = w;
    std::shuffle(order.begin(), order.end(), rng);
    const Tick min = gate->clocks().MinActiveClock();
    for (WorkerId w : order) {
      if (!active[w] || finish[w]) continue;
      const Tick c = gate->clocks().clock(w);
      const bool admitted = gate->Admits(w, c);
      ++stats.reads;
      ASSERT_EQ(admitted, paper.Admits(w)) << "seed " << seed << " worker " << w << " clock " << c;
      if (paper.HasGrant(w)) {
        ASSERT_TRUE(admitted) << "seed " << seed;
      }
      ASSERT_EQ(admitted, gate->Blockers(w, c).empty()) << "seed " << seed;
      if (c == min) {
        ASSERT_TRUE(admitted) << "slowest blocked, seed " << seed;
      }
      if (spec.r_max == 0) {
        ASSERT_EQ(admitted, ssp->Admits(w, c)) << "seed " << seed;
        ASSERT_EQ(gate->Blockers(w, c), ssp->Blockers(w, c)) << "seed " << seed;
      }
      if (!admitted) {
        ++stats.refused;
        continue;
      }
      if (c - min > spec.staleness) ++stats.granted;
      if (c - min > upper) ++stats.above_upper;
      if (spec.bound == Bound::kStrict) {
        ASSERT_LE(c - min, upper) << "seed " << seed;
      }
      finish[w] = now + duration(w);
    }
  };

  check_all_waiting();
  for (int event = 0; event < iterations; ++event) {
    // The next iteration to end; ties in a random order.
    std::vector<WorkerId> next;
    for (WorkerId w = 0; w < num_workers; ++w) {
      if (!active[w] || !finish[w]) continue;
      if (next.empty() || *finish[w] < *finish[next[0]]) next.clear();
      if (next.empty() || *finish[w] == *finish[next[0]]) next.push_back(w);
    }
    if (next.empty()) {  // nobody runs: only possible when nobody is active
      for (WorkerId w = 0; w < num_workers; ++w) EXPECT_FALSE(active[w]) << "deadlock " << seed;
      break;
    }
    const WorkerId w = next[rng() % next.size()];
    now = *finish[w];
    finish[w].reset();
    if (std::uniform_real_distribution<double>(0, 1)(rng) < leave_probability) {
      gate->OnLeave(w, MemberState::kDead);
      ssp->OnLeave(w, MemberState::kDead);
      paper.Leave(w);
      active[w] = false;
    } else {
      const Tick c = gate->clocks().clock(w) + 1;
      for (int chunk = 0; chunk < 3; ++chunk) gate->OnPush(w, c - 1, now);  // ignored
      gate->OnClock(w, c, now);
      ssp->OnClock(w, c, now);
      paper.Push(w, now);
    }
    check_all_waiting();
    if (testing::Test::HasFatalFailure()) return stats;
    if (spec.bound == Bound::kStrict && gate->clocks().num_active() > 0) {
      EXPECT_LE(gate->clocks().MaxActiveClock() - gate->clocks().MinActiveClock(), upper + 1);
    }
  }
  return stats;
}

GateSpec RandomSpec(uint64_t seed, Grant grant, Bound bound) {
  std::mt19937_64 rng(seed ^ 0x5eed);
  return Dssp(static_cast<Tick>(rng() % 4), static_cast<Tick>(rng() % 13), grant, bound);
}

TEST(DsspGatePropertyTest, StrictBoundKeepsEveryReadWithinSUAndMatchesThePaper) {
  SimStats total;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const Grant grant = seed % 2 ? Grant::kExact : Grant::kLiteral;
    const SimStats stats =
        Simulate(seed, RandomSpec(seed, grant, Bound::kStrict), 2 + seed % 5, 200, 0.0);
    ASSERT_FALSE(HasFatalFailure()) << "seed " << seed;
    total.reads += stats.reads;
    total.refused += stats.refused;
    total.granted += stats.granted;
    EXPECT_EQ(stats.above_upper, 0);
  }
  EXPECT_GT(total.granted, 1000);  // grants do happen
  EXPECT_GT(total.refused, 1000);  // and so does waiting
}

TEST(DsspGatePropertyTest, WithoutTheBoundMatchesThePaperAndCanPassSU) {
  int64_t above_upper = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const Grant grant = seed % 2 ? Grant::kExact : Grant::kLiteral;
    const SimStats stats =
        Simulate(seed, RandomSpec(seed, grant, Bound::kNone), 2 + seed % 5, 200, 0.0);
    ASSERT_FALSE(HasFatalFailure()) << "seed " << seed;
    above_upper += stats.above_upper;
  }
  EXPECT_GT(above_upper, 0);  // the literal bound is different: stragglers get outrun
}

TEST(DsspGatePropertyTest, RMaxZeroDecidesExactlyAsSspOfTheLowerBound) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const Tick s_l = static_cast<Tick>(seed % 4);
    const Grant grant = seed % 2 ? Grant::kExact : Grant::kLiteral;
    const Bound bound = seed % 3 ? Bound::kStrict : Bound::kNone;
    Simulate(seed, Dssp(s_l, 0, grant, bound), 1 + seed % 6, 200, 0.0);
    ASSERT_FALSE(HasFatalFailure()) << "seed " << seed;
  }
}

TEST(DsspGatePropertyTest, DeparturesNeverDeadlockAndMatchThePaper) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const Grant grant = seed % 2 ? Grant::kExact : Grant::kLiteral;
    const Bound bound = seed % 3 ? Bound::kStrict : Bound::kNone;
    Simulate(seed, RandomSpec(seed, grant, bound), 2 + seed % 6, 200, 0.02);
    ASSERT_FALSE(HasFatalFailure()) << "seed " << seed;
  }
}

}  // namespace
}  // namespace kairos::policy
