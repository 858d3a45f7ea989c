// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The simulated worker's costs (WorkerCostOptions): with push_waits a worker reports its
// clock and sends its next read only once its push is acknowledged, so each iteration takes
// two more latencies and the gate sees the clock later; `local` adds the worker's own time
// to each iteration (`eager_local` to each eager step), `receive` to each pull.

#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "sim_test_util.h"

namespace kairos::sim {
namespace {

// 100 ms of compute, 1 ms of latency and no transfer time, 10 iterations.
SimOptions Timed(const char* policy, int workers) {
  SimOptions o;
  o.policy = policy;
  o.num_workers = workers;
  o.model = SmallQuadratic(8, 256);
  o.iterations = 10;
  o.network.latency = absl::Milliseconds(1);
  o.network.bandwidth_bytes_per_s = 0;
  return o;
}

absl::Duration Ms(double ms) { return absl::Microseconds(1000 * ms); }

// One worker: without push_waits an iteration is the reply's latency, the compute and the
// push's latency (102 ms, the read riding behind the push); with it, the acknowledgement's
// latency and the read's are added (104 ms), and 5 ms of apply delay the acknowledgement.
// The first read arrives at 1 ms; the run ends when the last clock report arrives.
TEST(WorkerCostTest, APushThatWaitsAddsTheAcknowledgementAndTheReadLatencies) {
  struct Case {
    bool push_waits;
    absl::Duration apply;
    absl::Duration end, pull, push;
  };
  for (const Case& c : {Case{false, absl::ZeroDuration(), Ms(1 + 10 * 102), Ms(20), Ms(0)},
                        Case{true, absl::ZeroDuration(), Ms(1 + 10 * 104), Ms(20), Ms(20)},
                        Case{true, Ms(5), Ms(1 + 10 * 109), Ms(20), Ms(70)}}) {
    SimOptions o = Timed("asp", 1);
    o.worker_cost.push_waits = c.push_waits;
    o.server_cost.apply = c.apply;
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->end_time, c.end) << c.push_waits << " " << c.apply;
    EXPECT_EQ(r->workers[0].iterations, 10);
    EXPECT_EQ(r->workers[0].pull_time, c.pull) << c.push_waits << " " << c.apply;
    EXPECT_EQ(r->workers[0].push_time, c.push) << c.push_waits << " " << c.apply;
  }
}

// BSP, worker 1 twice as slow: a round is the reply's latency, the slow worker's 200 ms, its
// push's latency, and with push_waits the acknowledgement's and the clock report's (the gate
// sees the clock only then): 202 or 204 ms. Worker 0's read arrives 102 or 104 ms after the
// round's release and waits 100 ms in the gate in each of the 9 rounds after the first.
TEST(WorkerCostTest, TheGateSeesTheClockOnlyAfterTheAcknowledgement) {
  for (const bool push_waits : {false, true}) {
    SimOptions o = Timed("bsp", 2);
    o.compute.slowdown = {1.0, 2.0};
    o.worker_cost.push_waits = push_waits;
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    const absl::Duration round = push_waits ? Ms(204) : Ms(202);
    EXPECT_EQ(r->end_time, Ms(1) + 10 * round) << push_waits;
    EXPECT_EQ(r->workers[0].metrics.blocked_time, 9 * Ms(100)) << push_waits;
    EXPECT_EQ(r->workers[1].metrics.blocked_time, absl::ZeroDuration()) << push_waits;
  }
}

// `local` adds to every iteration, on every worker alike: 10 iterations of 102 + 3 ms.
TEST(WorkerCostTest, LocalTimeAddsToEachIteration) {
  SimOptions o = Timed("asp", 2);
  o.worker_cost.local = Ms(3);
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->end_time, Ms(1 + 10 * 105));
  EXPECT_EQ(r->workers[0].compute_time, Ms(1000));  // the gradients' time alone
}

