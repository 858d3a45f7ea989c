// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the worker's tracking of sent messages, driven directly: answers completing
// their parts (pulled values into place, an eager push's report, errors), expiry at the
// deadline naming the silent nodes, and failing everything at the end.

#include "worker/outstanding.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "wire/convert.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

const absl::Time kDeadline = absl::FromUnixSeconds(1000);

std::shared_ptr<RequestState> State(int parts, absl::Time deadline = kDeadline) {
  return std::make_shared<RequestState>(RequestLabel{"pull", "w", 0, 6}, deadline, parts);
}

Part ReadingPart(std::shared_ptr<RequestState> state, int shard, uint64_t at,
                 uint64_t length) {
  Part p{std::move(state), shard, length};
  p.reads = true;
  p.at = at;
  return p;
}

Message PullReply(std::vector<float> values) {
  Message m;
  m.header.set_kind(wire::PULL_REPLY);
  m.payloads.push_back(Buffer::CopyOf(values));
  return m;
}

TEST(CompletePartTest, PulledValuesGoToTheirPlaceInTheResult) {
  std::vector<float> out(6, -1.0f);
  auto state = State(2);
  state->ReceiveInto(out.data());
  Message second = PullReply({4, 5, 6});
  Message first = PullReply({1, 2, 3});
  CompletePart(ReadingPart(state, 1, 3, 3), second);
  EXPECT_FALSE(state->done());
  CompletePart(ReadingPart(state, 0, 0, 3), first);
  ASSERT_TRUE(state->Wait(absl::InfinitePast()).ok());
  EXPECT_THAT(out, ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(CompletePartTest, AReplyOfTheWrongLengthIsAnInternalErrorNamingTheShard) {
  auto state = State(1);
  Message short_reply = PullReply({1, 2});
  CompletePart(ReadingPart(state, 3, 0, 6), short_reply);
  const absl::Status s = state->Wait(absl::InfinitePast());
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("shard 3 answered 2 values for 6"));
}

TEST(CompletePartTest, AnEagerReplyMergesTheShardsReportsBeforeTheRequestCompletes) {
  PushPullReply reply;
  reply.clocks = {0, 0, 0};
  std::vector<float> out(2);
  auto state = State(2);
  state->ReceiveInto(out.data());
  Message a = PullReply({1});
  a.header.add_clocks(4);
  a.header.add_clocks(2);
  a.header.add_clocks(7);
  a.header.set_dropped(true);
  Message b = PullReply({2});
  b.header.add_clocks(5);
  b.header.add_clocks(1);
  b.header.add_clocks(6);
  b.header.add_clocks(99);  // more workers than the job has: ignored
  b.header.set_refresh(true);
  Part pa = ReadingPart(state, 0, 0, 1);
  Part pb = ReadingPart(state, 1, 1, 1);
  pa.eager = pb.eager = &reply;
  CompletePart(pa, a);
  CompletePart(pb, b);
  ASSERT_TRUE(state->Wait(absl::InfinitePast()).ok());
  EXPECT_THAT(reply.clocks, ElementsAre(5, 2, 7)) << "the latest any shard reported";
  EXPECT_TRUE(reply.dropped);
  EXPECT_TRUE(reply.refresh);
  EXPECT_THAT(out, ElementsAre(1, 2));
}

TEST(CompletePartTest, OtherAnswersCompleteThePartWithTheStatusTheyCarry) {
  auto ok = State(1);
  Message push_reply;
  push_reply.header.set_kind(wire::PUSH_REPLY);
  CompletePart(Part{ok, 0, 6}, push_reply);
  EXPECT_TRUE(ok->Wait(absl::InfinitePast()).ok());

  auto refused = State(1);
  Message error;
  error.header.set_kind(wire::ERROR);
  ToWire(absl::OutOfRangeError("clock 9 is too far ahead"), error.header.mutable_status());
  CompletePart(ReadingPart(refused, 0, 0, 6), error);
  const absl::Status s = refused->Wait(absl::InfinitePast());
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(), HasSubstr("clock 9 is too far ahead"));
}

