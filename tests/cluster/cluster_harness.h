// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// What the whole-cluster tests share, through the public API alone: the one-table SGD job,
// the sequential SGD a BSP job must equal exactly, workers joining a hand-made job, and
// running a function per worker, each on its own thread.

#ifndef KAIROS_TESTS_CLUSTER_CLUSTER_HARNESS_H_
#define KAIROS_TESTS_CLUSTER_CLUSTER_HARNESS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"

namespace kairos::testing {

// A job of one table "w" of `size` elements starting at zero, SGD with learning rate 1.
inline JobConfig SgdJob(uint64_t size, const std::string& policy = "asp") {
  JobConfig job;
  job.policy = policy;
  job.tables.push_back({"w", size, Initializer::Zeros(), {"sgd", 1.0f}});
  return job;
}

// Two servers and `workers` workers training table "w" of `size` elements (chunks of 32)
// from zeros with SGD at `lr`, whose nodes send a heartbeat every 50 ms and are declared
// dead after 400 ms of silence: the job of the membership tests, on virtual time in steps
// of 50 ms (virtual_time.h; the caller applies its VirtualTime and sets the deadlines).
inline ClusterOptions HeartbeatCluster(const std::string& policy, int workers, uint64_t size,
                                       float lr) {
  ClusterOptions o;
  o.num_servers = 2;
  o.num_workers = workers;
  o.job.policy = policy;
  o.job.chunk_elements = 32;
  o.job.tables.push_back({"w", size, Initializer::Zeros(), {"sgd", lr}});
  o.coordinator.heartbeat_timeout = absl::Milliseconds(400);
  o.worker.heartbeat_interval = absl::Milliseconds(50);
  o.server.heartbeat_interval = absl::Milliseconds(50);
  return o;
}

// A gradient: gradient(rank, round, element).
using GradientFn = std::function<float(int, int, uint64_t)>;

// A table of `size` elements starting at zero after SGD rounds 0 .. rounds-1 at `lr`, where
// round t applies the mean (or, not `average`, the sum) of gradient(r, t, i) over the
// workers r in contributors(t), added in that order: what a BSP job (mean) or one whose
// every push is applied at once (sum) must give, exactly in float32 where the gradients
// are small integers.
inline std::vector<float> SequentialSgd(uint64_t size, float lr, int rounds,
                                        const std::function<std::vector<int>(int)>& contributors,
                                        const GradientFn& gradient, bool average = true) {
  std::vector<float> w(size, 0.0f);
  for (int t = 0; t < rounds; ++t) {
    const std::vector<int> who = contributors(t);
    for (uint64_t i = 0; i < size; ++i) {
      float sum = 0;
      for (int r : who) sum += gradient(r, t, i);
      w[i] -= lr * (average ? sum / static_cast<float>(who.size()) : sum);
    }
  }
  return w;
}

// The same where workers 0 .. workers-1 all push in every round: `rounds` BSP rounds.
inline std::vector<float> SequentialBsp(uint64_t size, float lr, int workers, int rounds,
                                        const GradientFn& gradient) {
  std::vector<int> all(workers);
  for (int r = 0; r < workers; ++r) all[r] = r;
  return SequentialSgd(size, lr, rounds, [&](int) { return all; }, gradient);
}

// Runs fn(rank) for ranks 0 .. n-1, each on its own thread; returns each one's status.
inline std::vector<absl::Status> RunOnEachRank(int n, const std::function<absl::Status(int)>& fn) {
  std::vector<absl::Status> results(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { results[r] = fn(r); });
  for (std::thread& t : threads) t.join();
  return results;
}

// Expects every worker's status to be OK, naming the worker of one that is not.
inline void ExpectEveryWorkerOk(const std::vector<absl::Status>& results) {
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_TRUE(results[r].ok()) << "worker " << r << ": " << results[r];
  }
}

// Creates the workers of ranks 0 .. n-1 of a job made by hand, with `options` but for the
// rank, each on its own thread (Worker::Create returns once the job started, which needs
// them all). Returns them in rank order, or the first rank's error.
inline absl::StatusOr<std::vector<std::unique_ptr<Worker>>> JoinWorkers(
    int n, const WorkerOptions& options) {
  std::vector<absl::StatusOr<std::unique_ptr<Worker>>> made(n);
  std::vector<std::thread> joins;
  for (int r = 0; r < n; ++r) {
    joins.emplace_back([&, r] {
      WorkerOptions wo = options;
      wo.rank = r;
      made[r] = Worker::Create(wo);
    });
  }
  for (std::thread& t : joins) t.join();
  std::vector<std::unique_ptr<Worker>> workers;
  for (int r = 0; r < n; ++r) {
    if (!made[r].ok()) {
      return absl::Status(made[r].status().code(),
                          absl::StrCat("worker ", r, ": ", made[r].status().message()));
    }
    workers.push_back(*std::move(made[r]));
  }
  return workers;
}

}  // namespace kairos::testing

#endif  // KAIROS_TESTS_CLUSTER_CLUSTER_HARNESS_H_
