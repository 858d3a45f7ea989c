// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Workers that fail (docs/design.md, "Failures"): a worker killed and started again with its
// rank rejoins the running job, continues from the clock the job counts it from
// (docs/policies.md, "Membership") and its pushes count again, exactly; a job that
// tolerates worker failures ends OK without a dead worker. Every cluster runs on virtual
// time (virtual_time.h): the silence before a still-active worker may be replaced, the
// heartbeat timeout and every deadline pass in steps of a kairos::testing::ManualEnv, and nothing
// sleeps.

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "tests/cluster/cluster_harness.h"
#include "tests/cluster/virtual_time.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kSize = 120;
constexpr float kLearningRate = 0.5f;
constexpr int kWorkers = 3;
constexpr int kVictim = 2;
constexpr int kRounds = 8;
constexpr absl::Duration kStep = absl::Milliseconds(50);
// Real-time bound of a test thread's wait for another (never reached when things work).
constexpr absl::Duration kWait = absl::Seconds(30);

float Gradient(int rank, int t, uint64_t i) {
  return static_cast<float>((rank + 1) * (t + 1) + static_cast<int>(i % 3));
}

ClusterOptions Options(const std::string& policy, test_support::VirtualTime& time) {
  ClusterOptions o = testing::HeartbeatCluster(policy, kWorkers, kSize, kLearningRate);
  o.coordinator.rejoin_silence = absl::Milliseconds(200);
  o.worker.request_timeout = absl::Seconds(60);
  time.Apply(o);
  return o;
}

// The parameters after rounds 0 .. rounds-1 where round t averages the gradients of the
// workers in contributors(t) (BSP), or sums them all (every push applied at once: SSP).
std::vector<float> Expected(int rounds, const std::function<std::vector<int>(int)>& contributors,
                            bool average) {
  return testing::SequentialSgd(kSize, kLearningRate, rounds, contributors, Gradient, average);
}

absl::Status Iterate(Worker& w, int64_t from, int64_t to) {
  std::vector<float> params(kSize), grad(kSize);
  for (int64_t t = from; t < to; ++t) {
    if (w.clock() != t) {
      return absl::InternalError(absl::StrCat("worker ", w.rank(), " is at clock ", w.clock(),
                                              ", expected ", t));
    }
    KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
    for (uint64_t i = 0; i < kSize; ++i) grad[i] = Gradient(w.rank(), static_cast<int>(t), i);
    KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
    KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
  }
  return absl::OkStatus();
}

// A pull at the worker's clock: once it returns, every shard has the worker's clock.
absl::Status PullAll(Worker& w, std::vector<float>* out = nullptr) {
  std::vector<float> params(kSize);
  KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
  if (out != nullptr) *out = params;
  return absl::OkStatus();
}

// Runs fn(rank) for every rank on its own thread; returns each one's status.
std::vector<absl::Status> RunEach(const std::function<absl::Status(int)>& fn) {
  return testing::RunOnEachRank(kWorkers, fn);
}

// The victim's start in the tests below: rounds 0 and 1, a pull at clock 2 (once it
// returns, every shard has the victim's clock 2), then it is killed.
absl::Status RunTwoRoundsAndDie(LocalCluster& c, int rank) {
  KAIROS_RETURN_IF_ERROR(Iterate(c.worker(rank), 0, 2));
  KAIROS_RETURN_IF_ERROR(PullAll(c.worker(rank)));
  c.KillWorker(rank);
  return absl::OkStatus();
}

// Every worker's end in the tests below: the rounds from its clock to kRounds, a barrier
// (every push is applied), rank 0's read of the parameters into `final_params`, a barrier
// and Finish.
absl::Status RunToTheEnd(Worker& w, std::vector<float>* final_params) {
  KAIROS_RETURN_IF_ERROR(Iterate(w, w.clock(), kRounds));
  KAIROS_RETURN_IF_ERROR(w.Barrier());
  if (w.rank() == 0) KAIROS_RETURN_IF_ERROR(PullAll(w, final_params));
  KAIROS_RETURN_IF_ERROR(w.Barrier());
  return w.Shutdown();
}

class RejoinTest : public ::testing::TestWithParam<std::string> {
 protected:
  bool bsp() const { return GetParam() == "bsp"; }

  // The gate's bound held for every read on every shard, the rejoined worker's included.
  void ExpectTheGatesBoundHeld(LocalCluster& c) {
    for (int s = 0; s < c.num_servers(); ++s) {
      for (const WorkerMetrics& m : c.server_stats(s).workers) {
        EXPECT_LE(m.max_read_lead, bsp() ? 0 : 1) << "shard " << s << " worker " << m.rank;
      }
    }
  }
};

