// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of FakeTransport, the in-process transport that tests and fuzzers drive by hand:
// synchronous delivery on the calling thread (the I/O thread while it runs), the same
// Decode and malformed-message path as the ZeroMQ transport, recorded sends, queued posts,
// caller-driven ticks, and Stop.

#include "fakes/fake_transport.h"

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/job.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr PeerId kPeer = FakeTransport::IncomingPeer(7);

Message Push(uint64_t request_id, std::vector<float> values) {
  Message m;
  m.header.set_kind(wire::PUSH);
  m.header.set_request_id(request_id);
  m.header.set_sender(3);
  m.header.set_length(values.size());
  m.payloads.push_back(Buffer::CopyOf(values));
  return m;
}

std::vector<float> Values(const Buffer& b) { return {b.span().begin(), b.span().end()}; }

Message Reply(const wire::Header& request) {
  Message m;
  m.header = ReplyHeader(request, wire::PUSH_REPLY, 1);
  return m;
}

struct Received {
  PeerId from = 0;
  Message message;
  bool on_io_thread = false;
};

struct Refused {
  PeerId from = 0;
  absl::Status why;
  std::optional<wire::Header> header;
};

// A transport started with handlers that record what they see.
class FakeTransportTest : public ::testing::Test {
 protected:
  void StartRecording() {
    t_.Start(
        [this](PeerId from, Message m) {
          received_.push_back({from, std::move(m), t_.OnIoThread()});
        },
        [this](PeerId from, const absl::Status& why, const wire::Header* h) {
          Refused r{from, why, std::nullopt};
          if (h != nullptr) r.header = *h;
          refused_.push_back(std::move(r));
        },
        [this](absl::Time now) {
          ticks_.push_back(now);
          tick_on_io_thread_ = t_.OnIoThread();
        });
  }

  FakeTransport t_{"test"};
  std::vector<Received> received_;
  std::vector<Refused> refused_;
  std::vector<absl::Time> ticks_;
  bool tick_on_io_thread_ = false;
};

TEST_F(FakeTransportTest, ConnectGivesSequentialIdsAndListenAFakeEndpoint) {
  EXPECT_EQ(*t_.Connect("tcp://coordinator:1"), 0u);
  EXPECT_EQ(*t_.Connect("tcp://other:2"), 1u);
  EXPECT_THAT(t_.connections(), ElementsAre("tcp://coordinator:1", "tcp://other:2"));
  absl::StatusOr<std::string> bound = t_.Listen("tcp://127.0.0.1:*");
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(*bound, "fake://test/listen");
  EXPECT_EQ(t_.listen_endpoint(), "tcp://127.0.0.1:*");
  EXPECT_EQ(t_.Listen("tcp://127.0.0.1:*").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(FakeTransport::IncomingPeer(0), 0u);  // never a Connect id
}

TEST_F(FakeTransportTest, DeliverRunsTheHandlerOnTheCallingThreadAsTheIoThread) {
  StartRecording();
  EXPECT_FALSE(t_.OnIoThread());
  ASSERT_TRUE(t_.Deliver(kPeer, Push(5, {1.5f, -2.0f})).ok());
  ASSERT_EQ(received_.size(), 1u);
  const Received& r = received_[0];
  EXPECT_EQ(r.from, kPeer);
  EXPECT_TRUE(r.on_io_thread);
  EXPECT_FALSE(t_.OnIoThread());  // only while inside the delivery
  // The header as a sender's transport encodes it, the payload as Decode gives it.
  EXPECT_EQ(r.message.header.protocol_version(), kProtocolVersion);
  EXPECT_EQ(r.message.header.payload_frames(), 1u);
  EXPECT_EQ(r.message.header.request_id(), 5u);
  ASSERT_EQ(r.message.payloads.size(), 1u);
  EXPECT_THAT(Values(r.message.payloads[0]), ElementsAre(1.5f, -2.0f));
  EXPECT_TRUE(refused_.empty());
  EXPECT_EQ(t_.dropped(), 0u);
}

TEST_F(FakeTransportTest, DeliveryBeforeStartIsRefusedAndRunsNothing) {
  absl::Status s = t_.Deliver(kPeer, Push(1, {1.0f}));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("before Start"));
  StartRecording();
  EXPECT_TRUE(received_.empty());
  EXPECT_TRUE(t_.started());
}

