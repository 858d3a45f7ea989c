// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of ThreadChecker: the bound thread passes, another thread aborts naming the checker
// (only without NDEBUG: with NDEBUG the check compiles to nothing and every thread passes).
// The fields below are ABSL_GUARDED_BY a checker, so the thread-safety preset also checks
// that KAIROS_DCHECK_ON_THREAD gives clang's analysis the role.

#include "common/thread_checker.h"

#include <thread>

#include "absl/base/thread_annotations.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

#ifdef NDEBUG
constexpr bool kChecked = false;
#else
constexpr bool kChecked = true;
#endif

// Runs `fn` on a thread of its own and waits for it.
template <typename Fn>
void OnOtherThread(Fn fn) {
  std::thread thread(fn);
  thread.join();
}

// A node's shape in miniature: state of its I/O thread, reached through the assertion.
class Node {
 public:
  void Start() { io_thread_.Bind(); }
  int Handle() {
    KAIROS_DCHECK_ON_THREAD(io_thread_);
    return ++handled_;
  }
  ThreadChecker& io_thread() { return io_thread_; }

 private:
  ThreadChecker io_thread_{"test I/O thread"};
  int handled_ ABSL_GUARDED_BY(io_thread_) = 0;
};

TEST(ThreadCheckerTest, EveryThreadPassesBeforeBind) {
  ThreadChecker checker("test I/O thread");
  EXPECT_TRUE(checker.CalledOnValidThread());
  bool other = false;
  OnOtherThread([&] { other = checker.CalledOnValidThread(); });
  EXPECT_TRUE(other);
  KAIROS_DCHECK_ON_THREAD(checker);  // does not abort
}

TEST(ThreadCheckerTest, TheBoundThreadPasses) {
  Node node;
  EXPECT_EQ(node.Handle(), 1);  // before Start: the creating thread owns the state
  node.Start();
  EXPECT_TRUE(node.io_thread().CalledOnValidThread());
  EXPECT_EQ(node.Handle(), 2);
  EXPECT_EQ(node.Handle(), 3);
}

TEST(ThreadCheckerTest, AnotherThreadFailsOnlyWhenChecked) {
  ThreadChecker checker("test I/O thread");
  checker.Bind();
  bool other = true;
  OnOtherThread([&] { other = checker.CalledOnValidThread(); });
  EXPECT_EQ(other, !kChecked);
  EXPECT_TRUE(checker.CalledOnValidThread());
}

TEST(ThreadCheckerTest, BindMovesTheRoleAndUnbindFreesIt) {
  ThreadChecker checker("test I/O thread");
  bool other_bound = false;
  OnOtherThread([&] {
    checker.Bind();
    other_bound = checker.CalledOnValidThread();
  });
  EXPECT_TRUE(other_bound);
  EXPECT_EQ(checker.CalledOnValidThread(), !kChecked);  // that thread has the role

  checker.Bind();  // this thread takes it over
  EXPECT_TRUE(checker.CalledOnValidThread());

  checker.Unbind();
  bool other_after_unbind = false;
  OnOtherThread([&] { other_after_unbind = checker.CalledOnValidThread(); });
  EXPECT_TRUE(other_after_unbind);
}

TEST(ThreadCheckerTest, NameIsKept) {
  ThreadChecker checker("server I/O thread");
  EXPECT_STREQ(checker.name(), "server I/O thread");
}

TEST(ThreadCheckerTest, TheFirstHandlerCallBindsTheRole) {
  ThreadChecker checker("server I/O thread");
  OnOtherThread([&] { KAIROS_DCHECK_ON_IO_THREAD(checker); });  // binds that thread
  // (Not checked from yet another thread: one started after that one ended may get its id.)
  EXPECT_EQ(checker.CalledOnValidThread(), !kChecked);
  checker.Unbind();
  KAIROS_DCHECK_ON_IO_THREAD(checker);  // binds this one
  KAIROS_DCHECK_ON_IO_THREAD(checker);  // and passes on it
  EXPECT_TRUE(checker.CalledOnValidThread());
}

#ifndef NDEBUG
TEST(ThreadCheckerDeathTest, AHandlerOnAnotherThreadThanTheFirstAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        ThreadChecker checker("worker I/O thread");
        KAIROS_DCHECK_ON_IO_THREAD(checker);
        OnOtherThread([&] { KAIROS_DCHECK_ON_IO_THREAD(checker); });
      },
      "KAIROS_DCHECK_ON_THREAD failed: worker I/O thread only");
}

TEST(ThreadCheckerDeathTest, AnotherThreadAbortsNamingTheChecker) {
  // threadsafe: the child re-runs the test from the start, since it makes a thread.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        Node node;
        node.Start();
        OnOtherThread([&] { node.Handle(); });
      },
      "KAIROS_DCHECK_ON_THREAD failed: test I/O thread only \\(called on thread .*, bound "
      "to thread .*\\)");
}

TEST(ThreadCheckerDeathTest, TheFailureNamesTheCallersFile) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        ThreadChecker checker("server I/O thread");
        OnOtherThread([&] { checker.Bind(); });
        KAIROS_DCHECK_ON_THREAD(checker);
      },
      "thread_checker_test\\.cc:[0-9]+: KAIROS_DCHECK_ON_THREAD failed: server I/O thread");
}
#endif  // NDEBUG

}  // namespace
}  // namespace kairos::internal
