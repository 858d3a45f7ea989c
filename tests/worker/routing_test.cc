// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the worker's request routing, driven directly: a table range cut at the chunk
// boundaries into one message per chunk, addressed to the chunk's shard, with the headers,
// payload slices and flow-control bytes each carries; the range checks; control requests.

#include "worker/routing.h"

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

using ::testing::HasSubstr;

// 12 elements over 2 shards in chunks of 3: [0, 3) [3, 6) on shard 0, [6, 9) [9, 12) on 1.
const TablePartition kPartition(12, 2, 3);
const TableInfo kTable{4, "w", 12, 0.1f};
constexpr Stamp kStamp{/*sender=*/7, /*clock=*/3, /*timeout_ms=*/500, /*first_id=*/100};

std::shared_ptr<RequestState> State(int parts) {
  return std::make_shared<RequestState>(RequestLabel{"push", "w", 2, 10},
                                        absl::InfiniteFuture(), parts);
}

// Routes [offset, offset + length) as `route` says.
Batch Route(RangeRoute route, const std::shared_ptr<RequestState>& state) {
  return RouteRange(route, kPartition.Overlapping(route.offset, route.offset + route.length),
                    kStamp, state);
}

TEST(RoutingTest, APushIsOneMessagePerChunkCarryingItsSliceOfThePayload) {
  Buffer gradient = Buffer::Allocate(8);
  for (int i = 0; i < 8; ++i) gradient[i] = static_cast<float>(i);
  RangeRoute route;
  route.kind = wire::PUSH;
  route.table = kTable.id;
  route.offset = 2;
  route.length = 8;
  route.payload = gradient;
  auto state = State(4);
  const Batch batch = Route(route, state);

  ASSERT_EQ(batch.size(), 4u);
  const uint64_t begins[] = {2, 3, 6, 9};
  const uint64_t ends[] = {3, 6, 9, 10};
  const int shards[] = {0, 0, 1, 1};
  for (int i = 0; i < 4; ++i) {
    const auto& [part, m] = batch[i];
    const uint64_t n = ends[i] - begins[i];
    EXPECT_EQ(m.header.kind(), wire::PUSH) << i;
    EXPECT_EQ(m.header.request_id(), 100u + i) << i;
    EXPECT_EQ(m.header.sender(), 7u) << i;
    EXPECT_EQ(m.header.table(), 4u) << i;
    EXPECT_EQ(m.header.offset(), begins[i]) << i;
    EXPECT_EQ(m.header.length(), n) << i;
    EXPECT_EQ(m.header.clock(), 3) << i;
    EXPECT_EQ(m.header.timeout_ms(), 0u) << "a push is never held: " << i;
    EXPECT_FALSE(m.header.pull_after()) << i;
    ASSERT_EQ(m.payloads.size(), 1u) << i;
    EXPECT_EQ(m.payloads[0].data(), gradient.data() + (begins[i] - 2)) << "shared: " << i;
    EXPECT_EQ(m.payloads[0].size(), n) << i;
    EXPECT_EQ(part.state, state) << i;
    EXPECT_EQ(part.shard, shards[i]) << i;
    EXPECT_EQ(part.length, n) << i;
    EXPECT_EQ(part.bytes, n * sizeof(float)) << "the pushed values only: " << i;
    EXPECT_FALSE(part.reads) << i;
    EXPECT_EQ(part.eager, nullptr) << i;
  }
}

TEST(RoutingTest, APullAsksForEachChunksPartAndSaysWhereItsValuesGo) {
  RangeRoute route;
  route.kind = wire::PULL;
  route.table = kTable.id;
  route.offset = 4;
  route.length = 6;  // [4, 10): [4, 6) [6, 9) [9, 10)
  const Batch batch = Route(route, State(3));
  ASSERT_EQ(batch.size(), 3u);
  const uint64_t at[] = {0, 2, 5};
  const uint64_t lengths[] = {2, 3, 1};
  for (int i = 0; i < 3; ++i) {
    const auto& [part, m] = batch[i];
    EXPECT_EQ(m.header.kind(), wire::PULL) << i;
    EXPECT_EQ(m.header.offset(), 4 + at[i]) << i;
    EXPECT_EQ(m.header.timeout_ms(), 500u) << "a read may wait in the gate: " << i;
    EXPECT_TRUE(m.payloads.empty()) << i;
    EXPECT_TRUE(part.reads) << i;
    EXPECT_EQ(part.at, at[i]) << i;
    EXPECT_EQ(part.length, lengths[i]) << i;
    EXPECT_EQ(part.bytes, lengths[i] * sizeof(float)) << "the reply's values: " << i;
  }
}

TEST(RoutingTest, ARangeWithinOneChunkIsOneMessage) {
  RangeRoute route;
  route.kind = wire::PULL;
  route.offset = 6;
  route.length = 3;
  const Batch batch = Route(route, State(1));
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].first.shard, 1);
  EXPECT_EQ(batch[0].second.header.offset(), 6u);
  EXPECT_EQ(batch[0].second.header.length(), 3u);
}

