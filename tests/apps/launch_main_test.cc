// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the kairos-launch program (KAIROS_LAUNCH_PATH): its command line, and its
// supervision of a job whose coordinator and servers are stand-in shell scripts (through
// KAIROS_BIN_DIR), so that the launcher is tested on its own. Jobs with the real
// kairos-coordinator and kairos-server belong to the cluster tests.

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "apps/fd_util.h"
#include "apps/process_group.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/scratch_dir.h"

#ifndef KAIROS_LAUNCH_PATH
#error "KAIROS_LAUNCH_PATH must name the kairos-launch binary"
#endif

namespace kairos::launch {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Every launcher run ends well before this; it turns a hang into a failure.
constexpr absl::Duration kSafetyDeadline = absl::Seconds(60);

// Records its arguments, reports a fake endpoint on --ready-fd unless
// FAKE_COORDINATOR_SILENT is set, and exits with FAKE_COORDINATOR_STATUS (default 0).
// With FAKE_COORDINATOR_HANG set it says "ready" on fd 5 and sleeps instead.
constexpr char kFakeCoordinator[] = R"(#!/bin/sh
echo "$*" > "$FAKE_DIR/coordinator.args"
if [ -n "$FAKE_COORDINATOR_HANG" ]; then echo ready >&5; exec sleep 100; fi
fd=
while [ $# -gt 0 ]; do
  if [ "$1" = --ready-fd ]; then fd=$2; fi
  shift
done
if [ -z "$FAKE_COORDINATOR_SILENT" ]; then eval "echo tcp://127.0.0.1:1 >&$fd"; fi
exit "${FAKE_COORDINATOR_STATUS:-0}"
)";

// Appends its arguments to servers.args and exits 0.
constexpr char kFakeServer[] = R"(#!/bin/sh
echo "$*" >> "$FAKE_DIR/servers.args"
exit 0
)";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

struct LaunchRun {
  int wait_status = 0;
  std::string output;  // stdout and stderr
  int exit_code() const { return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1; }
};

class LaunchMainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    WriteScript("kairos-coordinator", kFakeCoordinator);
    WriteScript("kairos-server", kFakeServer);
  }

  void WriteScript(const std::string& name, const char* text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    ASSERT_EQ(::chmod(path.c_str(), 0755), 0);
  }

  // Starts kairos-launch with `args` in `group`, its output going to a file in dir_, and
  // the stand-ins found through KAIROS_BIN_DIR. `fds`: more descriptors for it to inherit.
  pid_t Start(ProcessGroup& group, const std::vector<std::string>& args,
              std::vector<std::pair<std::string, std::string>> env = {},
              std::vector<FdMapping> fds = {}) {
    UniqueFd output(
        ::open((dir_ + "/output").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    EXPECT_TRUE(output.valid());
    ProcessSpec spec;
    spec.name = "kairos-launch";
    spec.path = KAIROS_LAUNCH_PATH;
    spec.args = args;
    spec.env = {{"KAIROS_BIN_DIR", dir_}, {"FAKE_DIR", dir_}};
    spec.env.insert(spec.env.end(), env.begin(), env.end());
    spec.fds = {{output.get(), 1}, {output.get(), 2}};
    spec.fds.insert(spec.fds.end(), fds.begin(), fds.end());
    absl::StatusOr<pid_t> pid = group.Start(spec);
    EXPECT_TRUE(pid.ok()) << pid.status();
    return pid.value_or(-1);
  }

  LaunchRun Finish(ProcessGroup& group, pid_t pid) {
    absl::StatusOr<ChildExit> exit = group.WaitForExit(pid, absl::Now() + kSafetyDeadline);
    EXPECT_TRUE(exit.ok()) << exit.status();
    return LaunchRun{exit.ok() ? exit->wait_status : -1, ReadFile(dir_ + "/output")};
  }

  LaunchRun Run(const std::vector<std::string>& args,
                std::vector<std::pair<std::string, std::string>> env = {}) {
    ProcessGroup group;
    pid_t pid = Start(group, args, std::move(env));
    return Finish(group, pid);
  }

  testing::UniqueTempDir temp_{"kairos-launch-test-"};
  const std::string dir_ = temp_.path();
};

TEST_F(LaunchMainTest, HelpExitsZero) {
  LaunchRun run = Run({"--help"});
  EXPECT_EQ(run.exit_code(), 0);
  EXPECT_THAT(run.output, HasSubstr("kairos-launch -s S -w W [OPTIONS] -- program [args...]"));
}

TEST_F(LaunchMainTest, RejectsNoArguments) {
  LaunchRun run = Run({});
  EXPECT_EQ(run.exit_code(), 2);
  EXPECT_THAT(run.output, HasSubstr("--servers is required"));
}

TEST_F(LaunchMainTest, RejectsAMissingDoubleDash) {
  LaunchRun run = Run({"-s", "1", "-w", "1", "/bin/true"});
  EXPECT_EQ(run.exit_code(), 2);
  EXPECT_THAT(run.output, HasSubstr("missing '--' before the program to run (got '/bin/true')"));
}

TEST_F(LaunchMainTest, RejectsAMissingProgram) {
  LaunchRun run = Run({"-s", "1", "-w", "1", "--"});
  EXPECT_EQ(run.exit_code(), 2);
  EXPECT_THAT(run.output, HasSubstr("no program after '--'"));
}

TEST_F(LaunchMainTest, RejectsBadCountsAndOptions) {
  EXPECT_EQ(Run({"-s", "0", "-w", "1", "--", "/bin/true"}).exit_code(), 2);
  EXPECT_EQ(Run({"-s", "x", "-w", "1", "--", "/bin/true"}).exit_code(), 2);
  EXPECT_EQ(Run({"-s", "1", "-w", "-2", "--", "/bin/true"}).exit_code(), 2);
  EXPECT_EQ(Run({"-s", "1", "-w", "1", "--transport", "udp", "--", "/bin/true"}).exit_code(), 2);
  EXPECT_EQ(Run({"-s", "1", "-w", "1", "--grace", "-1", "--", "/bin/true"}).exit_code(), 2);
  LaunchRun extra = Run({"-s", "1", "-w", "1", "stray", "--", "/bin/true"});
  EXPECT_EQ(extra.exit_code(), 2);
  EXPECT_THAT(extra.output, HasSubstr("unexpected argument 'stray' before '--'"));
}

TEST_F(LaunchMainTest, StartsEveryProcessWithItsArgumentsAndEnvironment) {
  LaunchRun run = Run({"-s", "2", "-w", "3", "--", "/bin/sh", "-c",
                       "echo \"$KAIROS_COORDINATOR $KAIROS_RANK $KAIROS_NUM_WORKERS "
                       "$KAIROS_NUM_SERVERS $KAIROS_ROLE $0\" > \"$FAKE_DIR/worker.$KAIROS_RANK\"",
                       "argument"});
  EXPECT_EQ(run.exit_code(), 0) << run.output;
  EXPECT_EQ(ReadFile(dir_ + "/coordinator.args"),
            "--listen tcp://127.0.0.1:0 --servers 2 --workers 3 --ready-fd 3\n");
  EXPECT_THAT(Lines(ReadFile(dir_ + "/servers.args")),
              ElementsAre("--coordinator tcp://127.0.0.1:1 --listen tcp://127.0.0.1:*",
                          "--coordinator tcp://127.0.0.1:1 --listen tcp://127.0.0.1:*"));
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(ReadFile(absl::StrCat(dir_, "/worker.", rank)),
              absl::StrCat("tcp://127.0.0.1:1 ", rank, " 3 2 worker argument\n"));
  }
}

TEST_F(LaunchMainTest, IpcTransportUsesAFreshDirectoryAndRemovesIt) {
  LaunchRun run = Run({"-s", "1", "-w", "1", "--transport", "ipc", "--", "/bin/true"});
  EXPECT_EQ(run.exit_code(), 0) << run.output;
  std::string coordinator_args = ReadFile(dir_ + "/coordinator.args");
  ASSERT_THAT(coordinator_args, StartsWith("--listen ipc://"));
  std::string endpoint = coordinator_args.substr(9, coordinator_args.find(' ', 9) - 9);
  ASSERT_THAT(endpoint, ::testing::EndsWith("/coordinator"));
  std::string dir = endpoint.substr(6, endpoint.size() - 6 - 12);
  EXPECT_EQ(ReadFile(dir_ + "/servers.args"),
            absl::StrCat("--coordinator tcp://127.0.0.1:1 --listen ipc://", dir, "/server-0\n"));
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
}

TEST_F(LaunchMainTest, FailingWorkerStopsTheJob) {
  absl::Time start = absl::Now();
  LaunchRun run = Run({"-s", "1", "-w", "3", "--", "/bin/sh", "-c",
                       "if [ \"$KAIROS_RANK\" = 1 ]; then exit 3; fi; exec sleep 100"});
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  EXPECT_EQ(run.exit_code(), 1);
  EXPECT_THAT(run.output, HasSubstr("kairos-launch: worker 1 (pid "));
  EXPECT_THAT(run.output, HasSubstr("exited with status 3; stopping the job"));
}

