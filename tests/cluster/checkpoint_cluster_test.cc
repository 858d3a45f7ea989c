// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Checkpoints through a whole cluster (docs/durability.md): a BSP job of 2 servers and 2
// workers stopped after 3 of 6 iterations and resumed from its checkpoint (on 1 server
// and on 3) ends with exactly the values of the job that ran all 6 (dense and sparse
// tables, momentum and adagrad state), from whole checkpoints and from a chain of deltas;
// checkpoints by clocks, on request and at the end; and restores that cannot be done fail
// the job with an error naming what.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "tests/cluster/two_table_job.h"
#include "tests/common/scratch_dir.h"

namespace kairos {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using testing::kDense;
using testing::TableValues;
using Values = TableValues;

ClusterOptions Options(int servers) {
  ClusterOptions o;
  o.num_servers = servers;
  o.num_workers = 2;
  o.job = testing::TwoTableJob();
  o.worker.request_timeout = absl::Seconds(30);
  o.server.checkpoint_sync = false;
  return o;
}

// Iterations [first, first + n) on every worker; rank 0's pull at the end.
absl::StatusOr<Values> Train(const ClusterOptions& o, int first, int n,
                             std::vector<ServerStats>* stats = nullptr) {
  auto cluster = LocalCluster::Create(o);
  if (!cluster.ok()) return cluster.status();
  Values v;
  absl::Status s = (*cluster)->Run([&](Worker& w) -> absl::Status {
    for (int t = first; t < first + n; ++t) {
      KAIROS_RETURN_IF_ERROR(testing::PushIteration(w, t));
    }
    if (w.rank() != 0) return absl::OkStatus();
    KAIROS_ASSIGN_OR_RETURN(v, testing::ReadAll(w));
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  // Before the shutdown (after it the servers are gone; their last checkpoint is written
  // during it).
  if (stats != nullptr) {
    for (int i = 0; i < o.num_servers; ++i) stats->push_back((*cluster)->server_stats(i));
  }
  if (absl::Status down = (*cluster)->Shutdown(); !down.ok()) return down;
  return v;
}

// Iterations 3..5 of a job restored from `dir` (its newest checkpoint, of clock 3), on 1
// and on 3 servers, end with exactly the values `whole` of the job that never stopped.
void ExpectResumedAsTheWholeJob(const fs::path& dir, const Values& whole) {
  for (int servers : {1, 3}) {
    SCOPED_TRACE(::testing::Message() << "resumed on " << servers << " servers");
    ClusterOptions resumed = Options(servers);
    resumed.server.restore_from = dir.string();
    std::vector<ServerStats> after;
    absl::StatusOr<Values> rest = Train(resumed, 3, 3, &after);
    ASSERT_TRUE(rest.ok()) << rest.status();
    EXPECT_EQ(rest->dense, whole.dense);
    EXPECT_EQ(rest->rows, whole.rows);
    for (const ServerStats& s : after) EXPECT_EQ(s.restored_clock, 3);
  }
}

class CheckpointClusterTest : public ::testing::Test {
 protected:
  testing::ScratchDir scratch_{"kairos_ckpt_cluster_"};
  const fs::path dir_ = scratch_.path();
};

TEST_F(CheckpointClusterTest, StopAndResumeEqualsTheUninterruptedJob) {
  absl::StatusOr<Values> whole = Train(Options(2), 0, 6);
  ASSERT_TRUE(whole.ok()) << whole.status();

  ClusterOptions first = Options(2);
  first.server.checkpoint_dir = dir_.string();
  first.server.checkpoint_every_clocks = 2;
  std::vector<ServerStats> stats;
  ASSERT_TRUE(Train(first, 0, 3, &stats).ok());
  // Clock 2 (every 2 clocks) and clock 3 (the end), on each server, and nothing else.
  for (const ServerStats& s : stats) {
    EXPECT_EQ(s.checkpoints_failed, 0u);
    EXPECT_EQ(s.restored_clock, -1);
  }
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir_)) {
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), dir_).string());
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"clock-000000000002/shard-00000-of-00002.kcp",
                                             "clock-000000000002/shard-00001-of-00002.kcp",
                                             "clock-000000000003/shard-00000-of-00002.kcp",
                                             "clock-000000000003/shard-00001-of-00002.kcp"}));

  ExpectResumedAsTheWholeJob(dir_, *whole);  // the latest complete: clock 3
}

