// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The simulated server's costs (ServerCostOptions): a shard's thread takes a push `receive`
// after it arrived and handles it for `apply`, and each served read for `read` (`queued_read`
// behind other work) before the reply leaves, so BSP's replies, released together, leave
// one after the other, and a push delays the read behind it; with a transport thread the
// receipts hold that thread instead. On a shared host (HostOptions) these costs are CPU
// work, stretched by the host's load, and so is a transfer's, beside or after its link.

#include <algorithm>
#include <tuple>
#include <utility>

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

// One worker, a push costs 5 ms and value weighting's pass 1 ms. Exact value weighting
// makes each apply 1 + 1 passes longer (7 ms) and each read one pass (1 ms), so the first
// reply leaves at 1 ms and every later iteration takes 108 ms; with the bound an apply takes
// two passes and a read none (107 ms); under any other weighting the pass costs nothing (the
// control: 105 ms, as above).
TEST(ServerCostTest, ValueWeightingsBookkeepingCostsItsPasses) {
  for (const auto& [policy, end] :
       {std::pair{"asp+weight=value", absl::Milliseconds(1 + 10 * 100 + 9 * 8)},
        std::pair{"asp+weight=value:mode=bound", absl::Milliseconds(10 * 100 + 9 * 7)},
        std::pair{"asp", absl::Milliseconds(10 * 100 + 9 * 5)},
        std::pair{"asp+weight=staleness", absl::Milliseconds(10 * 100 + 9 * 5)}}) {
    SimOptions o = Quiet(policy, 1);
    o.server_cost.apply = absl::Milliseconds(5);
    o.server_cost.drift_pass = absl::Milliseconds(1);
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->end_time, end) << policy;
  }
}

// Exact value weighting's apply adds a pass per worker. BSP, 3 workers, a pass of 1 ms: a
// round's reads (one pass each) send their replies at 1, 2 and 3 ms, so the pushes arrive
// at 101, 102 and 103 ms and their applies (1 + 3 passes each) run 101-105, 105-109 and
// 109-113; the last push takes effect at 109 ms (its apply's start) and the next round's
// reads wait for that apply: a round of 113 ms, and the run ends at 9 x 113 + 109 ms.
// Without value weighting the pass costs nothing (the control: 10 x 100 ms).
TEST(ServerCostTest, ExactValueWeightingPaysAPassPerWorker) {
  SimOptions o = Quiet("bsp+weight=value", 3);
  o.server_cost.drift_pass = absl::Milliseconds(1);
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->end_time, absl::Milliseconds(9 * 113 + 109));
  o.policy = "bsp";  // the control
  r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->end_time, absl::Milliseconds(10 * 100));
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

// SSP(0), 4 workers whose pushes arrive together: a push that takes 4 ms to reach the thread
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
    SimOptions o = Quiet("ssp:s=0", 4);  // bsp's gate without its round (below)
    o.server_cost.receive = c.receive;
    o.server_cost.apply = c.apply;
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->end_time, 9 * c.round + absl::Milliseconds(100) + c.last_effect) << c.receive;
  }
}

// bsp sums a round's pushes and applies the sum when the clock that completes the round
// arrives, before the reads it released: with 4 ms applies as above, the last push takes
// effect at 12 ms, the round's sum is applied 16-20 ms and the replies leave after it, a
// round of 120 ms. ssp:s=0, the same gate applying each push at once (the control): 116.
TEST(ServerCostTest, ARoundsSumIsAppliedBeforeTheReadsItReleases) {
  for (const auto& [policy, round] :
       {std::pair{"bsp", absl::Milliseconds(120)}, std::pair{"ssp:s=0", absl::Milliseconds(116)}}) {
    SimOptions o = Quiet(policy, 4);
    o.server_cost.apply = absl::Milliseconds(4);
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->end_time, 9 * round + absl::Milliseconds(100 + 12)) << policy;
  }
}

// The same with a transport thread per shard (ServerCostOptions::transport_thread), as a
// real server: the receipts hold it, one after the other, so the pushes take effect at 4,
// 8, 12 and 16 ms (a round of 116 ms).
TEST(ServerCostTest, OnATransportThreadReceiptsQueue) {
  SimOptions o = Quiet("bsp", 4);
  o.server_cost.receive = absl::Milliseconds(4);
  o.server_cost.transport_thread = true;
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->end_time, 9 * absl::Milliseconds(116) + absl::Milliseconds(100 + 16));
}

