// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Servers that crash and restart into their running job (docs/durability.md, "Server
// restarts"): under BSP with 2 servers and 2 workers, a server killed mid-run (its object
// destroyed without a word to anyone, as a kill -9 leaves it) and started again with the
// same state directory and shard replays its update log and rejoins; the workers send it
// again what it had not answered, each push is applied exactly once, and the job ends
// with exactly the values of a run without the fault. A server that does not come back
// ends the job with an error naming it.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
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
using testing::ReadAll;
using Values = testing::TableValues;

constexpr int kIterations = 8;
const absl::Duration kBeat = absl::Milliseconds(20);

JobConfig Job() { return testing::TwoTableJob(); }

// One iteration of worker `w` at clock t: a dense push, a sparse push, the clock, and with
// `pull` a read of the dense table at the new clock (BSP: once the round is applied; it
// changes no value, and leaves the shards without an open round for a moment, when the
// update log can take a base).
absl::Status Step(Worker& w, int t, bool pull) {
  KAIROS_RETURN_IF_ERROR(testing::PushIteration(w, t));
  if (!pull) return absl::OkStatus();
  std::vector<float> read(kDense);
  return w.Pull("w", read);
}

class ServerRestartTest : public ::testing::Test {
 protected:

  CoordinatorOptions CoordinatorOpts(absl::Duration restart_timeout) const {
    CoordinatorOptions co;
    co.num_servers = 2;
    co.num_workers = 2;
    co.job = Job();
    co.heartbeat_timeout = absl::Seconds(2);
    co.rejoin_silence = absl::Milliseconds(100);
    co.server_restart_timeout = restart_timeout;
    return co;
  }

  ServerOptions ServerOpts(const Coordinator& c, int shard,
                           ServerOptions::LogSync sync = ServerOptions::LogSync::kProcess) const {
    ServerOptions so;
    so.log_rebase_bytes = rebase_bytes_;
    so.coordinator = c.endpoint();
    so.heartbeat_interval = kBeat;
    if (keep_logs_) so.state_dir = (dir_ / "state").string();
    so.shard = shard;
    so.log_sync = sync;
    return so;
  }

  WorkerOptions WorkerOpts(const Coordinator& c, int rank) const {
    WorkerOptions wo;
    wo.coordinator = c.endpoint();
    wo.job = Job();
    wo.rank = rank;
    wo.heartbeat_interval = kBeat;
    wo.request_timeout = absl::Seconds(60);
    return wo;
  }

  // Runs the job; after rank 0's iteration `kill_after` (-1: never), `fault` runs on this
  // thread while the workers go on. Rank 0 reads every value at the end.
  absl::StatusOr<Values> RunJob(absl::Duration restart_timeout, int kill_after,
                                const std::function<void(std::vector<std::unique_ptr<Server>>&,
                                                         const Coordinator&)>& fault,
                                ServerOptions::LogSync sync = ServerOptions::LogSync::kProcess,
                                std::vector<ServerStats>* stats = nullptr) {
    auto coordinator = Coordinator::Create(CoordinatorOpts(restart_timeout));
    if (!coordinator.ok()) return coordinator.status();
    std::vector<std::unique_ptr<Server>> servers;
    for (int s = 0; s < 2; ++s) {
      auto server = Server::Create(ServerOpts(**coordinator, s, sync));
      if (!server.ok()) return server.status();
      servers.push_back(*std::move(server));
    }
    // Rank 0 waits after its iteration `kill_after` until the fault is done, so that the
    // fault always lands mid-run (the job cannot end before it, however late this thread
    // is scheduled); rank 1 goes on meanwhile.
    absl::Notification reached;
    absl::Notification faulted;
    std::vector<absl::Status> results(2);
    Values values;
    std::vector<std::thread> threads;
    for (int rank = 0; rank < 2; ++rank) {
      threads.emplace_back([&, rank] {
        auto worker = Worker::Create(WorkerOpts(**coordinator, rank));
        if (!worker.ok()) {
          results[rank] = worker.status();
          if (rank == 0) reached.Notify();
          return;
        }
        absl::Status s;
        for (int t = 0; t < kIterations && s.ok(); ++t) {
          s = Step(**worker, t, /*pull=*/rebase_bytes_ > 0);
          if (rank == 0 && t == kill_after) {
            reached.Notify();
            if (!faulted.WaitForNotificationWithTimeout(absl::Seconds(60))) {
              s = absl::DeadlineExceededError("the fault did not happen within 60 s");
            }
          }
        }
        if (rank == 0 && !reached.HasBeenNotified()) reached.Notify();
        if (s.ok() && rank == 0) {
          absl::StatusOr<Values> v = ReadAll(**worker);
          if (v.ok()) {
            values = *std::move(v);
          } else {
            s = v.status();
          }
        }
        if (s.ok()) s = (*worker)->Shutdown();
        results[rank] = s;
      });
    }
    if (kill_after >= 0) {
      reached.WaitForNotification();
      fault(servers, **coordinator);
      faulted.Notify();
    }
    for (std::thread& t : threads) t.join();
    for (const absl::Status& s : results) {
      if (!s.ok()) return s;
    }
    if (stats != nullptr) {
      for (const auto& server : servers) stats->push_back(server->stats());
    }
    absl::Status job = (*coordinator)->Wait(absl::Seconds(60));
    if (!job.ok()) return job;
    return values;
  }