// With checkpoint_deltas, checkpoints at clocks 1 (whole), 2 and 3 (deltas, each of the one
// before): the chain restored on 1 and on 3 servers goes on exactly as the job that never
// stopped.
TEST_F(CheckpointClusterTest, StopAndResumeFromDeltasEqualsTheUninterruptedJob) {
  absl::StatusOr<Values> whole = Train(Options(2), 0, 6);
  ASSERT_TRUE(whole.ok()) << whole.status();

  ClusterOptions first = Options(2);
  first.server.checkpoint_dir = dir_.string();
  first.server.checkpoint_every_clocks = 1;
  first.server.checkpoint_deltas = 2;
  first.server.checkpoint_at_end = false;  // the newest is clock 3's delta
  auto cluster = LocalCluster::Create(first);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // Each iteration waits for its clock's checkpoints, so that none is skipped (a periodic
  // one falling due while another is written would be).
  auto written = [&](uint64_t n) {
    for (int i = 0; i < first.num_servers; ++i) {
      if ((*cluster)->server_stats(i).checkpoints_written < n) return false;
    }
    return true;
  };
  ASSERT_TRUE((*cluster)
                  ->Run([&](Worker& w) -> absl::Status {
                    for (int t = 0; t < 3; ++t) {
                      KAIROS_RETURN_IF_ERROR(testing::PushIteration(w, t));
                      const absl::Time deadline = absl::Now() + absl::Seconds(30);
                      while (!written(static_cast<uint64_t>(t) + 1)) {
                        if (absl::Now() > deadline) return absl::DeadlineExceededError("ckpt");
                        std::this_thread::yield();
                      }
                    }
                    return absl::OkStatus();
                  })
                  .ok());
  for (int i = 0; i < first.num_servers; ++i) {
    const ServerStats s = (*cluster)->server_stats(i);
    EXPECT_EQ(s.checkpoints_written, 3u);
    EXPECT_EQ(s.checkpoint_deltas_written, 2u);
    EXPECT_EQ(s.last_checkpoint_clock, 3);
  }
  ASSERT_TRUE((*cluster)->Shutdown().ok());

  ExpectResumedAsTheWholeJob(dir_, *whole);
  // Without its whole checkpoint the chain cannot be restored, and the job says why.
  fs::remove_all(dir_ / "clock-000000000001");
  ClusterOptions broken = Options(1);
  broken.server.restore_from = dir_.string();
  absl::StatusOr<Values> failed = Train(broken, 3, 1);
  EXPECT_FALSE(failed.ok());
  EXPECT_THAT(failed.status().message(), HasSubstr("is a delta of the checkpoint of clock 1"));
}

// A coordinator of a job of one server and one worker (the tables of Options()).
std::unique_ptr<Coordinator> OneServerJob() {
  CoordinatorOptions co;
  co.num_servers = 1;
  co.num_workers = 1;
  co.job = Options(1).job;
  co.listen = "tcp://127.0.0.1:0";
  auto coordinator = Coordinator::Create(co);
  EXPECT_TRUE(coordinator.ok()) << coordinator.status();
  return coordinator.ok() ? *std::move(coordinator) : nullptr;
}

TEST_F(CheckpointClusterTest, CheckpointOnRequestAndItsErrors) {
  // A server without a checkpoint directory: a clear error.
  std::unique_ptr<Coordinator> coordinator = OneServerJob();
  ASSERT_NE(coordinator, nullptr);
  ServerOptions so;
  so.coordinator = coordinator->endpoint();
  so.checkpoint_sync = false;
  auto bare = Server::Create(so);
  ASSERT_TRUE(bare.ok());
  auto refused = (*bare)->Checkpoint(absl::Seconds(10));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("no checkpoint directory"));
  (*bare)->Shutdown();
}

TEST_F(CheckpointClusterTest, ServerCheckpointReturnsThePathOfAWholeShard) {
  const JobConfig job = Options(1).job;
  std::unique_ptr<Coordinator> coordinator = OneServerJob();
  ASSERT_NE(coordinator, nullptr);
  ServerOptions so;
  so.coordinator = coordinator->endpoint();
  so.checkpoint_dir = dir_.string();
  so.checkpoint_sync = false;
  so.checkpoint_at_end = false;
  auto server = Server::Create(so);
  ASSERT_TRUE(server.ok());
  // Before the job starts: nothing to write.
  EXPECT_THAT((*server)->Checkpoint(absl::Seconds(10)).status().message(),
              HasSubstr("has not started"));
  WorkerOptions wo;
  wo.coordinator = coordinator->endpoint();
  wo.job = job;
  auto worker = Worker::Create(wo);
  ASSERT_TRUE(worker.ok()) << worker.status();
  std::vector<float> grad(kDense, 1.0f);
  ASSERT_TRUE((*worker)->Push("w", grad).ok());
  ASSERT_TRUE((*worker)->AdvanceClock().ok());
  std::vector<float> now(kDense);
  ASSERT_TRUE((*worker)->Pull("w", now).ok());
  auto path = (*server)->Checkpoint(absl::Seconds(30));
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_THAT(*path, HasSubstr("clock-000000000001/shard-00000-of-00001.kcp"));
  EXPECT_EQ((*server)->stats().checkpoints_written, 1u);
  ASSERT_TRUE((*worker)->Shutdown().ok());
  ASSERT_TRUE(coordinator->Wait(absl::Seconds(30)).ok());
  ASSERT_TRUE((*server)->Wait(absl::Seconds(30)).ok());
  EXPECT_EQ((*server)->stats().checkpoints_written, 1u) << "checkpoint_at_end is off";

  // A job started from it pulls what the first one had.
  ClusterOptions resumed = Options(2);
  resumed.num_workers = 1;
  resumed.server.restore_from = (fs::path(*path).parent_path()).string();
  auto cluster = LocalCluster::Create(resumed);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::vector<float> back(kDense);
  ASSERT_TRUE((*cluster)->worker(0).Pull("w", back).ok());
  EXPECT_EQ(back, now);
  ASSERT_TRUE((*cluster)->Shutdown().ok());
}

