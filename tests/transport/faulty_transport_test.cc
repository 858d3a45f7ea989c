// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of FaultyTransport over the in-process FakeTransport and a kairos::testing::ManualEnv: each
// fault does what it says to the messages of the kinds and directions it names, keeps every
// connection's FIFO order, lets other connections overtake, and replays from its seed.

#include "transport/faulty_transport.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "fakes/fake_transport.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/testing/manual_env.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;

constexpr PeerId kA = FakeTransport::IncomingPeer(1);
constexpr PeerId kB = FakeTransport::IncomingPeer(2);
// Connections the node opened (Make connects both).
constexpr PeerId kOut0 = 0;
constexpr PeerId kOut1 = 1;
const absl::Time kStart = absl::FromUnixSeconds(1000);

Message Numbered(wire::Kind kind, uint64_t id) {
  Message m;
  m.header.set_kind(kind);
  m.header.set_request_id(id);
  if (kind == wire::PUSH || kind == wire::PULL_REPLY) {  // one payload, as Decode requires
    m.header.set_length(1);
    m.payloads.push_back(Buffer::CopyOf(std::vector<float>{1.0f}));
  }
  return m;
}

// A FaultyTransport named "worker#0" around a FakeTransport, on a kairos::testing::ManualEnv;
// records what the node receives and what reaches the (fake) network.
class FaultyTransportTest : public ::testing::Test {
 protected:
  void Make(FaultPlan plan) {
    auto fake = std::make_unique<FakeTransport>("node");
    fake_ = fake.get();
    faulty_ =
        std::make_unique<FaultyTransport>(std::move(fake), std::move(plan), "worker#0", env_, log_);
    faulty_->Start([this](PeerId from, Message m) { received_.emplace_back(from, m.header.request_id()); },
                   nullptr, [this](absl::Time now) { ticks_.push_back(now); });
    ASSERT_EQ(*faulty_->Connect("inproc://a"), kOut0);
    ASSERT_EQ(*faulty_->Connect("inproc://b"), kOut1);
  }

  // Request ids that reached the network, with their destination.
  std::vector<std::pair<PeerId, uint64_t>> Sent() {
    std::vector<std::pair<PeerId, uint64_t>> out;
    for (const FakeTransport::Sent& s : fake_->TakeSent()) {
      out.emplace_back(s.to, s.message.header.request_id());
    }
    return out;
  }

  void Receive(PeerId from, wire::Kind kind, uint64_t id) {
    ASSERT_TRUE(fake_->Deliver(from, Numbered(kind, id)).ok());
  }

  // The node's tick, as its I/O thread would run it once the clock moved.
  void AdvanceAndTick(absl::Duration d) {
    env_->Advance(d);
    fake_->Tick(env_->Now());
  }

  std::shared_ptr<kairos::testing::ManualEnv> env_ =
      std::make_shared<kairos::testing::ManualEnv>(kStart);
  std::shared_ptr<FaultLog> log_ = std::make_shared<FaultLog>();
  FakeTransport* fake_ = nullptr;
  std::unique_ptr<FaultyTransport> faulty_;
  std::vector<std::pair<PeerId, uint64_t>> received_;
  std::vector<absl::Time> ticks_;
};

TEST_F(FaultyTransportTest, NoRulesPassesEverythingThrough) {
  Make(FaultPlan{});
  Receive(kA, wire::PUSH, 1);
  faulty_->Send(kOut0, Numbered(wire::PUSH_REPLY, 2));
  EXPECT_THAT(received_, ElementsAre(std::pair(kA, 1u)));
  EXPECT_THAT(Sent(), ElementsAre(std::pair(PeerId{0}, 2u)));
  EXPECT_EQ(log_->Summary(), "no faults");
  EXPECT_EQ(log_->activity(), 2u);
}

