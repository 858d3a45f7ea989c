// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// PostQueue: the "I/O thread" of a unit test of a server part (Checkpointer, Journal). The
// part posts tasks to it from any thread (its writer threads); the test runs them on its
// own thread, one at a time, waiting on a condition (not on time) for the next to arrive.

#ifndef KAIROS_TESTS_SERVER_POST_QUEUE_H_
#define KAIROS_TESTS_SERVER_POST_QUEUE_H_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <utility>

namespace kairos::testing {

class PostQueue {
 public:
  std::function<void(std::function<void()>)> poster() {
    return [this](std::function<void()> task) { Post(std::move(task)); };
  }

  void Post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_all();
  }

  // Runs the next task, waiting for one to be posted; false when none came within the
  // deadline (a bound on a failing test, never reached by a passing one).
  bool RunNext() {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, std::chrono::seconds(30), [this] { return !tasks_.empty(); })) {
        return false;
      }
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
    return true;
  }

  std::size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return tasks_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
};

}  // namespace kairos::testing

#endif  // KAIROS_TESTS_SERVER_POST_QUEUE_H_
