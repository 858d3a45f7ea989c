// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "worker/request_state.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/buffer_internal.h"
#include "common/copy.h"
#include "kairos/worker.h"

namespace kairos {
namespace internal {
namespace {

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Tells the core that this thread spins (saves power, and lets a sibling hyperthread run);
// a no-op where the architecture has no such hint.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace

int64_t WaitTuning::SpinBudgetNs() const {
  const int64_t latency = lone_latency_ns.load(std::memory_order_relaxed);
  if (latency == 0) return kFirstSpinNs;
  if (latency > kMaxSpinNs) return 0;
  return std::min(kMaxSpinNs, latency + latency / 2);
}

void WaitTuning::RecordLoneLatency(int64_t ns) {
  // Racing updates may lose a sample; this is a heuristic.
  const int64_t old = lone_latency_ns.load(std::memory_order_relaxed);
  lone_latency_ns.store(old == 0 ? ns : (3 * old + ns) / 4, std::memory_order_relaxed);
}

bool WaitTuning::WaitHere(absl::FunctionRef<bool()> done, absl::Time until, absl::Time spin_until) {
  std::shared_lock lock(wait_here_mu_, std::try_to_lock);
  return lock.owns_lock() && wait_here_ && wait_here_(done, until, spin_until);
}

void WaitTuning::SetWaitHere(WaitHereFn wait_here) {
  std::unique_lock lock(wait_here_mu_);
  wait_here_ = std::move(wait_here);
}

void WaitTuning::ClearWaitHere() { SetWaitHere(nullptr); }

std::string RequestLabel::ToString() const {
  if (*verb == '\0') return "";
  if (table.empty()) return absl::StrCat(verb, " of worker ", worker);
  return absl::StrCat(verb, " of table '", table, "' [", begin, ", ", end, ")");
}

RequestState::RequestState(RequestLabel label, absl::Time deadline, int parts, bool spin,
                           std::shared_ptr<WaitTuning> tuning, const Env& env)
    : label_(std::move(label)),
      deadline_(deadline),
      real_deadline_(env.IsVirtual() ? absl::Now() + (deadline - env.Now()) : deadline),
      tuning_(parts > 0 ? std::move(tuning) : nullptr),
      outstanding_(parts) {
  if (parts <= 0) {
    complete_.store(true, std::memory_order_release);
    return;
  }
  const bool lone =
      tuning_ == nullptr || tuning_->open.fetch_add(1, std::memory_order_relaxed) == 0;
  large_ = !spin;
  if (tuning_ != nullptr && large_) tuning_->open_large.fetch_add(1, std::memory_order_relaxed);
  if (spin && lone) {
    lone_ = true;
    issued_ns_ = SteadyNanos();
    spin_ns_ = tuning_ != nullptr ? tuning_->SpinBudgetNs() : WaitTuning::kFirstSpinNs;
  }
}

void RequestState::Completed() {
  complete_.store(true, std::memory_order_release);
  completed_.SignalAll();
  if (tuning_ == nullptr) return;
  tuning_->open.fetch_sub(1, std::memory_order_relaxed);
  if (large_) tuning_->open_large.fetch_sub(1, std::memory_order_relaxed);
  if (lone_) tuning_->RecordLoneLatency(SteadyNanos() - issued_ns_);
}

std::shared_ptr<RequestState> RequestState::Failed(absl::Status status) {
  auto state = std::make_shared<RequestState>(RequestLabel{}, absl::InfinitePast(), 1);
  state->Fail(status);
  return state;
}

absl::Status RequestState::Labelled(const absl::Status& status) const {
  std::string what = label_.ToString();
  if (what.empty()) return status;
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
}

void RequestState::ReceiveInto(float* out) { out_ = out; }

void RequestState::GatherInto(ConstBuffer* out, uint64_t length) {
  gather_ = out;
  gather_length_ = length;
}

void RequestState::PartDone(const absl::Status& status) {
  PlainMutexLock lock(&mu_);
  if (outstanding_ == 0) return;
  if (!status.ok() && status_.ok()) status_ = Labelled(status);
  if (--outstanding_ == 0) Completed();
}

void RequestState::PartDone(uint64_t at, Buffer values) {
  PlainMutexLock lock(&mu_);
  if (outstanding_ == 0) return;
  pieces_.push_back(Piece{at, std::move(values)});
  if (--outstanding_ == 0) Completed();
}

void RequestState::Fail(const absl::Status& status) {
  PlainMutexLock lock(&mu_);
  if (outstanding_ == 0) return;
  if (status_.ok()) status_ = Labelled(status);
  outstanding_ = 0;
  Completed();
}

bool RequestState::done() const { return complete_.load(std::memory_order_acquire); }

void RequestState::Deliver() const {
  std::size_t bytes = 0;
  for (const Piece& p : pieces_) bytes += p.values.size_bytes();
  const bool stream = bytes >= kStreamCopyMinBytes;
  if (gather_ != nullptr && !pieces_.empty()) {
    if (pieces_.size() == 1 && pieces_[0].values.size() == gather_length_) {
      *gather_ = std::move(pieces_[0].values);  // the received message itself
    } else {
      // Into the caller's buffer when it is theirs alone and the right size, else a new one.
      Buffer& own = ConstBufferAccess::Storage(*gather_);
      Buffer joined = own.size() == gather_length_ && IsPrivateAllocation(own)
                          ? std::move(own)
                          : Buffer::Allocate(gather_length_);
      for (const Piece& p : pieces_) {
        CopyFloats(joined.data() + p.at, p.values.data(), p.values.size(), stream);
      }
      *gather_ = std::move(joined);
    }
  } else if (out_ != nullptr) {
    for (const Piece& p : pieces_) {
      CopyFloats(out_ + p.at, p.values.data(), p.values.size(), stream);
    }
  }
}

absl::Status RequestState::Wait(absl::Time until) const {
  const auto done = [this] { return complete_.load(std::memory_order_acquire); };
  // A lone small request's answer usually comes within tens of microseconds, and sleeping
  // would add a wake-up to the round trip: its wait spins first, until a little after the
  // answer usually comes (WaitTuning), counted from the issue, never past the caller's own
  // deadline (WaitFor(0) polls).
  const absl::Time now = absl::Now();
  int64_t spin_until_ns = 0;  // on the steady clock; 0: no spin
  absl::Time spin_until = absl::InfinitePast();
  if (spin_ns_ > 0 && until > now) {
    const int64_t steady = SteadyNanos();
    spin_until_ns = std::min(issued_ns_ + spin_ns_, steady + absl::ToInt64Nanoseconds(until - now));
    spin_until = now + absl::Nanoseconds(spin_until_ns - steady);
  }
  // Rather than wait for the worker's I/O thread to take the answer (and to wake it), the
  // caller takes the answers from the sockets itself while that thread has no other work
  // (Transport::WaitHere): spinning first when lone, then sleeping in the poll.
  bool waited = false;
  if (tuning_ != nullptr && !done() && until > now) {
    waited = tuning_->WaitHere(done, until, spin_until);
  }
  // Otherwise a lone request spins on its completion by the I/O thread, and ends the spin at
  // once when another request of the worker is opened meanwhile.
  if (!waited && spin_until_ns > 0) {
    for (int round = 1; !done(); ++round) {
      for (int i = 0; i < 16; ++i) CpuRelax();
      if (SteadyNanos() >= spin_until_ns) break;
      if (tuning_ != nullptr && tuning_->open.load(std::memory_order_relaxed) > 1) break;
      // Every few microseconds, let a thread that waits for this core run: it may be the
      // one bringing the answer.
      if (round % 8 == 0) sched_yield();
    }
  }
  PlainMutexLock lock(&mu_);
  while (outstanding_ != 0) {
    if (completed_.WaitWithDeadline(&mu_, until) && outstanding_ != 0) {
      return absl::DeadlineExceededError(
          absl::StrCat(label_.ToString(), ": not complete after waiting"));
    }
  }
  // Under the lock: a second waiter returns only once the values are in place.
  if (status_.ok()) {
    Deliver();
    if (after_delivery_) std::exchange(after_delivery_, nullptr)();
  }
  pieces_.clear();
  return status_;
}

}  // namespace internal

Request::Request(std::shared_ptr<internal::RequestState> state) : state_(std::move(state)) {}

absl::Status Request::Wait() const {
  if (state_ == nullptr) return absl::OkStatus();
  // The worker's I/O thread completes every request by its deadline (plus a tick); the
  // wait is bounded by a generous backstop so that a bug can never hang the caller.
  return state_->Wait(state_->real_deadline() + internal::RequestState::kWaitBackstop);
}

absl::Status Request::WaitFor(absl::Duration timeout) const {
  if (state_ == nullptr) return absl::OkStatus();
  return state_->Wait(absl::Now() + timeout);
}

bool Request::done() const { return state_ == nullptr || state_->done(); }

}  // namespace kairos
