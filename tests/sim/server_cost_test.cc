// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The simulated server's costs (ServerCostOptions): its one thread handles a push for
// `apply` and each served read for `read` before the reply leaves, so BSP's replies,
// released together, leave one after the other, and a push delays the read behind it.

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "sim_test_util.h"

namespace kairos::sim {
namespace {

// 100 ms of compute, no network time, 10 iterations.
SimOptions Quiet(const char* policy, int workers) {
  SimOptions o;
  o.policy = policy;
  o.num_workers = workers;
  o.model = SmallQuadratic(8, 256);
  o.iterations = 10;
  o.network.latency = absl::ZeroDuration();
  o.network.bandwidth_bytes_per_s = 0;
  return o;
}

// BSP, 4 workers, a read costs 2 ms: the round's four replies leave at 2, 4, 6 and 8 ms, so
// the last push arrives 108 ms after the round was released (100 ms without the cost).
TEST(ServerCostTest, BspRepliesLeaveOneAfterTheOther) {
  for (const auto& [read, round] : {std::pair{absl::ZeroDuration(), absl::Milliseconds(100)},
                                    std::pair{absl::Milliseconds(2), absl::Milliseconds(108)}}) {
    SimOptions o = Quiet("bsp", 4);
    o.server_cost.read = read;
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->end_time, 10 * round) << read;
  }
}

// One worker, a push costs 5 ms: the read behind it is answered once the apply is done, so
// an iteration takes 105 ms.
TEST(ServerCostTest, AReadWaitsForTheApplyBeforeIt) {
  SimOptions o = Quiet("asp", 1);
  o.server_cost.apply = absl::Milliseconds(5);
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->end_time, absl::Milliseconds(10 * 100 + 9 * 5));
}

TEST(ServerCostTest, NegativeCostsAreRefused) {
  SimOptions o = Quiet("asp", 1);
  o.server_cost.read = -absl::Milliseconds(1);
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(o).status()));
}

}  // namespace
}  // namespace kairos::sim
