// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// PlainMutex: a mutex for locks taken on every message, annotated for clang's thread-safety
// analysis as absl::Mutex is, without what a debug build of absl::Mutex adds to each Lock.
// Debian's libabsl is such a build: every absl::Mutex::Lock looks the mutex up in a
// process-wide deadlock graph under a global lock, and every destruction removes it (with
// 64 B requests, 4 % of the CPU; docs/performance.md, "Small requests"). It has no Await and
// no CondVar: code that waits for a condition keeps absl::Mutex.
//
//   PlainMutex mu_;
//   int n_ ABSL_GUARDED_BY(mu_);
//   void Add() { PlainMutexLock lock(&mu_); ++n_; }
//
// Thread-safety: as std::mutex.

#ifndef KAIROS_COMMON_PLAIN_MUTEX_H_
#define KAIROS_COMMON_PLAIN_MUTEX_H_

#include <mutex>

#include "absl/base/thread_annotations.h"

namespace kairos::internal {

class ABSL_LOCKABLE PlainMutex {
 public:
  PlainMutex() = default;
  PlainMutex(const PlainMutex&) = delete;
  PlainMutex& operator=(const PlainMutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  std::mutex mu_;
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
