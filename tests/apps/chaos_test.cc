// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Chaos: a launched job with update logs and a coordinator that keeps its state
// (kairos-launch --state-dir --restart-servers --restart-workers --restart-coordinator),
// where a seeded schedule kills servers, a worker and the coordinator with SIGKILL several
// times (tests/apps/launched_training.cc carries it out). Under each policy family the
// job's final values equal the run without faults, bit for bit (every gradient is applied
// exactly once, and the gradients are small integers, so their sums are exact in any
// order); under BSP every read on the way equals the sequential computation too. No
// process of the job outlives it.

#include <stdlib.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/apps/run_program.h"
#include "tests/common/scratch_dir.h"

namespace kairos::launch {
namespace {

using ::testing::HasSubstr;

constexpr int kIterations = 12;
constexpr int kEvents = 6;

// `kEvents` kills at distinct clocks from 2 to kIterations - 2: the coordinator, either
// server, or worker 1 (worker 0 carries out the kills of the others).
std::string Schedule(uint32_t seed) {
  std::mt19937 random(seed);
  std::set<int> clocks;
  while (static_cast<int>(clocks.size()) < kEvents) {
    clocks.insert(std::uniform_int_distribution<int>(2, kIterations - 2)(random));
  }
  const std::vector<std::string> targets = {"c", "s0", "s1", "w1"};
  std::vector<std::string> events;
  for (int t : clocks) {
    events.push_back(
        absl::StrCat(t, ":", targets[std::uniform_int_distribution<int>(0, 3)(random)]));
  }
  return absl::StrJoin(events, ",");
}

struct ChaosCase {
  std::string policy;
  uint32_t seed;
};

class ChaosTest : public ::testing::TestWithParam<ChaosCase> {
 protected:
  // kairos-launch of the job under the case's policy; `schedule` empty: without faults.
  // Returns its output; the job must succeed and leave no process behind.
  std::string Launch(const std::string& dir, const std::string& schedule) {
    const bool bsp = GetParam().policy == "bsp";
    const std::string budget = absl::StrCat(kEvents);  // restarts of each process
    std::vector<std::string> args = {"-s",
                                     "2",
                                     "-w",
                                     "2",
                                     "--state-dir",
                                     dir,
                                     "--restart-servers",
                                     budget,
                                     "--restart-workers",
                                     budget,
                                     "--restart-coordinator",
                                     budget,
                                     "--grace",
                                     "10",
                                     "--",
                                     KAIROS_TRAINING_PATH,
                                     "--policy",
                                     GetParam().policy,
                                     "--iterations",
                                     absl::StrCat(kIterations),
                                     "--final",
                                     "1",
                                     "--check",
                                     bsp ? "1" : "0"};
    if (!schedule.empty()) {
      args.insert(args.end(), {"--chaos", schedule, "--chaos-dir", dir});
    }
    testing::ProgramRun run = testing::RunProgram(KAIROS_LAUNCH_PATH, args, absl::Seconds(120));
    EXPECT_EQ(run.exit_code, 0) << "schedule " << schedule << ":\n" << run.output;
    // Every process of the job named the state directory on its command line ("[/]tmp/...":
    // the pattern does not match the shell that runs pgrep).
    const std::string survivors =
        absl::StrCat("pgrep -f -- '[", dir.substr(0, 1), "]", dir.substr(1), "' > /dev/null");
    EXPECT_NE(std::system(survivors.c_str()), 0) << "a process of the job outlived it";
    return run.output;
  }

  // The digest every worker printed of the job's final values (both must agree).
  static std::string Final(const std::string& output) {
    std::set<std::string> digests;
    for (int r = 0; r < 2; ++r) {
      const std::string prefix = absl::StrCat("rank ", r, " final ");
      const std::size_t at = output.rfind(prefix);
      if (at == std::string::npos) return "";
      digests.insert(output.substr(at + prefix.size(), 16));
    }
    return digests.size() == 1 ? *digests.begin() : "(workers disagree)";
  }
};

TEST_P(ChaosTest, KillsOfServersAWorkerAndTheCoordinatorLoseNothing) {
  testing::UniqueTempDir temp("kairos-chaos-");
  ASSERT_TRUE(temp.ok());
  const std::string schedule = Schedule(GetParam().seed);
  const std::string clean = Final(Launch(temp.path() + "/clean", ""));
  ASSERT_EQ(clean.size(), 16u) << clean;
  const std::string output = Launch(temp.path() + "/chaos", schedule);
  EXPECT_THAT(output, HasSubstr("chaos: "));
  EXPECT_EQ(Final(output), clean) << "schedule " << schedule << ":\n" << output;
}

INSTANTIATE_TEST_SUITE_P(Policies, ChaosTest,
                         ::testing::Values(ChaosCase{"bsp", 1}, ChaosCase{"ssp:s=2", 2},
                                           ChaosCase{"asp", 3}),
                         [](const ::testing::TestParamInfo<ChaosCase>& info) {
                           std::string name = info.param.policy.substr(0, 3);
                           return absl::StrCat(name, "_seed", info.param.seed);
                         });

}  // namespace
}  // namespace kairos::launch
