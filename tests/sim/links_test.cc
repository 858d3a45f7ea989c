// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The simulated network with contention (sim/links.h), alone and in a simulation: a message
// alone takes latency + bytes / bandwidth; messages through one link queue; the two
// directions of a link do not; a faster receiver cannot beat its sender's uplink.

#include "sim/links.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "sim_test_util.h"

namespace kairos::sim {
namespace {

const absl::Time kT0 = absl::UnixEpoch();
constexpr double kBytes = 1000.0;
constexpr double kRate = 1e5;  // 1000 bytes in 10 ms
const absl::Duration kX = absl::Milliseconds(10);
const absl::Duration kLatency = absl::Milliseconds(2);

TEST(LinksTest, AMessageAloneTakesLatencyPlusBytesOverBandwidth) {
  Links links(2, kLatency, kLatency, kRate, kRate);
  EXPECT_EQ(links.Send(Links::kServer, 0, kBytes, kT0), kT0 + kLatency + kX);
  EXPECT_EQ(links.Send(1, Links::kServer, kBytes, kT0 + absl::Seconds(1)),
            kT0 + absl::Seconds(1) + kLatency + kX);
}

TEST(LinksTest, MessagesThroughOneLinkQueue) {
  // The server's uplink: three replies sent at once leave one after the other.
  Links links(3, kLatency, kLatency, kRate, kRate);
  for (int w = 0; w < 3; ++w) {
    EXPECT_EQ(links.Send(Links::kServer, w, kBytes, kT0), kT0 + kLatency + (w + 1) * kX) << w;
  }
  // The server's downlink: two pushes sent at once arrive one after the other.
  Links down(2, kLatency, kLatency, kRate, kRate);
  EXPECT_EQ(down.Send(0, Links::kServer, kBytes, kT0), kT0 + kLatency + kX);
  EXPECT_EQ(down.Send(1, Links::kServer, kBytes, kT0), kT0 + kLatency + 2 * kX);
}

TEST(LinksTest, TheTwoDirectionsOfALinkDoNotQueue) {
  Links links(1, kLatency, kLatency, kRate, kRate);
  EXPECT_EQ(links.Send(Links::kServer, 0, kBytes, kT0), kT0 + kLatency + kX);
  EXPECT_EQ(links.Send(0, Links::kServer, kBytes, kT0), kT0 + kLatency + kX);
}

TEST(LinksTest, AFastReceiverWaitsForItsSendersUplink) {
  // The server's link is ten times the worker's: the worker's uplink sets the pace both ways.
  Links links(1, kLatency, kLatency, kRate, 10 * kRate);
  EXPECT_EQ(links.Send(0, Links::kServer, kBytes, kT0), kT0 + kLatency + kX);
  EXPECT_EQ(links.Send(Links::kServer, 0, kBytes, kT0), kT0 + kLatency + kX);
}

TEST(LinksTest, InfiniteBandwidthLeavesTheLatency) {
  Links links(2, kLatency, kLatency, 0.0, 0.0);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(links.Send(Links::kServer, i % 2, kBytes, kT0), kT0 + kLatency);
  }
}

// BSP, 4 workers of 100 ms, a message of 10 ms, no latency, 10 rounds. Without contention a
// round is 100 + 2 x 10 ms. With serialized links the server's uplink sends the four replies
// one after the other and worker k gets its reply at k x 10 ms, so the last push arrives
// 100 + (4 + 1) x 10 ms after the round started (the pushes, as staggered, do not queue).
// With an infinite server link only the workers' own links count: 100 + 2 x 10 ms again.
TEST(LinksSimulationTest, BspRoundsQueueAtTheServersLink) {
  SimOptions o;
  o.policy = "bsp";
  o.num_workers = 4;
  o.model = SmallQuadratic(8, 256);
  o.iterations = 10;
  o.network.latency = absl::ZeroDuration();
  o.network.bandwidth_bytes_per_s = 4.0 * 8 / 0.010;  // 8 parameters in 10 ms
  struct Case {
    bool serialize;
    double server_bandwidth;
    absl::Duration end;
  };
  for (const Case& c : {Case{false, -1.0, absl::Milliseconds(10 * 120)},
                        Case{true, -1.0, absl::Milliseconds(10 * 150)},
                        Case{true, 0.0, absl::Milliseconds(10 * 120)}}) {
    SCOPED_TRACE(testing::Message() << c.serialize << " " << c.server_bandwidth);
    o.network.serialize_links = c.serialize;
    o.network.server_bandwidth_bytes_per_s = c.server_bandwidth;
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->end_time, c.end);
  }
}

