// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Client-side merging (TableSpec::merge_pushes) through a running job, through the public
// API alone: many asynchronous pushes to one range add up exactly (sgd at rate 1 on
// integers), fewer push messages reach the servers than pushes were made, a pull issued
// after a push still sees it, and a table without merging sends every push (the control).

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"

namespace kairos {
namespace {

constexpr uint64_t kSize = 600;

ClusterOptions Options(bool merge, int workers = 1, Compression compression = Compression::kNone) {
  ClusterOptions o;
  o.num_servers = 2;
  o.num_workers = workers;
  o.job.policy = "asp";
  o.job.chunk_elements = 200;  // two chunks on each of two shards
  TableSpec w;
  w.name = "w";
  w.size = kSize;
  w.init = Initializer::Zeros();
  w.updater.name = "sgd";
  w.updater.learning_rate = 1.0f;
  w.merge_pushes = merge;
  w.compression = compression;
  o.job.tables.push_back(w);
  o.worker.log_level = LogLevel::kOff;
  o.server.log_level = LogLevel::kOff;
  o.coordinator.log_level = LogLevel::kOff;
  return o;
}

uint64_t PushMessages(LocalCluster& cluster) {
  uint64_t n = 0;
  for (int s = 0; s < cluster.num_servers(); ++s) n += cluster.server_stats(s).pushes;
  return n;
}

// `pushes` asynchronous pushes of ones from each worker, then the sum checked exactly.
void PushOnesAndCheck(bool merge, int workers, int pushes,
                      Compression compression = Compression::kNone) {
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Create(Options(merge, workers, compression));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ((*cluster)->worker(0).table("w")->merge_pushes, merge);
  const Buffer ones = Buffer::CopyOf(std::vector<float>(kSize, 1.0f));
  ASSERT_TRUE((*cluster)
                  ->Run([&](Worker& worker) -> absl::Status {
                    std::vector<Request> requests;
                    requests.reserve(pushes);
                    for (int i = 0; i < pushes; ++i) {
                      requests.push_back(worker.PushAsync("w", 0, ones));
                    }
                    for (const Request& r : requests) KAIROS_RETURN_IF_ERROR(r.Wait());
                    // Every worker's pushes are in once all have passed the barrier.
                    KAIROS_RETURN_IF_ERROR(worker.Barrier());
                    std::vector<float> w(kSize);
                    KAIROS_RETURN_IF_ERROR(worker.Pull("w", w));
                    for (uint64_t i = 0; i < kSize; ++i) {
                      if (w[i] != -static_cast<float>(workers * pushes)) {
                        return absl::InternalError(absl::StrCat("element ", i, " is ", w[i]));
                      }
                    }
                    return absl::OkStatus();
                  })
                  .ok());
  // A message per chunk: [0, 200) [200, 300) on shard 0, [300, 500) [500, 600) on shard 1.
  const uint64_t made = static_cast<uint64_t>(workers) * pushes * 4;
  uint64_t merged = 0;  // Worker::stats counts what it summed away
  for (int r = 0; r < workers; ++r) merged += (*cluster)->worker(r).stats().pushes_merged;
  EXPECT_EQ(PushMessages(**cluster), made - merged);
  if (merge) {
    EXPECT_GT(merged, 0u) << "no push was merged";
  } else {
    EXPECT_EQ(merged, 0u);
  }
}

TEST(MergePushesTest, ManyAsynchronousPushesAddUpExactlyInFewerMessages) {
  PushOnesAndCheck(/*merge=*/true, /*workers=*/2, /*pushes=*/300);
}

// fp16 carries the sums of ones exactly: merged pushes are encoded as they leave.
TEST(MergePushesTest, CompressedPushesMergeAndAddUpExactly) {
  PushOnesAndCheck(/*merge=*/true, /*workers=*/2, /*pushes=*/300, Compression::kFp16);
}

TEST(MergePushesTest, WithoutMergingEveryPushIsAMessage) {
  PushOnesAndCheck(/*merge=*/false, /*workers=*/1, /*pushes=*/100);
}

// Sparse: many asynchronous pushes of overlapping keys over two shards add up exactly, in
// fewer messages than pushes (the control: without merging, one per push and shard).
TEST(MergePushesTest, SparsePushesOfOverlappingKeysAddUpExactly) {
  uint64_t unmerged_messages = 0;  // the control's: one per push and shard it touches
  for (const bool merge : {false, true}) {
    SCOPED_TRACE(merge ? "merging" : "the control");
    ClusterOptions o = Options(merge);
    TableSpec e = TableSpec::Sparse("e", 2, Initializer::Zeros(), {"sgd", 1.0f});
    e.merge_pushes = merge;
    o.job.tables = {e};
    absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Create(o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    Worker& worker = (*cluster)->worker(0);
    // Push i: keys i % 7 .. i % 7 + 3, each row ones.
    constexpr int kPushes = 200;
    std::vector<Request> requests;
    std::vector<float> expect(12, 0.0f);  // keys 0..9, rows of 2: -pushes of each key
    for (int i = 0; i < kPushes; ++i) {
      std::vector<uint64_t> keys;
      for (uint64_t k = static_cast<uint64_t>(i % 7); k < static_cast<uint64_t>(i % 7 + 4); ++k) {
        keys.push_back(k);
        expect[k] -= 1.0f;
      }
      requests.push_back(worker.PushSparseAsync("e", keys, std::vector<float>(8, 1.0f)));
    }
    for (const Request& r : requests) ASSERT_TRUE(r.Wait().ok());
    std::vector<uint64_t> all(10);
    for (uint64_t k = 0; k < 10; ++k) all[k] = k;
    std::vector<float> rows(20);
    ASSERT_TRUE(worker.PullSparse("e", all, rows).ok());
    for (uint64_t k = 0; k < 10; ++k) ASSERT_EQ(rows[2 * k + 1], expect[k]) << "key " << k;
    const uint64_t merged = worker.stats().pushes_merged;
    if (!merge) {
      EXPECT_EQ(merged, 0u);
      unmerged_messages = PushMessages(**cluster);
      continue;
    }
    EXPECT_GT(merged, 0u);
    EXPECT_EQ(PushMessages(**cluster), unmerged_messages - merged);
  }
}

// A pull issued after pushes waits behind them: merging never lets it overtake one.
TEST(MergePushesTest, APullSeesEveryPushIssuedBeforeIt) {
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Create(Options(true));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& worker = (*cluster)->worker(0);
  const Buffer ones = Buffer::CopyOf(std::vector<float>(kSize, 1.0f));
  std::vector<float> w(kSize);
  std::vector<Request> requests;
  for (int i = 1; i <= 60; ++i) {
    for (int k = 0; k < i % 4 + 1; ++k) requests.push_back(worker.PushAsync("w", 0, ones));
    ASSERT_TRUE(worker.Pull("w", w).ok());
    const float want = -static_cast<float>(requests.size());
    ASSERT_EQ(w[0], want) << "iteration " << i;
    ASSERT_EQ(w[kSize - 1], want) << "iteration " << i;
  }
  for (const Request& r : requests) ASSERT_TRUE(r.Wait().ok());
}

}  // namespace
}  // namespace kairos
