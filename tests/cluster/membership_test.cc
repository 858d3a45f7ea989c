// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Membership through the real transport: a worker that dies or runs out of data leaves every
// gate, so the others never wait for it; a gate wait that passes its deadline names the
// workers it waited for. BSP results stay exact: each round averages the workers that
// pushed into it.
//
// Every cluster here runs on virtual time (virtual_time.h): heartbeats, the heartbeat
// timeout and deadlines pass in steps of a kairos::testing::ManualEnv that move only when nothing
// is in flight, so a death is declared exactly when its silence passes the timeout, however loaded
// the machine, and nothing sleeps.

#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "tests/cluster/cluster_harness.h"
#include "tests/cluster/virtual_time.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kSize = 200;
constexpr float kLearningRate = 0.5f;

float Gradient(int rank, int t, uint64_t i) {
  return static_cast<float>((rank + 1) * (t + 1) + static_cast<int>(i % 3));
}

// One step of virtual time: a heartbeat interval.
constexpr absl::Duration kStep = absl::Milliseconds(50);

// A cluster of `workers` on `time`'s clock.
ClusterOptions Options(const std::string& policy, int workers,
                       test_support::VirtualTime& time) {
  ClusterOptions o = testing::HeartbeatCluster(policy, workers, kSize, kLearningRate);
  o.worker.request_timeout = absl::Seconds(30);
  time.Apply(o);
  return o;
}

// BSP parameters after `rounds` rounds where round t averages the workers in
// contributors(t).
std::vector<float> Sequential(int rounds,
                              const std::function<std::vector<int>(int)>& contributors) {
  return testing::SequentialSgd(kSize, kLearningRate, rounds, contributors, Gradient);
}

absl::Status Iterate(Worker& w, int from, int to) {
  std::vector<float> params(kSize), grad(kSize);
  for (int t = from; t < to; ++t) {
    KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
    for (uint64_t i = 0; i < kSize; ++i) grad[i] = Gradient(w.rank(), t, i);
    KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
    KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
  }
  return absl::OkStatus();
}

// Runs fn(worker) for every worker on its own thread; returns each worker's status.
std::vector<absl::Status> RunEach(LocalCluster& cluster,
                                  const std::function<absl::Status(Worker&)>& fn) {
  return testing::RunOnEachRank(cluster.num_workers(),
                                [&](int r) { return fn(cluster.worker(r)); });
}

class KilledWorkerTest : public ::testing::TestWithParam<std::string> {};

TEST_P(KilledWorkerTest, TheOthersFinishWithoutIt) {
  constexpr int kRounds = 8;
  constexpr int kVictim = 3;
  constexpr int kVictimRounds = 2;
  test_support::VirtualTime time(kStep);
  auto cluster = LocalCluster::Create(Options(GetParam(), 4, time));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  time.Start();
  std::vector<absl::Status> results = RunEach(**cluster, [&](Worker& w) -> absl::Status {
    if (w.rank() == kVictim) {
      KAIROS_RETURN_IF_ERROR(Iterate(w, 0, kVictimRounds));
      (*cluster)->KillWorker(kVictim);  // dies mid-job: no Finish
      return absl::OkStatus();
    }
    KAIROS_RETURN_IF_ERROR(Iterate(w, 0, kRounds));
    return w.Shutdown();
  });
  ASSERT_EQ(results.size(), 4u);
  testing::ExpectEveryWorkerOk(results);
  // The job ends, and says which worker it lost.
  absl::Status end = (*cluster)->Shutdown();
  EXPECT_EQ(end.code(), absl::StatusCode::kUnavailable) << end;
  EXPECT_THAT(std::string(end.message()), HasSubstr("workers 3, declared dead"));
}

INSTANTIATE_TEST_SUITE_P(Gates, KilledWorkerTest, ::testing::Values("bsp", "ssp:s=1"));

// A request that passed the worker's checks while the worker was being killed can reach the
// I/O thread after it has stopped. It must fail at once, not wait for its deadline (60 s
// here). Requests of 1024 chunks make the gap between the checks and the hand-off wide
// enough for the race to happen in most rounds.
TEST(MembershipTest, RequestsRacingAWorkersDeathFailAtOnce) {
  constexpr uint64_t kElements = 4096;
  int discarded = 0;
  for (int round = 0; round < 10; ++round) {
    test_support::VirtualTime time(kStep);
    ClusterOptions o = Options("asp", 1, time);
    o.num_servers = 1;
    o.job.chunk_elements = 4;  // 1024 chunks: 1024 messages per push
    o.job.tables = {{"w", kElements, Initializer::Zeros(), {"sgd", kLearningRate}}};
    o.worker.request_timeout = absl::Seconds(60);
    auto cluster = LocalCluster::Create(o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    time.Start();
    Worker& w = (*cluster)->worker(0);
    const std::vector<float> grad(kElements, 1.0f);
    std::vector<Request> requests;
    // The kill comes once the trainer has issued 3 pushes (or stopped issuing).
    absl::Mutex mu;
    int issued = 0;
    bool stopped = false;
    std::thread trainer([&] {
      for (int i = 0; i < 100000; ++i) {
        requests.push_back(w.PushAsync("w", 0, grad));
        {
          absl::MutexLock lock(&mu);
          ++issued;
        }
        if (requests.back().done() && !requests.back().Wait().ok()) break;  // refused
      }
      absl::MutexLock lock(&mu);
      stopped = true;
    });
    {
      absl::MutexLock lock(&mu);
      auto three_or_stopped = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
        return issued >= 3 || stopped;
      };
      mu.Await(absl::Condition(&three_or_stopped));
    }
    (*cluster)->KillWorker(0);
    trainer.join();
    for (const Request& r : requests) {
      const absl::Status s = r.WaitFor(absl::Seconds(10));
      if (s.ok()) continue;
      // UNAVAILABLE: failed by the kill, sent or not; FAILED_PRECONDITION: issued after
      // it and refused by the worker's own check. Never DEADLINE_EXCEEDED.
      ASSERT_TRUE(s.code() == absl::StatusCode::kUnavailable ||
                  s.code() == absl::StatusCode::kFailedPrecondition)
          << "round " << round << ": " << s;
      if (absl::StrContains(s.message(), "stopped before the push was sent")) ++discarded;
    }
    (void)(*cluster)->Shutdown();  // the job ends without the worker it lost
  }
  std::cout << discarded << " pushes were discarded unsent and failed at once\n";
}

