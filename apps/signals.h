// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Signal handling of the kairos programs without signal handlers and without globals:
// the signals are blocked and read from a signalfd(2), either by the program's own poll loop
// (SignalFd, kairos-launch) or by a thread that calls back (SignalWatcher, kairos-coordinator
// and kairos-server). Linux only.
//
// A blocked signal stays blocked in threads created afterwards, so create these objects in
// main() before any other thread (the library's threads included); a thread created earlier
// that does not block the signal would take it with its default action instead.

#ifndef KAIROS_APPS_SIGNALS_H_
#define KAIROS_APPS_SIGNALS_H_

#include <csignal>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "apps/fd_util.h"

namespace kairos::launch {

// "SIGINT" for SIGINT, "signal 42" for a number without a name.
std::string SignalName(int signo);

// Blocks a set of signals in the calling thread and receives them through a non-blocking
// signalfd. On destruction, signals still pending are discarded and the thread's previous
// signal mask is restored.
//
// Thread-safety: create and destroy on the same thread (the mask is per thread); Read()
// and fd() may be used from any one thread at a time.
class SignalFd {
 public:
  static absl::StatusOr<std::unique_ptr<SignalFd>> Create(const std::vector<int>& signals);
  ~SignalFd();
  SignalFd(const SignalFd&) = delete;
  SignalFd& operator=(const SignalFd&) = delete;

  // Readable (poll POLLIN) while a signal is pending.
  int fd() const { return fd_.get(); }
  // Takes the next pending signal, or nullopt when none is pending.
  std::optional<int> Read();

 private:
  SignalFd(UniqueFd fd, sigset_t previous_mask)
      : fd_(std::move(fd)), previous_mask_(previous_mask) {}

  UniqueFd fd_;
  sigset_t previous_mask_;
};

// Calls `on_signal(signo)` on its own thread for every listed signal the process receives,
// until destroyed. The signals are blocked first (see the file comment).
//
// Thread-safety: create and destroy on the same thread; on_signal runs on the watcher's
// thread, one call at a time, and must not destroy the watcher.
class SignalWatcher {
 public:
  static absl::StatusOr<std::unique_ptr<SignalWatcher>> Start(const std::vector<int>& signals,
                                                              std::function<void(int)> on_signal);
  // Stops and joins the thread; a signal arriving afterwards stays blocked and is discarded.
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  SignalWatcher(std::unique_ptr<SignalFd> signals, UniqueFd stop,
                std::function<void(int)> on_signal);
  void Loop();

  std::unique_ptr<SignalFd> signals_;
  UniqueFd stop_;  // an eventfd; written once by the destructor
  std::function<void(int)> on_signal_;
  std::thread thread_;
};

}  // namespace kairos::launch

#endif  // KAIROS_APPS_SIGNALS_H_
