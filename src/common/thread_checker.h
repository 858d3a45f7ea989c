// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ThreadChecker: "this runs on the I/O thread only", checked at run time in debug builds and
// at compile time by clang's thread-safety analysis.
//
// A node keeps one checker for its I/O thread. The thread binds it when it starts running
// the node's work (or on entering each transport handler, which runs on the I/O thread by
// the Transport's contract); code that may only run there asserts it:
//
//   ThreadChecker io_thread_{"server I/O thread"};
//   int pending_ ABSL_GUARDED_BY(io_thread_) = 0;   // I/O thread only
//
//   void OnMessage(...) {                            // a handler: entered from the loop
//     KAIROS_DCHECK_ON_THREAD(io_thread_);
//     ++pending_;                                    // the analysis knows it is on the thread
//     Admit(...);
//   }
//   void Admit(...) ABSL_EXCLUSIVE_LOCKS_REQUIRED(io_thread_);  // callers assert it first
//
// Run time (without NDEBUG): KAIROS_DCHECK_ON_THREAD aborts with a message naming the
// checker, the file and line, and both thread ids when it runs on a thread other than the
// bound one. Before the first Bind (and after Unbind) every thread passes: the thread that
// creates and sets up a node owns its I/O-thread state until the I/O thread takes over, and
// the hand-over (starting the thread) orders the two. Bind may be called again to move the
// role to another thread (a test that plays the I/O thread from the calling thread).
// With NDEBUG the checker holds nothing and the check is an empty inline function (so every
// file of a program must agree on NDEBUG, as the build does).
//
// Compile time (clang, -Wthread-safety): the checker is a capability of kind "role", so
// fields marked ABSL_GUARDED_BY(checker) and functions marked
// ABSL_EXCLUSIVE_LOCKS_REQUIRED(checker) are accessible only after KAIROS_DCHECK_ON_THREAD
// in the same function (it is an assert-capability function), or from a function that
// requires the role itself. The analysis is the same with and without NDEBUG. It does not
// look into lambdas: a lambda posted to the I/O thread asserts the role itself, which is
// also where a wrong thread is worth catching. Constructors and destructors are not
// analysed.
//
// Thread-safety: every method may be called from any thread.

#ifndef KAIROS_COMMON_THREAD_CHECKER_H_
#define KAIROS_COMMON_THREAD_CHECKER_H_

#include <atomic>
#include <thread>

#include "absl/base/thread_annotations.h"

// A capability that a thread plays rather than a lock it takes (clang's "role").
#if defined(__clang__)
#define KAIROS_THREAD_ROLE __attribute__((capability("role")))
#else
#define KAIROS_THREAD_ROLE
#endif

namespace kairos::internal {

class KAIROS_THREAD_ROLE ThreadChecker {
 public:
  // `name` names the role in failure messages ("server I/O thread"); it must outlive the
  // checker (a string literal).
  explicit ThreadChecker(const char* name) : name_(name) {}
  ThreadChecker(const ThreadChecker&) = delete;
  ThreadChecker& operator=(const ThreadChecker&) = delete;

  // The calling thread plays the role from now on (so, for the analysis, it holds it).
  void Bind() ABSL_ASSERT_EXCLUSIVE_LOCK() {
#ifndef NDEBUG
    bound_.store(std::this_thread::get_id(), std::memory_order_release);
#endif
  }
  // No thread plays the role: every thread passes again (e.g. after the I/O thread ended).
  void Unbind() {
#ifndef NDEBUG
    bound_.store(std::thread::id(), std::memory_order_release);
#endif
  }

  // True when the calling thread plays the role or none is bound; always true with NDEBUG
  // (nothing is tracked then).
  bool CalledOnValidThread() const {
#ifndef NDEBUG
    const std::thread::id bound = bound_.load(std::memory_order_acquire);
    return bound == std::thread::id() || bound == std::this_thread::get_id();
#else
    return true;
#endif
  }

  // Use KAIROS_DCHECK_ON_THREAD, which adds the caller's file and line.
  void AssertOnThread(const char* file, int line) const ABSL_ASSERT_EXCLUSIVE_LOCK() {
#ifndef NDEBUG
    if (!CalledOnValidThread()) Fail(file, line);
#endif
  }

  // For a role that the thread running a node's first transport handler takes: the first
  // call binds the calling thread (if none is bound), every later call asserts as
  // AssertOnThread does. So a handler that ever runs on another thread than the first one
  // aborts in a debug build. Use KAIROS_DCHECK_ON_IO_THREAD.
  void BindFirstOrAssert(const char* file, int line) ABSL_ASSERT_EXCLUSIVE_LOCK() {
#ifndef NDEBUG
    std::thread::id none;
    if (bound_.compare_exchange_strong(none, std::this_thread::get_id(),
                                       std::memory_order_acq_rel)) {
      return;
    }
    if (!CalledOnValidThread()) Fail(file, line);
#endif
  }

  const char* name() const { return name_; }

 private:
  // Prints what ran where, then aborts.
  [[noreturn]] void Fail(const char* file, int line) const;

  const char* const name_;
#ifndef NDEBUG
  std::atomic<std::thread::id> bound_{};
#endif
};

}  // namespace kairos::internal

// Asserts that the calling thread plays `checker`'s role (a ThreadChecker): aborts naming
// the checker when it does not, in builds without NDEBUG; nothing with NDEBUG. For clang's
// thread-safety analysis the role is held from here to the end of the scope.
#define KAIROS_DCHECK_ON_THREAD(checker) (checker).AssertOnThread(__FILE__, __LINE__)

// In a transport handler (or a function posted to the transport): the first such call binds
// `checker` to its thread, the transport's I/O thread; any later one on another thread
// aborts naming the checker, in builds without NDEBUG.
#define KAIROS_DCHECK_ON_IO_THREAD(checker) (checker).BindFirstOrAssert(__FILE__, __LINE__)

#endif  // KAIROS_COMMON_THREAD_CHECKER_H_