// A delay on one side: a worker's message takes `to_server` of latency, the server's
// `to_worker`, each plus its transfer.
TEST(LinksTest, EachDirectionHasItsOwnLatency) {
  Links links(1, absl::Milliseconds(5), absl::Milliseconds(2), kRate, kRate);
  EXPECT_EQ(links.Send(0, Links::kServer, kBytes, kT0), kT0 + absl::Milliseconds(5) + kX);
  EXPECT_EQ(links.Send(Links::kServer, 0, kBytes, kT0), kT0 + absl::Milliseconds(2) + kX);
}

// NetworkOptions' send delays add to the latency of what each side sends: one worker, 1 ms
// of latency, 100 ms of compute, no transfer time; 3 ms more on the worker's messages
// delay its first read and each push, 3 ms more on the server's each reply.
TEST(LinksTest, SendDelaysAddToTheSendersMessages) {
  for (const bool serialize : {false, true}) {
    for (const bool worker_side : {false, true}) {
      SCOPED_TRACE(testing::Message() << serialize << " " << worker_side);
      SimOptions o;
      o.policy = "asp";
      o.num_workers = 1;
      o.model = SmallQuadratic(8, 256);
      o.iterations = 10;
      o.network.latency = absl::Milliseconds(1);
      o.network.bandwidth_bytes_per_s = 0;
      o.network.serialize_links = serialize;
      (worker_side ? o.network.worker_send_delay : o.network.server_send_delay) =
          absl::Milliseconds(3);
      absl::StatusOr<SimResult> r = Simulate(o);
      ASSERT_TRUE(r.ok()) << r.status();
      const absl::Duration first_read = absl::Milliseconds(worker_side ? 4 : 1);
      EXPECT_EQ(r->end_time, first_read + 10 * absl::Milliseconds(105));
      // The read's way there and the reply's way back.
      EXPECT_EQ(r->workers[0].pull_time, 10 * absl::Milliseconds(5));
    }
  }
  SimOptions bad;
  bad.network.server_send_delay = -absl::Milliseconds(1);
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(bad).status()));
}

// Server shards (NetworkOptions::server_shards) through serialized links: one worker, a
// message takes 10 ms on its link (the servers' links infinite, no latency), 1 ms of
// compute. Eager: with one server a step is the push up (10 ms) then the reply down
// (10 ms); with two shards the first shard's half of the reply comes down (5-10 ms) while
// the second half of the push goes up, so a step takes 15 ms. On demand, with the push
// acknowledged before the read, nothing overlaps and both take 1 + 10 + 10 ms. Without
// serialized links, nothing queues and nothing overlaps.
absl::Duration StepTime(const char* policy, int shards, bool push_waits, bool serialize = true) {
  const auto run = [&](int iterations) {
    SimOptions o;
    o.policy = policy;
    o.num_workers = 1;
    o.model = SmallQuadratic(8, 256);
    o.iterations = iterations;
    o.compute.compute_time = absl::Milliseconds(1);
    o.network.latency = absl::ZeroDuration();
    o.network.bandwidth_bytes_per_s = 4.0 * 8 / 0.010;  // 8 parameters in 10 ms
    o.network.serialize_links = serialize;
    o.network.server_bandwidth_bytes_per_s = 0;
    o.network.server_shards = shards;
    o.worker_cost.push_waits = push_waits;
    absl::StatusOr<SimResult> r = Simulate(o);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->end_time : absl::ZeroDuration();
  };
  return (run(20) - run(10)) / 10;
}

TEST(LinksTest, ShardsOverlapAnEagerPushWithItsReply) {
  EXPECT_EQ(StepTime("eager", 1, false), absl::Milliseconds(20));
  EXPECT_EQ(StepTime("eager", 2, false), absl::Milliseconds(15));
  EXPECT_EQ(StepTime("asp", 1, true), absl::Milliseconds(21));
  EXPECT_EQ(StepTime("asp", 2, true), absl::Milliseconds(21));
  // Without serialized links a message's parts together take the message's time: two
  // shards change nothing.
  EXPECT_EQ(StepTime("eager", 1, false, false), absl::Milliseconds(20));
  EXPECT_EQ(StepTime("eager", 2, false, false), absl::Milliseconds(20));
  SimOptions bad;
  bad.network.server_shards = 0;
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(bad).status()));
}

}  // namespace
}  // namespace kairos::sim
