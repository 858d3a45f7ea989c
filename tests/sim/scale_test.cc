// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A run at the scale the simulator exists for: 256 workers, one of them failing. The test
// checks behaviour only; ctest bounds its time (scale_test_timeout.cmake). Twenty
// iterations exercise every gate and keep sanitizer builds well inside the bound.

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "policy/policy.h"
#include "sim/simulator.h"
#include "sim_test_util.h"

namespace kairos::sim {
namespace {

TEST(SimulatorScaleTest, TwoHundredFiftySixWorkersFinish) {
  struct Case {
    const char* policy;
    int64_t lead_bound;
  };
  for (const Case& c : {Case{"bsp", 0}, Case{"ssp:s=3", 3}, Case{"asp", INT64_MAX}}) {
    SCOPED_TRACE(c.policy);
    SimOptions o;
    o.policy = c.policy;
    o.num_workers = 256;
    o.model = SmallQuadratic(16, 1024);
    o.learning_rate = 0.002f;  // up to 255 stale gradients in flight under ASP
    o.iterations = 20;
    o.compute.jitter_mean = 0.5;
    o.compute.straggler_prob = 0.05;
    o.compute.slowdown = {4.0, 2.0};
    o.failures = {{.worker = 7, .at = absl::Milliseconds(700)}};
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->workers[7].state, policy::MemberState::kDead);
    EXPECT_LT(r->workers[7].iterations, 20);
    EXPECT_EQ(r->total_iterations(), 255 * 20 + r->workers[7].iterations);
    EXPECT_LE(r->max_read_lead, c.lead_bound);
    EXPECT_LT(r->samples.back().loss, r->samples.front().loss);
  }
}

}  // namespace
}  // namespace kairos::sim
