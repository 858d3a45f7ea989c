// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of what the nodes share to come up and end (transport/node_bringup.h): the
// transport's options taken from a node's, the one-transport factory that tests inject
// through, handlers started on the I/O thread, and the node's end (the first End wins, Wait
// says what did not end).

#include "transport/node_bringup.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "fakes/fake_transport.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/testing/manual_env.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;

constexpr PeerId kPeer = FakeTransport::IncomingPeer(3);

// Every field a node's transport takes from the node's options set to a value that is not
// its default.
template <typename Options>
Options Unusual() {
  Options o;
  o.context = TransportContext::Create();
  o.max_message_bytes = 12345;
  o.max_peers = 17;
  o.keys = CurveKeys{"public", "secret"};
  o.log_level = LogLevel::kDebug;
  o.log_sink = [](LogLevel, std::string_view) {};
  o.env = std::make_shared<kairos::testing::ManualEnv>(absl::UnixEpoch());
  o.send_delay = absl::Milliseconds(3);
  return o;
}

template <typename Options>
void ExpectTakenFrom(const TransportOptions& t, const Options& o, const std::string& name) {
  EXPECT_EQ(t.name, name);
  EXPECT_EQ(t.context, o.context);
  EXPECT_EQ(t.max_message_bytes, o.max_message_bytes);
  EXPECT_EQ(t.max_peers, o.max_peers);
  ASSERT_TRUE(t.keys.has_value());
  EXPECT_EQ(*t.keys, *o.keys);
  EXPECT_EQ(t.log_level, o.log_level);
  ASSERT_TRUE(t.log_sink != nullptr);
  EXPECT_EQ(t.log_sink.target_type(), o.log_sink.target_type());  // the lambda of Unusual
  EXPECT_EQ(t.env, o.env);
  EXPECT_EQ(t.send_delay, o.send_delay);
  // What is not a node option keeps the transport's default.
  EXPECT_EQ(t.idle_spin, TransportOptions().idle_spin);
  EXPECT_EQ(t.tick_period, TransportOptions().tick_period);
}

TEST(NodeTransportOptionsTest, TakesEveryTransportFieldOfANodesOptions) {
  const WorkerOptions worker = Unusual<WorkerOptions>();
  ExpectTakenFrom(NodeTransportOptions(worker, "worker"), worker, "worker");
  const NodeOptions node = Unusual<NodeOptions>();
  ExpectTakenFrom(NodeTransportOptions(node, "server"), node, "server");
}

TEST(NodeTransportOptionsTest, TakesTheSameFieldsOfACoordinatorsOptions) {
  const CoordinatorOptions coordinator = Unusual<CoordinatorOptions>();
  ExpectTakenFrom(NodeTransportOptions(coordinator, "coordinator"), coordinator, "coordinator");
}

TEST(OneTransportFactoryTest, GivesItsTransportOnceThenFails) {
  auto fake = std::make_unique<FakeTransport>("given");
  Transport* given = fake.get();
  std::shared_ptr<TransportFactory> factory = OneTransportFactory(std::move(fake));
  absl::StatusOr<std::unique_ptr<Transport>> first = factory->Make(TransportOptions());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->get(), given);
  absl::StatusOr<std::unique_ptr<Transport>> second = factory->Make(TransportOptions());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(WithTransportTest, SetsTheFactoryThatMakeTransportAsks) {
  auto fake = std::make_unique<FakeTransport>("given");
  Transport* given = fake.get();
  const WorkerOptions options = WithTransport(WorkerOptions(), std::move(fake));
  ASSERT_NE(options.transport_factory, nullptr);
  absl::StatusOr<std::unique_ptr<Transport>> made =
      MakeTransport(NodeTransportOptions(options, "worker"), options.transport_factory.get());
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->get(), given);
}

TEST(WithTransportTest, ANullTransportLeavesTheOptionsFactory) {
  CoordinatorOptions options;
  options.transport_factory = OneTransportFactory(std::make_unique<FakeTransport>());
  const std::shared_ptr<TransportFactory> before = options.transport_factory;
  EXPECT_EQ(WithTransport(options, nullptr).transport_factory, before);
}

