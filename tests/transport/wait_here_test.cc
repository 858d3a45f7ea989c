// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of Transport::WaitHere on the ZeroMQ transport: a caller waits on its own thread
// doing the I/O thread's work (handlers, commands, the tick) while the I/O thread has none;
// where it may not (not started, stopped, on the I/O thread, on virtual time, another caller
// at work) it returns false at once; what arrives after the wait is still taken. Each wait
// is on a notification or a condition with a deadline; nothing sleeps.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/thread_checker.h"
#include "gtest/gtest.h"
#include "kairos/buffer.h"
#include "kairos/testing/manual_env.h"
#include "transport/transport.h"

namespace kairos::internal {
namespace {

constexpr absl::Duration kWait = absl::Seconds(10);
constexpr absl::Time kNoSpin = absl::InfinitePast();

// A well-formed message (a push of one value).
Message Ping(uint64_t id) {
  Message m;
  m.header.set_kind(wire::PUSH);
  m.header.set_request_id(id);
  m.header.set_length(1);
  m.payloads.push_back(Buffer::CopyOf(std::vector<float>{1.0f}));
  return m;
}

// A client and a server over inproc://. The server's answers leave only when the test
// sends them (Answer), from the test's thread, so that a test decides whether they arrive
// while the client waits here.
class WaitHereTest : public ::testing::Test {
 protected:
  void SetUp() override {
    context_ = TransportContext::Create();
    server_ = Make("server", context_);
    client_ = Make("client", context_);
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    absl::StatusOr<std::string> endpoint =
        server_->Listen(std::string("inproc://wait_here.") + info->name());
    ASSERT_TRUE(endpoint.ok()) << endpoint.status();
    endpoint_ = *endpoint;
    Connect();
    server_->Start(
        [this](PeerId from, Message) {
          asker_ = from;
          asked_.fetch_add(1);
        },
        nullptr, nullptr);
  }

  void TearDown() override {
    client_->Stop();
    server_->Stop();
  }

  static std::unique_ptr<Transport> Make(const std::string& name,
                                         std::shared_ptr<TransportContext> context,
                                         absl::Duration tick = absl::Milliseconds(100),
                                         std::shared_ptr<const Env> env = nullptr) {
    TransportOptions options;
    options.context = std::move(context);
    options.name = name;
    options.tick_period = tick;
    options.env = std::move(env);
    absl::StatusOr<std::unique_ptr<Transport>> t = MakeZmqTransport(options);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *std::move(t) : nullptr;
  }

  void Connect() {
    absl::StatusOr<PeerId> peer = client_->Connect(endpoint_);
    ASSERT_TRUE(peer.ok()) << peer.status();
    peer_ = *peer;
  }

  // The client's handler: counts answers and the thread they were handled on.
  void StartClient(TickHandler on_tick = nullptr) {
    client_->Start(
        [this](PeerId, Message) {
          answered_on_ = std::this_thread::get_id();
          handled_as_io_ = client_->OnIoThread();
          answers_.fetch_add(1);
        },
        nullptr, std::move(on_tick));
  }

  // Sends a ping and waits until the server has it.
  bool Ask(uint64_t id) {
    const int before = asked_.load();
    client_->Send(peer_, Ping(id));
    const absl::Time deadline = absl::Now() + kWait;
    while (asked_.load() == before) {
      if (absl::Now() > deadline) return false;
      std::this_thread::yield();
    }
    return true;
  }

  void Answer(uint64_t id) { server_->Send(asker_.load(), Ping(id)); }

  // WaitHere, again while it returns false because the I/O thread is at work for a moment
  // (Start, the Send of Ask); false if it never waited.
  bool WaitHereSoon(absl::FunctionRef<bool()> done, ThreadChecker* role = nullptr,
                    absl::Duration spin = absl::ZeroDuration()) {
    const absl::Time deadline = absl::Now() + kWait;
    while (absl::Now() < deadline) {
      if (client_->WaitHere(done, deadline, absl::Now() + spin, role)) return true;
    }
    return false;
  }

