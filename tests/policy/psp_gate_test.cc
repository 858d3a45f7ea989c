// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of PSP (docs/references.md PSP-1, PSP-2): exact cases of the sampling rule (who is
// eligible, how long a sample is kept, departures, determinism, uniformity), then property
// tests over random interleavings: beta >= W decides exactly as SSP(s); any beta is never
// stricter than SSP(s); beta = 0 or s = unbounded never waits; nobody deadlocks.

#include <algorithm>
#include <cstdint>
#include <map>
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
using ::testing::IsSubsetOf;
using ::testing::Not;

const absl::Time kT0 = absl::UnixEpoch();

std::unique_ptr<Gate> MakePsp(int beta, Tick s, uint64_t seed, int num_workers) {
  PolicySpec spec;
  spec.gate = GateSpec{.kind = GateSpec::Kind::kPsp, .staleness = s, .beta = beta, .seed = seed};
  EXPECT_TRUE(ValidatePolicySpec(spec).ok());
  return MakeGate(spec, num_workers);
}

std::unique_ptr<Gate> MakeSsp(Tick s, int num_workers) {
  PolicySpec spec;
  spec.gate.staleness = s;
  return MakeGate(spec, num_workers);
}

// Worker 0 reads at clock `clock` while every other worker is still at 0, so with s = 0
// the refused read's blockers are exactly its sample.
std::vector<WorkerId> SampleOfALoneReader(Gate& gate, Tick clock) {
  gate.OnClock(0, clock, kT0);
  EXPECT_FALSE(gate.Admits(0, clock));
  return gate.Blockers(0, clock);
}

// ------------------------------------------------------------------ exact cases

TEST(PspGateTest, BetaZeroNeverWaits) {
  auto gate = MakePsp(0, 0, 1, 3);
  gate->OnClock(0, 1000, kT0);
  EXPECT_TRUE(gate->Admits(0, 1000));
  EXPECT_THAT(gate->Blockers(0, 1000), IsEmpty());
}

TEST(PspGateTest, UnboundedStalenessNeverWaits) {
  auto gate = MakePsp(3, kUnbounded, 1, 4);
  gate->OnClock(0, 1000, kT0);
  EXPECT_TRUE(gate->Admits(0, 1000));
  EXPECT_TRUE(gate->Admits(0, kUnbounded));
  EXPECT_THAT(gate->Blockers(0, kUnbounded), IsEmpty());
}

TEST(PspGateTest, TheReaderIsNeverInItsOwnSample) {
  // Were the reader eligible, some samples would hold it and only beta - 1 others.
  auto gate = MakePsp(2, 0, 1, 4);
  for (Tick c = 1; c <= 200; ++c) {
    const std::vector<WorkerId> sample = SampleOfALoneReader(*gate, c);
    EXPECT_EQ(sample.size(), 2u) << "clock " << c;
    EXPECT_THAT(sample, Not(testing::Contains(0)));
  }
}

TEST(PspGateTest, ALoneWorkerNeverWaits) {
  auto gate = MakePsp(5, 0, 1, 1);
  gate->OnClock(0, 7, kT0);
  EXPECT_TRUE(gate->Admits(0, 7));
}

TEST(PspGateTest, BetaAtLeastTheOtherWorkersSamplesAllOfThem) {
  for (int beta : {3, 4, 100}) {
    auto gate = MakePsp(beta, 0, 9, 4);
    EXPECT_THAT(SampleOfALoneReader(*gate, 1), ElementsAre(1, 2, 3)) << "beta " << beta;
  }
}

TEST(PspGateTest, PassesWhenTheSampleIsWithinS) {
  // s = 1: worker 0 at clock 2 passes iff every sampled worker has clock >= 1.
  auto gate = MakePsp(2, 1, 3, 3);
  gate->OnClock(1, 1, kT0);
  gate->OnClock(2, 1, kT0);
  gate->OnClock(0, 2, kT0);
  EXPECT_TRUE(gate->Admits(0, 2));
  EXPECT_THAT(gate->Blockers(0, 2), IsEmpty());
  gate->OnClock(0, 3, kT0);
  EXPECT_FALSE(gate->Admits(0, 3));
  EXPECT_THAT(gate->Blockers(0, 3), ElementsAre(1, 2));
}

