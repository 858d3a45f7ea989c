// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos-coordinator with --state-dir as a process (docs/durability.md, "Coordinator
// restarts"): killed with SIGKILL in the middle of a BSP job and started again a second
// later with the same command, it resumes the job; the servers and workers (in this test,
// over tcp) go on meanwhile and bind to the new process, and the job ends with exactly the
// values of the run without the fault.

#include <signal.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "tests/apps/node_process.h"
#include "tests/common/scratch_dir.h"

namespace kairos::launch {
namespace {

constexpr uint64_t kSize = 1000;
constexpr int kServers = 2;
constexpr int kWorkers = 3;
constexpr int kIterations = 8;
constexpr char kListening[] = "kairos-coordinator listening on ";

JobConfig Job() {
  JobConfig job;
  job.policy = "bsp";
  job.chunk_elements = 128;
  job.tables.push_back({"w", kSize, Initializer::Constant(1.0f), {"momentum", 0.125f}});
  return job;
}

// Gradients of a few bits each: their sums are exact in any order.
float Gradient(int rank, int t, uint64_t i) {
  return static_cast<float>((rank + 1) * ((t + static_cast<int>(i)) % 5)) / 8.0f;
}

std::unique_ptr<NodeProcess> StartCoordinator(const std::string& state_dir) {
  auto c = std::make_unique<NodeProcess>(
      KAIROS_COORDINATOR_PATH,
      std::vector<std::string>{"--listen", "tcp://127.0.0.1:0", "--servers", absl::StrCat(kServers),
                               "--workers", absl::StrCat(kWorkers), "--state-dir", state_dir,
                               "--log-level", "info"});
  EXPECT_TRUE(c->WaitFor(kListening));
  return c;
}

// The job's values at its end; with `kill`, the coordinator is killed (SIGKILL) once rank
// 0 has pushed at clock 2 (and the job goes on), and started again a second later with the
// same command. Every worker calls Barrier at clock 5.
std::vector<float> RunJob(const std::string& state_dir, bool kill) {
  std::unique_ptr<NodeProcess> coordinator = StartCoordinator(state_dir);
  const std::string endpoint = coordinator->After(kListening);
  std::vector<std::unique_ptr<Server>> servers;
  for (int s = 0; s < kServers; ++s) {
    ServerOptions so;
    so.coordinator = endpoint;
    so.listen = "tcp://127.0.0.1:0";
    auto server = Server::Create(so);
    EXPECT_TRUE(server.ok()) << server.status();
    if (!server.ok()) return {};
    servers.push_back(*std::move(server));
  }
  std::vector<float> values(kSize);
  absl::Mutex mu;
  std::vector<std::string> errors;
  absl::Notification pushed_at_2;
  std::vector<std::thread> threads;
  for (int r = 0; r < kWorkers; ++r) {
    threads.emplace_back([&, r] {
      const auto fail = [&](const absl::Status& s) {
        absl::MutexLock lock(&mu);
        errors.push_back(absl::StrCat("rank ", r, ": ", s.ToString()));
      };
      WorkerOptions wo;
      wo.coordinator = endpoint;
      wo.rank = r;
      wo.job = Job();
      auto worker = Worker::Create(wo);
      if (!worker.ok()) return fail(worker.status());
      Worker& w = **worker;
      std::vector<float> grad(kSize);
      for (int t = 0; t < kIterations; ++t) {
        if (t == 5) {
          if (absl::Status s = w.Barrier(); !s.ok()) return fail(s);
        }
        for (uint64_t i = 0; i < kSize; ++i) grad[i] = Gradient(r, t, i);
        if (absl::Status s = w.Push("w", grad); !s.ok()) return fail(s);
        if (absl::Status s = w.AdvanceClock(); !s.ok()) return fail(s);
        if (r == 0 && t == 2) pushed_at_2.Notify();
      }
      std::vector<float> read(kSize);
      if (absl::Status s = w.Pull("w", read); !s.ok()) return fail(s);
      if (r == 0) values = read;
      if (absl::Status s = w.Shutdown(); !s.ok()) return fail(s);
    });
  }
  if (kill) {
    // Here, not in a worker's thread: a child started by a thread is killed when that
    // thread ends (tests/apps/node_process.h).
    pushed_at_2.WaitForNotification();
    EXPECT_EQ(::kill(coordinator->pid(), SIGKILL), 0);
    EXPECT_EQ(coordinator->Exit(), -1);  // killed by the signal
    absl::SleepFor(absl::Seconds(1));    // the fault: a second without a coordinator
    coordinator = StartCoordinator(state_dir);
    EXPECT_TRUE(coordinator->WaitFor("resumed job"));
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors) ADD_FAILURE() << e;
  for (auto& server : servers) EXPECT_TRUE(server->Wait(absl::Seconds(30)).ok());
  if (kill) {
    EXPECT_TRUE(coordinator->WaitFor("is bound again"));
  }
  EXPECT_EQ(coordinator->Exit(), 0) << coordinator->output();
  return values;
}

TEST(CoordinatorProcessTest, ACoordinatorKilledAndStartedAgainResumesTheJobLosingNothing) {
  testing::UniqueTempDir dir("kairos-coordinator-process-");
  ASSERT_TRUE(dir.ok());
  const std::vector<float> clean = RunJob(dir.path() + "/clean", /*kill=*/false);
  const std::vector<float> faulty = RunJob(dir.path() + "/faulty", /*kill=*/true);
  ASSERT_EQ(clean.size(), kSize);
  EXPECT_NE(clean, std::vector<float>(kSize, 1.0f));  // the job did train
  EXPECT_EQ(faulty, clean);
}

}  // namespace
}  // namespace kairos::launch
