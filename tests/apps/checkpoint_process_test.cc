// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos-server's durability flags as a process (docs/durability.md): SIGUSR1 writes a
// checkpoint and the server goes on; the job's end writes the last one; a new job started
// with --restore-from serves the saved values; a server with --state-dir killed by SIGKILL
// and started again rejoins its job with nothing lost. The coordinator and the worker run in this
// test; the server is the real program, its log read from a pipe.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "apps/fd_util.h"
#include "apps/process_group.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "tests/apps/node_process.h"

namespace kairos::launch {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr uint64_t kSize = 1000;

JobConfig Job() {
  JobConfig job;
  job.policy = "bsp";
  job.chunk_elements = 256;
  job.tables.push_back({"w", kSize, Initializer::Constant(1.0f), {"momentum", 0.1f}});
  return job;
}

// The server program with its output on a pipe (tests/apps/node_process.h, which says what
// `file_blocks` does).
class ServerProcess : public NodeProcess {
 public:
  ServerProcess(const std::string& coordinator, const std::vector<std::string>& extra,
                int file_blocks = 0)
      : NodeProcess(KAIROS_SERVER_PATH, Args(coordinator, extra), file_blocks) {}

 private:
  static std::vector<std::string> Args(const std::string& coordinator,
                                       const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--coordinator", coordinator, "--log-level", "info"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
};

// The coordinator of the job: one server, one worker, over tcp.
CoordinatorOptions CoordinatorOf() {
  CoordinatorOptions co;
  co.listen = "tcp://127.0.0.1:0";
  co.num_servers = 1;
  co.num_workers = 1;
  co.job = Job();
  return co;
}

std::unique_ptr<Coordinator> StartCoordinator(const CoordinatorOptions& co = CoordinatorOf()) {
  auto c = Coordinator::Create(co);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *std::move(c) : nullptr;
}

std::unique_ptr<Worker> StartWorker(const Coordinator& c) {
  WorkerOptions wo;
  wo.coordinator = c.endpoint();
  wo.job = Job();
  wo.join_timeout = absl::Seconds(30);
  auto w = Worker::Create(wo);
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? *std::move(w) : nullptr;
}

TEST(CheckpointProcessTest, Sigusr1AndTheEndWriteCheckpointsAndRestoreFromThemWorks) {
  const fs::path dir = fs::path(::testing::TempDir()) / "kairos_ckpt_process";
  fs::remove_all(dir);
  std::vector<float> saved(kSize);
  {
    std::unique_ptr<Coordinator> coordinator = StartCoordinator();
    ASSERT_NE(coordinator, nullptr);
    ServerProcess server(coordinator->endpoint(), {"--checkpoint-dir", dir.string()});
    ASSERT_TRUE(server.WaitFor("listening on"));
    std::unique_ptr<Worker> worker = StartWorker(*coordinator);
    ASSERT_NE(worker, nullptr);
    std::vector<float> grad(kSize);
    for (uint64_t i = 0; i < kSize; ++i) grad[i] = 0.01f * static_cast<float>(i % 7);
    for (int t = 0; t < 2; ++t) {
      ASSERT_TRUE(worker->Push("w", grad).ok());
      ASSERT_TRUE(worker->AdvanceClock().ok());
    }
    // A pull travels behind the clocks: once answered, the server has clock 2.
    std::vector<float> now(kSize);
    ASSERT_TRUE(worker->Pull("w", now).ok());
    ASSERT_EQ(::kill(server.pid(), SIGUSR1), 0);
    ASSERT_TRUE(server.WaitFor("checkpoint of clock 2 written to"));
    EXPECT_TRUE(fs::exists(dir / "clock-000000000002" / "shard-00000-of-00001.kcp"));
    // The server goes on serving after the signal.
    ASSERT_TRUE(worker->Push("w", grad).ok());
    ASSERT_TRUE(worker->AdvanceClock().ok());
    ASSERT_TRUE(worker->Pull("w", saved).ok());
    ASSERT_TRUE(worker->Shutdown().ok());
    ASSERT_TRUE(server.WaitFor("checkpoint of clock 3 written to"));  // the last one
    ASSERT_TRUE(coordinator->Wait(absl::Seconds(30)).ok());
    EXPECT_EQ(server.Exit(), 0) << server.output();
  }
  {
    std::unique_ptr<Coordinator> coordinator = StartCoordinator();
    ASSERT_NE(coordinator, nullptr);
    ServerProcess server(coordinator->endpoint(),
                         {"--restore-from", dir.string(), "--no-checkpoint-at-end"});
    ASSERT_TRUE(server.WaitFor("listening on"));
    std::unique_ptr<Worker> worker = StartWorker(*coordinator);
    ASSERT_NE(worker, nullptr);
    ASSERT_TRUE(server.WaitFor("restored from"));
    EXPECT_THAT(server.output(), HasSubstr("clock 3"));
    std::vector<float> back(kSize);
    ASSERT_TRUE(worker->Pull("w", back).ok());
    EXPECT_EQ(back, saved);
    ASSERT_TRUE(worker->Shutdown().ok());
    ASSERT_TRUE(coordinator->Wait(absl::Seconds(30)).ok());
    EXPECT_EQ(server.Exit(), 0) << server.output();
  }
  fs::remove_all(dir);
}

// kill -9 of a kairos-server with --state-dir mid-run, and the same command started again:
// it replays its update log and rejoins, the worker sends it again what it had not
// answered, and the job ends with exactly the values of the run without the fault.
std::vector<float> RunWithServerProcess(const fs::path& state, bool kill) {
  CoordinatorOptions co = CoordinatorOf();
  co.heartbeat_timeout = absl::Seconds(2);
  co.rejoin_silence = absl::Milliseconds(200);
  co.server_restart_timeout = absl::Seconds(30);
  std::unique_ptr<Coordinator> coordinator = StartCoordinator(co);
  if (coordinator == nullptr) return {};
  const std::vector<std::string> flags = {"--state-dir", state.string(), "--shard", "0"};
  auto server = std::make_unique<ServerProcess>(coordinator->endpoint(), flags);
  EXPECT_TRUE(server->WaitFor("listening on"));
  std::unique_ptr<Worker> worker = StartWorker(*coordinator);
  EXPECT_NE(worker, nullptr);
  if (worker == nullptr) return {};
  std::vector<float> grad(kSize);
  for (int t = 0; t < 6; ++t) {
    for (uint64_t i = 0; i < kSize; ++i) grad[i] = 0.01f * static_cast<float>((i + t) % 7);
    EXPECT_TRUE(worker->Push("w", grad).ok());
    EXPECT_TRUE(worker->AdvanceClock().ok());
    if (kill && t == 2) {
      // The clock just sent may or may not have reached the server's log.
      EXPECT_EQ(::kill(server->pid(), SIGKILL), 0);
      EXPECT_EQ(server->Exit(), -1);  // killed by a signal
      server = std::make_unique<ServerProcess>(coordinator->endpoint(), flags);
      EXPECT_TRUE(server->WaitFor("listening on"));
    }
  }
  std::vector<float> values(kSize);
  EXPECT_TRUE(worker->Pull("w", values).ok());
  if (kill) {
    EXPECT_TRUE(server->WaitFor("replayed"));
    EXPECT_EQ(coordinator->stats().servers_restarted, 1u);
  }
  EXPECT_TRUE(worker->Shutdown().ok());
  EXPECT_TRUE(coordinator->Wait(absl::Seconds(30)).ok());
  EXPECT_EQ(server->Exit(), 0) << server->output();
  return values;
}

TEST(CheckpointProcessTest, AServerKilledWithSigkillAndStartedAgainLosesNothing) {
  const fs::path dir = fs::path(::testing::TempDir()) / "kairos_restart_process";
  fs::remove_all(dir);
  const std::vector<float> clean = RunWithServerProcess(dir / "clean", /*kill=*/false);
  const std::vector<float> faulty = RunWithServerProcess(dir / "faulty", /*kill=*/true);
  ASSERT_EQ(clean.size(), kSize);
  EXPECT_EQ(faulty, clean);
  fs::remove_all(dir);
}

// A server whose update log cannot be written (here a file size limit; a full disk fails
// the same way) stops, and says why to the coordinator: the job ends with its error at once,
// and the worker's next call fails with it (the server, the file, the errno), long before
// the heartbeat timeout could have noticed the server's silence.
TEST(CheckpointProcessTest, AServerWhoseLogCannotBeWrittenEndsTheJobAtOnceWithItsError) {
  const fs::path dir = fs::path(::testing::TempDir()) / "kairos_log_write_fails";
  fs::remove_all(dir);
  CoordinatorOptions co = CoordinatorOf();
  co.heartbeat_timeout = absl::Minutes(2);
  std::unique_ptr<Coordinator> coordinator = StartCoordinator(co);
  ASSERT_NE(coordinator, nullptr);
  ServerProcess server(coordinator->endpoint(), {"--state-dir", dir.string(), "--shard", "0"},
                       /*file_blocks=*/40);  // 20 KiB: a few pushes of 4 KB
  ASSERT_TRUE(server.WaitFor("listening on"));
  std::unique_ptr<Worker> worker = StartWorker(*coordinator);
  ASSERT_NE(worker, nullptr);
  std::vector<float> grad(kSize, 0.01f);
  absl::Status failed;
  const absl::Time start = absl::Now();
  for (int t = 0; t < 100 && failed.ok(); ++t) {
    failed = worker->Push("w", grad);
    if (failed.ok()) failed = worker->AdvanceClock();
  }
  const absl::Duration took = absl::Now() - start;
  ASSERT_FALSE(failed.ok()) << "100 pushes of 4 KB fit in a 20 KiB file";
  EXPECT_LT(took, absl::Seconds(30)) << "the job ended by the heartbeat timeout, not at once";
  EXPECT_THAT(failed.message(), HasSubstr("server 0: update log"));
  EXPECT_THAT(failed.message(), HasSubstr("shard-00000"));
  EXPECT_THAT(failed.message(), HasSubstr(std::strerror(EFBIG)));
  // The job ends with the server's error, and every later call fails with it.
  const absl::Status ended = coordinator->Wait(absl::Seconds(30));
  EXPECT_EQ(ended.code(), failed.code());
  EXPECT_THAT(failed.message(), HasSubstr(ended.message()));
  EXPECT_EQ(worker->AdvanceClock(), ended);
  EXPECT_TRUE(server.WaitFor(std::strerror(EFBIG)));
  EXPECT_EQ(server.Exit(), 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kairos::launch