TEST(PspGateTest, AWaitingReadKeepsItsSample) {
  auto gate = MakePsp(2, 0, 42, 6);
  const std::vector<WorkerId> sample = SampleOfALoneReader(*gate, 1);
  ASSERT_EQ(sample.size(), 2u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(gate->Admits(0, 1));
    EXPECT_EQ(gate->Blockers(0, 1), sample);
  }
  // Workers outside the sample catching up change nothing.
  for (WorkerId v = 1; v < 6; ++v) {
    if (std::find(sample.begin(), sample.end(), v) == sample.end()) gate->OnClock(v, 1, kT0);
  }
  EXPECT_FALSE(gate->Admits(0, 1));
  EXPECT_EQ(gate->Blockers(0, 1), sample);
  // The sampled ones release it, one by one.
  gate->OnClock(sample[0], 1, kT0);
  EXPECT_FALSE(gate->Admits(0, 1));
  EXPECT_THAT(gate->Blockers(0, 1), ElementsAre(sample[1]));
  gate->OnClock(sample[1], 1, kT0);
  EXPECT_TRUE(gate->Admits(0, 1));
  EXPECT_TRUE(gate->Admits(0, 1));  // and stays admitted
}

TEST(PspGateTest, ASampledWorkerThatLeavesIsDroppedNotReplaced) {
  auto gate = MakePsp(2, 0, 7, 6);
  const std::vector<WorkerId> sample = SampleOfALoneReader(*gate, 1);
  ASSERT_EQ(sample.size(), 2u);
  gate->OnLeave(sample[0], MemberState::kDead);
  EXPECT_FALSE(gate->Admits(0, 1));
  EXPECT_THAT(gate->Blockers(0, 1), ElementsAre(sample[1]));
  gate->OnLeave(sample[1], MemberState::kFinished);
  // Three workers at clock 0 are still active, but none of them is in the sample.
  EXPECT_TRUE(gate->Admits(0, 1));
  EXPECT_THAT(gate->Blockers(0, 1), IsEmpty());
}

TEST(PspGateTest, DepartedWorkersAreNeverSampled) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    auto gate = MakePsp(2, 0, seed, 5);
    gate->OnLeave(2, MemberState::kDead);
    gate->OnLeave(4, MemberState::kFinished);
    EXPECT_THAT(SampleOfALoneReader(*gate, 1), ElementsAre(1, 3)) << "seed " << seed;
  }
}

TEST(PspGateTest, EachReadDrawsItsOwnSample) {
  auto gate = MakePsp(1, 0, 5, 8);
  std::map<WorkerId, int> seen;
  for (Tick c = 1; c <= 40; ++c) {
    const std::vector<WorkerId> sample = SampleOfALoneReader(*gate, c);
    ASSERT_EQ(sample.size(), 1u);
    ++seen[sample[0]];
  }
  EXPECT_GT(seen.size(), 3u);
}

TEST(PspGateTest, BlockersBeforeTheFirstAdmitsAreEmpty) {
  auto gate = MakePsp(2, 0, 1, 3);
  gate->OnClock(0, 1, kT0);
  EXPECT_THAT(gate->Blockers(0, 1), IsEmpty());  // documented: the sample is drawn by Admits
  EXPECT_FALSE(gate->Admits(0, 1));
  EXPECT_THAT(gate->Blockers(0, 1), Not(IsEmpty()));
}

