// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "worker/request_state.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "kairos/worker.h"

namespace kairos {
namespace internal {
namespace {

// About 20 us of pause instructions on current x86 cores.
constexpr int kSpins = 2000;

}  // namespace

std::shared_ptr<RequestState> RequestState::Failed(absl::Status status) {
  auto state = std::make_shared<RequestState>("", absl::InfinitePast(), 1);
  state->Fail(status);
  return state;
}

void RequestState::PartDone(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  if (outstanding_ == 0) return;
  if (!status.ok() && status_.ok()) {
    status_ = what_.empty() ? status
                            : absl::Status(status.code(),
                                           absl::StrCat(what_, ": ", status.message()));
  }
  if (--outstanding_ == 0) complete_.store(true, std::memory_order_release);
}

void RequestState::PartDone(float* dest, Buffer values) {
  absl::MutexLock lock(&mu_);
  if (outstanding_ == 0) return;
  copies_.emplace_back(dest, std::move(values));
  if (--outstanding_ == 0) complete_.store(true, std::memory_order_release);
}

void RequestState::Fail(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  if (outstanding_ == 0) return;
  if (status_.ok()) {
    status_ = what_.empty() ? status
                            : absl::Status(status.code(),
                                           absl::StrCat(what_, ": ", status.message()));
  }
  outstanding_ = 0;
  complete_.store(true, std::memory_order_release);
}

bool RequestState::done() const {
  absl::MutexLock lock(&mu_);
  return outstanding_ == 0;
}

absl::Status RequestState::Wait(absl::Time until) const {
  // A short spin first: a small request is often answered within microseconds, and
  // sleeping on the mutex would add a wake-up to the round trip.
  for (int i = 0; spin_ && i < kSpins && !complete_.load(std::memory_order_acquire); ++i) {
    __builtin_ia32_pause();
  }
  absl::MutexLock lock(&mu_);
  auto complete = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return outstanding_ == 0; };
  if (!mu_.AwaitWithDeadline(absl::Condition(&complete), until)) {
    return absl::DeadlineExceededError(
        absl::StrCat(what_, ": not complete after waiting"));
  }
  // Under the lock: a second waiter returns only once the values are in place.
  if (status_.ok()) {
    for (auto& [dest, values] : copies_) {
      std::memcpy(dest, values.data(), values.size_bytes());
    }
  }
  copies_.clear();
  return status_;
}

}  // namespace internal

Request::Request(std::shared_ptr<internal::RequestState> state) : state_(std::move(state)) {}

absl::Status Request::Wait() const {
  if (state_ == nullptr) return absl::OkStatus();
  // The worker's I/O thread completes every request by its deadline (plus a tick); the
  // wait is bounded by a generous backstop so that a bug can never hang the caller.
  return state_->Wait(state_->deadline() + absl::Seconds(30));
}

absl::Status Request::WaitFor(absl::Duration timeout) const {
  if (state_ == nullptr) return absl::OkStatus();
  return state_->Wait(absl::Now() + timeout);
}

bool Request::done() const { return state_ == nullptr || state_->done(); }

}  // namespace kairos