TEST_F(LaunchMainTest, TimeoutStopsTheJobWith124) {
  LaunchRun run = Run({"-s", "1", "-w", "1", "--timeout", "0.2", "--", "sleep", "100"});
  EXPECT_EQ(run.exit_code(), 124);
  EXPECT_THAT(run.output, HasSubstr("the job deadline passed; stopping the job"));
}

TEST_F(LaunchMainTest, CoordinatorThatCannotStartFailsTheJob) {
  LaunchRun run = Run({"-s", "1", "-w", "1", "--", "/bin/true"},
                      {{"FAKE_COORDINATOR_SILENT", "1"}, {"FAKE_COORDINATOR_STATUS", "2"}});
  EXPECT_EQ(run.exit_code(), 1);
  EXPECT_THAT(run.output, HasSubstr("kairos-launch: coordinator (pid "));
  EXPECT_THAT(run.output, HasSubstr("exited with status 2 before reporting its endpoint"));
}

TEST_F(LaunchMainTest, ReportsAProgramThatDoesNotExist) {
  LaunchRun run = Run({"-s", "1", "-w", "1", "--", "/nonexistent/train"});
  EXPECT_EQ(run.exit_code(), 1);
  EXPECT_THAT(run.output, HasSubstr("'/nonexistent/train' is not an executable file"));
}

TEST_F(LaunchMainTest, ReportsMissingKairosPrograms) {
  LaunchRun run =
      Run({"-s", "1", "-w", "1", "--", "/bin/true"}, {{"KAIROS_BIN_DIR", "/nonexistent"}});
  EXPECT_EQ(run.exit_code(), 1);
  EXPECT_THAT(run.output, HasSubstr("KAIROS_BIN_DIR=/nonexistent"));
}

TEST_F(LaunchMainTest, TimeoutWhileWaitingForTheCoordinator) {
  Pipe ready = MakePipe().value();
  ProcessGroup group;
  pid_t pid = Start(group, {"-s", "1", "-w", "1", "--timeout", "0.3", "--", "/bin/true"},
                    {{"FAKE_COORDINATOR_HANG", "1"}}, {{ready.write.get(), 5}});
  ready.write.Reset();
  LaunchRun run = Finish(group, pid);
  EXPECT_EQ(run.exit_code(), 124);
  EXPECT_THAT(run.output, HasSubstr("the job deadline passed while starting; stopping the job"));
}

TEST_F(LaunchMainTest, SignalWhileWaitingForTheCoordinatorStopsIt) {
  Pipe ready = MakePipe().value();
  ProcessGroup group;
  pid_t pid = Start(group, {"-s", "1", "-w", "1", "--", "/bin/true"},
                    {{"FAKE_COORDINATOR_HANG", "1"}}, {{ready.write.get(), 5}});
  ready.write.Reset();
  ASSERT_EQ(ReadLine(ready.read.get(), absl::Now() + kSafetyDeadline, nullptr).value_or(""),
            "ready");
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  LaunchRun run = Finish(group, pid);
  EXPECT_EQ(run.exit_code(), 128 + SIGINT);
  EXPECT_THAT(run.output, HasSubstr("received SIGINT while starting; stopping the job"));
}

// SIGINT and SIGTERM sent to the launcher reach the workers (which run in their own process
// groups), and the launcher exits with 128 + the signal.
class LaunchSignalTest : public LaunchMainTest, public ::testing::WithParamInterface<int> {};

TEST_P(LaunchSignalTest, ForwardsTheSignalToTheWorkers) {
  const int signo = GetParam();
  Pipe ready = MakePipe().value();
  ProcessGroup group;
  // Workers say "ready" on fd 5, which they inherit from the launcher.
  pid_t pid =
      Start(group, {"-s", "1", "-w", "2", "--", "/bin/sh", "-c", "echo ready >&5; exec sleep 100"},
            {}, {{ready.write.get(), 5}});
  ready.write.Reset();
  ASSERT_EQ(ReadLine(ready.read.get(), absl::Now() + kSafetyDeadline, nullptr).value_or(""),
            "ready");
  ASSERT_EQ(::kill(pid, signo), 0);
  LaunchRun run = Finish(group, pid);
  EXPECT_EQ(run.exit_code(), 128 + signo) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr(absl::StrCat("received ", signo == SIGINT ? "SIGINT" : "SIGTERM",
                                     "; forwarding it to")));
}

INSTANTIATE_TEST_SUITE_P(Signals, LaunchSignalTest, ::testing::Values(SIGINT, SIGTERM));

}  // namespace
}  // namespace kairos::launch