TEST(PspGateTest, SameSeedSameDecisionsOtherSeedOtherSamples) {
  std::vector<std::vector<WorkerId>> by_seed[3];
  const uint64_t seeds[3] = {11, 11, 12};
  for (int i = 0; i < 3; ++i) {
    auto gate = MakePsp(3, 0, seeds[i], 10);
    for (Tick c = 1; c <= 30; ++c) by_seed[i].push_back(SampleOfALoneReader(*gate, c));
  }
  EXPECT_EQ(by_seed[0], by_seed[1]);
  EXPECT_NE(by_seed[0], by_seed[2]);
}

TEST(PspGateTest, SamplesUniformlyWithoutReplacement) {
  // 6 workers, beta = 2: each of the 5 others is in a sample with probability 2/5, each of
  // the 10 pairs with probability 1/10.
  auto gate = MakePsp(2, 0, 2024, 6);
  constexpr int kReads = 5000;
  std::map<WorkerId, int> count;
  std::map<std::vector<WorkerId>, int> pairs;
  for (Tick c = 1; c <= kReads; ++c) {
    const std::vector<WorkerId> sample = SampleOfALoneReader(*gate, c);
    ASSERT_EQ(sample.size(), 2u);
    ASSERT_LT(sample[0], sample[1]);  // distinct, sorted
    for (WorkerId v : sample) ++count[v];
    ++pairs[sample];
  }
  ASSERT_EQ(count.size(), 5u);
  for (const auto& [worker, n] : count) {
    EXPECT_NEAR(n / static_cast<double>(kReads), 0.4, 0.03) << "worker " << worker;
  }
  ASSERT_EQ(pairs.size(), 10u);
  for (const auto& [pair, n] : pairs) EXPECT_NEAR(n / static_cast<double>(kReads), 0.1, 0.02);
}

TEST(PspGateTest, AdmitsEveryReadWhenNoWorkerIsActive) {
  auto gate = MakePsp(2, 0, 1, 3);
  for (WorkerId w = 0; w < 3; ++w) gate->OnLeave(w, MemberState::kDead);
  EXPECT_TRUE(gate->Admits(0, 100));
  EXPECT_THAT(gate->Blockers(0, 100), IsEmpty());
}

// ------------------------------------------------------------------ property tests

struct SimStats {
  int64_t reads = 0;
  int64_t refused = 0;
};

// W workers loop "read at clock c (wait for the gate) -> report clock c + 1"; each step
// advances one random worker, and a few workers die or finish on the way. The PSP gate and
// an SSP(s) gate see the same events. At every read: Blockers is empty exactly when the
// read is admitted, it lists only active sampled workers, and it only shrinks while the read
// waits; PSP admits whenever SSP admits (a sample's minimum is never below the minimum);
// with beta >= W - 1 they decide alike with the same blockers; the slowest active worker is
// never blocked.
SimStats Simulate(uint64_t seed, int beta, Tick s, int num_workers, int steps,
                  double leave_probability) {
  std::mt19937_64 rng(seed);
  auto psp = MakePsp(beta, s, seed * 7919, num_workers);
  auto ssp = MakeSsp(s, num_workers);
  const bool all = beta >= num_workers - 1;
  std::vector<bool> active(num_workers, true);
  std::vector<bool> running(num_workers, false);
  std::vector<std::vector<WorkerId>> last_blockers(num_workers);
  SimStats stats;
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  for (int step = 0; step < steps; ++step) {
    const WorkerId w = static_cast<WorkerId>(rng() % num_workers);
    if (!active[w]) continue;
    if (coin(rng) < leave_probability) {
      const MemberState why = rng() % 2 ? MemberState::kDead : MemberState::kFinished;
      psp->OnLeave(w, why);
      ssp->OnLeave(w, why);
      active[w] = false;
      continue;
    }
    const Tick c = psp->clocks().clock(w);
    if (running[w]) {
      psp->OnClock(w, c + 1, kT0);
      ssp->OnClock(w, c + 1, kT0);
      running[w] = false;
      last_blockers[w].clear();
      continue;
    }
    const bool admitted = psp->Admits(w, c);
    const std::vector<WorkerId> blockers = psp->Blockers(w, c);
    ++stats.reads;
    EXPECT_EQ(admitted, blockers.empty()) << "seed " << seed;
    for (WorkerId v : blockers) EXPECT_TRUE(active[v] && v != w) << "seed " << seed;
    if (!last_blockers[w].empty()) {
      EXPECT_THAT(blockers, IsSubsetOf(last_blockers[w])) << "seed " << seed;
    }
    last_blockers[w] = blockers;
    const bool ssp_admitted = ssp->Admits(w, c);
    if (ssp_admitted) {
      EXPECT_TRUE(admitted) << "seed " << seed;
    }
    EXPECT_THAT(blockers, IsSubsetOf(ssp->Blockers(w, c))) << "seed " << seed;
    if (all) {
      EXPECT_EQ(admitted, ssp_admitted) << "seed " << seed << " step " << step;
      EXPECT_EQ(blockers, ssp->Blockers(w, c)) << "seed " << seed;
    }
    if (c == psp->clocks().MinActiveClock()) {
      EXPECT_TRUE(admitted) << "seed " << seed;
    }
    if (admitted) {
      running[w] = true;
    } else {
      ++stats.refused;
    }
  }
  return stats;
}