TEST(StartOnIoThreadTest, EveryHandlerRunsWhatTheNodeGave) {
  FakeTransport t("node");
  ThreadChecker io_thread("test I/O thread");
  std::vector<std::string> ran;
  StartOnIoThread(
      t, io_thread,
      [&](PeerId from, Message m) {
        EXPECT_EQ(from, kPeer);
        ran.push_back(wire::Kind_Name(m.header.kind()));
      },
      [&](PeerId from, const absl::Status& why, const wire::Header*) {
        EXPECT_EQ(from, kPeer);
        EXPECT_FALSE(why.ok());
        ran.push_back("malformed");
      },
      [&](absl::Time now) {
        EXPECT_EQ(now, absl::UnixEpoch());
        ran.push_back("tick");
      });
  Message heartbeat;
  heartbeat.header.set_kind(wire::HEARTBEAT);
  ASSERT_TRUE(t.Deliver(kPeer, std::move(heartbeat)).ok());
  EXPECT_FALSE(t.DeliverFrames(kPeer, std::vector<std::string>{"\xff\xff not a header"}).ok());
  t.Tick(absl::UnixEpoch());
  EXPECT_THAT(ran, ElementsAre("HEARTBEAT", "malformed", "tick"));
  // The first handler bound the checker to the thread that ran it: this one.
  EXPECT_TRUE(io_thread.CalledOnValidThread());
}

#ifndef NDEBUG
TEST(StartOnIoThreadDeathTest, AHandlerOnAnotherThreadThanTheFirstAborts) {
  FakeTransport t("node");
  ThreadChecker io_thread("test I/O thread");
  StartOnIoThread(
      t, io_thread, [](PeerId, Message) {}, [](PeerId, const absl::Status&, const wire::Header*) {},
      [](absl::Time) {});
  t.Tick(absl::UnixEpoch());  // binds the checker to this thread
  EXPECT_DEATH(
      {
        std::thread other([&] { t.Tick(absl::UnixEpoch()); });
        other.join();
      },
      "test I/O thread");
}
#endif

TEST(NodeEndTest, IsOkUntilItEndsAndTheFirstEndWins) {
  NodeEnd end;
  EXPECT_FALSE(end.ended());
  EXPECT_TRUE(end.status().ok());
  EXPECT_TRUE(end.End(absl::UnavailableError("the coordinator is gone")));
  EXPECT_FALSE(end.End(absl::CancelledError("stopped")));
  EXPECT_TRUE(end.ended());
  EXPECT_EQ(end.status(), absl::UnavailableError("the coordinator is gone"));
  EXPECT_EQ(end.Wait(absl::ZeroDuration(), "server x"), end.status());
}

TEST(NodeEndTest, AnOkEndIsAnEndToo) {
  NodeEnd end;
  EXPECT_TRUE(end.End(absl::OkStatus()));
  EXPECT_TRUE(end.ended());
  EXPECT_FALSE(end.End(absl::CancelledError("stopped")));
  EXPECT_TRUE(end.Wait(absl::ZeroDuration(), "server x").ok());
}

TEST(NodeEndTest, WaitPastTheTimeoutSaysWhatDidNotEnd) {
  NodeEnd end;
  const absl::Status s = end.Wait(absl::Milliseconds(1), "coordinator tcp://127.0.0.1:7000");
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(s.message(), "coordinator tcp://127.0.0.1:7000: the job did not end within 1ms");
}

TEST(NodeEndTest, WaitReturnsAnEndFromAnotherThread) {
  NodeEnd end;
  std::thread ender([&] { end.End(absl::AbortedError("ended elsewhere")); });
  EXPECT_EQ(end.Wait(absl::InfiniteDuration(), "worker"), absl::AbortedError("ended elsewhere"));
  ender.join();
}

}  // namespace
}  // namespace kairos::internal