// eager_local replaces `local` under eager pull, and only there.
TEST(WorkerCostTest, EagerLocalTimeIsTheEagerStepsOwn) {
  const auto end = [](const char* policy, double local, std::optional<double> eager_local) {
    SimOptions o = Timed(policy, 2);
    o.worker_cost.local = Ms(local);
    if (eager_local) o.worker_cost.eager_local = Ms(*eager_local);
    absl::StatusOr<SimResult> r = Simulate(o);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->end_time : absl::ZeroDuration();
  };
  EXPECT_EQ(end("eager", 3, 7), end("eager", 7, std::nullopt));
  EXPECT_NE(end("eager", 3, 7), end("eager", 3, std::nullopt));  // the control
  EXPECT_EQ(end("asp", 3, 7), Ms(1 + 10 * 105));                 // asp keeps `local`
  SimOptions bad = Timed("eager", 1);
  bad.worker_cost.eager_local = -Ms(1);
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(bad).status()));
}

// An eager push carries the next read: push_waits changes nothing there.
TEST(WorkerCostTest, EagerPullIgnoresPushWaits) {
  SimOptions o = Timed("eager", 2);
  absl::StatusOr<SimResult> plain = Simulate(o);
  o.worker_cost.push_waits = true;
  absl::StatusOr<SimResult> waits = Simulate(o);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(waits.ok()) << waits.status();
  EXPECT_EQ(plain->end_time, waits->end_time);
  EXPECT_EQ(plain->final_params, waits->final_params);
  EXPECT_EQ(waits->workers[0].push_time, absl::ZeroDuration());
}

// A worker that dies between its push and the acknowledgement reports no clock: the gate
// learns of it from the failure detection, and the other worker finishes.
TEST(WorkerCostTest, AWorkerThatDiesBeforeTheAcknowledgementReportsNoClock) {
  SimOptions o = Timed("bsp", 2);
  o.worker_cost.push_waits = true;
  o.failures = {{.worker = 1, .at = Ms(103.5)}};  // its first push arrived at 103 ms
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->workers[1].iterations, 0);
  EXPECT_EQ(r->workers[1].state, policy::MemberState::kDead);
  EXPECT_EQ(r->workers[0].iterations, 10);
}

// `receive` is the worker's taking in of each reply: without a host it adds to every
// iteration and to the pull (10 iterations of 102 + 3 ms, each pull 2 + 3 ms); on a host
// it is CPU work there, so the two workers' take-ins, which start together, share one core
// (each 6 ms: 10 iterations of 108 ms) and do not share two (105 ms). Run to completion on
// one core, worker 1's first take-in waits for worker 0's (3 ms more in its first pull) and
// the two never meet again (worker 1 ends 3 ms after worker 0).
TEST(WorkerCostTest, TakingInAReplyAddsToThePull) {
  struct Case {
    double cores;
    bool run_to_completion;
    absl::Duration end, pull;
  };
  for (const Case& c :
       {Case{0, false, Ms(1 + 10 * 105), Ms(50)}, Case{2, false, Ms(1 + 10 * 105), Ms(50)},
        Case{1, false, Ms(1 + 10 * 108), Ms(80)}, Case{1, true, Ms(1 + 10 * 105 + 3), Ms(53)}}) {
    SimOptions o = Timed("asp", 2);
    o.worker_cost.receive = Ms(3);
    o.host.cores = c.cores;
    o.host.run_to_completion = c.run_to_completion;
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->end_time, c.end) << c.cores;
    EXPECT_EQ(r->workers[1].pull_time, c.pull) << c.cores;
    EXPECT_EQ(r->workers[1].compute_time, Ms(1000)) << c.cores;
  }
}

TEST(WorkerCostTest, NegativeTimesAreRefused) {
  SimOptions o = Timed("asp", 1);
  o.worker_cost.local = -Ms(1);
  const absl::Status s = Simulate(o).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("worker_cost.local"), std::string::npos) << s;
  o.worker_cost.local = Ms(1);
  o.worker_cost.receive = -Ms(1);
  const absl::Status t = Simulate(o).status();
  EXPECT_TRUE(absl::IsInvalidArgument(t)) << t;
  EXPECT_NE(t.message().find("worker_cost.receive"), std::string::npos) << t;
  o.worker_cost.receive = Ms(1);
  EXPECT_TRUE(Simulate(o).ok());  // the control
}

}  // namespace
}  // namespace kairos::sim
