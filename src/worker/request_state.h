// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The shared state behind a kairos::Request: how many parts (messages to shards) are still
// outstanding, the first error, and the deadline. Parts are completed by the worker's I/O
// thread; callers wait on it.
//
// Thread-safety: all methods are thread-safe.

#ifndef KAIROS_WORKER_REQUEST_STATE_H_
#define KAIROS_WORKER_REQUEST_STATE_H_

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kairos/buffer.h"

namespace kairos::internal {

class RequestState {
 public:
  // `what` describes the call in errors ("pull of table 'w' [0, 100)"). `spin`: Wait spins
  // briefly before it sleeps (worth it for small requests, answered within microseconds;
  // for large ones the spin would only take CPU from the threads doing the work).
  RequestState(std::string what, absl::Time deadline, int parts, bool spin = false)
      : what_(std::move(what)), deadline_(deadline), spin_(spin), outstanding_(parts) {}

  // A completed request (e.g. refused before anything was sent).
  static std::shared_ptr<RequestState> Failed(absl::Status status);

  const std::string& what() const { return what_; }
  absl::Time deadline() const { return deadline_; }

  // One part finished with `status`; the first error is kept (prefixed with what()).
  void PartDone(const absl::Status& status);
  // One part of a pull finished: `values` go to `dest` when the caller waits (Wait copies
  // them, on the caller's thread, so the I/O thread is free for the next message).
  void PartDone(float* dest, Buffer values);
  // Completes the request now with `status` (unless it is already complete).
  void Fail(const absl::Status& status);

  bool done() const;
  // Waits until complete or `until`; DeadlineExceeded if `until` passed first. On success,
  // copies the pulled values into place first.
  absl::Status Wait(absl::Time until) const;

 private:
  const std::string what_;
  const absl::Time deadline_;
  const bool spin_;
  mutable absl::Mutex mu_;
  int outstanding_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  // Pulled values not yet copied into the caller's memory.
  mutable std::vector<std::pair<float*, Buffer>> copies_ ABSL_GUARDED_BY(mu_);
  // Mirrors outstanding_ == 0 so that a waiter can spin on it briefly without the lock.
  std::atomic<bool> complete_{false};
};

}  // namespace kairos::internal

#endif  // KAIROS_WORKER_REQUEST_STATE_H_