TEST(PspGatePropertyTest, BetaOfAllWorkersDecidesExactlyAsSsp) {
  const Tick kStaleness[] = {0, 1, 2, 3, kUnbounded};
  int64_t refused = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const int num_workers = 1 + static_cast<int>(seed % 8);
    const int beta = num_workers + static_cast<int>(seed % 3) - 1;  // W - 1, W, W + 1
    const Tick s = kStaleness[seed % std::size(kStaleness)];
    refused += Simulate(seed, beta, s, num_workers, 300, seed % 2 ? 0.01 : 0.0).refused;
  }
  EXPECT_GT(refused, 1000);
}

TEST(PspGatePropertyTest, SmallerSamplesAreNeverStricterThanSsp) {
  SimStats total;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const int num_workers = 3 + static_cast<int>(seed % 6);
    const int beta = 1 + static_cast<int>(seed % (num_workers - 2));  // 1 .. W - 2
    const SimStats stats =
        Simulate(seed, beta, static_cast<Tick>(seed % 3), num_workers, 300, 0.005);
    total.reads += stats.reads;
    total.refused += stats.refused;
  }
  EXPECT_GT(total.refused, 500);  // sampling still makes reads wait
}

TEST(PspGatePropertyTest, BetaZeroOrUnboundedSNeverWaits) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const int num_workers = 1 + static_cast<int>(seed % 8);
    const bool zero_beta = seed % 2 == 0;
    const SimStats stats =
        Simulate(seed, zero_beta ? 0 : 1 + static_cast<int>(seed % 5),
                 zero_beta ? static_cast<Tick>(seed % 3) : kUnbounded, num_workers, 300, 0.01);
    EXPECT_EQ(stats.refused, 0) << "seed " << seed;
  }
}

TEST(PspGatePropertyTest, SameSeedAndEventsGiveTheSameDecisions) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const int num_workers = 2 + static_cast<int>(seed % 7);
    const int beta = 1 + static_cast<int>(seed % num_workers);
    auto a = MakePsp(beta, 1, seed, num_workers);
    auto b = MakePsp(beta, 1, seed, num_workers);
    std::mt19937_64 rng(seed);
    for (int step = 0; step < 300; ++step) {
      const WorkerId w = static_cast<WorkerId>(rng() % num_workers);
      const Tick c = a->clocks().clock(w);
      const bool admitted = a->Admits(w, c);
      ASSERT_EQ(admitted, b->Admits(w, c)) << "seed " << seed;
      ASSERT_EQ(a->Blockers(w, c), b->Blockers(w, c)) << "seed " << seed;
      if (admitted) {
        a->OnClock(w, c + 1, kT0);
        b->OnClock(w, c + 1, kT0);
      }
    }
  }
}

}  // namespace
}  // namespace kairos::policy
