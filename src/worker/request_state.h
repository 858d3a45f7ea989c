// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The shared state behind a kairos::Request: how many parts (messages to shards) are still
// outstanding, the first error, and the deadline. Parts are completed by the worker's I/O
// thread, or by a waiting caller doing its work (WaitTuning::WaitHere); callers wait on it.
//
// Thread-safety: all methods are thread-safe.

#ifndef KAIROS_WORKER_REQUEST_STATE_H_
#define KAIROS_WORKER_REQUEST_STATE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/env.h"
#include "common/plain_mutex.h"
#include "kairos/buffer.h"

namespace kairos::internal {

// What a request is, for its error messages ("pull of table 'w' [0, 100)", "barrier of
// worker 3"). Formatted only when an error needs it, not on every call.
struct RequestLabel {
  const char* verb = "";  // a string literal: "push", "pull", "barrier", ...
  std::string table;      // empty: a request of the worker itself (`worker` is its rank)
  uint64_t begin = 0;
  uint64_t end = 0;
  int worker = -1;

  std::string ToString() const;
};

// What a worker's waits learn from its requests; shared by the worker and its requests.
struct WaitTuning {
  // Requests issued and not complete.
  std::atomic<int> open{0};
  // Issue-to-completion time of recent lone spinning requests (those issued while no other
  // request was open), in ns: a moving average, 0 before the first.
  std::atomic<int64_t> lone_latency_ns{0};
  // Of the open requests, those that do not spin (larger than a few tens of KiB): the
  // worker's I/O thread does not spin while one is open (WorkerNode, WorkerOptions::io_spin).
  std::atomic<int> open_large{0};

  // How long a lone small request may spin from its issue, in ns: 30 us before anything is
  // known, then 1.5 x the average answer time, none once answers take longer than
  // kMaxSpinNs (sleeping then costs little next to the wait, and the spin would take a core
  // from whatever is making the answers slow).
  int64_t SpinBudgetNs() const;
  void RecordLoneLatency(int64_t ns);

  static constexpr int64_t kFirstSpinNs = 30'000;
  static constexpr int64_t kMaxSpinNs = 150'000;

  // While the worker lives, a caller waiting for a request waits on its own thread doing the
  // I/O thread's work (Transport::WaitHere) instead of being woken by it: `wait_here` is the
  // worker's, set once its transport runs, with Transport::WaitHere's arguments but the
  // role. False when it is not set (or no longer), or it did not wait (the I/O thread was
  // busy): the caller then sleeps until the I/O thread completes the request.
  using WaitHereFn =
      std::function<bool(absl::FunctionRef<bool()> done, absl::Time until, absl::Time spin_until)>;
  bool WaitHere(absl::FunctionRef<bool()> done, absl::Time until, absl::Time spin_until);
  void SetWaitHere(WaitHereFn wait_here);
  // Once it returns no WaitHere runs or will: the worker calls it after its transport
  // stopped (which ends the waits in progress) and before it goes.
  void ClearWaitHere();

 private:
  // Shared by the waits in progress, taken alone by SetWaitHere and ClearWaitHere.
  std::shared_mutex wait_here_mu_;
  WaitHereFn wait_here_;  // guarded by wait_here_mu_
};

class RequestState {
 public:
  // Request::Wait waits at most this long past the request's deadline. The worker's I/O
  // thread fails every request by its deadline (plus the grace and one tick), so a wait
  // never gets here unless a bug lost the request: this bound turns such a bug into an
  // error instead of a hang. Not an option, as no correct program depends on it.
  static constexpr absl::Duration kWaitBackstop = absl::Seconds(30);

