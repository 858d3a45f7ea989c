// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The --metrics-listen flag of kairos-coordinator and kairos-server (KAIROS_COORDINATOR_PATH,
// KAIROS_SERVER_PATH): a busy port or a malformed address ends the program at once with
// exit code 2 and a message naming the address; a free one is announced on stdout.

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/apps/run_program.h"
#include "tests/metrics/busy_port.h"

namespace kairos::launch {
namespace {

using ::testing::HasSubstr;
using testing::ProgramRun;

class MetricsFlagTest : public ::testing::Test {
 protected:
  // Runs `program` to its end (at most 30 s) and returns its exit code and output.
  ProgramRun Run(const std::string& program, const std::vector<std::string>& args) {
    return testing::RunProgram(program, args, absl::Seconds(30));
  }
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
