// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// BarrierBook: the workers waiting in the coordinator's barrier. A barrier is released when
// every active worker is waiting; a worker that leaves (finishes, or is declared dead) stops
// being waited for; a waiter past its deadline is answered DeadlineExceeded; a worker's
// newer call replaces its older one (whose caller gave up on it), so a worker cannot grow
// the list; a worker that leaves while it waits gets its waiter back, to be answered. Pure
// bookkeeping: the coordinator sends the answers it returns.
//
// Thread-safety: none; the coordinator's I/O thread owns it.

#ifndef KAIROS_COORDINATOR_BARRIER_H_
#define KAIROS_COORDINATOR_BARRIER_H_

#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "transport/transport.h"
#include "wire/message.h"

namespace kairos::internal {

struct BarrierWaiter {
  PeerId peer = 0;
  wire::Header request;
  int rank = 0;
  absl::Time deadline = absl::InfiniteFuture();
};

class BarrierBook {
 public:

  // Worker `w.rank` arrives. Returns the waiter it replaces, if it was waiting already.
  std::optional<BarrierWaiter> Arrive(BarrierWaiter w);
  // The active workers that are not waiting.
  std::vector<int> Missing(const std::vector<int>& active) const;
  // Every waiter, once no active worker is missing (and someone waits); else none.
  std::vector<BarrierWaiter> TakeReleased(const std::vector<int>& active);
  // Worker `rank` left: it is no longer waited for, nor waiting. Returns its waiter, if it
  // was waiting (the caller answers it).
  std::optional<BarrierWaiter> Remove(int rank);
  // The waiters whose deadline is not after `now`.
  std::vector<BarrierWaiter> TakeExpired(absl::Time now);
  // Every waiter (the job ended).
  std::vector<BarrierWaiter> TakeAll();
  bool empty() const { return waiters_.empty(); }
  int size() const { return static_cast<int>(waiters_.size()); }

 private:
  std::vector<BarrierWaiter> waiters_;
};

}  // namespace kairos::internal

#endif  // KAIROS_COORDINATOR_BARRIER_H_
