// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "apps/signals.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace kairos::launch {

std::string SignalName(int signo) {
  const char* abbrev = ::sigabbrev_np(signo);
  return abbrev != nullptr ? absl::StrCat("SIG", abbrev) : absl::StrCat("signal ", signo);
}

absl::StatusOr<std::unique_ptr<SignalFd>> SignalFd::Create(const std::vector<int>& signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int signo : signals) {
    if (sigaddset(&set, signo) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("SignalFd: bad signal number ", signo));
    }
  }
  sigset_t previous;
  if (int err = ::pthread_sigmask(SIG_BLOCK, &set, &previous); err != 0) {
    return absl::InternalError(absl::StrCat("pthread_sigmask: ", std::strerror(err)));
  }
  UniqueFd fd(::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!fd.valid()) {
    int err = errno;
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return absl::ResourceExhaustedError(absl::StrCat("signalfd: ", std::strerror(err)));
  }
  return std::unique_ptr<SignalFd>(new SignalFd(std::move(fd), previous));
}

SignalFd::~SignalFd() {
  // Discard what is pending: unblocking would otherwise deliver it with its default action.
  while (Read().has_value()) {
  }
  ::pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

std::optional<int> SignalFd::Read() {
  signalfd_siginfo info;
  while (true) {
    ssize_t n = ::read(fd_.get(), &info, sizeof(info));
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof(info))) return std::nullopt;  // EAGAIN: none
    return static_cast<int>(info.ssi_signo);
  }
}

absl::StatusOr<std::unique_ptr<SignalWatcher>> SignalWatcher::Start(
    const std::vector<int>& signals, std::function<void(int)> on_signal) {
  absl::StatusOr<std::unique_ptr<SignalFd>> signal_fd = SignalFd::Create(signals);
  if (!signal_fd.ok()) return signal_fd.status();
  UniqueFd stop(::eventfd(0, EFD_CLOEXEC));
  if (!stop.valid()) {
    return absl::ResourceExhaustedError(absl::StrCat("eventfd: ", std::strerror(errno)));
  }
  return std::unique_ptr<SignalWatcher>(
      new SignalWatcher(*std::move(signal_fd), std::move(stop), std::move(on_signal)));
}

SignalWatcher::SignalWatcher(std::unique_ptr<SignalFd> signals, UniqueFd stop,
                             std::function<void(int)> on_signal)
    : signals_(std::move(signals)), stop_(std::move(stop)), on_signal_(std::move(on_signal)) {
  thread_ = std::thread([this] { Loop(); });
}

SignalWatcher::~SignalWatcher() {
  uint64_t one = 1;
  // An eventfd write of 8 bytes cannot be short; it fails only on counter overflow.
  while (::write(stop_.get(), &one, sizeof(one)) < 0 && errno == EINTR) {
  }
  thread_.join();
}

void SignalWatcher::Loop() {
  while (true) {
    pollfd fds[2] = {{signals_->fd(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) continue;  // EINTR; other errors cannot happen with valid fds
    if (fds[1].revents != 0) return;
    while (std::optional<int> signo = signals_->Read()) on_signal_(*signo);
  }
}

}  // namespace kairos::launch
