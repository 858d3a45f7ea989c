// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The coordinator's straggler report: it merges what each server's heartbeat says. A
// hand-driven node joins as a server; the coordinator's echo of each heartbeat tells the
// test that the heartbeat was handled, so nothing here waits on time.

#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "tests/cluster/raw_client.h"

namespace kairos {
namespace {

using internal::Message;

JobConfig Job() {
  JobConfig job;
  job.policy = "saps";
  job.tables.push_back({"w", 8, Initializer::Zeros(), {"sgd", 1.0f}});
  return job;
}

// Sends a heartbeat flagging `stragglers` and waits for the coordinator's echo.
bool Heartbeat(testing::RawClient& node, uint32_t node_id, uint64_t id,
               const std::vector<int>& stragglers) {
  Message hb;
  hb.header.set_kind(wire::HEARTBEAT);
  hb.header.set_sender(node_id);
  hb.header.set_request_id(id);
  for (int w : stragglers) hb.header.add_stragglers(w);
  node.Send(node.coordinator(), std::move(hb));
  return node.Reply(id, absl::Seconds(10)).has_value();
}

TEST(CoordinatorTest, ReportsTheStragglersTheServersFlag) {
  CoordinatorOptions co;
  co.num_servers = 2;
  co.num_workers = 3;
  co.job = Job();
  auto coordinator = Coordinator::Create(co);
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();
  std::vector<std::unique_ptr<testing::RawClient>> servers;
  std::vector<uint32_t> ids;
  for (int s = 0; s < 2; ++s) {
    servers.push_back(std::make_unique<testing::RawClient>());
    testing::RawClient& node = *servers.back();
    node.ConnectCoordinator((*coordinator)->endpoint());
    Message join;
    join.header.set_kind(wire::JOIN);
    join.header.set_request_id(1);
    join.header.mutable_join()->set_role(wire::SERVER);
    join.header.mutable_join()->set_endpoint("tcp://127.0.0.1:1");
    node.Send(node.coordinator(), std::move(join));
    std::optional<Message> reply = node.Next(wire::JOIN_REPLY, absl::Seconds(10));
    ASSERT_TRUE(reply.has_value());
    ASSERT_FALSE(reply->header.has_status()) << reply->header.status().message();
    ids.push_back(reply->header.join_reply().node_id());
  }
  EXPECT_TRUE((*coordinator)->stragglers().empty());
  ASSERT_TRUE(Heartbeat(*servers[0], ids[0], 10, {2}));
  ASSERT_TRUE(Heartbeat(*servers[1], ids[1], 11, {0, 2}));
  EXPECT_EQ((*coordinator)->stragglers(), (std::vector<int>{0, 2}));
  // A server's latest report replaces its earlier one.
  ASSERT_TRUE(Heartbeat(*servers[1], ids[1], 12, {}));
  EXPECT_EQ((*coordinator)->stragglers(), (std::vector<int>{2}));
  ASSERT_TRUE(Heartbeat(*servers[0], ids[0], 13, {}));
  EXPECT_TRUE((*coordinator)->stragglers().empty());
}

}  // namespace
}  // namespace kairos
