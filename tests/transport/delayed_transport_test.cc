// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the send delay (TransportOptions::send_delay, transport/delayed_transport.h):
// a message never arrives before the delay has passed since its Send, the order of the
// sends is kept, Stop still delivers what was held, and a zero delay leaves the transport
// unwrapped. Two ZeroMQ transports over inproc://; every wait is on a condition with a
// deadline, and measured times are used only as lower bounds (and one generous upper one).

#include "transport/delayed_transport.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "fakes/fake_transport.h"
#include "transport/transport.h"

namespace kairos::internal {
namespace {

constexpr absl::Duration kWait = absl::Seconds(10);
constexpr absl::Duration kDelay = absl::Milliseconds(30);

// What the receiving transport's handler got: each message's request id and arrival time.
// Thread-safety: the handler adds on the I/O thread, the test thread waits and reads.
class Arrivals {
 public:
  MessageHandler Sink() {
    return [this](PeerId /*from*/, Message m) {
      const absl::Time now = absl::Now();
      absl::MutexLock lock(&mu_);
      ids_.push_back(m.header.request_id());
      times_.push_back(now);
    };
  }
  // Waits until `n` messages arrived; false at the deadline.
  bool WaitFor(std::size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return ids_.size() >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), kWait);
  }
  std::vector<uint64_t> ids() {
    absl::MutexLock lock(&mu_);
    return ids_;
  }
  std::vector<absl::Time> times() {
    absl::MutexLock lock(&mu_);
    return times_;
  }

 private:
  absl::Mutex mu_;
  std::vector<uint64_t> ids_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Time> times_ ABSL_GUARDED_BY(mu_);
};

Message Ping(uint64_t id) {
  Message m;
  m.header.set_kind(wire::HEARTBEAT);
  m.header.set_request_id(id);
  return m;
}

std::string InprocEndpoint() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string("inproc://delayed.") + info->name();
}

// A listening receiver without delay and a sender with `delay`, in one context.
class DelayedPairTest : public ::testing::Test {
 protected:
  void Open(absl::Duration delay) {
    context_ = TransportContext::Create();
    TransportOptions r;
    r.context = context_;
    r.name = "receiver";
    absl::StatusOr<std::unique_ptr<Transport>> receiver = MakeTransport(r, nullptr);
    ASSERT_TRUE(receiver.ok()) << receiver.status();
    receiver_ = *std::move(receiver);
    TransportOptions s = r;
    s.name = "sender";
    s.send_delay = delay;
    absl::StatusOr<std::unique_ptr<Transport>> sender = MakeTransport(s, nullptr);
    ASSERT_TRUE(sender.ok()) << sender.status();
    sender_ = *std::move(sender);
    absl::StatusOr<std::string> endpoint = receiver_->Listen(InprocEndpoint());
    ASSERT_TRUE(endpoint.ok()) << endpoint.status();
    absl::StatusOr<PeerId> peer = sender_->Connect(*endpoint);
    ASSERT_TRUE(peer.ok()) << peer.status();
    peer_ = *peer;
    receiver_->Start(arrivals_.Sink(), nullptr, nullptr);
    sender_->Start([](PeerId, Message) {}, nullptr, nullptr);
  }

  void TearDown() override {
    if (sender_) sender_->Stop();
    if (receiver_) receiver_->Stop();
  }

  Arrivals arrivals_;  // outlives the transports' handlers
  std::shared_ptr<TransportContext> context_;
  std::unique_ptr<Transport> receiver_;
  std::unique_ptr<Transport> sender_;
  PeerId peer_ = 0;
};

TEST_F(DelayedPairTest, ZeroDelayLeavesTheTransportUnwrapped) {
  Open(absl::ZeroDuration());
  EXPECT_EQ(dynamic_cast<DelayedTransport*>(sender_.get()), nullptr);
  sender_->Send(peer_, Ping(1));
  ASSERT_TRUE(arrivals_.WaitFor(1));
}

TEST_F(DelayedPairTest, PositiveDelayWrapsTheTransport) {
  Open(kDelay);
  auto* delayed = dynamic_cast<DelayedTransport*>(sender_.get());
  ASSERT_NE(delayed, nullptr);
  EXPECT_EQ(delayed->delay(), kDelay);
}

TEST_F(DelayedPairTest, NeverDeliversBeforeTheDelay) {
  Open(kDelay);
  constexpr int kMessages = 20;
  std::vector<absl::Time> sent;
  for (int i = 0; i < kMessages; ++i) {
    sent.push_back(absl::Now());
    sender_->Send(peer_, Ping(i));
    // Spreads the sends over about two delays, so that some are held while others go out
    // (spacing only: nothing waits on it).
    absl::SleepFor(kDelay / 10);
  }
  ASSERT_TRUE(arrivals_.WaitFor(kMessages));
  const std::vector<uint64_t> ids = arrivals_.ids();
  const std::vector<absl::Time> times = arrivals_.times();
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_EQ(ids[i], static_cast<uint64_t>(i)) << "out of order at " << i;
    EXPECT_GE(times[i] - sent[i], kDelay) << "message " << i << " arrived early";
    // Generous: the timer thread wakes within a scheduler slice of the due time.
    EXPECT_LT(times[i] - sent[i], kDelay + absl::Seconds(1)) << "message " << i;
  }
}

TEST_F(DelayedPairTest, KeepsTheOrderOfManySends) {
  Open(absl::Milliseconds(2));
  constexpr int kMessages = 2000;
  for (int i = 0; i < kMessages; ++i) sender_->Send(peer_, Ping(i));
  ASSERT_TRUE(arrivals_.WaitFor(kMessages));
  const std::vector<uint64_t> ids = arrivals_.ids();
  for (int i = 0; i < kMessages; ++i) ASSERT_EQ(ids[i], static_cast<uint64_t>(i));
  EXPECT_EQ(sender_->dropped(), 0u);
}

// Stop hands what it holds to the wrapped transport when it falls due, before stopping it
// (whose own Stop then discards what it has not sent, Transport::Stop). Over the in-process
// FakeTransport, which records every message handed to it, so no I/O thread races the stop.
TEST(DelayedTransportTest, StopHandsWhatWasHeldToTheWrappedTransport) {
  auto inner = std::make_unique<FakeTransport>("inner");
  FakeTransport* fake = inner.get();
  DelayedTransport delayed(std::move(inner), kDelay);
  absl::StatusOr<PeerId> peer = delayed.Connect("fake://peer");
  ASSERT_TRUE(peer.ok()) << peer.status();
  delayed.Start([](PeerId, Message) {}, nullptr, nullptr);
  const absl::Time sent = absl::Now();
  delayed.Send(*peer, Ping(7));
  delayed.Stop();  // returns once the held message was handed over
  EXPECT_GE(absl::Now() - sent, kDelay);
  const std::vector<FakeTransport::Sent> out = fake->sent();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, *peer);
  EXPECT_EQ(out[0].message.header.request_id(), 7u);
  delayed.Send(*peer, Ping(8));  // after Stop: dropped and counted
  EXPECT_EQ(delayed.dropped(), 1u);
  EXPECT_EQ(fake->sent().size(), 1u);
}

TEST(DelayedTransportTest, RefusesANegativeDelay) {
  TransportOptions options;
  options.name = "worker";
  options.send_delay = absl::Milliseconds(-1);
  absl::StatusOr<std::unique_ptr<Transport>> t = MakeTransport(options, nullptr);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("send_delay"), std::string::npos) << t.status();
}

}  // namespace
}  // namespace kairos::internal
