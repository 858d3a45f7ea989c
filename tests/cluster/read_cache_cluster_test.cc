// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The worker's read cache (TableSpec::cache_clocks) through a running job, through the
// public API alone. Every read, cached or not, is checked against the SSP bound it must
// keep; the cache's own limit is checked exactly on one worker (a pull every clock goes to
// the server every cache_clocks + 1 clocks); BSP caches nothing across clocks; an assign of
// the worker's own is read back; without the option every pull is a message (the control).

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"

namespace kairos {
namespace {

constexpr uint64_t kSize = 4;

ClusterOptions Options(const std::string& policy, uint32_t cache_clocks, int workers,
                       const std::string& updater = "sgd") {
  ClusterOptions o;
  o.num_servers = 1;
  o.num_workers = workers;
  o.job.policy = policy;
  TableSpec w;
  w.name = "w";
  w.size = kSize;
  w.init = Initializer::Zeros();
  w.updater.name = updater;
  w.updater.learning_rate = 1.0f;
  w.cache_clocks = cache_clocks;
  o.job.tables.push_back(w);
  o.worker.log_level = LogLevel::kOff;
  o.server.log_level = LogLevel::kOff;
  o.coordinator.log_level = LogLevel::kOff;
  return o;
}

// Each worker pulls, pushes ones and ends the clock, `clocks` times; the updates of one
// clock move w by `per_clock` (the workers' pushes applied one by one, or averaged by a BSP
// round). A read at clock c must hold every update of the clocks before c - s:
// -w >= per_clock * (c - s). Returns the reads the workers' caches answered, and the pull
// messages the server served.
struct Counts {
  uint64_t cached = 0;
  uint64_t served = 0;
};
Counts RunAndCheckTheBound(const std::string& policy, int64_t s, uint32_t cache_clocks, int workers,
                           int clocks, double per_clock) {
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Create(Options(policy, cache_clocks, workers));
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return {};
  const std::vector<float> ones(kSize, 1.0f);
  const absl::Status run = (*cluster)->Run([&](Worker& worker) -> absl::Status {
    std::vector<float> w(kSize);
    for (int64_t c = 0; c < clocks; ++c) {
      KAIROS_RETURN_IF_ERROR(worker.Pull("w", w));
      const double must = per_clock * static_cast<double>(c - s);
      if (-w[0] < must) {
        return absl::InternalError(absl::StrCat("worker ", worker.rank(), " read ", w[0],
                                                " at clock ", c, ": staler than s = ", s));
      }
      KAIROS_RETURN_IF_ERROR(worker.Push("w", ones));
      KAIROS_RETURN_IF_ERROR(worker.AdvanceClock());
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(run.ok()) << run;
  Counts n;
  for (int r = 0; r < workers; ++r) n.cached += (*cluster)->worker(r).stats().reads_cached;
  n.served = (*cluster)->server_stats(0).pulls;
  EXPECT_EQ(n.cached + n.served, static_cast<uint64_t>(workers) * clocks)
      << "every pull is answered by the cache or the server";
  return n;
}

TEST(ReadCacheClusterTest, UnderSspNoReadIsStalerThanTheBoundAndSomeAreCached) {
  const Counts n = RunAndCheckTheBound("ssp:s=2", 2, /*cache_clocks=*/8, /*workers=*/2, 60, 2);
  EXPECT_GT(n.cached, 0u);
}

TEST(ReadCacheClusterTest, WithoutTheOptionEveryPullIsAMessage) {
  const Counts n = RunAndCheckTheBound("ssp:s=2", 2, /*cache_clocks=*/0, /*workers=*/2, 30, 2);
  EXPECT_EQ(n.cached, 0u);
}

TEST(ReadCacheClusterTest, UnderBspNothingIsCachedAcrossClocks) {
  const Counts n = RunAndCheckTheBound("bsp", 0, /*cache_clocks=*/8, /*workers=*/2, 30,
                                       /*per_clock=*/1);  // the round's mean
  EXPECT_EQ(n.cached, 0u);
}

// One worker with cache_clocks 3: the copy read at clock 4k answers clocks 4k + 1 to
// 4k + 3. With plain sgd the worker's own pushes go into it as the server applies them, so
// every read is exact; with the "add" updater (the same updates here, pushing -1, but not
// one the worker writes through) the copy holds the 4k pushes before it and no later one.
TEST(ReadCacheClusterTest, TheCacheClocksLimitTheCopyExactly) {
  for (const bool write_through : {true, false}) {
    absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
        LocalCluster::Create(Options("asp", /*cache_clocks=*/3, 1, write_through ? "sgd" : "add"));
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    Worker& worker = (*cluster)->worker(0);
    const std::vector<float> ones(kSize, write_through ? 1.0f : -1.0f);
    std::vector<float> w(kSize);
    for (int64_t c = 0; c < 40; ++c) {
      ASSERT_TRUE(worker.Pull("w", w).ok());
      const int64_t pushes_seen = write_through ? c : c / 4 * 4;
      ASSERT_EQ(w[0], -static_cast<float>(pushes_seen)) << "clock " << c;
      ASSERT_TRUE(worker.Push("w", ones).ok());
      ASSERT_TRUE(worker.AdvanceClock().ok());
    }
    EXPECT_EQ(worker.stats().reads_cached, 30u);
    EXPECT_EQ((*cluster)->server_stats(0).pulls, 10u);
  }
}

// Both options on one table, one worker: asynchronous pushes merge on their way out while
// the pulls between them are answered from the copy, which the pushes are written into, so
// every read holds exactly the pushes issued before it.
TEST(ReadCacheClusterTest, WithMergedPushesEveryReadHoldsThePushesBeforeIt) {
  ClusterOptions options = Options("asp", /*cache_clocks=*/2, /*workers=*/1);
  options.job.tables[0].merge_pushes = true;
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Create(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& worker = (*cluster)->worker(0);
  const Buffer ones = Buffer::CopyOf(std::vector<float>(kSize, 1.0f));
  std::vector<float> w(kSize);
  std::vector<Request> requests;
  for (int64_t c = 0; c < 30; ++c) {
    for (int k = 0; k < 3; ++k) requests.push_back(worker.PushAsync("w", 0, ones));
    ASSERT_TRUE(worker.Pull("w", w).ok());
    ASSERT_EQ(w[0], -static_cast<float>(requests.size())) << "clock " << c;
    ASSERT_TRUE(worker.AdvanceClock().ok());
  }
  for (const Request& r : requests) ASSERT_TRUE(r.Wait().ok());
  EXPECT_GT(worker.stats().reads_cached, 0u);
}

TEST(ReadCacheClusterTest, AnAssignOfTheWorkersOwnIsReadBack) {
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Create(Options("asp", /*cache_clocks=*/100, /*workers=*/1));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& worker = (*cluster)->worker(0);
  std::vector<float> w(kSize);
  ASSERT_TRUE(worker.Pull("w", w).ok());
  ASSERT_TRUE(worker.Pull("w", w).ok());
  EXPECT_EQ(worker.stats().reads_cached, 1u) << "the positive control";
  ASSERT_TRUE(worker.Assign("w", std::vector<float>(kSize, 5.0f)).ok());
  ASSERT_TRUE(worker.Pull("w", w).ok());
  EXPECT_EQ(w[0], 5.0f);
  EXPECT_EQ(worker.stats().reads_cached, 1u);
}

}  // namespace
}  // namespace kairos