TEST_F(FakeTransportTest, FramesThatDoNotParseGoToTheMalformedHandlerWithoutAHeader) {
  StartRecording();
  absl::Status s = t_.DeliverFrames(kPeer, std::vector<std::string>{"\xff\xff not a header"});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("malformed header frame"));
  ASSERT_EQ(refused_.size(), 1u);
  EXPECT_EQ(refused_[0].from, kPeer);
  EXPECT_EQ(refused_[0].why, s);
  EXPECT_FALSE(refused_[0].header.has_value());
  EXPECT_TRUE(received_.empty());
  EXPECT_EQ(t_.dropped(), 1u);
  // No frame at all is refused the same way.
  EXPECT_EQ(t_.DeliverFrames(kPeer, std::vector<std::string>{}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused_.size(), 2u);
}

TEST_F(FakeTransportTest, AHeaderThatParsesButFailsItsChecksReachesTheMalformedHandler) {
  StartRecording();
  Message m = Push(9, {1.0f, 2.0f});
  std::string header = EncodeHeader(m);
  // The header announces one payload frame; none follows.
  absl::Status s = t_.DeliverFrames(kPeer, std::vector<std::string>{header});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("announces 1 payload frames but 0 arrived"));
  ASSERT_EQ(refused_.size(), 1u);
  ASSERT_TRUE(refused_[0].header.has_value());
  EXPECT_EQ(refused_[0].header->request_id(), 9u);
  EXPECT_EQ(t_.dropped(), 1u);
}

TEST_F(FakeTransportTest, RawFramesAtAnOddAddressAreDecodedLikeTheZmqTransportDoes) {
  StartRecording();
  Message m = Push(2, {3.0f, 4.0f});
  auto header = std::make_shared<std::string>(EncodeHeader(m));
  // The payload one byte into a buffer: Decode copies it once to read it as floats.
  auto storage = std::make_shared<std::vector<char>>(1 + 2 * sizeof(float));
  const float values[2] = {3.0f, 4.0f};
  std::memcpy(storage->data() + 1, values, sizeof(values));
  std::vector<RawFrame> frames;
  frames.push_back({header, header->data(), header->size()});
  frames.push_back({storage, storage->data() + 1, sizeof(values)});
  ASSERT_TRUE(t_.DeliverFrames(kPeer, std::move(frames)).ok());
  ASSERT_EQ(received_.size(), 1u);
  const Buffer& payload = received_[0].message.payloads[0];
  EXPECT_THAT(Values(payload), ElementsAre(3.0f, 4.0f));
}

TEST_F(FakeTransportTest, SendsAreRecordedAsTheyWouldGoOnTheWire) {
  t_.Start(
      [this](PeerId from, Message m) { t_.Send(from, Reply(m.header)); },  // a reply
      nullptr, nullptr);
  const PeerId out = *t_.Connect("tcp://coordinator:1");
  Message hello;
  hello.header.set_kind(wire::HEARTBEAT);
  t_.Send(out, std::move(hello));
  ASSERT_TRUE(t_.Deliver(kPeer, Push(11, {1.0f})).ok());
  EXPECT_EQ(t_.sent_count(), 2u);
  std::vector<FakeTransport::Sent> sent = t_.TakeSent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].to, out);
  EXPECT_EQ(sent[0].message.header.kind(), wire::HEARTBEAT);
  EXPECT_EQ(sent[0].message.header.protocol_version(), kProtocolVersion);
  EXPECT_EQ(sent[1].to, kPeer);
  EXPECT_EQ(sent[1].message.header.kind(), wire::PUSH_REPLY);
  EXPECT_EQ(sent[1].message.header.request_id(), 11u);
  EXPECT_EQ(sent[1].message.header.payload_frames(), 0u);
  EXPECT_EQ(t_.sent_count(), 0u);  // taken
  EXPECT_TRUE(t_.sent().empty());
}

