// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Multi-process jobs through the project's own launcher: the real kairos-launch starts the
// real kairos-coordinator and kairos-server next to it and W copies of a training program.

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/apps/run_program.h"
#include "tests/common/scratch_dir.h"

namespace kairos::launch {
namespace {

using ::testing::HasSubstr;

using LaunchResult = testing::ProgramRun;

// kairos-launch with `args`, to its end (at most 120 s).
LaunchResult Launch(const std::vector<std::string>& args) {
  return testing::RunProgram(KAIROS_LAUNCH_PATH, args, absl::Seconds(120));
}

TEST(MultiProcessTest, BspJobOverTcpMatchesTheSequentialComputation) {
  LaunchResult run = Launch({"-s", "2", "-w", "3", "--", KAIROS_TRAINING_PATH, "--iterations", "5"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  for (int r = 0; r < 3; ++r) EXPECT_THAT(run.output, HasSubstr(absl::StrCat("rank ", r, " ok")));
}

TEST(MultiProcessTest, BspJobOverIpc) {
  LaunchResult run = Launch({"-s", "1", "-w", "2", "--transport", "ipc", "--", KAIROS_TRAINING_PATH});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("rank 1 ok"));
}

// With --keys the coordinator and servers get --keys and the workers KAIROS_KEYS: every
// connection of the job is CURVE (a process without the keys could not have joined).
TEST(MultiProcessTest, BspJobWithCurveKeys) {
  testing::UniqueTempDir temp("kairos-multiprocess-keys-");
  ASSERT_TRUE(temp.ok());
  const std::string& dir = temp.path();
  const std::string keys = dir + "/keys";
  ASSERT_EQ(std::system((std::string(KAIROS_KEYGEN_PATH) + " " + keys + " > /dev/null").c_str()),
            0);
  LaunchResult run = Launch({"-s", "2", "-w", "2", "--keys", keys, "--", KAIROS_TRAINING_PATH});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  for (int r = 0; r < 2; ++r) EXPECT_THAT(run.output, HasSubstr(absl::StrCat("rank ", r, " ok")));
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("not encrypted")));
}

TEST(MultiProcessTest, FailingWorkerStopsTheWholeJobWithAnError) {
  LaunchResult run = Launch({"-s", "2", "-w", "3", "--grace", "5", "--", KAIROS_TRAINING_PATH,
                    "--iterations", "6", "--fail-rank", "1"});
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("rank 1 failing on purpose"));
  EXPECT_THAT(run.output, HasSubstr("worker 1"));
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("rank 0 ok")));
}

// A worker that crashes once (after its read at clock 2) is started again with its rank,
// rejoins the running job in its predecessor's place at clock 2, and the job's every read
// still equals the sequential computation with all three workers.
TEST(MultiProcessTest, ARestartedWorkerRejoinsAndTheJobSucceeds) {
  LaunchResult run = Launch({"-s", "2", "-w", "3", "--restart-workers", "1", "--grace", "5",
                             "--", KAIROS_TRAINING_PATH, "--iterations", "6",
                             "--fail-once-rank", "1"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("rank 1 failing once on purpose"));
  EXPECT_THAT(run.output, HasSubstr("worker 1"));
  EXPECT_THAT(run.output, HasSubstr("starting it again (restart 1)"));
  EXPECT_THAT(run.output, HasSubstr("rank 1 rejoined at clock 2"));
  for (int r = 0; r < 3; ++r) EXPECT_THAT(run.output, HasSubstr(absl::StrCat("rank ", r, " ok")));
}

// Restarts are counted per worker: one that fails again past them stops the job.
TEST(MultiProcessTest, AWorkerThatFailsPastItsRestartsStopsTheJob) {
  LaunchResult run = Launch({"-s", "1", "-w", "2", "--restart-workers", "1", "--grace", "5",
                             "--", KAIROS_TRAINING_PATH, "--iterations", "6", "--fail-rank",
                             "1"});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("starting it again (restart 1)"));
  EXPECT_THAT(run.output, HasSubstr("; stopping the job"));
}

// With --tolerate-worker-failures a worker that always fails does not stop the job: the
// coordinator declares it dead (after --heartbeat-timeout), the others finish, and the
// job, every server and the launcher succeed.
TEST(MultiProcessTest, ToleratedWorkerFailureLetsTheOthersSucceed) {
  LaunchResult run = Launch({"-s", "2", "-w", "3", "--tolerate-worker-failures",
                             "--heartbeat-timeout", "2", "--grace", "5", "--",
                             KAIROS_TRAINING_PATH, "--iterations", "6", "--fail-rank", "1",
                             "--check", "0"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("rank 1 failing on purpose"));
  EXPECT_THAT(run.output, HasSubstr("the job goes on without it"));
  EXPECT_THAT(run.output, HasSubstr("rank 0 ok"));
  EXPECT_THAT(run.output, HasSubstr("rank 2 ok"));
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("rank 1 ok")));
}

// --state-dir and --restart-servers (docs/durability.md): a server killed with SIGKILL in
// the middle of a BSP job is started again by the launcher, replays its update log and
// rejoins; every worker's every read still equals the sequential computation.
TEST(MultiProcessTest, AKilledServerIsStartedAgainAndTheJobLosesNothing) {
  testing::UniqueTempDir temp("kairos-multiprocess-state-");
  ASSERT_TRUE(temp.ok());
  const std::string& dir = temp.path();
  LaunchResult run = Launch({"-s", "2", "-w", "2", "--state-dir", dir, "--restart-servers",
                             "1", "--grace", "5", "--", KAIROS_TRAINING_PATH, "--iterations",
                             "6", "--kill-server-1-in", dir});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("rank 0 killed server 1"));
  EXPECT_THAT(run.output, HasSubstr("server 1"));
  EXPECT_THAT(run.output, HasSubstr("starting it again (restart 1)"));
  for (int r = 0; r < 2; ++r) EXPECT_THAT(run.output, HasSubstr(absl::StrCat("rank ", r, " ok")));
  EXPECT_TRUE(std::filesystem::exists(dir + "/shard-00001.kul"));
}

