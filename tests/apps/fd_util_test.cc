// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "apps/fd_util.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "apps/signals.h"
#include "gtest/gtest.h"

namespace kairos::launch {
namespace {

constexpr absl::Duration kSafetyDeadline = absl::Seconds(60);

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) >= 0; }

TEST(UniqueFdTest, ClosesOnDestructionAndMoves) {
  Pipe pipe = MakePipe().value();
  int fd = pipe.read.get();
  UniqueFd moved(std::move(pipe.read));
  EXPECT_FALSE(pipe.read.valid());
  EXPECT_EQ(moved.get(), fd);
  moved.Reset();
  EXPECT_FALSE(IsOpen(fd));
  int write_fd = pipe.write.Release();
  EXPECT_TRUE(IsOpen(write_fd));
  ::close(write_fd);
}

TEST(MakePipeTest, EndsAreCloseOnExec) {
  Pipe pipe = MakePipe().value();
  EXPECT_EQ(::fcntl(pipe.read.get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  EXPECT_EQ(::fcntl(pipe.write.get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
}

TEST(ReadLineTest, ReturnsTheFirstLine) {
  Pipe pipe = MakePipe().value();
  ASSERT_TRUE(WriteAll(pipe.write.get(), "tcp://127.0.0.1:5555\nrest").ok());
  EXPECT_EQ(ReadLine(pipe.read.get(), absl::Now() + kSafetyDeadline, nullptr).value_or(""),
            "tcp://127.0.0.1:5555");
}

TEST(ReadLineTest, EndOfFileBeforeANewlineIsOutOfRange) {
  Pipe pipe = MakePipe().value();
  ASSERT_TRUE(WriteAll(pipe.write.get(), "partial").ok());
  pipe.write.Reset();
  absl::StatusOr<std::string> line =
      ReadLine(pipe.read.get(), absl::Now() + kSafetyDeadline, nullptr);
  EXPECT_TRUE(absl::IsOutOfRange(line.status())) << line.status();
}

TEST(ReadLineTest, GivesUpAtTheDeadline) {
  Pipe pipe = MakePipe().value();
  absl::Time start = absl::Now();
  absl::StatusOr<std::string> line =
      ReadLine(pipe.read.get(), start + absl::Milliseconds(50), nullptr);
  EXPECT_TRUE(absl::IsDeadlineExceeded(line.status())) << line.status();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(50));
}

TEST(ReadLineTest, RefusesALongLine) {
  Pipe pipe = MakePipe().value();
  ASSERT_TRUE(WriteAll(pipe.write.get(), std::string(5000, 'x')).ok());
  absl::StatusOr<std::string> line =
      ReadLine(pipe.read.get(), absl::Now() + kSafetyDeadline, nullptr, /*max_bytes=*/100);
  EXPECT_TRUE(absl::IsResourceExhausted(line.status())) << line.status();
}

TEST(ReadLineTest, IsCancelledByAPendingSignalAndLeavesItPending) {
  std::unique_ptr<SignalFd> signals = SignalFd::Create({SIGUSR1}).value();
  Pipe pipe = MakePipe().value();
  ASSERT_EQ(::kill(::getpid(), SIGUSR1), 0);
  absl::StatusOr<std::string> line =
      ReadLine(pipe.read.get(), absl::Now() + kSafetyDeadline, signals.get());
  EXPECT_TRUE(absl::IsCancelled(line.status())) << line.status();
  EXPECT_EQ(signals->Read(), SIGUSR1);
}

TEST(PollTimeoutMsTest, RoundsUpAndHandlesInfinity) {
  EXPECT_EQ(PollTimeoutMs(absl::InfiniteFuture()), -1);
  EXPECT_EQ(PollTimeoutMs(absl::Now() - absl::Seconds(1)), 0);
  int ms = PollTimeoutMs(absl::Now() + absl::Seconds(10));
  EXPECT_GT(ms, 9000);
  EXPECT_LE(ms, 10000);
  EXPECT_GE(PollTimeoutMs(absl::Now() + absl::Microseconds(10)), 0);
  EXPECT_LE(PollTimeoutMs(absl::Now() + absl::Microseconds(10)), 1);
}

}  // namespace
}  // namespace kairos::launch