TEST_F(FaultyTransportTest, DropHitsOnlyTheNamedKindAndDirection) {
  FaultRule drop;
  drop.action = FaultAction::kDrop;
  drop.kinds = {wire::PUSH};
  drop.direction = FaultDirection::kReceive;
  Make(FaultPlan{7, {drop}});
  Receive(kA, wire::PUSH, 1);
  Receive(kA, wire::PULL, 2);
  faulty_->Send(kA, Numbered(wire::PUSH, 3));  // sent, not received: passes
  EXPECT_THAT(received_, ElementsAre(std::pair(kA, 2u)));
  EXPECT_THAT(Sent(), ElementsAre(std::pair(kA, 3u)));
  EXPECT_EQ(log_->Count(FaultAction::kDrop, wire::PUSH), 1);
  EXPECT_EQ(log_->events()[0].ToString(), "worker#0: drop receive PUSH peer " +
                                              std::to_string(kA));
}

TEST_F(FaultyTransportTest, MaxHitsAndNodePrefixLimitTheRule) {
  FaultRule drop;
  drop.action = FaultAction::kDrop;
  drop.max_hits = 2;
  FaultRule other_node = drop;
  other_node.node = "server";  // not this transport
  Make(FaultPlan{1, {other_node, drop}});
  for (uint64_t id = 1; id <= 4; ++id) Receive(kA, wire::CLOCK, id);
  EXPECT_THAT(received_, ElementsAre(std::pair(kA, 3u), std::pair(kA, 4u)));
}

TEST_F(FaultyTransportTest, DelayWaitsForTheClockAndHoldsItsConnectionBehindIt) {
  FaultRule delay;
  delay.action = FaultAction::kDelay;
  delay.delay = absl::Milliseconds(50);
  delay.max_hits = 1;
  Make(FaultPlan{1, {delay}});
  Receive(kA, wire::PUSH, 1);  // delayed
  Receive(kA, wire::PUSH, 2);  // not hit, but behind 1 on the same connection
  Receive(kB, wire::PUSH, 3);  // another connection: goes at once
  EXPECT_THAT(received_, ElementsAre(std::pair(kB, 3u)));
  EXPECT_EQ(log_->held(), 2);
  EXPECT_EQ(log_->held({wire::PUSH}), 2);  // counted by kind too
  EXPECT_EQ(log_->held({wire::JOIN, wire::PULL}), 0);
  AdvanceAndTick(absl::Milliseconds(49));
  EXPECT_THAT(received_, ElementsAre(std::pair(kB, 3u)));
  AdvanceAndTick(absl::Milliseconds(1));
  EXPECT_THAT(received_, ElementsAre(std::pair(kB, 3u), std::pair(kA, 1u), std::pair(kA, 2u)));
  EXPECT_EQ(log_->held(), 0);
  EXPECT_EQ(log_->held({wire::PUSH}), 0);
  // The node's own tick ran each time, after the release, with the clock's time.
  EXPECT_THAT(ticks_, ElementsAre(kStart + absl::Milliseconds(49),
                                  kStart + absl::Milliseconds(50)));
}

TEST_F(FaultyTransportTest, DelayedSendsGoOutInOrderAtTheTick) {
  FaultRule delay;
  delay.action = FaultAction::kDelay;
  delay.delay = absl::Seconds(1);
  delay.kinds = {wire::HEARTBEAT};
  delay.direction = FaultDirection::kSend;
  Make(FaultPlan{1, {delay}});
  faulty_->Send(kOut0, Numbered(wire::HEARTBEAT, 1));
  faulty_->Send(kOut0, Numbered(wire::PUSH, 2));
  faulty_->Send(kOut1, Numbered(wire::PUSH, 3));
  EXPECT_THAT(Sent(), ElementsAre(std::pair(kOut1, 3u)));
  AdvanceAndTick(absl::Seconds(1));
  EXPECT_THAT(Sent(), ElementsAre(std::pair(kOut0, 1u), std::pair(kOut0, 2u)));
}

TEST_F(FaultyTransportTest, DuplicateDeliversTwiceInPlace) {
  FaultRule dup;
  dup.action = FaultAction::kDuplicate;
  dup.kinds = {wire::PUSH};
  Make(FaultPlan{1, {dup}});
  Receive(kA, wire::PUSH, 1);
  Receive(kA, wire::CLOCK, 2);
  faulty_->Send(kOut1, Numbered(wire::PUSH, 3));
  EXPECT_THAT(received_, ElementsAre(std::pair(kA, 1u), std::pair(kA, 1u), std::pair(kA, 2u)));
  EXPECT_THAT(Sent(), ElementsAre(std::pair(kOut1, 3u), std::pair(kOut1, 3u)));
  EXPECT_EQ(log_->Count(FaultAction::kDuplicate), 2);
}