// Found by worker_fuzzer (tests/fuzz/regressions/worker/read-answered-ok-without-values):
// a read answered with OK by anything but a PULL_REPLY completed OK with no values, leaving
// the caller's memory as it was (a sparse pull then scattered from an empty buffer).
TEST(CompletePartTest, AnOkAnswerWithoutValuesFailsARead) {
  std::vector<float> out(6, -1.0f);
  auto state = State(1);
  state->ReceiveInto(out.data());
  Message push_reply;
  push_reply.header.set_kind(wire::PUSH_REPLY);
  CompletePart(ReadingPart(state, 2, 0, 6), push_reply);
  const absl::Status s = state->Wait(absl::InfinitePast());
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(s.message(),
              HasSubstr("shard 2 answered a read with PUSH_REPLY, which carries no values"));
  EXPECT_THAT(out, ElementsAre(-1, -1, -1, -1, -1, -1));
}

// A PULL_REPLY that carries an error status fails the read with it, values or not.
TEST(CompletePartTest, APullReplyWithAnErrorFailsTheRead) {
  std::vector<float> out(3, -1.0f);
  auto state = State(1);
  state->ReceiveInto(out.data());
  Message reply = PullReply({1, 2, 3});
  ToWire(absl::AbortedError("the shard is restarting"), reply.header.mutable_status());
  CompletePart(ReadingPart(state, 0, 0, 3), reply);
  const absl::Status s = state->Wait(absl::InfinitePast());
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_THAT(s.message(), HasSubstr("the shard is restarting"));
  EXPECT_THAT(out, ElementsAre(-1, -1, -1));
}

TEST(OutstandingPartsTest, FindTakeAndSize) {
  OutstandingParts parts;
  auto state = State(2);
  parts.Add(1, Part{state, 0, 3});
  parts.Add(2, Part{state, 1, 3});
  EXPECT_EQ(parts.size(), 2u);
  ASSERT_NE(parts.Find(2), nullptr);
  EXPECT_EQ(parts.Find(2)->shard, 1);
  EXPECT_EQ(parts.Find(3), nullptr);
  const Part taken = parts.Take(1);
  EXPECT_EQ(taken.shard, 0);
  EXPECT_EQ(parts.Find(1), nullptr);
  EXPECT_EQ(parts.size(), 1u);
}

TEST(OutstandingPartsTest, ExpireFailsRequestsPastTheirDeadlineNamingWhoDidNotAnswer) {
  OutstandingParts parts;
  auto late = State(3);
  auto barrier = State(1);
  auto later = State(1, kDeadline + absl::Seconds(1));
  parts.Add(1, Part{late, 0, 2});
  parts.Add(2, Part{late, 2, 2});
  parts.Add(4, Part{barrier, -1});
  parts.Add(5, Part{later, 1, 2});
  std::vector<uint64_t> released;
  parts.Expire(kDeadline, [&](uint64_t id, const Part&) { released.push_back(id); });
  EXPECT_THAT(released, UnorderedElementsAre(1, 2, 4));
  EXPECT_EQ(parts.size(), 1u);
  ASSERT_NE(parts.Find(5), nullptr) << "not due yet";

  const absl::Status s = late->Wait(absl::InfinitePast());
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(s.message(), HasSubstr("no answer before the deadline from server "));
  EXPECT_THAT(s.message(), HasSubstr("server 0"));
  EXPECT_THAT(s.message(), HasSubstr("server 2"));
  EXPECT_THAT(barrier->Wait(absl::InfinitePast()).message(),
              HasSubstr("no answer before the deadline from the coordinator"));
  EXPECT_FALSE(later->done());
}

TEST(OutstandingPartsTest, FailAllFailsEveryRequestAndForgetsThem) {
  OutstandingParts parts;
  auto a = State(2);
  auto b = State(1);
  parts.Add(1, Part{a, 0});
  parts.Add(2, Part{b, 1});
  parts.FailAll(absl::UnavailableError("the job has ended"));
  EXPECT_EQ(parts.size(), 0u);
  EXPECT_EQ(a->Wait(absl::InfinitePast()).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(b->Wait(absl::InfinitePast()).code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace kairos::internal
