// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The server's translation between wire messages and the engine's requests and answers.

#include "server/engine_messages.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;

wire::Header Push() {
  wire::Header h;
  h.set_kind(wire::PUSH);
  h.set_request_id(12);
  h.set_sender(3);
  h.set_table(1);
  h.set_offset(100);
  h.set_length(50);
  h.set_clock(7);
  h.set_worker_scale(0.5f);
  h.set_pull_after(true);
  return h;
}

TEST(EngineMessagesTest, ARequestKeepsEveryFieldTheEngineAndTheReplyNeed) {
  const EngineRequest r = ToEngine(/*from=*/42, Push(), /*rank=*/2);
  EXPECT_EQ(r.kind, EngineRequest::Kind::kPush);
  EXPECT_EQ(r.peer, 42u);
  EXPECT_EQ(r.rank, 2);
  EXPECT_EQ(r.worker_scale, 0.5f);
  EXPECT_TRUE(r.pull_after);
  const wire::Header back = RequestHeader(r);
  EXPECT_EQ(Describe(back), Describe(Push()));
  EXPECT_EQ(Describe(back), Describe(r));
  EXPECT_EQ(back.clock(), 7);
}

TEST(EngineMessagesTest, AnEagerReadCarriesTheClocksAndWhatBecameOfThePush) {
  EngineAnswer a;
  a.kind = EngineAnswer::Kind::kRead;
  a.request = ToEngine(42, Push(), 2);
  a.request.kind = EngineRequest::Kind::kPull;
  a.request.clock = 8;
  a.version = 5;
  a.eager = true;
  a.dropped = true;
  a.clocks = {8, 6};
  a.min_clock = 6;
  a.values = Buffer::CopyOf(std::vector<float>(50, 1.0f));
  const Message m = ToMessage(a, /*self=*/1);
  EXPECT_EQ(m.header.kind(), wire::PULL_REPLY);
  EXPECT_EQ(m.header.request_id(), 12u);
  EXPECT_EQ(m.header.sender(), 1u);
  EXPECT_EQ(m.header.clock(), 8);
  EXPECT_EQ(m.header.version(), 5u);
  EXPECT_TRUE(m.header.dropped());
  EXPECT_THAT(m.header.clocks(), ElementsAre(8, 6));
  EXPECT_EQ(m.header.min_clock(), 6);
  ASSERT_EQ(m.payloads.size(), 1u);
  EXPECT_EQ(m.payloads[0].size(), 50u);
}

TEST(EngineMessagesTest, APushedAnswerIsAPushReply) {
  EngineAnswer a;
  a.kind = EngineAnswer::Kind::kPushed;
  a.request = ToEngine(42, Push(), 2);
  a.refresh = true;
  a.version = 9;
  const Message m = ToMessage(a, 1);
  EXPECT_EQ(m.header.kind(), wire::PUSH_REPLY);
  EXPECT_TRUE(m.header.refresh());
  EXPECT_FALSE(m.header.dropped());
  EXPECT_EQ(m.header.version(), 9u);
  EXPECT_TRUE(m.payloads.empty());
  EXPECT_EQ(m.header.clocks_size(), 0);
}

TEST(EngineMessagesTest, AssignAndItsReply) {
  wire::Header h = Push();
  h.set_kind(wire::ASSIGN);
  const EngineRequest r = ToEngine(42, h, 2);
  EXPECT_EQ(r.kind, EngineRequest::Kind::kAssign);
  EXPECT_EQ(Describe(RequestHeader(r)), Describe(h));
  EXPECT_EQ(Describe(r), Describe(h));
  EngineAnswer a;
  a.kind = EngineAnswer::Kind::kAssigned;
  a.request = r;
  a.version = 4;
  const Message m = ToMessage(a, 1);
  EXPECT_EQ(m.header.kind(), wire::ASSIGN_REPLY);
  EXPECT_EQ(m.header.request_id(), 12u);
  EXPECT_EQ(m.header.version(), 4u);
  EXPECT_EQ(m.header.offset(), 100u);
  EXPECT_TRUE(m.payloads.empty());
}

TEST(EngineMessagesTest, SetLearningRateAndItsReply) {
  wire::Header h;
  h.set_kind(wire::SET_LEARNING_RATE);
  h.set_request_id(5);
  h.set_sender(3);
  h.set_table(1);
  h.set_learning_rate(0.125f);
  const EngineRequest r = ToEngine(42, h, 2);
  EXPECT_EQ(r.kind, EngineRequest::Kind::kSetLearningRate);
  EXPECT_EQ(r.learning_rate, 0.125f);
  EXPECT_EQ(r.table, 1u);
  EXPECT_EQ(Describe(RequestHeader(r)), Describe(h));
  EXPECT_EQ(Describe(r), Describe(h));
  EngineAnswer a;
  a.kind = EngineAnswer::Kind::kLearningRateSet;
  a.request = r;
  const Message m = ToMessage(a, 1);
  EXPECT_EQ(m.header.kind(), wire::SET_LEARNING_RATE_REPLY);
  EXPECT_EQ(m.header.request_id(), 5u);
  EXPECT_TRUE(m.payloads.empty());
}

}  // namespace
}  // namespace kairos::internal