TEST_F(FaultyTransportTest, ReorderLetsOtherConnectionsOvertakeButNeverItsOwn) {
  FaultRule reorder;
  reorder.action = FaultAction::kReorder;
  reorder.reorder_after = 2;
  reorder.max_hits = 1;
  Make(FaultPlan{1, {reorder}});
  Receive(kA, wire::PUSH, 1);  // held until 2 messages of other connections passed
  Receive(kA, wire::PUSH, 2);  // its own connection does not count, and waits behind it
  Receive(kB, wire::PUSH, 3);
  EXPECT_THAT(received_, ElementsAre(std::pair(kB, 3u)));
  Receive(kB, wire::PUSH, 4);
  EXPECT_THAT(received_, ElementsAre(std::pair(kB, 3u), std::pair(kB, 4u), std::pair(kA, 1u),
                                     std::pair(kA, 2u)));
}

TEST_F(FaultyTransportTest, ReorderedMessagesGoAtTheNextTickAtTheLatest) {
  FaultRule reorder;
  reorder.action = FaultAction::kReorder;
  reorder.reorder_after = 100;
  Make(FaultPlan{1, {reorder}});
  faulty_->Send(kOut0, Numbered(wire::PULL, 1));
  EXPECT_TRUE(Sent().empty());
  AdvanceAndTick(absl::ZeroDuration());
  EXPECT_THAT(Sent(), ElementsAre(std::pair(kOut0, 1u)));
}

TEST_F(FaultyTransportTest, PartitionCutsBothWaysForItsWindowOnly) {
  FaultRule cut;
  cut.action = FaultAction::kPartition;
  cut.partition_start = kStart + absl::Seconds(1);
  cut.partition_length = absl::Seconds(2);
  Make(FaultPlan{1, {cut}});
  Receive(kA, wire::HEARTBEAT, 1);
  AdvanceAndTick(absl::Seconds(1));
  Receive(kA, wire::HEARTBEAT, 2);
  faulty_->Send(kA, Numbered(wire::HEARTBEAT, 3));
  AdvanceAndTick(absl::Seconds(2));
  Receive(kA, wire::HEARTBEAT, 4);
  faulty_->Send(kA, Numbered(wire::HEARTBEAT, 5));
  EXPECT_THAT(received_, ElementsAre(std::pair(kA, 1u), std::pair(kA, 4u)));
  EXPECT_THAT(Sent(), ElementsAre(std::pair(kA, 5u)));
  EXPECT_EQ(log_->Count(FaultAction::kPartition), 2);
}

TEST_F(FaultyTransportTest, PartitionAfterMessagesStartsAtThatMessage) {
  FaultRule cut;
  cut.action = FaultAction::kPartition;
  cut.partition_after_messages = 2;
  cut.partition_length = absl::Seconds(1);
  Make(FaultPlan{1, {cut}});
  Receive(kA, wire::CLOCK, 1);
  faulty_->Send(kOut0, Numbered(wire::CLOCK, 2));
  Receive(kA, wire::CLOCK, 3);  // the third message: the window opens now
  faulty_->Send(kOut0, Numbered(wire::CLOCK, 4));
  AdvanceAndTick(absl::Seconds(1));
  Receive(kA, wire::CLOCK, 5);
  EXPECT_THAT(received_, ElementsAre(std::pair(kA, 1u), std::pair(kA, 5u)));
  EXPECT_THAT(Sent(), ElementsAre(std::pair(kOut0, 2u)));
}

// The same seed makes the same choices for the same messages; another seed others.
TEST_F(FaultyTransportTest, TheSeedReplaysTheChoices) {
  auto run = [](uint64_t seed) {
    auto fake = std::make_unique<FakeTransport>();
    FakeTransport* f = fake.get();
    FaultRule drop;
    drop.action = FaultAction::kDrop;
    drop.probability = 0.5;
    FaultyTransport t(std::move(fake), FaultPlan{seed, {drop}}, "server#0", nullptr, nullptr);
    std::vector<uint64_t> got;
    t.Start([&](PeerId, Message m) { got.push_back(m.header.request_id()); }, nullptr, nullptr);
    for (uint64_t id = 0; id < 64; ++id) (void)f->Deliver(kA, Numbered(wire::PUSH, id));
    return got;
  };
  const std::vector<uint64_t> first = run(42);
  EXPECT_EQ(run(42), first);
  EXPECT_NE(run(43), first);
  EXPECT_GT(first.size(), 16u);  // about half of 64
  EXPECT_LT(first.size(), 48u);
}