// The victim dies after its clock reached every shard (its pull at clock 2) and a new
// process takes its rank before the coordinator declares it dead: the new incarnation
// replaces it in place, at clock 2, and the others never stopped counting it. Every push
// of every round is then applied exactly once: BSP's result is a run without the failure,
// and SSP's (every push applied at once, SGD, exact integers) is the sum of every gradient.
TEST_P(RejoinTest, AReplacedWorkerContinuesFromItsClock) {
  test_support::VirtualTime time(kStep);
  ClusterOptions o = Options(GetParam(), time);
  o.coordinator.heartbeat_timeout = absl::Seconds(60);  // only the replacement happens
  auto cluster = LocalCluster::Create(o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  LocalCluster& c = **cluster;
  time.Start();
  std::vector<float> final_params;
  int64_t rejoined_at = -1;
  std::vector<absl::Status> results = RunEach([&](int rank) -> absl::Status {
    if (rank == kVictim) {
      KAIROS_RETURN_IF_ERROR(RunTwoRoundsAndDie(c, rank));
      KAIROS_RETURN_IF_ERROR(c.RestartWorker(rank));
      rejoined_at = c.worker(rank).clock();
    }
    return RunToTheEnd(c.worker(rank), &final_params);
  });
  testing::ExpectEveryWorkerOk(results);
  EXPECT_EQ(rejoined_at, 2);
  EXPECT_EQ(final_params,
            Expected(kRounds, [](int) { return std::vector<int>{0, 1, 2}; }, bsp()));
  ExpectTheGatesBoundHeld(c);
  EXPECT_TRUE(c.Shutdown().ok());
}

// The victim is declared dead and the others go on without it (rounds 2 to 4 average the
// two of them); then its rank rejoins, at the clock of the slowest active worker (5), and
// the last rounds count all three again.
TEST_P(RejoinTest, ADeadWorkerRejoinsAtTheSlowestActiveClock) {
  constexpr int kRejoin = 5;
  test_support::VirtualTime time(kStep);
  auto cluster = LocalCluster::Create(Options(GetParam(), time));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  LocalCluster& c = **cluster;
  time.Start();
  std::atomic<int> waiting{0};
  absl::Notification others_waiting, rejoined;
  std::vector<float> final_params;
  int64_t rejoined_at = -1;
  std::vector<absl::Status> results = RunEach([&](int rank) -> absl::Status {
    if (rank == kVictim) {
      KAIROS_RETURN_IF_ERROR(RunTwoRoundsAndDie(c, rank));
      // The others are past round 4: the victim was declared dead.
      if (!others_waiting.WaitForNotificationWithTimeout(kWait)) {
        return absl::DeadlineExceededError("the others did not reach clock 5");
      }
      absl::Status restarted = c.RestartWorker(rank);
      rejoined.Notify();
      KAIROS_RETURN_IF_ERROR(restarted);
      rejoined_at = c.worker(rank).clock();
    } else {
      KAIROS_RETURN_IF_ERROR(Iterate(c.worker(rank), 0, kRejoin));
      KAIROS_RETURN_IF_ERROR(PullAll(c.worker(rank)));  // clock 5 is on every shard
      if (waiting.fetch_add(1) + 1 == kWorkers - 1) others_waiting.Notify();
      if (!rejoined.WaitForNotificationWithTimeout(kWait)) {
        return absl::DeadlineExceededError("the victim did not rejoin");
      }
    }
    return RunToTheEnd(c.worker(rank), &final_params);
  });
  testing::ExpectEveryWorkerOk(results);
  EXPECT_EQ(rejoined_at, kRejoin);
  EXPECT_EQ(final_params, Expected(kRounds,
                                   [](int t) {
                                     return t >= 2 && t < kRejoin ? std::vector<int>{0, 1}
                                                                  : std::vector<int>{0, 1, 2};
                                   },
                                   bsp()));
  ExpectTheGatesBoundHeld(c);
  // It rejoined: the job ends well.
  EXPECT_TRUE(c.Shutdown().ok());
}

INSTANTIATE_TEST_SUITE_P(Gates, RejoinTest, ::testing::Values("bsp", "ssp:s=1"));

// With tolerate_worker_failures a job whose dead worker never comes back ends OK once the
// others finished.
TEST(RejoinTest, ToleratedDeadWorkerLetsTheJobSucceed) {
  test_support::VirtualTime time(kStep);
  ClusterOptions o = Options("bsp", time);
  o.coordinator.tolerate_worker_failures = true;
  auto cluster = LocalCluster::Create(o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  LocalCluster& c = **cluster;
  time.Start();
  std::vector<absl::Status> results = RunEach([&](int rank) -> absl::Status {
    KAIROS_RETURN_IF_ERROR(Iterate(c.worker(rank), 0, rank == kVictim ? 2 : kRounds));
    if (rank == kVictim) {
      c.KillWorker(rank);
      return absl::OkStatus();
    }
    return c.worker(rank).Shutdown();
  });
  testing::ExpectEveryWorkerOk(results);
  EXPECT_TRUE(c.Shutdown().ok());
}

// A rank that finished cannot come back, and the job is not disturbed by the attempt.
TEST(RejoinTest, AFinishedRankCannotRejoin) {
  test_support::VirtualTime time(kStep);
  auto cluster = LocalCluster::Create(Options("asp", time));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  LocalCluster& c = **cluster;
  time.Start();
  ASSERT_TRUE(Iterate(c.worker(1), 0, 2).ok());
  ASSERT_TRUE(c.worker(1).Shutdown().ok());
  absl::Status again = c.RestartWorker(1);
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition) << again;
  EXPECT_THAT(std::string(again.message()), HasSubstr("worker rank 1 has finished"));
  EXPECT_TRUE(Iterate(c.worker(0), 0, 2).ok());
  EXPECT_TRUE(c.Shutdown().ok());
}

}  // namespace
}  // namespace kairos
