// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "apps/fd_util.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "apps/signals.h"

namespace kairos::launch {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) Reset(other.Release());
  return *this;
}

int UniqueFd::Release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::Reset(int fd) {
  // close() is not retried on EINTR: on Linux the descriptor is released either way.
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

absl::StatusOr<Pipe> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::ResourceExhaustedError(absl::StrCat("pipe2: ", std::strerror(errno)));
  }
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

absl::Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::UnavailableError(absl::StrCat("write to fd ", fd, ": ", std::strerror(errno)));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

int PollTimeoutMs(absl::Time deadline) {
  if (deadline == absl::InfiniteFuture()) return -1;
  absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  int64_t ms = absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1)));
  return ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
}

namespace {

// Waits until `fd` is readable. Errors as ReadLine's, except OutOfRange.
absl::Status WaitReadable(int fd, absl::Time deadline, const SignalFd* interrupt) {
  while (true) {
    pollfd fds[2] = {{fd, POLLIN, 0}, {interrupt ? interrupt->fd() : -1, POLLIN, 0}};
    int n = ::poll(fds, 2, PollTimeoutMs(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
    if (fds[1].revents != 0) {
      return absl::CancelledError(absl::StrCat("interrupted by a signal while reading fd ", fd));
    }
    if (fds[0].revents != 0) return absl::OkStatus();
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("no complete line on fd ", fd, " before the deadline"));
    }
  }
}

}  // namespace

absl::StatusOr<std::string> ReadLine(int fd, absl::Time deadline, const SignalFd* interrupt,
                                     size_t max_bytes) {
  std::string line;
  char chunk[512];
  while (true) {
    absl::Status ready = WaitReadable(fd, deadline, interrupt);
    if (!ready.ok()) return ready;
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) {
      return absl::UnavailableError(absl::StrCat("read fd ", fd, ": ", std::strerror(errno)));
    }
    if (n == 0) {
      return absl::OutOfRangeError(
          absl::StrCat("end of file on fd ", fd, " before a complete line"));
    }
    line.append(chunk, static_cast<size_t>(n));
    if (size_t newline = line.find('\n'); newline != std::string::npos) {
      line.resize(newline);
      return line;
    }
    if (line.size() > max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("line on fd ", fd, " is longer than ", max_bytes, " bytes"));
    }
  }
}

}  // namespace kairos::launch