  // `label` names the call in errors. `spin`: Wait may spin before it sleeps (worth it for
  // small requests, answered within tens of microseconds; for large ones the spin would
  // only take CPU from the threads doing the work). `tuning`, when given, counts the
  // requests of the issuing worker that are not complete (this one from now until it
  // completes) and sets how long the spin lasts. Wait spins only when this request was the
  // only one at its issue (a synchronous call): behind a pipeline of requests the answer is
  // not microseconds away, and the spin would take a core from the threads that produce it.
  // `deadline` is on `env`'s time (the worker's), which the I/O thread's tick compares it with;
  // Request::Wait's real-time backstop is derived from it (see backstop()).
  RequestState(RequestLabel label, absl::Time deadline, int parts, bool spin = false,
               std::shared_ptr<WaitTuning> tuning = nullptr, const Env& env = Env::Default());

  // A completed request (e.g. refused before anything was sent).
  static std::shared_ptr<RequestState> Failed(absl::Status status);

  const RequestLabel& label() const { return label_; }
  absl::Time deadline() const { return deadline_; }
  // The deadline in real time: now + (deadline - env now) at construction; the same as
  // deadline() in real time. Waits of the caller are bounded in real time by it.
  absl::Time real_deadline() const { return real_deadline_; }

  // Where a pull's values go, set before any part is sent: caller memory at `out`, or
  // (gathered) a read-only buffer *out of `length` values (it may be the received message
  // itself, which over inproc may be the server's own memory).
  void ReceiveInto(float* out);
  void GatherInto(ConstBuffer* out, uint64_t length);
  // Runs `fn` once, on the waiting thread, after a successful request's values are in
  // place (a sparse pull scatters its gathered rows to the caller's keys with it). Set
  // before any part is sent.
  void AfterDelivery(std::function<void()> fn) {
    PlainMutexLock lock(&mu_);
    after_delivery_ = std::move(fn);
  }

  // One part finished with `status`; the first error is kept (prefixed with the label).
  void PartDone(const absl::Status& status);
  // One part of a pull finished: `values` are elements [at, at + values.size()) of the
  // result. They go into place when the caller waits (Wait copies them, on the caller's
  // thread, so the I/O thread is free for the next message).
  void PartDone(uint64_t at, Buffer values);
  // Completes the request now with `status` (unless it is already complete).
  void Fail(const absl::Status& status);

  bool done() const;
  // Waits until complete or `until`; DeadlineExceeded if `until` passed first. On success,
  // copies the pulled values into place first (a gathered pull of one part takes the
  // received buffer itself, without a copy).
  absl::Status Wait(absl::Time until) const;

 private:
  // Pulled values not yet delivered: elements [at, at + values.size()) of the result.
  struct Piece {
    uint64_t at = 0;
    Buffer values;
  };

  absl::Status Labelled(const absl::Status& status) const;
  // outstanding_ just reached 0.
  void Completed() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Deliver() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const RequestLabel label_;
  const absl::Time deadline_;
  const absl::Time real_deadline_;
  const std::shared_ptr<WaitTuning> tuning_;
  // Spins (a small request, alone at its issue) until issued_ns_ + spin_ns_ on the steady
  // clock; spin_ns_ is 0 for a request that does not spin.
  int64_t issued_ns_ = 0;
  int64_t spin_ns_ = 0;
  bool lone_ = false;
  bool large_ = false;  // counted in tuning_->open_large
  // Every request takes it a few times: a PlainMutex (common/plain_mutex.h), signalled
  // once, when the request completes.
  mutable PlainMutex mu_;
  mutable PlainCondVar completed_;
  int outstanding_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<Piece> pieces_ ABSL_GUARDED_BY(mu_);
  // Where the values go (ReceiveInto or GatherInto); set before the parts are sent, then
  // read-only.
  float* out_ = nullptr;
  ConstBuffer* gather_ = nullptr;
  uint64_t gather_length_ = 0;
  mutable std::function<void()> after_delivery_ ABSL_GUARDED_BY(mu_);
  // Mirrors outstanding_ == 0 so that a waiter can spin on it briefly without the lock.
  std::atomic<bool> complete_{false};
};

}  // namespace kairos::internal

#endif  // KAIROS_WORKER_REQUEST_STATE_H_