  std::shared_ptr<TransportContext> context_;
  std::unique_ptr<Transport> server_;
  std::unique_ptr<Transport> client_;
  std::string endpoint_;
  PeerId peer_ = 0;
  std::atomic<PeerId> asker_{0};
  std::atomic<int> asked_{0};
  std::atomic<int> answers_{0};
  std::atomic<std::thread::id> answered_on_{};
  std::atomic<bool> handled_as_io_{false};
};

// An answer sent while the caller waits here is handled on the caller's thread, as the I/O
// thread's work (OnIoThread, the role bound), and the wait ends with it.
TEST_F(WaitHereTest, AnAnswerArrivingWhileTheCallerWaitsIsHandledOnItsThread) {
  ThreadChecker role("client I/O thread");
  EXPECT_FALSE(client_->WaitHere([] { return true; }, absl::Now() + kWait, kNoSpin, &role))
      << "not started";
  StartClient();
  for (uint64_t i = 0; i < 20; ++i) {
    ASSERT_TRUE(Ask(i));
    const int before = answers_.load();
    const uint64_t waited = client_->hand_offs().waited_here;
    bool answered = false;  // the server answers once the caller waits here
    ASSERT_TRUE(WaitHereSoon(
        [&] {
          if (!answered) {
            answered = true;
            Answer(i);
          }
          return answers_.load() > before;
        },
        &role))
        << "round " << i;
    ASSERT_EQ(answers_.load(), before + 1) << "round " << i;
    EXPECT_EQ(answered_on_.load(), std::this_thread::get_id()) << "round " << i;
    EXPECT_TRUE(handled_as_io_.load());
    EXPECT_EQ(client_->hand_offs().waited_here, waited + 1);
    EXPECT_FALSE(client_->OnIoThread()) << "the role goes back after the wait";
  }
  client_->Stop();
  EXPECT_FALSE(client_->WaitHere([] { return true; }, absl::Now() + kWait, kNoSpin, nullptr))
      << "stopped";
}

// After a wait here, the I/O thread keeps off the sockets for a lease; an answer that comes
// when nobody waits is still handled, by the I/O thread. (Its tick, which drains every
// socket, comes only after the test's deadline: the lease must end by itself.)
TEST_F(WaitHereTest, AnAnswerArrivingAfterTheWaitIsTakenByTheIoThread) {
  client_->Stop();
  client_ = Make("client", context_, absl::Minutes(1));
  Connect();
  StartClient();
  ASSERT_TRUE(Ask(1));
  bool answered = false;
  ASSERT_TRUE(WaitHereSoon([&] {
    if (!answered) {
      answered = true;
      Answer(1);
    }
    return answers_.load() == 1;
  }));
  ASSERT_TRUE(Ask(2));  // from this thread: a command, which ends the lease
  Answer(2);
  const absl::Time deadline = absl::Now() + kWait;
  while (answers_.load() < 2 && absl::Now() < deadline) std::this_thread::yield();
  ASSERT_EQ(answers_.load(), 2);
  EXPECT_NE(answered_on_.load(), std::this_thread::get_id());
  // Without anything sent meanwhile (the lease runs out by itself).
  bool again = false;
  ASSERT_TRUE(Ask(3));
  ASSERT_TRUE(WaitHereSoon([&] {
    if (!again) {
      again = true;
      Answer(3);
    }
    return answers_.load() == 3;
  }));
  Answer(4);
  const absl::Time later = absl::Now() + kWait;
  while (answers_.load() < 4 && absl::Now() < later) std::this_thread::yield();
  ASSERT_EQ(answers_.load(), 4);
  EXPECT_NE(answered_on_.load(), std::this_thread::get_id());
}

// A function posted from another thread while a caller waits here runs at once, on the
// caller's thread (which holds the I/O thread's work), before the wait ends.
TEST_F(WaitHereTest, CommandsPostedDuringTheWaitRunOnTheWaitingThread) {
  StartClient();
  std::atomic<std::thread::id> ran_on{};
  std::thread poster;
  ASSERT_TRUE(WaitHereSoon([&] {
    if (!poster.joinable()) {
      poster = std::thread([&] { client_->Post([&] { ran_on = std::this_thread::get_id(); }); });
    }
    return ran_on.load() != std::thread::id{};
  }));
  poster.join();
  EXPECT_EQ(ran_on.load(), std::this_thread::get_id());
}

// While one caller waits here, another's WaitHere returns false at once (it sleeps on its
// request instead, and the first caller's handlers complete it).
TEST_F(WaitHereTest, ASecondCallerIsRefusedWhileTheFirstWaitsHere) {
  StartClient();
  int second = -1;
  ASSERT_TRUE(WaitHereSoon([&] {
    if (second == -1) {
      std::thread other([&] {
        second =
            client_->WaitHere([] { return true; }, absl::Now() + kWait, kNoSpin, nullptr) ? 1 : 0;
      });
      other.join();
    }
    return true;
  }));
  EXPECT_EQ(second, 0);
}

// Stop ends a wait here that waits for what never comes, long before its deadline.
TEST_F(WaitHereTest, StopEndsAWaitHere) {
  StartClient();
  std::thread stopper;
  const absl::Time begin = absl::Now();
  ASSERT_TRUE(WaitHereSoon([&] {
    if (!stopper.joinable()) stopper = std::thread([&] { client_->Stop(); });
    return false;
  }));
  stopper.join();
  EXPECT_LT(absl::Now() - begin, kWait / 2);
}

// The tick runs on the waiting caller when due: a wait here does not hold back the
// deadlines the tick enforces.
TEST_F(WaitHereTest, TheTickRunsOnTheWaitingCaller) {
  client_->Stop();
  client_ = Make("client", context_, absl::Milliseconds(2));
  std::atomic<int> ticks_here{0};
  const std::thread::id caller = std::this_thread::get_id();
  StartClient([&](absl::Time) {
    if (std::this_thread::get_id() == caller) ticks_here.fetch_add(1);
  });
  ASSERT_TRUE(WaitHereSoon([&] { return ticks_here.load() >= 3; }));
  EXPECT_GE(ticks_here.load(), 3);
}

// Where the I/O thread must do its work itself, WaitHere returns false without waiting: on
// the I/O thread, and on virtual time (the loop's order stays).
TEST_F(WaitHereTest, RefusedOnTheIoThreadAndOnVirtualTime) {
  StartClient();
  absl::Notification done;
  std::atomic<bool> waited{true};
  client_->Post([&] {
    waited = client_->WaitHere([] { return false; }, absl::Now() + kWait, kNoSpin, nullptr);
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(kWait));
  EXPECT_FALSE(waited.load());

  auto env = std::make_shared<kairos::testing::ManualEnv>(absl::FromUnixSeconds(100));
  std::unique_ptr<Transport> manual = Make("manual", nullptr, absl::Milliseconds(100), env);
  manual->Start(nullptr, nullptr, nullptr);
  absl::Notification posted;
  manual->Post([&] { posted.Notify(); });
  ASSERT_TRUE(posted.WaitForNotificationWithTimeout(kWait));
  EXPECT_FALSE(manual->WaitHere([] { return false; }, absl::Now() + kWait, kNoSpin, nullptr));
  manual->Stop();
}

}  // namespace
}  // namespace kairos::internal