TEST_F(CheckpointClusterTest, RestoresThatCannotBeDoneFailTheJobByName) {
  ClusterOptions first = Options(2);
  first.server.checkpoint_dir = dir_.string();
  ASSERT_TRUE(Train(first, 0, 1).ok());
  const fs::path file = dir_ / "clock-000000000001" / "shard-00001-of-00002.kcp";
  ASSERT_TRUE(fs::exists(file));

  // Another job: a table of another width.
  ClusterOptions other = Options(2);
  other.job.tables[1].row_width = 4;
  other.server.restore_from = dir_.string();
  auto mismatch = LocalCluster::Create(other);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_THAT(mismatch.status().message(), HasSubstr("cannot restore from"));
  EXPECT_THAT(mismatch.status().message(), HasSubstr("table 1 is 'emb' (sparse, size 0, row_width 3"));

  // A torn file.
  fs::resize_file(file, fs::file_size(file) - 10);
  ClusterOptions torn = Options(2);
  torn.server.restore_from = dir_.string();
  auto broken = LocalCluster::Create(torn);
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(broken.status().message(), HasSubstr("torn or corrupt"));
  EXPECT_THAT(broken.status().message(), HasSubstr("shard-00001-of-00002.kcp"));

  // Nothing there.
  ClusterOptions empty = Options(1);
  empty.server.restore_from = (dir_ / "nowhere").string();
  auto missing = LocalCluster::Create(empty);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("no checkpoint directory"));
}

// The coordinator goes away mid-job (docs/durability.md, "Coordinator death"): the server
// and the worker end with an error naming it (here it stops and says so; one that dies
// silently is noticed within 20 heartbeat intervals, FaultTest's partitions), and the
// server's checkpoint remains for a new job to start from.
TEST_F(CheckpointClusterTest, ACoordinatorGoneEndsEveryNodeByNameAndTheCheckpointRemains) {
  const absl::Duration beat = absl::Milliseconds(50);
  CoordinatorOptions co;
  co.num_servers = 1;
  co.num_workers = 1;
  co.job = Options(1).job;
  co.listen = "tcp://127.0.0.1:0";
  auto coordinator = Coordinator::Create(co);
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();
  ServerOptions so;
  so.coordinator = (*coordinator)->endpoint();
  so.heartbeat_interval = beat;
  so.checkpoint_dir = dir_.string();
  so.checkpoint_sync = false;
  auto server = Server::Create(so);
  ASSERT_TRUE(server.ok()) << server.status();
  WorkerOptions wo;
  wo.coordinator = (*coordinator)->endpoint();
  wo.job = *co.job;
  wo.heartbeat_interval = beat;
  auto worker = Worker::Create(wo);
  ASSERT_TRUE(worker.ok()) << worker.status();
  std::vector<float> grad(kDense, 1.0f);
  ASSERT_TRUE((*worker)->Push("w", grad).ok());
  ASSERT_TRUE((*worker)->AdvanceClock().ok());
  std::vector<float> before(kDense);
  ASSERT_TRUE((*worker)->Pull("w", before).ok());
  ASSERT_TRUE((*server)->Checkpoint(absl::Seconds(30)).ok());

  coordinator->reset();
  const absl::Status ended = (*server)->Wait(absl::Seconds(30));
  EXPECT_FALSE(ended.ok());
  EXPECT_THAT(ended.message(), HasSubstr("coordinator"));
  CallOptions within;
  within.deadline = absl::Now() + absl::Seconds(30);
  const absl::Status barrier = (*worker)->Barrier(within);
  EXPECT_FALSE(barrier.ok());
  EXPECT_THAT(barrier.message(), HasSubstr("coordinator"));
  worker->reset();
  (*server)->Shutdown();

  // What the server had written is there to start again from.
  ClusterOptions again = Options(1);
  again.num_workers = 1;
  again.server.restore_from = dir_.string();
  auto cluster = LocalCluster::Create(again);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::vector<float> back(kDense);
  ASSERT_TRUE((*cluster)->worker(0).Pull("w", back).ok());
  EXPECT_EQ(back, before);
  ASSERT_TRUE((*cluster)->Shutdown().ok());
}

}  // namespace
}  // namespace kairos
