// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the in-flight count the virtual-time pacer waits on (watched_transport.h): a
// message counts from its send until its receiver handled it, a reply counts for the
// transport that sent the request, what is in flight or posted to a transport that stopped
// leaves the count and what is sent to it later never enters it, a send to a peer that
// never sent a tag (a bare client) is not counted, a queued send dropped at Stop leaves the
// count; and the tags travel in the header and are taken out before the node sees it.

#include "tests/cluster/watched_transport.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "fakes/fake_transport.h"

namespace kairos::test_support {
namespace {

using internal::PeerId;

constexpr PeerId kIncoming = internal::FakeTransport::IncomingPeer(3);
constexpr absl::Duration kWait = absl::Seconds(30);

// The watch's calls as a worker (connected to the server's endpoint as its peer 0) and a
// server would make them.
class MessageWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = watch_.Add("server#0");
    worker_ = watch_.Add("worker#0");
    watch_.Listening(server_, "inproc://server");
    watch_.Connected(worker_, 0, "inproc://server");
  }

  // The worker sends to the server; the server receives it from kIncoming.
  MessageWatch::Tag Request() {
    bool counted = false;
    MessageWatch::Tag tag = watch_.Sent(worker_, 0, &counted);
    EXPECT_TRUE(counted);
    return tag;
  }

  MessageWatch watch_;
  int server_ = -1;
  int worker_ = -1;
  std::atomic<bool> stop_{false};
};

TEST_F(MessageWatchTest, AMessageToAListenerCountsUntilHandled) {
  const MessageWatch::Tag tag = Request();
  EXPECT_EQ(watch_.in_flight(), 1);
  EXPECT_FALSE(watch_.AwaitNothingInFlight(absl::ZeroDuration(), stop_));
  watch_.Received(server_, kIncoming, tag);
  EXPECT_EQ(watch_.in_flight(), 1);  // received, not handled yet
  watch_.Done(tag.id);
  EXPECT_EQ(watch_.in_flight(), 0);
  EXPECT_TRUE(watch_.AwaitNothingInFlight(absl::ZeroDuration(), stop_));
}

TEST_F(MessageWatchTest, RepliesCountForTheTransportThatSentTheRequest) {
  const MessageWatch::Tag request = Request();
  watch_.Received(server_, kIncoming, request);
  watch_.Done(request.id);
  bool counted = false;
  const MessageWatch::Tag reply = watch_.Sent(server_, kIncoming, &counted);
  EXPECT_TRUE(counted);
  EXPECT_EQ(watch_.in_flight(), 1);
  watch_.Stopped(worker_);  // the reply never arrives, and is not waited for
  EXPECT_EQ(watch_.in_flight(), 0);
  watch_.Sent(server_, kIncoming, &counted);
  EXPECT_FALSE(counted) << "a message to a stopped transport was counted";
  EXPECT_EQ(watch_.in_flight(), 0);
  watch_.Done(reply.id);  // a late report of a message no longer counted changes nothing
  EXPECT_EQ(watch_.in_flight(), 0);
}

TEST_F(MessageWatchTest, WhatIsInFlightToAStoppedTransportLeavesTheCount) {
  Request();
  Request();
  bool counted = true;
  watch_.Sent(server_, kIncoming, &counted);
  EXPECT_FALSE(counted);  // kIncoming never sent a tag
  EXPECT_EQ(watch_.in_flight(), 2);
  watch_.Posted(server_);
  EXPECT_EQ(watch_.in_flight(), 3);
  watch_.Stopped(server_);
  EXPECT_EQ(watch_.in_flight(), 0);
  watch_.PostDone(server_);  // destroyed unrun, after the stop
  EXPECT_EQ(watch_.in_flight(), 0);
  watch_.Sent(worker_, 0, &counted);
  EXPECT_FALSE(counted) << "a message to a stopped listener was counted";
}

TEST_F(MessageWatchTest, ASendToAPeerThatNeverSentATagIsNotCounted) {
  bool counted = true;
  watch_.Sent(server_, kIncoming, &counted);
  EXPECT_FALSE(counted);
  EXPECT_EQ(watch_.in_flight(), 0);
}

TEST_F(MessageWatchTest, AnUnknownListenerIsLearnedFromItsFirstReply) {
  const int elsewhere = watch_.Add("coordinator#0");  // listening at an endpoint not told
  watch_.Connected(worker_, 1, "tcp://10.0.0.1:5555");
  bool counted = false;
  const MessageWatch::Tag first = watch_.Sent(worker_, 1, &counted);
  EXPECT_TRUE(counted);  // a connection's far end is a listener: counted until it arrives
  watch_.Sent(worker_, 1, &counted);
  watch_.Received(elsewhere, kIncoming, first);
  watch_.Done(first.id);
  EXPECT_EQ(watch_.in_flight(), 1);
  watch_.Stopped(elsewhere);  // the second is now known to be for it
  EXPECT_EQ(watch_.in_flight(), 0);
}

