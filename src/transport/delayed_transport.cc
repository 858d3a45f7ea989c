// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "transport/delayed_transport.h"

#include <pthread.h>

#include <utility>
#include <vector>

namespace kairos::internal {

DelayedTransport::DelayedTransport(std::unique_ptr<Transport> inner, absl::Duration delay)
    : inner_(std::move(inner)), delay_(delay) {
  timer_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "kairos-delay");
    Run();
  });
}

DelayedTransport::~DelayedTransport() { Stop(); }

void DelayedTransport::Send(PeerId to, Message message) {
  // The due time is taken before the lock, as close to the caller's Send as possible.
  const absl::Time due = absl::Now() + delay_;
  absl::MutexLock lock(&mu_);
  if (stopping_) {
    dropped_.fetch_add(1);
    return;
  }
  if (held_.empty()) changed_.Signal();  // the timer sleeps without a deadline
  held_.push_back(Held{due, to, std::move(message)});
}

void DelayedTransport::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    changed_.Signal();
  }
  if (timer_.joinable()) timer_.join();
  inner_->Stop();
}

void DelayedTransport::Run() {
  std::vector<Held> due;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (!TakeDue(&due)) return;
    }
    // Handed over without the lock: the wrapped Send takes its own locks, and senders must
    // not wait for it.
    for (Held& h : due) inner_->Send(h.to, std::move(h.message));
    due.clear();
  }
}

bool DelayedTransport::TakeDue(std::vector<Held>* due) {
  while (true) {
    while (held_.empty() && !stopping_) changed_.Wait(&mu_);
    if (held_.empty()) return false;  // stopping, and nothing left to send
    const absl::Time now = absl::Now();
    if (held_.front().due <= now) {
      while (!held_.empty() && held_.front().due <= now) {
        due->push_back(std::move(held_.front()));
        held_.pop_front();
      }
      return true;
    }
    // A later message never comes due first (the delay is constant), so the front's due
    // time is the next wake-up; a Send meanwhile only appends, and Stop waits for it too.
    changed_.WaitWithDeadline(&mu_, held_.front().due);
  }
}

}  // namespace kairos::internal