// BSP, 4 workers, one iteration of 3 ms: the first round's reads (2 ms each) leave at 2, 4,
// 6 and 8 ms and the pushes arrive at 5, 7, 9 and 11 ms, each received for 1 ms and applied
// for 3. On one thread the receipts run beside it (the parts reach it at 6, 8, 10 and 12 ms)
// and the applies run from 8, 11, 14 and 17 ms; with a transport thread, where the reads
// were served, the receipts wait for the reads (8-9, 9-10, 10-11, 11-12 ms) and the applies
// run from 9, 12, 15 and 18 ms. The run ends when the last push takes effect, at its
// apply's start.
TEST(ServerCostTest, OnATransportThreadReceiptsWaitForItsReads) {
  for (const auto& [transport, end] :
       {std::pair{false, absl::Milliseconds(17)}, std::pair{true, absl::Milliseconds(18)}}) {
    SimOptions o = Quiet("bsp", 4);
    o.iterations = 1;
    o.compute.compute_time = absl::Milliseconds(3);
    o.server_cost.read = absl::Milliseconds(2);
    o.server_cost.receive = absl::Milliseconds(1);
    o.server_cost.apply = absl::Milliseconds(3);
    o.server_cost.transport_thread = transport;
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->end_time, end) << transport;
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

// One worker that waits for its acknowledgements: a host of one core never has two jobs,
// so the run is the one without a host, to the nanosecond.
TEST(ServerCostTest, AHostWithNothingToShareChangesNothing) {
  const auto run = [](double cores) {
    SimOptions o = Quiet("asp", 1);
    o.worker_cost.push_waits = true;
    o.server_cost.apply = absl::Milliseconds(5);
    o.server_cost.read = absl::Milliseconds(2);
    o.server_cost.receive = absl::Milliseconds(3);
    o.host.cores = cores;
    if (cores > 0) o.host.gradient_cpu = absl::Milliseconds(50);  // done before the push
    absl::StatusOr<SimResult> r = Simulate(o);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : SimResult{};
  };
  const SimResult alone = run(0);
  const SimResult hosted = run(1);
  EXPECT_EQ(alone.end_time, absl::Milliseconds(10 * (2 + 100 + 3 + 5)));
  EXPECT_EQ(hosted.end_time, alone.end_time);
  EXPECT_EQ(hosted.workers[0].push_time, alone.workers[0].push_time);
  EXPECT_EQ(hosted.workers[0].pull_time, alone.workers[0].pull_time);
}

// Each worker's push time (one iteration each): two pushes arrive together at 100 ms and
// are received (4 ms each) side by side, then applied (2 ms each) in turn on the shard's
// thread. With two cores the receipts end at 104 and the acknowledgements leave at 106 and
// 108; with one core the receipts share it and end at 108, the acknowledgements at 110
// and 112.
TEST(ServerCostTest, OnAHostJobsThatOverlapShareItsCores) {
  for (const auto& [cores, first, second] :
       {std::tuple{2.0, absl::Milliseconds(6), absl::Milliseconds(8)},
        std::tuple{1.0, absl::Milliseconds(10), absl::Milliseconds(12)}}) {
    SimOptions o = Quiet("asp", 2);
    o.iterations = 1;
    o.worker_cost.push_waits = true;
    o.server_cost.apply = absl::Milliseconds(2);
    o.server_cost.receive = absl::Milliseconds(4);
    o.host.cores = cores;
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(std::min(r->workers[0].push_time, r->workers[1].push_time), first) << cores;
    EXPECT_EQ(std::max(r->workers[0].push_time, r->workers[1].push_time), second) << cores;
  }
}

// A receipt of 4 ms on one core: alone it takes 4 ms; beside a background job of weight 1
// it gets half the core (8 ms); with two cores the background takes only the spare one.
TEST(ServerCostTest, TheBackgroundSlowsAJobOnlyWhenTheCoresAreShort) {
  for (const auto& [cores, background, push] :
       {std::tuple{1.0, 0.0, absl::Milliseconds(4)}, std::tuple{1.0, 1.0, absl::Milliseconds(8)},
        std::tuple{2.0, 1.0, absl::Milliseconds(4)}}) {
    SimOptions o = Quiet("asp", 1);
    o.worker_cost.push_waits = true;
    o.server_cost.receive = absl::Milliseconds(4);
    o.host.cores = cores;
    o.host.background = background;
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->workers[0].push_time, 10 * push) << cores << " " << background;
  }
}

