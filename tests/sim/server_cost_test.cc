// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The simulated server's costs (ServerCostOptions): a shard's thread takes a push `receive`
// after it arrived and handles it for `apply`, and each served read for `read` (`queued_read`
// behind other work) before the reply leaves, so BSP's replies, released together, leave
// one after the other, and a push delays the read behind it.

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

// BSP, 4 workers: reads queued behind others (released together) cost 3 ms instead of 2:
// the replies leave at 2, 5, 8 and 11 ms, a round of 111 ms.
TEST(ServerCostTest, ReadsServedBackToBackCostTheirQueuedCost) {
  SimOptions o = Quiet("bsp", 4);
  o.server_cost.read = absl::Milliseconds(2);
  o.server_cost.queued_read = absl::Milliseconds(3);
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->end_time, 10 * absl::Milliseconds(111));
}

// BSP, 4 workers whose pushes arrive together: a push that takes 4 ms to reach the thread
// (receive) does not hold it, so the four take effect 4 ms after they arrived (a round of
// 104 ms), where 4 ms of apply each hold the thread in turn (effects at 0, 4, 8, 12 ms, the
// replies once the last apply ends: 116 ms). The run ends when the last push takes effect.
TEST(ServerCostTest, AReceiveDoesNotHoldTheThread) {
  struct Case {
    absl::Duration receive, apply, round, last_effect;
  };
  for (const Case& c : {Case{absl::Milliseconds(4), absl::ZeroDuration(), absl::Milliseconds(104),
                             absl::Milliseconds(4)},
                        Case{absl::ZeroDuration(), absl::Milliseconds(4), absl::Milliseconds(116),
                             absl::Milliseconds(12)}}) {
    SimOptions o = Quiet("bsp", 4);
    o.server_cost.receive = c.receive;
    o.server_cost.apply = c.apply;
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->end_time, 9 * c.round + absl::Milliseconds(100) + c.last_effect) << c.receive;
  }
}

// Eager pull, one worker that computes for 1 ms: each step waits for its reply, whose read
// the shard serves once the push it rides on is received (4 ms) and applied (2 ms), then
// reads (3 ms): a step every 9 ms instead of every 1 ms (the run ends when the last push
// takes effect).
TEST(ServerCostTest, AnEagerPushsReadIsServedOnceItIsApplied) {
  const auto end = [](absl::Duration receive, absl::Duration apply, absl::Duration read) {
    SimOptions o = Quiet("eager", 1);
    o.compute.compute_time = absl::Milliseconds(1);
    o.server_cost.receive = receive;
    o.server_cost.apply = apply;
    o.server_cost.read = read;
    absl::StatusOr<SimResult> r = Simulate(o);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->end_time : absl::ZeroDuration();
  };
  const absl::Duration none = end(absl::ZeroDuration(), absl::ZeroDuration(), absl::ZeroDuration());
  EXPECT_EQ(none, absl::Milliseconds(10));
  // The initial pull's read (3 ms) and g_0 (1 ms), nine steps of 9 ms, and the last push
  // taking effect once received (4 ms).
  EXPECT_EQ(end(absl::Milliseconds(4), absl::Milliseconds(2), absl::Milliseconds(3)),
            absl::Milliseconds(3 + 1 + 9 * 9 + 4));
}

TEST(ServerCostTest, NegativeCostsAreRefused) {
  SimOptions o = Quiet("asp", 1);
  o.server_cost.read = -absl::Milliseconds(1);
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(o).status()));
  o.server_cost.read = absl::ZeroDuration();
  o.server_cost.queued_read = -absl::Milliseconds(1);
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(o).status()));
  o.server_cost.queued_read.reset();
  o.server_cost.receive = -absl::Milliseconds(1);
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(o).status()));
}

}  // namespace
}  // namespace kairos::sim
