// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The --metrics-listen flag of kairos-coordinator and kairos-server (KAIROS_COORDINATOR_PATH,
// KAIROS_SERVER_PATH): a busy port or a malformed address ends the program at once with
// exit code 2 and a message naming the address; a free one is announced on stdout.

#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/fd_util.h"
#include "apps/process_group.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/metrics/busy_port.h"

namespace kairos::launch {
namespace {

using ::testing::HasSubstr;

struct ProgramRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};


class MetricsFlagTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string path = ::testing::TempDir() + "kairos-metrics-flag-test-XXXXXX";
    ASSERT_NE(::mkdtemp(path.data()), nullptr);
    dir_ = path;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `program` to its end (at most 30 s) and returns its exit code and output.
  ProgramRun Run(const std::string& program, const std::vector<std::string>& args) {
    const std::string out_path = dir_ + "/output";
    UniqueFd out(::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    EXPECT_TRUE(out.valid());
    ProcessGroup group;
    ProcessSpec spec;
    spec.name = program;
    spec.path = program;
    spec.args = args;
    spec.fds = {{out.get(), 1}, {out.get(), 2}};
    absl::StatusOr<pid_t> pid = group.Start(spec);
    EXPECT_TRUE(pid.ok()) << pid.status();
    ProgramRun run;
    if (!pid.ok()) return run;
    absl::StatusOr<ChildExit> exit = group.WaitForExit(*pid, absl::Now() + absl::Seconds(30));
    EXPECT_TRUE(exit.ok()) << exit.status();
    if (exit.ok() && WIFEXITED(exit->wait_status)) run.exit_code = WEXITSTATUS(exit->wait_status);
    std::ifstream in(out_path);
    std::stringstream text;
    text << in.rdbuf();
    run.output = text.str();
    return run;
  }

  std::string dir_;
};

TEST_F(MetricsFlagTest, ABusyPortEndsTheProgramNamingTheAddress) {
  testing_util::BusyPort busy;
  const std::string want =
      "metrics: cannot listen on " + busy.address() + ": Address already in use";
  ProgramRun coordinator = Run(KAIROS_COORDINATOR_PATH, {"--servers", "1", "--workers", "1",
                                                         "--metrics-listen", busy.address()});
  EXPECT_EQ(coordinator.exit_code, 2);
  EXPECT_THAT(coordinator.output, HasSubstr("kairos-coordinator: UNAVAILABLE: " + want));
  ProgramRun server = Run(KAIROS_SERVER_PATH, {"--coordinator", "tcp://127.0.0.1:1",
                                               "--metrics-listen", busy.address()});
  EXPECT_EQ(server.exit_code, 2);
  EXPECT_THAT(server.output, HasSubstr("kairos-server: UNAVAILABLE: " + want));
}

TEST_F(MetricsFlagTest, AMalformedAddressIsRefused) {
  ProgramRun server =
      Run(KAIROS_SERVER_PATH, {"--coordinator", "tcp://127.0.0.1:1", "--metrics-listen", "9100"});
  EXPECT_EQ(server.exit_code, 2);
  EXPECT_THAT(server.output, HasSubstr("metrics_listen '9100' is not HOST:PORT"));
}

TEST_F(MetricsFlagTest, TheBoundAddressIsAnnounced) {
  // Nobody joins: the coordinator gives up after the join timeout (exit code 1).
  ProgramRun coordinator =
      Run(KAIROS_COORDINATOR_PATH, {"--servers", "1", "--workers", "1", "--join-timeout", "0.2",
                                    "--metrics-listen", "127.0.0.1:0"});
  EXPECT_EQ(coordinator.exit_code, 1);
  EXPECT_THAT(coordinator.output, HasSubstr("kairos-coordinator metrics on http://127.0.0.1:"));
  EXPECT_THAT(coordinator.output, HasSubstr("/metrics\n"));
}

}  // namespace
}  // namespace kairos::launch