TEST_F(MessageWatchTest, PostsCountUntilRun) {
  watch_.Posted(worker_);
  watch_.Posted(worker_);
  EXPECT_EQ(watch_.in_flight(), 2);
  watch_.PostDone(worker_);
  EXPECT_EQ(watch_.in_flight(), 1);
  watch_.PostDone(worker_);
  EXPECT_TRUE(watch_.AwaitNothingInFlight(absl::ZeroDuration(), stop_));
}

TEST_F(MessageWatchTest, AWaitEndsWhenItsStopFlagIsSetAndWoken) {
  Request();
  std::thread stopper([this] {
    stop_.store(true);
    watch_.Wake();
  });
  EXPECT_FALSE(watch_.AwaitNothingInFlight(kWait, stop_));  // returns at the wake
  stopper.join();
}

// Two ZeroMQ transports over tcp, each a WatchedTransport of one watch.
class WatchedTransportTest : public ::testing::Test {
 protected:
  std::unique_ptr<internal::Transport> Make(const std::string& name) {
    internal::TransportOptions o;
    o.name = name;
    absl::StatusOr<std::unique_ptr<internal::Transport>> t = factory_.Make(o);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *std::move(t) : nullptr;
  }

  WatchedTransportFactory factory_;
  std::atomic<bool> stop_{false};
};

TEST_F(WatchedTransportTest, ARequestAndItsReplyCountUntilHandledAndTheirTagsNeverShow) {
  std::unique_ptr<internal::Transport> server = Make("server");
  std::unique_ptr<internal::Transport> worker = Make("worker");
  absl::StatusOr<std::string> endpoint = server->Listen("tcp://127.0.0.1:*");
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  absl::Notification handling, release, replied;
  std::atomic<int> unknown_fields{-1};
  internal::Transport* s = server.get();
  server->Start(
      [&, s](PeerId from, internal::Message m) {
        unknown_fields = m.header.GetReflection()->GetUnknownFields(m.header).field_count();
        handling.Notify();
        release.WaitForNotificationWithTimeout(kWait);
        internal::Message reply;
        reply.header.set_kind(wire::PUSH_REPLY);
        reply.header.set_request_id(m.header.request_id());
        s->Send(from, std::move(reply));
      },
      nullptr, nullptr);
  absl::Notification reply_handling, reply_release;
  worker->Start(
      [&](PeerId, internal::Message) {
        reply_handling.Notify();
        reply_release.WaitForNotificationWithTimeout(kWait);
      },
      nullptr, nullptr);
  absl::StatusOr<PeerId> peer = worker->Connect(*endpoint);
  ASSERT_TRUE(peer.ok()) << peer.status();
  internal::Message request;
  request.header.set_kind(wire::HEARTBEAT);
  request.header.set_request_id(7);
  worker->Send(*peer, std::move(request));
  MessageWatch& watch = factory_.watch();
  ASSERT_TRUE(handling.WaitForNotificationWithTimeout(kWait));
  EXPECT_EQ(unknown_fields.load(), 0) << "the node saw the tag";
  EXPECT_EQ(watch.in_flight(), 1);  // in the server's handler
  release.Notify();
  ASSERT_TRUE(reply_handling.WaitForNotificationWithTimeout(kWait));
  // The server's handler may not have returned yet (it sent the reply, then returns): once
  // it has, the request leaves the count and the reply, held in the worker's handler, stays.
  EXPECT_TRUE(watch.AwaitInFlightAtMost(1, kWait)) << watch.Describe();
  EXPECT_EQ(watch.in_flight(), 1);  // the reply, in the worker's handler
  reply_release.Notify();
  EXPECT_TRUE(watch.AwaitNothingInFlight(kWait, stop_)) << watch.Describe();
  worker->Stop();
  server->Stop();
}

// A send asked for on another thread waits in the transport's queue; dropped unsent at
// Stop, it leaves the count. (A FakeTransport runs its queue only when told: RunPosted.)
TEST_F(WatchedTransportTest, ASendThatNeverWentLeavesTheCountAtStop) {
  WatchedTransport sender(std::make_unique<internal::FakeTransport>("worker"),
                          std::shared_ptr<MessageWatch>(&factory_.watch(), [](MessageWatch*) {}),
                          "worker#0");
  factory_.watch().Listening(factory_.watch().Add("server#0"), "inproc://server");
  sender.Start([](PeerId, internal::Message) {}, nullptr, nullptr);
  absl::StatusOr<PeerId> peer = sender.Connect("inproc://server");
  ASSERT_TRUE(peer.ok());
  internal::Message m;
  m.header.set_kind(wire::HEARTBEAT);
  sender.Send(*peer, std::move(m));
  EXPECT_EQ(factory_.watch().in_flight(), 1);
  sender.Stop();  // the fake destroys its queue: the send's confirmation never ran
  EXPECT_EQ(factory_.watch().in_flight(), 0);
}

}  // namespace
}  // namespace kairos::test_support
