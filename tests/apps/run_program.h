// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// RunProgram: runs one of the project's programs to its end through a ProcessGroup, its
// stdout and stderr going to a file of its own (ctest runs a binary's tests in parallel
// processes), and returns its exit code and output. The tests of the programs' flags and of
// whole launched jobs use it.

#ifndef KAIROS_TESTS_APPS_RUN_PROGRAM_H_
#define KAIROS_TESTS_APPS_RUN_PROGRAM_H_

#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "apps/fd_util.h"
#include "apps/process_group.h"
#include "gtest/gtest.h"

namespace kairos::testing {

struct ProgramRun {
  int exit_code = -1;  // -1 when it did not exit by itself (a signal, or past the deadline)
  std::string output;  // stdout and stderr
};

// Runs `program` with `args`, and `env` set on top of this process's environment, and
// waits for its end at most `timeout` (a failure of the test past it).
inline ProgramRun RunProgram(const std::string& program, const std::vector<std::string>& args,
                             absl::Duration timeout,
                             std::vector<std::pair<std::string, std::string>> env = {}) {
  ProgramRun run;
  std::string out_path = ::testing::TempDir() + "kairos-program-output-XXXXXX";
  {
    launch::UniqueFd out(::mkostemp(out_path.data(), O_CLOEXEC));
    EXPECT_TRUE(out.valid()) << out_path;
    if (!out.valid()) return run;
    launch::ProcessGroup group;
    launch::ProcessSpec spec;
    spec.name = std::filesystem::path(program).filename().string();
    spec.path = program;
    spec.args = args;
    spec.env = std::move(env);
    spec.fds = {{out.get(), 1}, {out.get(), 2}};
    absl::StatusOr<pid_t> pid = group.Start(spec);
    EXPECT_TRUE(pid.ok()) << pid.status();
    if (pid.ok()) {
      absl::StatusOr<launch::ChildExit> exit = group.WaitForExit(*pid, absl::Now() + timeout);
      EXPECT_TRUE(exit.ok()) << exit.status();
      if (exit.ok() && WIFEXITED(exit->wait_status)) {
        run.exit_code = WEXITSTATUS(exit->wait_status);
      }
    }
  }
  std::ifstream in(out_path);
  std::stringstream text;
  text << in.rdbuf();
  run.output = text.str();
  std::filesystem::remove(out_path);
  return run;
}

}  // namespace kairos::testing

#endif  // KAIROS_TESTS_APPS_RUN_PROGRAM_H_
