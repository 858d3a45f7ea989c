// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The raw ceiling of kairos_transport_bench (docs/benchmarks.md): the shape of the kairos
// run it copies (message size, messages in flight, connections) and the raw runs themselves.

#include <cstdint>

#include "absl/status/status.h"
#include "bench/bench_report.h"
#include "bench/kairos_workloads.h"
#include "bench/raw_zmq_workloads.h"
#include "gtest/gtest.h"

namespace kairos::bench {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kChunk = uint64_t{1} << 18;  // the default chunk_elements: 1 MiB
const PipelineOptions kPipeline{16, uint64_t{256} << 20};

TEST(KairosWireShapeTest, OneChunkValueOneServer) {
  const WireShape s = KairosWireShape(kMiB, 1, 1, kChunk, kPipeline);
  EXPECT_EQ(s.message_bytes, kMiB);
  EXPECT_EQ(s.chunks, 1);
  EXPECT_EQ(s.messages_in_flight, 16);  // the window: 16 requests of one message
  EXPECT_EQ(s.connections, 1);
}

TEST(KairosWireShapeTest, LargeValueIsCappedByTheWorkersFlowControl) {
  // 64 MiB: 64 chunks of 1 MiB; the window is 4 requests (256 MiB), 256 messages, but the
  // worker keeps at most 16 MiB in flight to a server.
  const WireShape s = KairosWireShape(64 * kMiB, 1, 1, kChunk, kPipeline);
  EXPECT_EQ(s.message_bytes, kMiB);
  EXPECT_EQ(s.chunks, 64);
  EXPECT_EQ(s.messages_in_flight, 16);
  EXPECT_EQ(s.connections, 1);
}

TEST(KairosWireShapeTest, EveryServerGetsAChunkAndEveryWorkerAConnectionToEach) {
  // 1 MiB over 2 servers: 2 chunks of 512 KiB, one per server; 3 workers x 2 servers.
  const WireShape s = KairosWireShape(kMiB, 2, 3, kChunk, kPipeline);
  EXPECT_EQ(s.message_bytes, kMiB / 2);
  EXPECT_EQ(s.chunks, 2);
  EXPECT_EQ(s.messages_in_flight, 16);
  EXPECT_EQ(s.connections, 6);
}

TEST(KairosWireShapeTest, SmallChunksFillTheFlowControlAllowance) {
  // 16 MiB in chunks of 4 KiB: 4096 chunks; 16 MiB / 4 KiB = 4096 messages in flight.
  const WireShape s = KairosWireShape(16 * kMiB, 1, 1, 1024, kPipeline);
  EXPECT_EQ(s.message_bytes, 4096u);
  EXPECT_EQ(s.chunks, 4096);
  EXPECT_EQ(s.messages_in_flight, 4096);
}

TEST(KairosWireShapeTest, WindowOfOneRequest) {
  const WireShape s = KairosWireShape(kMiB, 1, 1, kChunk, PipelineOptions{1, uint64_t{256} << 20});
  EXPECT_EQ(s.messages_in_flight, 1);
}

TEST(KairosWireShapeTest, FewerElementsThanServers) {
  // 3 floats over 4 servers: 3 chunks of one float, on 3 servers.
  const WireShape s = KairosWireShape(12, 4, 2, kChunk, kPipeline);
  EXPECT_EQ(s.chunks, 3);
  EXPECT_EQ(s.message_bytes, 4u);
  EXPECT_EQ(s.connections, 6);
}

TEST(KairosWireShapeTest, UnevenChunksUseTheLargest) {
  // 5 floats in chunks of at most 2: 3 chunks of 2, 2 and 1 floats (sizes differ by one).
  const WireShape s = KairosWireShape(20, 1, 1, 2, kPipeline);
  EXPECT_EQ(s.chunks, 3);
  EXPECT_EQ(s.message_bytes, 8u);
}

TEST(RawOneWayTest, RejectsEmptySpecs) {
  const Budget budget{0.01, 0.01};
  RawSpec empty_message;
  EXPECT_EQ(RawOneWay(empty_message, budget).status().code(),
            absl::StatusCode::kInvalidArgument);
  RawSpec no_connections{.message_bytes = 4096, .connections = 0};
  EXPECT_EQ(RawOneWay(no_connections, budget).status().code(),
            absl::StatusCode::kInvalidArgument);
  RawSpec no_window{.message_bytes = 4096, .mode = RawMode::kWindow, .window = 0};
  EXPECT_EQ(RawOneWay(no_window, budget).status().code(), absl::StatusCode::kInvalidArgument);
}

// Both modes over several connections move messages and count them over the measured
// interval, all connections together. The budget leaves a loaded machine time to connect
// and to schedule the pairs' threads (0.05 s + 0.1 s once saw no message arrive).
void ExpectMovesMessages(RawMode mode) {
  const Budget budget{0.25, 0.5};
  const RawSpec spec{.message_bytes = 4096, .connections = 3, .mode = mode, .window = 4};
  absl::StatusOr<Throughput> t = RawOneWay(spec, budget);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_GT(t->ops, 0u);
  EXPECT_DOUBLE_EQ(t->seconds, budget.seconds);
  EXPECT_DOUBLE_EQ(t->ops_per_s, t->ops / budget.seconds);
  EXPECT_DOUBLE_EQ(t->mb_per_s, static_cast<double>(t->ops) * 4096 / budget.seconds / kMegabyte);
}

TEST(RawOneWayTest, StreamMovesMessagesOverSeveralConnections) {
  ExpectMovesMessages(RawMode::kStream);
}

TEST(RawOneWayTest, WindowMovesMessagesOverSeveralConnections) {
  ExpectMovesMessages(RawMode::kWindow);
}

// The sweep's verdict: a window below 80% of the best smaller one collapses.
TEST(JudgeWindowsTest, FlagsAWindowBelowFourFifthsOfTheBestSmallerOne) {
  // The figures the verdict was made for: pull 16 MiB at windows 1, 4, 16.
  const WindowVerdict collapsed = JudgeWindows({1, 4, 16}, {1963, 1242, 134});
  EXPECT_FALSE(collapsed.ok);
  EXPECT_EQ(collapsed.best_window, 1);
  EXPECT_EQ(collapsed.worst_window, 16);
  EXPECT_NEAR(collapsed.worst_ratio, 134.0 / 1963.0, 1e-12);
  EXPECT_NE(collapsed.ToString().find("COLLAPSE"), std::string::npos);
}

TEST(JudgeWindowsTest, RisingOrSlightlyFallingThroughputIsOk) {
  const WindowVerdict rising = JudgeWindows({1, 2, 4, 8, 16}, {1000, 1500, 2000, 1900, 1700});
  EXPECT_TRUE(rising.ok);  // 1700 is 85% of 2000
  EXPECT_EQ(rising.best_window, 4);
  EXPECT_EQ(rising.worst_window, 16);
  EXPECT_DOUBLE_EQ(rising.worst_ratio, 0.85);
  // The floor is against the best smaller window, not the previous one.
  EXPECT_FALSE(JudgeWindows({1, 2, 4}, {1000, 850, 790}).ok);
  EXPECT_TRUE(JudgeWindows({1}, {1000}).ok);
}

}  // namespace
}  // namespace kairos::bench
