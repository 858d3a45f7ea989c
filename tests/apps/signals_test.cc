// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "apps/signals.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <memory>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kairos::launch {
namespace {

bool IsBlocked(int signo) {
  sigset_t mask;
  ::pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return sigismember(&mask, signo) == 1;
}

TEST(SignalNameTest, NamesSignals) {
  EXPECT_EQ(SignalName(SIGINT), "SIGINT");
  EXPECT_EQ(SignalName(SIGKILL), "SIGKILL");
  EXPECT_EQ(SignalName(1000), "signal 1000");
}

TEST(SignalFdTest, ReadsABlockedSignal) {
  std::unique_ptr<SignalFd> signals = SignalFd::Create({SIGUSR1}).value();
  EXPECT_TRUE(IsBlocked(SIGUSR1));
  EXPECT_EQ(signals->Read(), std::nullopt);
  ASSERT_EQ(::kill(::getpid(), SIGUSR1), 0);
  pollfd fd = {signals->fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&fd, 1, 30000), 1);
  EXPECT_EQ(signals->Read(), SIGUSR1);
  EXPECT_EQ(signals->Read(), std::nullopt);
}

TEST(SignalFdTest, DiscardsPendingSignalsAndRestoresTheMask) {
  ASSERT_FALSE(IsBlocked(SIGUSR2));
  {
    std::unique_ptr<SignalFd> signals = SignalFd::Create({SIGUSR2}).value();
    // Left pending: unblocking it would kill the test with SIGUSR2's default action.
    ASSERT_EQ(::kill(::getpid(), SIGUSR2), 0);
  }
  EXPECT_FALSE(IsBlocked(SIGUSR2));
}

TEST(SignalFdTest, RejectsABadSignalNumber) {
  EXPECT_TRUE(absl::IsInvalidArgument(SignalFd::Create({-1}).status()));
}

TEST(SignalWatcherTest, CallsBackOnItsThread) {
  absl::Notification received;
  std::atomic<int> got{0};
  std::unique_ptr<SignalWatcher> watcher = SignalWatcher::Start({SIGUSR1}, [&](int signo) {
                                             got = signo;
                                             received.Notify();
                                           }).value();
  ASSERT_EQ(::kill(::getpid(), SIGUSR1), 0);
  ASSERT_TRUE(received.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(got.load(), SIGUSR1);
}

TEST(SignalWatcherTest, StopsWithoutASignal) {
  std::unique_ptr<SignalWatcher> watcher =
      SignalWatcher::Start({SIGUSR1}, [](int) { FAIL() << "no signal was sent"; }).value();
  watcher.reset();
  EXPECT_FALSE(IsBlocked(SIGUSR1));
}

}  // namespace
}  // namespace kairos::launch
