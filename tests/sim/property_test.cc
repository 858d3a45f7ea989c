// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Property tests: the gates' bounds hold in whole simulations over hundreds of seeds, each
// with its own worker count, speeds, jitter, stragglers and sometimes a failure
// (docs/references.md SSP-2, DSSP-6, PSP-2). Each run is small, so the whole file takes
// well under two seconds.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "policy/policy.h"
#include "sim/random.h"
#include "sim/simulator.h"
#include "sim_test_util.h"

namespace kairos::sim {
namespace {

using policy::MemberState;

constexpr int kSeeds = 300;
constexpr int64_t kIterations = 12;

// A random small job for `seed`: 2 to 8 workers, slowdowns in [1, 6), jitter, stragglers,
// and in one run of four a failure.
SimOptions RandomJob(const std::string& policy, uint64_t seed) {
  static const std::shared_ptr<const Model> model = SmallQuadratic(4, 64);
  Rng rng(StreamSeed(seed, 99, 0));
  SimOptions o;
  o.policy = policy;
  o.seed = seed;
  o.model = model;
  o.batch_size = 4;
  o.num_workers = 2 + static_cast<int>(rng.UniformInt(7));
  o.iterations = kIterations;
  for (int w = 0; w < o.num_workers; ++w) o.compute.slowdown.push_back(1.0 + 5.0 * rng.Uniform());
  o.compute.jitter_mean = rng.Uniform();
  o.compute.straggler_prob = 0.3 * rng.Uniform();
  o.sample_interval = absl::Seconds(100);  // the bounds are the point here, not the loss
  if (rng.UniformInt(4) == 0) {
    o.failures = {{.worker = static_cast<int>(rng.UniformInt(static_cast<uint64_t>(o.num_workers))),
                   .at = absl::Seconds(5.0 * rng.Uniform())}};
  }
  return o;
}

// Every worker that did not fail ran all its iterations.
void ExpectEveryoneElseFinished(const SimOptions& o, const SimResult& r) {
  for (int w = 0; w < o.num_workers; ++w) {
    const SimWorkerResult& wr = r.workers[static_cast<size_t>(w)];
    if (!o.failures.empty() && o.failures[0].worker == w) continue;
    EXPECT_EQ(wr.state, MemberState::kFinished) << "worker " << w;
    EXPECT_EQ(wr.iterations, kIterations) << "worker " << w;
  }
}

TEST(SimulatorPropertyTest, SspReadLeadNeverExceedsStaleness) {
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    const int64_t s = static_cast<int64_t>(seed % 5);
    const SimOptions o = RandomJob(absl::StrCat("ssp:s=", s), seed);
    SCOPED_TRACE(absl::StrCat("seed ", seed, ", ", o.policy, ", ", o.num_workers, " workers"));
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_LE(r->max_read_lead, s);
    ExpectEveryoneElseFinished(o, *r);
  }
}

TEST(SimulatorPropertyTest, BspPushesAreNeverStale) {
  for (uint64_t seed = 0; seed < kSeeds / 3; ++seed) {
    const SimOptions o = RandomJob("bsp", seed);
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_LE(r->max_read_lead, 0);
    ASSERT_EQ(r->staleness.max(), 0u);
    ExpectEveryoneElseFinished(o, *r);
  }
}

TEST(SimulatorPropertyTest, AspNeverBlocks) {
  for (uint64_t seed = 0; seed < kSeeds / 3; ++seed) {
    const SimOptions o = RandomJob("asp", seed);
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->total_blocked_time, absl::ZeroDuration());
    ExpectEveryoneElseFinished(o, *r);
  }
}

// Runs `policy` over kSeeds / 3 random jobs and runs `check` on each result. A spec that
// does not parse fails the test: every policy named here exists, so that is a regression of
// the parser, never a reason to skip.
template <typename Check>
void ForRandomJobs(const std::string& policy, int64_t iterations, Check check) {
  const absl::StatusOr<policy::PolicySpec> spec = policy::ParsePolicySpec(policy);
  ASSERT_TRUE(spec.ok()) << policy << " does not parse: " << spec.status();
  for (uint64_t seed = 0; seed < kSeeds / 3; ++seed) {
    SimOptions o = RandomJob(policy, seed);
    o.iterations = iterations;
    SCOPED_TRACE(absl::StrCat("seed ", seed, ", ", policy, ", ", o.num_workers, " workers"));
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    check(*r);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// PSP (docs/references.md PSP-2): sampling every other worker (beta >= W - 1) is SSP(s).
TEST(SimulatorPropertyTest, PspSamplingEveryoneKeepsSspBound) {
  ForRandomJobs("psp:s=2,beta=8", kIterations,
                [](const SimResult& r) { ASSERT_LE(r.max_read_lead, 2); });
}

// PSP with beta = 0 samples nobody, so nobody ever waits.
TEST(SimulatorPropertyTest, PspSamplingNobodyNeverBlocks) {
  ForRandomJobs("psp:s=0,beta=0", kIterations, [](const SimResult& r) {
    ASSERT_EQ(r.total_blocked_time, absl::ZeroDuration());
  });
}

// DSSP (docs/references.md DSSP-6): the gap never exceeds s_U = s_L + r_max.
TEST(SimulatorPropertyTest, DsspReadLeadNeverExceedsUpperBound) {
  // Long enough runs for the controller to grant extra clocks.
  ForRandomJobs("dssp:s=3,r=12", 3 * kIterations,
                [](const SimResult& r) { ASSERT_LE(r.max_read_lead, 3 + 12); });
}

}  // namespace
}  // namespace kairos::sim

namespace kairos::sim {
namespace {

// Every multiplier the simulated server applied, recomputed from the staleness it observed.
TEST(SimulatorPropertyTest, StalenessWeightingScaleIsItsFormula) {
  for (uint64_t seed = 0; seed < 100; ++seed) {
    SimOptions o = RandomJob(seed % 2 == 0 ? "asp+weight=staleness" : "sa-asgd:n=2", seed);
    o.push_log_size = 1000;
    SCOPED_TRACE(absl::StrCat("seed ", seed, ", ", o.policy));
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    for (const SimWorkerResult& wr : r->workers) {
      for (const PushRecord& p : wr.metrics.push_log) {
        ASSERT_FLOAT_EQ(p.scale, 1.0f / static_cast<float>(std::max<uint64_t>(p.staleness, 1)));
      }
    }
  }
}

// SaPS on virtual time: no worker ever waits, and no applied push is staler than S_max.
TEST(SimulatorPropertyTest, SapsNeverBlocksAndAppliesNothingStalerThanSMax) {
  for (uint64_t seed = 0; seed < 100; ++seed) {
    SimOptions o = RandomJob("saps", seed);
    o.push_log_size = 1000;
    SCOPED_TRACE(absl::StrCat("seed ", seed, ", ", o.num_workers, " workers"));
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->total_blocked_time, absl::ZeroDuration());
    const uint64_t s_max = std::max(1, 2 * (o.num_workers - 1));
    for (const SimWorkerResult& wr : r->workers) {
      for (const PushRecord& p : wr.metrics.push_log) {
        if (!p.dropped) {
          ASSERT_LE(p.staleness, s_max);
        }
      }
    }
  }
}

}  // namespace
}  // namespace kairos::sim