TEST(MembershipTest, BspRoundsAfterADeathAverageTheSurvivors) {
  constexpr int kRounds = 6;
  test_support::VirtualTime time(kStep);
  auto cluster = LocalCluster::Create(Options("bsp", 3, time));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  time.Start();
  std::vector<float> final_params(kSize);
  std::vector<absl::Status> results = RunEach(**cluster, [&](Worker& w) -> absl::Status {
    if (w.rank() == 2) {
      KAIROS_RETURN_IF_ERROR(Iterate(w, 0, 2));
      (*cluster)->KillWorker(2);
      return absl::OkStatus();
    }
    KAIROS_RETURN_IF_ERROR(Iterate(w, 0, kRounds));
    if (w.rank() == 0) KAIROS_RETURN_IF_ERROR(w.Pull("w", final_params));
    return w.Shutdown();
  });
  testing::ExpectEveryWorkerOk(results);
  const std::vector<float> expected = Sequential(kRounds, [](int t) {
    return t < 2 ? std::vector<int>{0, 1, 2} : std::vector<int>{0, 1};
  });
  EXPECT_EQ(final_params, expected);
}

TEST(MembershipTest, UnevenIterationCountsNeverHang) {
  // Worker r has 2 * (r + 1) iterations of data; the last worker reads the result.
  test_support::VirtualTime time(kStep);
  auto cluster = LocalCluster::Create(Options("bsp", 4, time));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  time.Start();
  std::vector<float> final_params(kSize);
  absl::Status s = (*cluster)->Run([&](Worker& w) -> absl::Status {
    KAIROS_RETURN_IF_ERROR(Iterate(w, 0, 2 * (w.rank() + 1)));
    if (w.rank() == 3) KAIROS_RETURN_IF_ERROR(w.Pull("w", final_params));
    return absl::OkStatus();
  });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE((*cluster)->Shutdown().ok());
  const std::vector<float> expected = Sequential(8, [](int t) {
    std::vector<int> who;
    for (int r = 0; r < 4; ++r) {
      if (t < 2 * (r + 1)) who.push_back(r);
    }
    return who;
  });
  EXPECT_EQ(final_params, expected);
}

TEST(MembershipTest, GateDeadlineNamesTheWorkersHoldingTheMinimum) {
  test_support::VirtualTime time(kStep);
  auto cluster = LocalCluster::Create(Options("bsp", 3, time));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  time.Start();
  Worker& fast = (*cluster)->worker(0);
  std::vector<float> params(kSize);
  ASSERT_TRUE(Iterate(fast, 0, 1).ok());
  ASSERT_TRUE(Iterate((*cluster)->worker(1), 0, 1).ok());
  // Worker 2 never ends iteration 0, so worker 0's read at clock 1 cannot be served.
  CallOptions soon;
  soon.deadline = time.Now() + absl::Milliseconds(300);
  absl::Status s = fast.Pull("w", params, soon);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("worker 2 (clock 0)"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("read at clock 1 by worker 0"));
  const ServerStats stats = (*cluster)->server_stats(0);
  ASSERT_EQ(stats.workers.size(), 3u);
  // Counted per message: the read is one message per chunk, 4 chunks on this shard.
  EXPECT_EQ(stats.workers[0].blocked_reads, 4u);
  // Each of the 4 messages waited from its arrival to the server's first tick at or past
  // its deadline: 300 ms of virtual time (steps of 50 ms), or 250 ms when a step fell
  // between the worker's reading of the deadline and of the time left.
  EXPECT_GE(stats.workers[0].blocked_time, 4 * absl::Milliseconds(250));
  EXPECT_LE(stats.workers[0].blocked_time, 4 * absl::Milliseconds(300));
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

TEST(MetricsTest, ServersCountPushesPullsAndStalenessPerWorker) {
  test_support::VirtualTime time(kStep);
  auto cluster = LocalCluster::Create(Options("bsp", 2, time));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  time.Start();
  ASSERT_TRUE((*cluster)->Run([](Worker& w) { return Iterate(w, 0, 5); }).ok());
  for (int shard = 0; shard < 2; ++shard) {
    const ServerStats stats = (*cluster)->server_stats(shard);
    ASSERT_EQ(stats.workers.size(), 2u);
    for (const WorkerMetrics& m : stats.workers) {
      // 200 elements in chunks of <= 32: 8 chunks, 4 per shard; 5 pushes and pulls each.
      EXPECT_EQ(m.pushes, 20u);
      EXPECT_EQ(m.pulls, 20u);
      EXPECT_EQ(m.staleness.count(), 20u);
      // BSP: a push meets no update newer than the worker's read of that round.
      EXPECT_EQ(m.staleness.max(), 0u);
      EXPECT_EQ(m.max_read_lead, 0);
    }
  }
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

}  // namespace
}  // namespace kairos
