// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The kairos-keygen program (KAIROS_KEYGEN_PATH): it writes keys that LoadCurveKeys reads,
// with private file modes, and refuses to replace keys without --force; and the --keys flag
// of kairos-coordinator and kairos-server (KAIROS_COORDINATOR_PATH, KAIROS_SERVER_PATH)
// refuses an unusable key directory with a clear message.

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/keys.h"
#include "tests/apps/run_program.h"
#include "tests/common/scratch_dir.h"

namespace kairos::launch {
namespace {

using ::testing::HasSubstr;
using testing::ProgramRun;

class KeygenTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(temp_.ok()); }

  // Runs `program` to its end (at most 30 s) and returns its exit code and output.
  ProgramRun Start(const std::string& program, const std::vector<std::string>& args,
                   std::vector<std::pair<std::string, std::string>> env = {}) {
    return testing::RunProgram(program, args, absl::Seconds(30), std::move(env));
  }

  ProgramRun Keygen(const std::vector<std::string>& args) { return Start(KAIROS_KEYGEN_PATH, args); }

  static int ModeOf(const std::string& path) {
    struct stat st = {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return static_cast<int>(st.st_mode & 07777);
  }

  testing::UniqueTempDir temp_{"kairos-keygen-test-"};
  const std::string dir_ = temp_.path();
};

TEST_F(KeygenTest, HelpExitsZero) {
  ProgramRun run = Keygen({"--help"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_THAT(run.output, HasSubstr("DIR"));
  EXPECT_THAT(run.output, HasSubstr("--force"));
}

TEST_F(KeygenTest, WithoutADirectoryItIsAUsageError) { EXPECT_EQ(Keygen({}).exit_code, 2); }

TEST_F(KeygenTest, WritesLoadableKeysWithPrivateModes) {
  const std::string keys_dir = dir_ + "/job";
  ProgramRun run = Keygen({keys_dir});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(ModeOf(keys_dir), 0700);
  EXPECT_EQ(ModeOf(keys_dir + "/secret.key"), 0600);
  EXPECT_EQ(ModeOf(keys_dir + "/public.key"), 0644);
  absl::StatusOr<CurveKeys> keys = LoadCurveKeys(keys_dir);
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_THAT(run.output, HasSubstr("public key: " + keys->public_key));
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr(keys->secret_key)));
}

TEST_F(KeygenTest, RefusesToReplaceKeysWithoutForce) {
  const std::string keys_dir = dir_ + "/job";
  ASSERT_EQ(Keygen({keys_dir}).exit_code, 0);
  absl::StatusOr<CurveKeys> first = LoadCurveKeys(keys_dir);
  ASSERT_TRUE(first.ok()) << first.status();
  ProgramRun again = Keygen({keys_dir});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.output, HasSubstr("already holds CURVE keys"));
  EXPECT_THAT(again.output, HasSubstr("--force"));
  EXPECT_EQ(LoadCurveKeys(keys_dir).value_or(CurveKeys()), *first) << "the keys were replaced";
  ProgramRun forced = Keygen({"--force", keys_dir});
  ASSERT_EQ(forced.exit_code, 0) << forced.output;
  absl::StatusOr<CurveKeys> second = LoadCurveKeys(keys_dir);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(*second, *first);
  EXPECT_EQ(ModeOf(keys_dir + "/secret.key"), 0600);
}

TEST_F(KeygenTest, NodeProgramsRefuseAnUnusableKeyDirectory) {
  ProgramRun coordinator = Start(KAIROS_COORDINATOR_PATH,
                          {"--servers", "1", "--workers", "1", "--keys", dir_ + "/none"});
  EXPECT_EQ(coordinator.exit_code, 2);
  EXPECT_THAT(coordinator.output, HasSubstr("--keys: CURVE key directory " + dir_ + "/none"));
  // --keys defaults to KAIROS_KEYS; a secret key others can read is refused.
  ASSERT_EQ(Keygen({dir_ + "/job"}).exit_code, 0);
  ASSERT_EQ(::chmod((dir_ + "/job/secret.key").c_str(), 0644), 0);
  ProgramRun server = Start(KAIROS_SERVER_PATH, {"--coordinator", "tcp://127.0.0.1:1"},
                     {{"KAIROS_KEYS", dir_ + "/job"}});
  EXPECT_EQ(server.exit_code, 2);
  EXPECT_THAT(server.output, HasSubstr("chmod 600"));
}

}  // namespace
}  // namespace kairos::launch