// Two workers whose gradients take 60 ms of CPU, on one core: both run at half speed from
// 0 (50 ms done at 100 ms), when the two pushes arrive and their receipts (4 ms each) join
// them: four jobs at a quarter speed, so the receipts end at 116 ms and each push waits
// 16 ms for its acknowledgement (8 ms with gradients that cost no CPU).
TEST(ServerCostTest, GradientsLoadTheHost) {
  for (const auto& [gradient, push] : {std::pair{absl::ZeroDuration(), absl::Milliseconds(8)},
                                       std::pair{absl::Milliseconds(60), absl::Milliseconds(16)}}) {
    SimOptions o = Quiet("asp", 2);
    o.iterations = 1;
    o.worker_cost.push_waits = true;
    o.server_cost.receive = absl::Milliseconds(4);
    o.host.cores = 1;
    o.host.gradient_cpu = gradient;
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->workers[0].push_time, push) << gradient;
    EXPECT_EQ(r->workers[1].push_time, push) << gradient;
  }
}

// One worker, 32-byte messages (8 parameters) on links that take 2 ms to cross: a
// transfer's CPU (1 ms per message) runs beside the crossing and adds nothing; at 3 ms it
// is what the message waits for. A share of it after the crossing adds to the crossing once
// the share beside it is done. Each iteration: a reply, 100 ms of compute, a push.
TEST(ServerCostTest, ATransfersCpuRunsBesideItsLinksOrAfterThem) {
  for (const auto& [cpu, after, message] :  // CPU, its share after, the message's time
       {std::tuple{absl::ZeroDuration(), 0.0, absl::Milliseconds(2)},
        std::tuple{absl::Milliseconds(1), 0.0, absl::Milliseconds(2)},
        std::tuple{absl::Milliseconds(3), 0.0, absl::Milliseconds(3)},
        std::tuple{absl::Milliseconds(1), 1.0, absl::Milliseconds(3)},
        std::tuple{absl::Milliseconds(2), 0.5, absl::Milliseconds(3)},
        std::tuple{absl::Milliseconds(6), 0.5, absl::Milliseconds(6)}}) {
    SimOptions o = Quiet("asp", 1);
    o.worker_cost.push_waits = true;
    o.network.serialize_links = true;
    o.network.bandwidth_bytes_per_s = 32 / 2e-3;
    o.host.cores = 1;
    o.host.transfer_cpu_per_mb = cpu * (1e6 / 32);
    o.host.transfer_cpu_after_link = after;
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->end_time, 10 * (absl::Milliseconds(100) + 2 * message)) << cpu << " " << after;
    EXPECT_EQ(r->workers[0].push_time, 10 * message) << cpu << " " << after;
  }
}

TEST(ServerCostTest, BadHostsAreRefused) {
  SimOptions o = Quiet("asp", 1);
  o.host.cores = -1;
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(o).status()));
  o.host.cores = 2;
  o.host.background = -0.5;
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(o).status()));
  o.host.background = 0;
  o.host.gradient_cpu = -absl::Milliseconds(1);
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(o).status()));
  o.host.gradient_cpu = absl::ZeroDuration();
  o.host.transfer_cpu_per_mb = absl::Milliseconds(1);  // needs serialized links
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(o).status()));
  o.network.serialize_links = true;
  EXPECT_TRUE(Simulate(o).ok());  // the positive control
  for (const double after : {-0.1, 1.5}) {
    o.host.transfer_cpu_after_link = after;
    EXPECT_TRUE(absl::IsInvalidArgument(Simulate(o).status())) << after;
  }
  o.host.transfer_cpu_after_link = 1.0;
  EXPECT_TRUE(Simulate(o).ok());
  o.host.cores = 0;               // a transfer's CPU needs a host
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(o).status()));
  o.host.transfer_cpu_per_mb = absl::ZeroDuration();
  o.host.gradient_cpu = absl::Milliseconds(1);  // so does a gradient's
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(o).status()));
  o.host.gradient_cpu = absl::ZeroDuration();
  EXPECT_TRUE(Simulate(o).ok());
  o.host.run_to_completion = true;  // and running jobs to completion
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(o).status()));
  o.host.cores = 2;
  EXPECT_TRUE(Simulate(o).ok());
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
  o.server_cost.receive = absl::ZeroDuration();
  o.server_cost.drift_pass = -absl::Milliseconds(1);
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(o).status()));
  o.server_cost.drift_pass = absl::ZeroDuration();  // the control
  EXPECT_TRUE(Simulate(o).ok());
}

}  // namespace
}  // namespace kairos::sim