TEST_F(FakeTransportTest, SendsToUnknownPeersAndAfterStopAreDroppedAndCounted) {
  StartRecording();
  Message m;
  m.header.set_kind(wire::HEARTBEAT);
  t_.Send(FakeTransport::IncomingPeer(99), m);  // never delivered anything
  t_.Send(3, m);                                // never connected
  EXPECT_EQ(t_.sent_count(), 0u);
  EXPECT_EQ(t_.dropped(), 2u);
  const PeerId out = *t_.Connect("x");
  t_.Send(out, m);
  EXPECT_EQ(t_.sent_count(), 1u);
  t_.ClearSent();
  t_.Stop();
  t_.Stop();  // idempotent
  EXPECT_TRUE(t_.stopped());
  t_.Send(out, m);
  EXPECT_EQ(t_.sent_count(), 0u);
  EXPECT_EQ(t_.dropped(), 3u);
  EXPECT_EQ(t_.Deliver(kPeer, Push(1, {1.0f})).code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(received_.empty());
  EXPECT_EQ(t_.Connect("y").status().code(), absl::StatusCode::kUnavailable);
  t_.Tick(absl::UnixEpoch());
  EXPECT_TRUE(ticks_.empty());
}

TEST_F(FakeTransportTest, SendsFromOtherThreadsAreRecordedAndAreNotOnTheIoThread) {
  StartRecording();
  const PeerId out = *t_.Connect("x");
  bool io = true;
  std::thread lane([&] {
    io = t_.OnIoThread();
    Message m;
    m.header.set_kind(wire::HEARTBEAT);
    t_.Send(out, std::move(m));
  });
  lane.join();
  EXPECT_FALSE(io);
  EXPECT_EQ(t_.sent_count(), 1u);
}

TEST_F(FakeTransportTest, PostedFunctionsWaitForRunPostedOrTheNextDelivery) {
  std::vector<std::string> order;
  t_.Start(
      [&](PeerId, Message) {
        order.push_back("handler");
        t_.Post([&] {
          order.push_back(t_.OnIoThread() ? "posted by handler, on I/O" : "posted by handler");
        });
      },
      nullptr, nullptr);
  t_.Post([&] { order.push_back("first"); });
  EXPECT_EQ(t_.posted_count(), 1u);
  EXPECT_TRUE(order.empty());  // Post never runs the function itself
  ASSERT_TRUE(t_.Deliver(kPeer, Push(1, {1.0f})).ok());
  // The handler first, then everything queued, in order, on the I/O thread.
  EXPECT_THAT(order, ElementsAre("handler", "first", "posted by handler, on I/O"));
  EXPECT_EQ(t_.posted_count(), 0u);
  t_.Post([&] { t_.Post([&] { order.push_back("nested"); }); });
  EXPECT_EQ(t_.RunPosted(), 2);
  EXPECT_EQ(order.back(), "nested");
}

// AwaitPosted wakes when another thread posts, and says whether a function waits; with
// nothing posted it returns false at its timeout (zero here: no real time passes).
TEST_F(FakeTransportTest, AwaitPostedWaitsForAPostFromAnotherThread) {
  StartRecording();
  EXPECT_FALSE(t_.AwaitPosted(absl::ZeroDuration()));
  bool ran = false;
  std::thread poster([&] { t_.Post([&] { ran = true; }); });
  EXPECT_TRUE(t_.AwaitPosted(absl::Seconds(60)));
  poster.join();
  EXPECT_FALSE(ran);  // waiting never runs it
  EXPECT_TRUE(t_.AwaitPosted(absl::ZeroDuration()));  // one still waits
  EXPECT_EQ(t_.RunPosted(), 1);
  EXPECT_TRUE(ran);
  EXPECT_FALSE(t_.AwaitPosted(absl::ZeroDuration()));
  t_.Stop();
  EXPECT_FALSE(t_.AwaitPosted(absl::Seconds(60)));  // a stopped transport returns at once
}

TEST_F(FakeTransportTest, StopDestroysPostedFunctionsUnrun) {
  StartRecording();
  auto token = std::make_shared<int>(0);
  bool ran = false;
  t_.Post([token, &ran] { ran = true; });
  EXPECT_EQ(token.use_count(), 2);
  t_.Stop();
  EXPECT_EQ(token.use_count(), 1);  // the queued copy is gone
  t_.Post([token, &ran] { ran = true; });
  EXPECT_EQ(token.use_count(), 1);
  EXPECT_EQ(t_.RunPosted(), 0);
  EXPECT_FALSE(ran);
}

TEST_F(FakeTransportTest, TickRunsTheTickHandlerWithTheGivenTimeOnTheIoThread) {
  t_.Tick(absl::UnixEpoch());  // before Start: nothing
  StartRecording();
  const absl::Time when = absl::FromUnixSeconds(1000);
  t_.Tick(when);
  t_.Tick(when + absl::Milliseconds(100));
  EXPECT_THAT(ticks_, ElementsAre(when, when + absl::Milliseconds(100)));
  EXPECT_TRUE(tick_on_io_thread_);
  EXPECT_FALSE(t_.OnIoThread());
}

}  // namespace
}  // namespace kairos::internal