  testing::ScratchDir scratch_{"kairos_restart_"};
  const fs::path dir_ = scratch_.path();
  uint64_t rebase_bytes_ = 0;  // ServerOptions::log_rebase_bytes of every server
  bool keep_logs_ = true;      // every server has a state_dir
};

TEST_F(ServerRestartTest, AKilledServerRestartedGivesExactlyTheValuesOfARunWithoutTheFault) {
  absl::StatusOr<Values> clean =
      RunJob(absl::Seconds(30), -1, [](auto&, const Coordinator&) {});
  ASSERT_TRUE(clean.ok()) << clean.status();
  fs::remove_all(dir_);

  for (const auto& [sync, rebase] :
       std::vector<std::pair<ServerOptions::LogSync, uint64_t>>{
           {ServerOptions::LogSync::kProcess, 0},
           {ServerOptions::LogSync::kMachine, 0},
           {ServerOptions::LogSync::kProcess, 1}}) {
    SCOPED_TRACE(::testing::Message()
                 << (sync == ServerOptions::LogSync::kProcess ? "log_sync process"
                                                              : "log_sync machine")
                 << ", log_rebase_bytes " << rebase);
    rebase_bytes_ = rebase;
    fs::remove_all(dir_);
    std::vector<ServerStats> stats;
    absl::StatusOr<Values> faulty = RunJob(
        absl::Seconds(30), /*kill_after=*/3,
        [&, sync = sync](std::vector<std::unique_ptr<Server>>& servers, const Coordinator& c) {
          servers[1].reset();  // gone, telling nobody
          auto again = Server::Create(ServerOpts(c, 1, sync));
          ASSERT_TRUE(again.ok()) << again.status();
          servers[1] = *std::move(again);
        },
        sync, &stats);
    ASSERT_TRUE(faulty.ok()) << faulty.status();
    EXPECT_EQ(faulty->dense, clean->dense);
    EXPECT_EQ(faulty->rows, clean->rows);
    ASSERT_EQ(stats.size(), 2u);
    if (rebase == 0) {
      EXPECT_GT(stats[1].log_replayed, 0u) << "the restarted server replayed nothing";
    }
    EXPECT_EQ(stats[0].log_replayed, 0u);
    if (rebase > 0) {
      EXPECT_GT(stats[0].log_rebases, 0u) << "no base was taken";
    }
    EXPECT_GT(stats[0].log_records, 0u);
    EXPECT_EQ(stats[1].log_torn_bytes, 0u);
    if (sync == ServerOptions::LogSync::kMachine) {
      EXPECT_GT(stats[0].log_syncs, 0u);
    } else {
      EXPECT_EQ(stats[0].log_syncs, 0u);
    }
  }
}

TEST_F(ServerRestartTest, AServerThatDoesNotComeBackEndsTheJobByName) {
  absl::StatusOr<Values> result = RunJob(
      absl::Milliseconds(600), /*kill_after=*/1,
      [](std::vector<std::unique_ptr<Server>>& servers, const Coordinator&) {
        servers[0].reset();
      });
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("server 0"));
  EXPECT_THAT(result.status().message(), HasSubstr("did not restart within"));
}

// Durability is the server's switch: without an update log (and without a restart timeout)
// a dead server ends the job, saying what it lacked. The tests above restart servers that
// keep one, with the timeout set; AServerThatKeepsALogIsWaitedForWithoutACoordinatorOption
// (tests/coordinator/handler_test.cc) covers the default wait.
TEST_F(ServerRestartTest, WithoutALogADeadServerEndsTheJob) {
  keep_logs_ = false;
  absl::StatusOr<Values> result = RunJob(
      absl::ZeroDuration(), /*kill_after=*/1,
      [](std::vector<std::unique_ptr<Server>>& servers, const Coordinator&) {
        servers[1].reset();
      });
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("server 1"));
  EXPECT_THAT(result.status().message(), HasSubstr("the job cannot go on"));
  EXPECT_THAT(result.status().message(), HasSubstr("keeps no update log"));
}

}  // namespace
}  // namespace kairos
