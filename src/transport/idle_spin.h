// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// IdleSpin: how long an I/O loop that has run out of work keeps looking for more (polling
// without waiting) before it sleeps. A loop that sleeps must be woken by whoever brings the
// next message or command: a system call on that side and a context switch on this one,
// tens of microseconds on a virtual machine, once per round of a pipeline of small
// requests. A short spin catches the next piece of work while it is still on its way.
// A spin that finds nothing is CPU spent for nothing, so spinning backs off: after k spins
// in a row that ran out, the loop sleeps at once through the next 2^(k-1) - 1 idle periods
// (k - 1 counted up to kMaxBackoff), and one spin that finds work restores spinning every
// time.
// A lone miss costs nothing: a pipeline's answers come in bursts, and the gap after a
// burst is often longer than the spin while the next gap is not. With sparse traffic the
// loop spins once per 2^kMaxBackoff idle periods at most.
// Pure: tested directly (tests/transport/idle_spin_test.cc); ZmqTransport runs it.

#ifndef KAIROS_TRANSPORT_IDLE_SPIN_H_
#define KAIROS_TRANSPORT_IDLE_SPIN_H_

#include "absl/time/time.h"

namespace kairos::internal {

// Thread-compatible: one loop calls it.
class IdleSpin {
 public:
  // The backoff stops growing at one spin per 2^kMaxBackoff = 64 idle periods.
  static constexpr int kMaxBackoff = 6;

  // `limit`: the longest spin; zero or negative never spins.
  explicit IdleSpin(absl::Duration limit) : limit_(limit) {}

  // The loop ran out of work: how long it may look for more before it sleeps, this time
  // (zero: sleep at once). A positive answer must be followed by Ended.
  absl::Duration Next();
  // The spin that Next allowed ended: `found` when work came before its end.
  void Ended(bool found);

 private:
  const absl::Duration limit_;
  int misses_ = 0;  // spins in a row that ran out
  int skip_ = 0;    // idle periods left to sleep through before the next spin
};

}  // namespace kairos::internal

#endif  // KAIROS_TRANSPORT_IDLE_SPIN_H_