TEST_F(FaultyTransportTest, StopDiscardsWhatIsHeld) {
  FaultRule delay;
  delay.action = FaultAction::kDelay;
  delay.delay = absl::Seconds(1);
  Make(FaultPlan{1, {delay}});
  faulty_->Send(kA, Numbered(wire::PUSH, 1));
  EXPECT_EQ(log_->held(), 1);
  EXPECT_EQ(log_->held({wire::PUSH}), 1);
  faulty_->Stop();
  EXPECT_EQ(log_->held(), 0);
  EXPECT_EQ(log_->held({wire::PUSH}), 0);
  EXPECT_TRUE(Sent().empty());
}

// A posted function is in flight from Post until it ran, or until a stopped transport
// discarded it; a message from the send until it was received and handled.
TEST_F(FaultyTransportTest, PostsAndMessagesCountInFlightUntilDone) {
  Make(FaultPlan{});
  EXPECT_EQ(log_->in_flight(), 0);
  bool ran = false;
  faulty_->Post([&ran] { ran = true; });
  EXPECT_EQ(log_->in_flight(), 1);
  faulty_->Send(kOut0, Numbered(wire::PUSH, 1));
  EXPECT_EQ(log_->in_flight(), 2);  // sent, and no FaultyTransport received it
  EXPECT_EQ(fake_->RunPosted(), 1);
  EXPECT_TRUE(ran);
  EXPECT_EQ(log_->in_flight(), 1);
  faulty_->Post([] {});
  EXPECT_EQ(log_->in_flight(), 2);
  faulty_->Stop();  // the fake destroys the queued function unrun
  EXPECT_EQ(log_->in_flight(), 1);
}

// The factory names its transports per kind of node and wraps the inner factory's.
class CountingFactory final : public TransportFactory {
 public:
  absl::StatusOr<std::unique_ptr<Transport>> Make(const TransportOptions& options) override {
    ++made;
    return std::unique_ptr<Transport>(std::make_unique<FakeTransport>(options.name));
  }
  int made = 0;
};

TEST(FaultyTransportFactoryTest, NamesTransportsPerNodeKindAndWrapsTheInnerFactory) {
  auto inner = std::make_shared<CountingFactory>();
  FaultRule drop;
  drop.action = FaultAction::kDrop;
  drop.node = "worker#1";
  FaultyTransportFactory factory(FaultPlan{1, {drop}}, inner);
  std::vector<std::unique_ptr<Transport>> made;
  for (const char* name : {"worker", "server", "worker"}) {
    TransportOptions o;
    o.name = name;
    absl::StatusOr<std::unique_ptr<Transport>> t = factory.Make(o);
    ASSERT_TRUE(t.ok()) << t.status();
    made.push_back(*std::move(t));
  }
  EXPECT_EQ(inner->made, 3);
  EXPECT_EQ(static_cast<FaultyTransport&>(*made[0]).name(), "worker#0");
  EXPECT_EQ(static_cast<FaultyTransport&>(*made[1]).name(), "server#0");
  EXPECT_EQ(static_cast<FaultyTransport&>(*made[2]).name(), "worker#1");
  // Only worker#1 drops.
  std::vector<int> got;
  for (int i : {0, 2}) {
    made[i]->Start([&got, i](PeerId, Message) { got.push_back(i); }, nullptr, nullptr);
    auto& fake = static_cast<FakeTransport&>(static_cast<FaultyTransport&>(*made[i]).inner());
    ASSERT_TRUE(fake.Deliver(kA, Numbered(wire::CLOCK, 1)).ok());
  }
  EXPECT_THAT(got, ElementsAre(0));
  EXPECT_EQ(factory.log()->Count(FaultAction::kDrop), 1);
}

}  // namespace
}  // namespace kairos::internal
