// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// PlainMutex: a mutex for locks taken on every message, annotated for clang's thread-safety
// analysis as absl::Mutex is, without what a debug build of absl::Mutex adds to each Lock.
// Debian's libabsl is such a build: every absl::Mutex::Lock looks the mutex up in a
// process-wide deadlock graph under a global lock, and every destruction removes it (with
// 64 B requests, 4 % of the CPU; docs/performance.md, "Small requests"). PlainCondVar waits
// on it (there is no Await: the waiter loops on its condition).
//
//   PlainMutex mu_;
//   PlainCondVar changed_;
//   int n_ ABSL_GUARDED_BY(mu_);
//   void Add() { PlainMutexLock lock(&mu_); ++n_; changed_.SignalAll(); }
//   void AwaitPositive() {
//     PlainMutexLock lock(&mu_);
//     while (n_ <= 0) changed_.Wait(&mu_);
//   }
//
// Thread-safety: as std::mutex and std::condition_variable.

#ifndef KAIROS_COMMON_PLAIN_MUTEX_H_
#define KAIROS_COMMON_PLAIN_MUTEX_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kairos::internal {

class ABSL_LOCKABLE PlainMutex {
 public:
  PlainMutex() = default;
  PlainMutex(const PlainMutex&) = delete;
  PlainMutex& operator=(const PlainMutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  friend class PlainCondVar;
  std::mutex mu_;
};

// A condition variable for a PlainMutex (absl::CondVar's Wait, WaitWithDeadline, Signal
// and SignalAll). Waits may wake spuriously: the caller checks its condition in a loop.
class PlainCondVar {
 public:
  PlainCondVar() = default;
  PlainCondVar(const PlainCondVar&) = delete;
  PlainCondVar& operator=(const PlainCondVar&) = delete;

  // Releases *mu while it waits, holds it again when it returns.
  void Wait(PlainMutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // As Wait, returning true if `deadline` (real time) passed before a signal.
  bool WaitWithDeadline(PlainMutex* mu, absl::Time deadline) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    // At most a day at a time: the far future does not fit every clock's time_point.
    const absl::Duration left = std::min(deadline - absl::Now(), absl::Hours(24));
    if (left <= absl::ZeroDuration()) return true;
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool timeout =
        cv_.wait_for(lock, absl::ToChronoNanoseconds(left)) == std::cv_status::timeout;
    lock.release();
    return timeout && absl::Now() >= deadline;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

// Holds a PlainMutex for its scope, as absl::MutexLock holds an absl::Mutex.
class ABSL_SCOPED_LOCKABLE PlainMutexLock {
 public:
  explicit PlainMutexLock(PlainMutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~PlainMutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  PlainMutexLock(const PlainMutexLock&) = delete;
  PlainMutexLock& operator=(const PlainMutexLock&) = delete;

 private:
  PlainMutex* const mu_;
};

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_PLAIN_MUTEX_H_