TEST(RoutingTest, AnEagerPushAsksForItsRangeAfterThePushAndCountsBothWays) {
  PushPullReply reply;
  RangeRoute route;
  route.kind = wire::PUSH;
  route.offset = 0;
  route.length = 6;
  route.payload = Buffer::Zeros(6);
  route.eager = &reply;
  route.scale = 0.5f;
  const Batch batch = Route(route, State(2));
  ASSERT_EQ(batch.size(), 2u);
  for (const auto& [part, m] : batch) {
    EXPECT_TRUE(m.header.pull_after());
    EXPECT_EQ(m.header.worker_scale(), 0.5f);
    EXPECT_EQ(m.header.timeout_ms(), 500u);
    EXPECT_EQ(m.payloads.size(), 1u);
    EXPECT_TRUE(part.reads);
    EXPECT_EQ(part.eager, &reply);
    EXPECT_EQ(part.bytes, 2 * 3 * sizeof(float)) << "pushed and pulled values";
  }
  EXPECT_EQ(batch[1].first.at, 3u);

  route.scale = 1.0f;  // the default scale is not sent (0 on the wire means 1)
  EXPECT_EQ(Route(route, State(2))[0].second.header.worker_scale(), 0.0f);
}

TEST(RoutingTest, CheckRangeRefusesEmptyAndOutOfTableRangesNamingThem) {
  EXPECT_TRUE(CheckRange("pull", kTable, 0, 12).ok());
  EXPECT_TRUE(CheckRange("pull", kTable, 11, 1).ok());
  for (auto [offset, length] : {std::pair<uint64_t, uint64_t>{0, 0}, {12, 1}, {11, 2},
                                {1, UINT64_MAX}}) {
    const absl::Status s = CheckRange("push", kTable, offset, length);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << offset << "+" << length;
    EXPECT_THAT(s.message(), HasSubstr("push of table 'w'"));
    EXPECT_THAT(s.message(), HasSubstr("the table's 12 elements"));
  }
  EXPECT_THAT(CheckRange("pull", kTable, 11, 2).message(),
              HasSubstr("range [11, 13) (2 values)"));
}

TEST(RoutingTest, AControlRequestGoesToEveryServerOrToTheCoordinator) {
  auto state = State(3);
  const Batch to_servers = RouteControl(wire::FINISH, 3, kStamp, state);
  ASSERT_EQ(to_servers.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const auto& [part, m] = to_servers[i];
    EXPECT_EQ(part.shard, i);
    EXPECT_EQ(part.state, state);
    EXPECT_EQ(part.bytes, 0u);
    EXPECT_EQ(m.header.kind(), wire::FINISH);
    EXPECT_EQ(m.header.request_id(), 100u + i);
    EXPECT_EQ(m.header.sender(), 7u);
    EXPECT_EQ(m.header.clock(), 3);
    EXPECT_EQ(m.header.timeout_ms(), 500u);
  }
  const Batch to_coordinator = RouteControl(wire::BARRIER, 0, kStamp, State(1));
  ASSERT_EQ(to_coordinator.size(), 1u);
  EXPECT_EQ(to_coordinator[0].first.shard, -1);
  EXPECT_EQ(to_coordinator[0].second.header.kind(), wire::BARRIER);
}

TEST(RoutingTest, AnAssignIsOneMessagePerChunkCarryingItsValuesAndReadsNothing) {
  Buffer values = Buffer::Allocate(5);
  for (int i = 0; i < 5; ++i) values[i] = static_cast<float>(10 + i);
  RangeRoute route;
  route.kind = wire::ASSIGN;
  route.table = kTable.id;
  route.offset = 5;
  route.length = 5;  // [5, 10): [5, 6) on shard 0, [6, 9) [9, 10) on shard 1
  route.payload = values;
  const Batch batch = Route(route, State(3));
  ASSERT_EQ(batch.size(), 3u);
  const uint64_t begins[] = {5, 6, 9};
  const uint64_t lengths[] = {1, 3, 1};
  const int shards[] = {0, 1, 1};
  for (int i = 0; i < 3; ++i) {
    const auto& [part, m] = batch[i];
    EXPECT_EQ(m.header.kind(), wire::ASSIGN) << i;
    EXPECT_EQ(m.header.offset(), begins[i]) << i;
    EXPECT_EQ(m.header.length(), lengths[i]) << i;
    EXPECT_EQ(m.header.timeout_ms(), 0u) << i;
    EXPECT_FALSE(m.header.pull_after()) << i;
    ASSERT_EQ(m.payloads.size(), 1u) << i;
    EXPECT_EQ(m.payloads[0].data(), values.data() + (begins[i] - 5)) << "shared: " << i;
    EXPECT_EQ(part.shard, shards[i]) << i;
    EXPECT_EQ(part.bytes, lengths[i] * sizeof(float)) << "the values sent only: " << i;
    EXPECT_FALSE(part.reads) << i;
  }
}

TEST(RoutingTest, ALearningRateChangeGoesToTheShardsGiven) {
  auto state = State(2);
  const std::vector<int> shards = {0, 2};
  const Batch batch = RouteLearningRate(4, 0.25f, shards, kStamp, state);
  ASSERT_EQ(batch.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const auto& [part, m] = batch[i];
    EXPECT_EQ(part.shard, shards[i]);
    EXPECT_EQ(part.state, state);
    EXPECT_EQ(part.bytes, 0u);
    EXPECT_FALSE(part.reads);
    EXPECT_EQ(m.header.kind(), wire::SET_LEARNING_RATE);
    EXPECT_EQ(m.header.request_id(), 100u + i);
    EXPECT_EQ(m.header.sender(), 7u);
    EXPECT_EQ(m.header.table(), 4u);
    EXPECT_EQ(m.header.learning_rate(), 0.25f);
    EXPECT_TRUE(m.payloads.empty());
  }
}

}  // namespace
}  // namespace kairos::internal
