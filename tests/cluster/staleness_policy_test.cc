// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The staleness policies through the real transport: every multiplier a server applied is
// recomputed here from the staleness that server observed (its push log), n-softsync applies
// exactly floor(pushes / c) updates, VSGD's ||D_i|| is the distance between what the worker
// read and the current parameters, eager pull never waits for its own push and computes on
// exactly W_prev - lr * scale * g, and SaPS never blocks a fast worker nor applies a push
// staler than S_max.

#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/synchronization/barrier.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "tests/cluster/virtual_time.h"

namespace kairos {
namespace {

ClusterOptions Options(const std::string& policy, int servers, int workers, uint64_t size,
                       uint64_t chunk) {
  ClusterOptions o;
  o.num_servers = servers;
  o.num_workers = workers;
  o.job.policy = policy;
  o.job.chunk_elements = chunk;
  o.job.tables.push_back({"w", size, Initializer::Zeros(), {"sgd", 0.5f}});
  o.server.push_log_size = 100000;
  o.worker.request_timeout = absl::Seconds(30);
  return o;
}

std::vector<PushRecord> AllPushes(LocalCluster& c) {
  std::vector<PushRecord> all;
  for (int s = 0; s < c.num_servers(); ++s) {
    for (const WorkerMetrics& m : c.server_stats(s).workers) {
      all.insert(all.end(), m.push_log.begin(), m.push_log.end());
    }
  }
  return all;
}

absl::Status Train(Worker& w, int iterations, uint64_t size) {
  std::vector<float> params(size), grad(size);
  for (int t = 0; t < iterations; ++t) {
    KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
    for (uint64_t i = 0; i < size; ++i) grad[i] = static_cast<float>(w.rank() + 1 + i % 3);
    KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
    KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
  }
  // Every push is in before anyone finishes (a finishing worker changes softsync's c).
  return w.Barrier();
}

TEST(StalenessWeightingTest, EveryScaleIsOneOverTheObservedStaleness) {
  auto cluster = LocalCluster::Create(Options("asp+weight=staleness", 2, 4, 256, 64));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->Run([](Worker& w) { return Train(w, 10, 256); }).ok());
  const std::vector<PushRecord> pushes = AllPushes(**cluster);
  ASSERT_EQ(pushes.size(), 4u * 10 * 4);  // workers x iterations x chunks
  int stale = 0;
  for (const PushRecord& p : pushes) {
    const float want = 1.0f / static_cast<float>(std::max<uint64_t>(p.staleness, 1));
    EXPECT_FLOAT_EQ(p.scale, want) << "staleness " << p.staleness;
    stale += p.staleness > 1;
  }
  RecordProperty("pushes_with_staleness_above_1", stale);
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

TEST(SoftSyncTest, SaAsgdAppliesExactlyFloorPushesOverC) {
  // W = 4, n = 2: c = 2 pushes per update; 4 chunks; 6 pushes per worker per chunk.
  auto cluster = LocalCluster::Create(Options("sa-asgd:n=2", 2, 4, 256, 64));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->Run([](Worker& w) { return Train(w, 6, 256); }).ok());
  uint64_t applied = 0;
  for (int s = 0; s < 2; ++s) applied += (*cluster)->server_stats(s).version;
  EXPECT_EQ(applied, 4u * (4 * 6 / 2));
  for (const PushRecord& p : AllPushes(**cluster)) {
    EXPECT_FLOAT_EQ(p.scale, 1.0f / static_cast<float>(std::max<uint64_t>(p.staleness, 1)));
  }
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

double Distance(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += (double{a[i]} - b[i]) * (double{a[i]} - b[i]);
  return std::sqrt(sum);
}

TEST(ValueStalenessTest, DriftIsTheDistanceBetweenWhatTheWorkerReadAndTheCurrentValues) {
  // One server, one chunk: the shard's value staleness is one ||D_i||.
  constexpr uint64_t kSize = 32;
  auto cluster = LocalCluster::Create(Options("asp+weight=value", 1, 2, kSize, 64));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w0 = (*cluster)->worker(0);
  Worker& w1 = (*cluster)->worker(1);
  std::vector<float> read0(kSize), current(kSize), g(kSize);
  ASSERT_TRUE(w0.Pull("w", read0).ok());
  for (uint64_t i = 0; i < kSize; ++i) g[i] = 1.0f + static_cast<float>(i % 4);
  ASSERT_TRUE(w1.Push("w", g).ok());  // VS 0: nothing applied yet; EMA = 0
  ASSERT_TRUE(w1.Push("w", g).ok());  // VS = ||its own first update||; EMA 0 -> scale 1
  ASSERT_TRUE(w1.Pull("w", current).ok());
  ASSERT_TRUE(w0.Push("w", g).ok());  // VS = ||current - read0||
  const ServerStats stats = (*cluster)->server_stats(0);
  const std::vector<PushRecord>& log0 = stats.workers[0].push_log;
  const std::vector<PushRecord>& log1 = stats.workers[1].push_log;
  ASSERT_EQ(log0.size(), 1u);
  ASSERT_EQ(log1.size(), 2u);
  EXPECT_EQ(log1[0].value_staleness, 0.0);
  EXPECT_FLOAT_EQ(log1[0].scale, 1.0f);
  EXPECT_FLOAT_EQ(log1[1].scale, 1.0f);
  EXPECT_NEAR(log1[1].value_staleness, 0.5 * Distance(g, std::vector<float>(kSize, 0.0f)),
              1e-5);
  const double vs = Distance(current, read0);
  EXPECT_NEAR(log0[0].value_staleness, vs, 1e-5 * vs);
  // eta0 / max(1, VS / EMA), EMA = 0.1 * VS(second push) after the first two pushes.
  const double ema = 0.1 * log1[1].value_staleness;
  EXPECT_NEAR(log0[0].scale, 1.0 / std::max(1.0, log0[0].value_staleness / ema), 1e-6);
  EXPECT_LT(log0[0].scale, 1.0f);
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

TEST(EagerPullTest, AStepNeverWaitsForItsOwnPush) {
  // Under a BSP gate, worker 0's request of step 0 reads at clock 1, which needs worker 1's
  // clock 1: if Step waited for its own request, it could not return before worker 1 moved.
  constexpr uint64_t kSize = 64;
  auto cluster = LocalCluster::Create(Options("ssp:s=0+pull=eager", 2, 2, kSize, 16));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::vector<float> p0(kSize), p1(kSize), g(kSize, 1.0f);
  auto e0 = EagerSchedule::Start((*cluster)->worker(0), "w", p0);
  auto e1 = EagerSchedule::Start((*cluster)->worker(1), "w", p1);
  ASSERT_TRUE(e0.ok() && e1.ok());
  ASSERT_TRUE((*e0)->Step(g, p0).ok());  // returns although worker 1 has not moved
  EXPECT_EQ(p0, std::vector<float>(kSize, -0.5f)) << "W_prev (zeros) - 0.5 * 1 * g";
  ASSERT_TRUE((*e1)->Step(g, p1).ok());
  ASSERT_TRUE((*e0)->Step(g, p0).ok());  // now step 0's request of worker 0 completes
  // W_prev = both step-0 pushes applied = -1; own update -0.5 * scale, scale 1 (one foreign
  // update per step for N = 2).
  EXPECT_EQ((*e0)->last_foreign_updates(), 1);
  EXPECT_EQ((*e0)->last_scale(), 1.0f);
  EXPECT_EQ(std::vector<float>((*e0)->fetched().begin(), (*e0)->fetched().end()),
            std::vector<float>(kSize, -1.0f));
  EXPECT_EQ(p0, std::vector<float>(kSize, -1.5f));
  ASSERT_TRUE((*e1)->Step(g, p1).ok());
  ASSERT_TRUE((*e0)->Finish(p0).ok());
  ASSERT_TRUE((*e1)->Finish(p1).ok());
  EXPECT_EQ(p0, std::vector<float>(kSize, -2.0f));
  EXPECT_EQ(p1, p0);
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

TEST(EagerPullTest, EachStepComputesOnTheFetchedParametersMinusItsOwnUpdate) {
  constexpr uint64_t kSize = 200;
  auto cluster = LocalCluster::Create(Options("eager", 2, 4, kSize, 32));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  absl::Status s = (*cluster)->Run([&](Worker& w) -> absl::Status {
    std::vector<float> params(kSize), grad(kSize), expected(kSize);
    KAIROS_ASSIGN_OR_RETURN(auto eager, EagerSchedule::Start(w, "w", params));
    for (int t = 0; t < 20; ++t) {
      for (uint64_t i = 0; i < kSize; ++i) grad[i] = 0.25f * static_cast<float>(w.rank() + 1);
      KAIROS_RETURN_IF_ERROR(eager->Step(grad, params));
      const float scale = eager->last_scale();
      // The PS+ rule, with the modulation 1 / max(1, tau / (N - 1)).
      // (In double, as the policy computes it, then rounded once to float.)
      const float want_scale = static_cast<float>(
          1.0 / std::max(1.0, static_cast<double>(eager->last_foreign_updates()) / 3.0));
      if (scale != want_scale) return absl::InternalError("scale differs from its formula");
      for (uint64_t i = 0; i < kSize; ++i) {
        expected[i] = eager->fetched()[i] - (0.5f * scale) * grad[i];
      }
      if (params != expected) return absl::InternalError("step parameters differ");
    }
    return eager->Finish(params);
  });
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

TEST(SapsTest, FastWorkersNeverWaitTheStragglersPushesAreDroppedAndNoAppliedPushIsStalerThanSMax) {
  constexpr uint64_t kSize = 128;  // 4 chunks of 32, 2 per shard
  constexpr int kSlowIterations = 6;
  ClusterOptions o = Options("saps", 2, 4, kSize, 32);
  // Virtual time (virtual_time.h): the workers' compute passes on the cluster's clock, so
  // the slow one is exactly 8x slower however loaded the machine. Every worker counts from
  // its start (Enter) and the pacer starts once all four have entered, so no step passes
  // before a worker began.
  test_support::VirtualTime time(absl::Milliseconds(1));
  time.Apply(o);
  auto cluster = LocalCluster::Create(o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto* entered = new absl::Barrier(4);
  // The fast workers keep going until the slow one is done, so that each of its pushes,
  // its last one too, meets the updates of three workers that run 8x faster: between its
  // read and its push, each of them pushes every chunk at least 7 times (the pacer does not
  // move the clock until every woken worker sleeps again), so each push of the slow worker
  // is at least 21 versions of its chunk stale, more than S_max = 2(W - 1) = 6, and dropped.
  std::atomic<bool> slow_done{false};
  absl::Status s = (*cluster)->Run([&](Worker& w) -> absl::Status {
    time.Enter();
    absl::Cleanup leave = [&time] { time.Leave(); };
    if (entered->Block()) {
      delete entered;
      time.Start();
    }
    std::vector<float> params(kSize), grad(kSize, 0.01f);
    const bool slow = w.rank() == 3;
    for (int t = 0; slow ? t < kSlowIterations : (t < 48 || !slow_done.load()) && t < 20000; ++t) {
      KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
      // Worker 3 computes 8x slower, in virtual time.
      if (!time.SleepFor(absl::Milliseconds(slow ? 8 : 1))) {
        return absl::DeadlineExceededError("virtual time stood still");
      }
      KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
      KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
    }
    if (slow) slow_done.store(true);
    return absl::OkStatus();
  });
  ASSERT_TRUE(s.ok()) << s;
  const uint64_t s_max = 2 * (4 - 1);
  uint64_t slow_pushes = 0;
  for (int shard = 0; shard < 2; ++shard) {
    const ServerStats stats = (*cluster)->server_stats(shard);
    ASSERT_EQ(stats.workers.size(), 4u);
    for (const WorkerMetrics& m : stats.workers) {
      if (m.rank != 3) {
        EXPECT_EQ(m.blocked_reads, 0u) << "SaPS blocked fast worker " << m.rank;
      }
      for (const PushRecord& p : m.push_log) {
        if (!p.dropped) {
          EXPECT_LE(p.staleness, s_max) << "worker " << m.rank;
        }
      }
      EXPECT_EQ(m.dropped, m.refreshes);
    }
    // The slow worker: every push dropped, and its latest one marks it a straggler.
    const WorkerMetrics& slow = stats.workers[3];
    EXPECT_EQ(slow.dropped, slow.pushes) << "shard " << shard;
    EXPECT_THAT(stats.stragglers, ::testing::Contains(3)) << "shard " << shard;
    slow_pushes += slow.pushes;
  }
  EXPECT_EQ(slow_pushes, kSlowIterations * 4u);  // every chunk, every iteration
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

}  // namespace
}  // namespace kairos