// The coordinator keeps the job's state in --state-dir: killed with SIGKILL in the middle
// of a BSP job (2 servers, 3 workers), it is started again by kairos-launch and resumes the
// job; the servers and workers train on meanwhile, bind to the new process, pass a barrier
// whose calls reached the coordinator while it was away or the new one, and every read
// still equals the sequential computation (the values of the run without the fault).
TEST(MultiProcessTest, AKilledCoordinatorIsStartedAgainAndResumesTheJob) {
  testing::UniqueTempDir temp("kairos-multiprocess-coordinator-");
  ASSERT_TRUE(temp.ok());
  const std::string& dir = temp.path();
  LaunchResult run = Launch({"-s", "2", "-w", "3", "--state-dir", dir, "--restart-coordinator", "1",
                             "--grace", "5", "--", KAIROS_TRAINING_PATH, "--iterations", "8",
                             "--kill-coordinator-in", dir, "--barrier-at", "4"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("rank 0 killed the coordinator"));
  EXPECT_THAT(run.output, HasSubstr("coordinator (pid"));
  EXPECT_THAT(run.output, HasSubstr("starting it again (restart 1)"));
  EXPECT_THAT(run.output, HasSubstr("resumed job"));
  for (int r = 0; r < 3; ++r) EXPECT_THAT(run.output, HasSubstr(absl::StrCat("rank ", r, " ok")));
  EXPECT_TRUE(std::filesystem::exists(dir + "/coordinator.state"));
}

// A launch is a new job: a coordinator state an earlier launch left in --state-dir (here a
// file no coordinator could resume from) is not resumed.
TEST(MultiProcessTest, ALaunchStartsANewJobWhateverStateTheDirectoryHolds) {
  testing::UniqueTempDir temp("kairos-multiprocess-stale-");
  ASSERT_TRUE(temp.ok());
  const std::string& dir = temp.path();
  {
    std::ofstream stale(dir + "/coordinator.state");
    stale << "KCOST001 left by an earlier job";
  }
  LaunchResult run = Launch(
      {"-s", "1", "-w", "2", "--state-dir", dir, "--", KAIROS_TRAINING_PATH, "--iterations", "3"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  for (int r = 0; r < 2; ++r) EXPECT_THAT(run.output, HasSubstr(absl::StrCat("rank ", r, " ok")));
}

TEST(MultiProcessTest, RestartCoordinatorNeedsAStateDirectory) {
  LaunchResult run = Launch({"-s", "1", "-w", "1", "--restart-coordinator", "1", "--",
                             KAIROS_TRAINING_PATH});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("--restart-coordinator needs --state-dir"));
}

TEST(MultiProcessTest, RestartServersNeedsAStateDirectory) {
  LaunchResult run = Launch({"-s", "1", "-w", "1", "--restart-servers", "1", "--",
                             KAIROS_TRAINING_PATH});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("--restart-servers needs --state-dir"));
}

// --checkpoint-dir and --restore-from go to every server (docs/durability.md): a job of 3
// iterations leaves its last checkpoint at clock 3; a job started from it names its own
// from there on (clock 3 + 3 = 6), both shards' files each time.
TEST(MultiProcessTest, CheckpointFlagsReachEveryServerAndAJobResumesFromThem) {
  testing::UniqueTempDir temp("kairos-multiprocess-ckpt-");
  ASSERT_TRUE(temp.ok());
  const std::string& dir = temp.path();
  const std::string ckpt = dir + "/ckpt";
  LaunchResult first = Launch({"-s", "2", "-w", "2", "--checkpoint-dir", ckpt, "--",
                               KAIROS_TRAINING_PATH, "--iterations", "3"});
  EXPECT_EQ(first.exit_code, 0) << first.output;
  for (const char* shard : {"shard-00000-of-00002.kcp", "shard-00001-of-00002.kcp"}) {
    EXPECT_TRUE(std::filesystem::exists(ckpt + "/clock-000000000003/" + shard)) << shard;
  }
  // The restored values are not the sequential computation from zero: --check 0.
  LaunchResult second = Launch({"-s", "2", "-w", "2", "--restore-from", ckpt,
                                "--checkpoint-dir", ckpt, "--", KAIROS_TRAINING_PATH,
                                "--iterations", "3", "--check", "0"});
  EXPECT_EQ(second.exit_code, 0) << second.output;
  for (const char* shard : {"shard-00000-of-00002.kcp", "shard-00001-of-00002.kcp"}) {
    EXPECT_TRUE(std::filesystem::exists(ckpt + "/clock-000000000006/" + shard)) << shard;
  }
  // A restore from nowhere fails the job, naming the directory.
  LaunchResult missing = Launch({"-s", "1", "-w", "1", "--checkpoint-every-clocks", "2", "--",
                                 KAIROS_TRAINING_PATH});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.output, HasSubstr("--checkpoint-every-clocks needs --checkpoint-dir"));
}

}  // namespace
}  // namespace kairos::launch
