// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The worker's hot-row cache of a sparse table (TableSpec::cache_clocks with cache_rows)
// through a running job, through the public API alone: every read of every row, cached or
// not, is checked against the SSP bound; the cache's own limit and the write-through are
// checked exactly on one worker; a pull the cache answers in part fetches the other rows
// only and puts every row in its place; the size limit holds; without the option every pull
// is a message (the control).

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"

namespace kairos {
namespace {

constexpr uint32_t kWidth = 3;

ClusterOptions SparseOptions(const std::string& policy, uint32_t cache_clocks, uint64_t cache_rows,
                             int workers, int servers = 1, const std::string& updater = "sgd") {
  ClusterOptions o;
  o.num_servers = servers;
  o.num_workers = workers;
  o.job.policy = policy;
  TableSpec e = TableSpec::Sparse("e", kWidth, Initializer::Zeros());
  e.updater.name = updater;
  e.updater.learning_rate = 1.0f;
  e.cache_clocks = cache_clocks;
  e.cache_rows = cache_rows;
  o.job.tables.push_back(e);
  o.worker.log_level = LogLevel::kOff;
  o.server.log_level = LogLevel::kOff;
  o.coordinator.log_level = LogLevel::kOff;
  return o;
}

uint64_t ServerPulls(LocalCluster& cluster, int servers) {
  uint64_t n = 0;
  for (int s = 0; s < servers; ++s) n += cluster.server_stats(s).pulls;
  return n;
}

// Each worker pulls the hot keys 0..5 (and one key of its own), pushes ones to all of them
// and ends the clock. A row's read at clock c must hold every push of the clocks before
// c - s: -row >= workers x (c - s) for a hot key.
TEST(RowCacheClusterTest, UnderSspNoRowIsStalerThanTheBoundAndSomeAreCached) {
  constexpr int kWorkers = 2;
  constexpr int kClocks = 60;
  constexpr int64_t kS = 2;
  for (const uint64_t cache_rows : {uint64_t{0}, uint64_t{4}, uint64_t{64}}) {
    SCOPED_TRACE(absl::StrCat("cache_rows ", cache_rows));
    absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Create(
        SparseOptions("ssp:s=2", cache_rows > 0 ? 8 : 0, cache_rows, kWorkers, /*servers=*/2));
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    const absl::Status run = (*cluster)->Run([&](Worker& worker) -> absl::Status {
      const std::vector<uint64_t> keys{
          0, 1, 2, 3, 4, 5, 1000 + static_cast<uint64_t>(worker.rank())};
      std::vector<float> rows(keys.size() * kWidth);
      const std::vector<float> ones(rows.size(), 1.0f);
      for (int64_t c = 0; c < kClocks; ++c) {
        KAIROS_RETURN_IF_ERROR(worker.PullSparse("e", keys, rows));
        for (std::size_t k = 0; k < keys.size(); ++k) {
          const double must = (k < 6 ? kWorkers : 1) * static_cast<double>(c - kS);
          for (uint32_t j = 0; j < kWidth; ++j) {
            if (-rows[k * kWidth + j] < must) {
              return absl::InternalError(absl::StrCat("worker ", worker.rank(), " read key ",
                                                      keys[k], " = ", rows[k * kWidth + j],
                                                      " at clock ", c, ": staler than s"));
            }
          }
        }
        KAIROS_RETURN_IF_ERROR(worker.PushSparse("e", keys, ones));
        KAIROS_RETURN_IF_ERROR(worker.AdvanceClock());
      }
      return absl::OkStatus();
    });
    ASSERT_TRUE(run.ok()) << run;
    uint64_t rows_cached = 0;
    for (int r = 0; r < kWorkers; ++r) rows_cached += (*cluster)->worker(r).stats().rows_cached;
    if (cache_rows == 0) {
      EXPECT_EQ(rows_cached, 0u) << "the control";
      EXPECT_EQ(ServerPulls(**cluster, 2), 2u * kWorkers * kClocks);
    } else {
      EXPECT_GT(rows_cached, 0u);
      EXPECT_LE(rows_cached, cache_rows * kWorkers * kClocks) << "at most cache_rows per read";
    }
  }
}

// One worker, asp, cache_clocks 3: a row read at clock 4k answers clocks 4k + 1 to 4k + 3,
// and the worker's pushes are written into it, so every read is exact; each key is pushed
// as often as its number, so a misplaced row shows.
TEST(RowCacheClusterTest, TheCacheClocksLimitTheRowsExactly) {
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Create(SparseOptions("asp", /*cache_clocks=*/3, /*cache_rows=*/16, 1, 2));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& worker = (*cluster)->worker(0);
  // Repeated keys: each caller key gets its row.
  const std::vector<uint64_t> keys{1, 2, 3, 2, 4};
  std::vector<float> rows(keys.size() * kWidth);
  for (int64_t c = 0; c < 40; ++c) {
    ASSERT_TRUE(worker.PullSparse("e", keys, rows).ok());
    for (std::size_t k = 0; k < keys.size(); ++k) {
      // Key 2 appears twice per push: its rows are summed.
      const float per_clock = keys[k] == 2 ? 4.0f : static_cast<float>(keys[k]);
      ASSERT_EQ(rows[k * kWidth], -per_clock * static_cast<float>(c))
          << "clock " << c << " key " << keys[k];
    }
    std::vector<float> grads;
    for (uint64_t key : keys) grads.insert(grads.end(), kWidth, static_cast<float>(key));
    ASSERT_TRUE(worker.PushSparse("e", keys, grads).ok());
    ASSERT_TRUE(worker.AdvanceClock().ok());
  }
  EXPECT_EQ(worker.stats().rows_cached, 30u * 4) << "4 distinct keys, 30 clocks of 40";
  EXPECT_EQ(ServerPulls(**cluster, 2), 10u * 2) << "a message per server every fourth clock";
}

// cache_rows 2 of 4 hot keys: each pull takes at most 2 rows from the cache and fetches the
// others in a smaller message; the values of both kinds land in their places.
TEST(RowCacheClusterTest, APartlyAnsweredPullFetchesTheRestOnly) {
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Create(SparseOptions("asp", /*cache_clocks=*/100, /*cache_rows=*/2, 1));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& worker = (*cluster)->worker(0);
  const std::vector<uint64_t> keys{7, 8, 9, 10};
  std::vector<float> rows(keys.size() * kWidth);
  for (int64_t c = 0; c < 20; ++c) {
    ASSERT_TRUE(worker.PullSparse("e", keys, rows).ok());
    for (std::size_t k = 0; k < keys.size(); ++k) {
      ASSERT_EQ(rows[k * kWidth + 2], -static_cast<float>(keys[k] * c)) << "clock " << c;
    }
    std::vector<float> grads;
    for (uint64_t key : keys) grads.insert(grads.end(), kWidth, static_cast<float>(key));
    ASSERT_TRUE(worker.PushSparse("e", keys, grads).ok());
    ASSERT_TRUE(worker.AdvanceClock().ok());
  }
  const WorkerStats stats = worker.stats();
  EXPECT_EQ(stats.reads_cached, 0u) << "no pull is answered whole";
  EXPECT_EQ(stats.rows_cached, 19u * 2) << "two rows from the second pull on";
  EXPECT_EQ(ServerPulls(**cluster, 1), 20u);
}

TEST(RowCacheClusterTest, TheJobRefusesRowsWithoutALimit) {
  ClusterOptions o = SparseOptions("asp", 3, /*cache_rows=*/0, 1);
  EXPECT_EQ(LocalCluster::Create(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = SparseOptions("asp", 0, /*cache_rows=*/5, 1);
  EXPECT_EQ(LocalCluster::Create(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = SparseOptions("asp", 3, /*cache_rows=*/5, 1);
  EXPECT_TRUE(LocalCluster::Create(o).ok()) << "the positive control";
}

}  // namespace
}  // namespace kairos
