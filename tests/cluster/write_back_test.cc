// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Write-back (TableSpec::write_back_clocks) through a running job, through the public API
// alone: under SSP every read still holds every push of the clocks before c - s; pushes of
// one clock leave as one message; with the read cache a worker's pushes of several clocks
// leave as one and every read of its own is exact; a held push the server refuses ends the
// worker with the reason; a barrier sends what is held (else the other worker, gated on
// this one's clock, never reaches it); the job refuses a lag its gates cannot allow.

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"

namespace kairos {
namespace {

constexpr uint64_t kSize = 4;

ClusterOptions Options(const std::string& policy, uint32_t write_back, int workers,
                       uint32_t cache_clocks = 0) {
  ClusterOptions o;
  o.num_servers = 1;
  o.num_workers = workers;
  o.job.policy = policy;
  TableSpec w;
  w.name = "w";
  w.size = kSize;
  w.init = Initializer::Zeros();
  w.updater.learning_rate = 1.0f;
  w.write_back_clocks = write_back;
  w.cache_clocks = cache_clocks;
  o.job.tables.push_back(w);
  o.worker.log_level = LogLevel::kOff;
  o.server.log_level = LogLevel::kOff;
  o.coordinator.log_level = LogLevel::kOff;
  return o;
}

// Each worker pulls, pushes ones twice and ends the clock, `clocks` times: a read at clock c
// must hold every push of the clocks before c - s, -w >= 2 x workers x (c - s). Returns
// the push messages the server took.
uint64_t RunAndCheckTheBound(const std::string& policy, int64_t s, uint32_t write_back,
                             uint32_t cache_clocks, int workers, int clocks) {
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Create(Options(policy, write_back, workers, cache_clocks));
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return 0;
  const std::vector<float> ones(kSize, 1.0f);
  const absl::Status run = (*cluster)->Run([&](Worker& worker) -> absl::Status {
    std::vector<float> w(kSize);
    for (int64_t c = 0; c < clocks; ++c) {
      KAIROS_RETURN_IF_ERROR(worker.Pull("w", w));
      const double must = 2.0 * workers * static_cast<double>(c - s);
      if (-w[0] < must) {
        return absl::InternalError(absl::StrCat("worker ", worker.rank(), " read ", w[0],
                                                " at clock ", c, ": staler than s = ", s));
      }
      KAIROS_RETURN_IF_ERROR(worker.Push("w", ones));
      KAIROS_RETURN_IF_ERROR(worker.Push("w", ones));
      KAIROS_RETURN_IF_ERROR(worker.AdvanceClock());
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(run.ok()) << run;
  return (*cluster)->server_stats(0).pushes;
}

TEST(WriteBackTest, UnderSspNoReadIsStalerThanTheBound) {
  constexpr int kWorkers = 2;
  constexpr int kClocks = 40;
  // The control: every push a message.
  EXPECT_EQ(RunAndCheckTheBound("ssp:s=2", 2, 0, 0, kWorkers, kClocks), 2u * kWorkers * kClocks);
  // One clock's pushes leave together.
  EXPECT_EQ(RunAndCheckTheBound("ssp:s=2", 2, 1, 0, kWorkers, kClocks), 1u * kWorkers * kClocks);
  for (const uint32_t n : {2u, 3u}) {
    SCOPED_TRACE(absl::StrCat("write_back_clocks ", n));
    // Without the cache each pull sends its range's held push first: one per clock still.
    EXPECT_EQ(RunAndCheckTheBound("ssp:s=2", 2, n, 0, kWorkers, kClocks), 1u * kWorkers * kClocks);
    // With it, pushes of several clocks leave as one.
    EXPECT_LT(RunAndCheckTheBound("ssp:s=2", 2, n, /*cache_clocks=*/n, kWorkers, kClocks),
              1u * kWorkers * kClocks);
  }
}

// 40 clocks of one worker: it pulls "w" (every read must hold exactly its own pushes
// before it), with `other` a table pulled and pushed as well, pushes ones to "w" and ends
// the clock; then it finishes, which sends what is held.
void RunOneWorkerAndCheckItsReads(Worker& worker, const std::string& other = "") {
  const std::vector<float> ones(kSize, 1.0f);
  std::vector<float> w(kSize);
  for (int64_t c = 0; c < 40; ++c) {
    ASSERT_TRUE(worker.Pull("w", w).ok());
    ASSERT_EQ(w[0], -static_cast<float>(c)) << "clock " << c;
    if (!other.empty()) {
      ASSERT_TRUE(worker.Pull(other, w).ok());
      ASSERT_TRUE(worker.Push(other, ones).ok());
    }
    ASSERT_TRUE(worker.Push("w", ones).ok());
    ASSERT_TRUE(worker.AdvanceClock().ok());
  }
  ASSERT_TRUE(worker.Shutdown().ok());
}

// One worker, asp, write_back_clocks 3 and cache_clocks 3: the copy read at 4k answers the
// reads up to 4k + 3 with the worker's pushes written through (each read exact); the pushes
// of 4k..4k+2 leave together when the worker reports clock 4k + 3, the push of 4k + 3 just
// before the pull at 4k + 4: two messages per four clocks. The same with fp16, which
// carries these sums exactly: the held sums are encoded as they leave, and the copy takes
// the pushes as issued.
TEST(WriteBackTest, WithTheCacheSeveralClocksLeaveAsOneAndReadsStayExact) {
  for (const Compression compression : {Compression::kNone, Compression::kFp16}) {
    SCOPED_TRACE(CompressionName(compression));
    ClusterOptions options = Options("asp", /*write_back=*/3, 1, /*cache_clocks=*/3);
    options.job.tables[0].compression = compression;
    absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Create(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    Worker& worker = (*cluster)->worker(0);
    RunOneWorkerAndCheckItsReads(worker);
    EXPECT_EQ((*cluster)->server_stats(0).pulls, 10u);
    EXPECT_EQ((*cluster)->server_stats(0).pushes, 20u);
    EXPECT_EQ(worker.stats().pushes_merged, 20u);
  }
}

// Another table's pushes and pulls on the same server do not send the sums early.
TEST(WriteBackTest, AnotherTablesRequestsLeaveTheSumsHeld) {
  ClusterOptions options = Options("asp", /*write_back=*/3, 1, /*cache_clocks=*/3);
  TableSpec c = options.job.tables[0];
  c.name = "c";
  c.write_back_clocks = 0;
  c.cache_clocks = 0;
  options.job.tables.push_back(c);
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Create(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  RunOneWorkerAndCheckItsReads((*cluster)->worker(0), /*other=*/"c");
  EXPECT_EQ((*cluster)->server_stats(0).pushes, 20u + 40u) << "w's as with w alone, c's all";
}

// A push of non-finite values is neither held nor written into the cache's copy: it fails
// alone, as without either.
TEST(WriteBackTest, ANonFinitePushFailsAlone) {
  const std::vector<float> bad(kSize, std::numeric_limits<float>::quiet_NaN());
  for (const uint32_t write_back : {0u, 1u}) {
    for (const uint32_t cache_clocks : {0u, 5u}) {
      SCOPED_TRACE(absl::StrCat("write_back_clocks ", write_back, ", cache ", cache_clocks));
      absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
          LocalCluster::Create(Options("asp", write_back, 1, cache_clocks));
      ASSERT_TRUE(cluster.ok()) << cluster.status();
      Worker& worker = (*cluster)->worker(0);
      std::vector<float> w(kSize);
      ASSERT_TRUE(worker.Pull("w", w).ok());  // the copy, with the cache
      ASSERT_TRUE(worker.Push("w", std::vector<float>(kSize, 1.0f)).ok());
      EXPECT_FALSE(worker.Push("w", bad).ok());
      ASSERT_TRUE(worker.Pull("w", w).ok()) << "the worker goes on";
      EXPECT_EQ(w[0], -1.0f) << "the good push is kept, the bad one nowhere";
      EXPECT_EQ(worker.stats().reads_cached, cache_clocks > 0 ? 1u : 0u);
    }
  }
}

// Two finite pushes whose sum overflows: the held sum is refused, and the worker ends
// saying so (nobody else waits for that message).
TEST(WriteBackTest, AHeldPushTheServerRefusesEndsTheWorker) {
  const std::vector<float> big(kSize, 3e38f);
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Create(Options("asp", /*write_back=*/1, 1));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& worker = (*cluster)->worker(0);
  ASSERT_TRUE(worker.Push("w", big).ok()) << "held";
  ASSERT_TRUE(worker.Push("w", big).ok()) << "summed: +inf";
  std::vector<float> w(kSize);
  EXPECT_FALSE(worker.Pull("w", w).ok());  // sends it first
  const absl::Status ended = worker.Pull("w", w);
  EXPECT_THAT(std::string(ended.message()), ::testing::HasSubstr("a held push"));
  EXPECT_THAT(std::string(ended.message()), ::testing::HasSubstr("holds inf"));
}

// Worker 0 pushes at clock 2 only and holds it (its reported clock stays at 2); worker 1
// runs to clock 7 under ssp:s=3, which needs worker 0 at 4. Worker 0's barrier sends the
// held push and reports its clock, so worker 1 gets there.
TEST(WriteBackTest, ABarrierSendsWhatIsHeld) {
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Create(Options("ssp:s=3", /*write_back=*/4, 2));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::vector<float> ones(kSize, 1.0f);
  const absl::Status run = (*cluster)->Run([&](Worker& worker) -> absl::Status {
    std::vector<float> w(kSize);
    if (worker.rank() == 0) {
      for (int64_t c = 0; c < 4; ++c) {
        if (c == 2) KAIROS_RETURN_IF_ERROR(worker.Push("w", ones));
        KAIROS_RETURN_IF_ERROR(worker.AdvanceClock());
      }
      return worker.Barrier();
    }
    for (int64_t c = 0; c < 8; ++c) {
      KAIROS_RETURN_IF_ERROR(worker.Pull("w", w));
      KAIROS_RETURN_IF_ERROR(worker.AdvanceClock());
    }
    if (w[0] != -1.0f) return absl::InternalError(absl::StrCat("read ", w[0]));
    return worker.Barrier();
  });
  EXPECT_TRUE(run.ok()) << run;
}

TEST(WriteBackTest, TheJobRefusesALagItsGatesCannotAllow) {
  EXPECT_EQ(LocalCluster::Create(Options("ssp:s=1", 3, 1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LocalCluster::Create(Options("bsp", 2, 1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LocalCluster::Create(Options("asp+pull=eager", 1, 1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Another table's gate counts too.
  ClusterOptions two = Options("asp", 3, 1);
  TableSpec b = two.job.tables[0];
  b.name = "b";
  b.write_back_clocks = 0;
  b.policy = "ssp:s=1";
  two.job.tables.push_back(b);
  EXPECT_EQ(LocalCluster::Create(two).status().code(), absl::StatusCode::kInvalidArgument);
  // The positive controls.
  EXPECT_TRUE(LocalCluster::Create(Options("ssp:s=2", 3, 1)).ok());
  EXPECT_TRUE(LocalCluster::Create(Options("bsp", 1, 1)).ok());
  EXPECT_TRUE(LocalCluster::Create(Options("asp", 1000, 1)).ok());
}

}  // namespace
}  // namespace kairos
