// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "apps/program_path.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/scratch_dir.h"

namespace kairos::launch {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;

TEST(FindProgramTest, SearchesPath) {
  absl::StatusOr<std::string> sh = FindProgram("sh");
  ASSERT_TRUE(sh.ok()) << sh.status();
  EXPECT_THAT(*sh, EndsWith("/sh"));
  EXPECT_EQ(::access(sh->c_str(), X_OK), 0);
}

TEST(FindProgramTest, TakesAPathAsGiven) {
  EXPECT_EQ(FindProgram("/bin/sh").value_or(""), "/bin/sh");
}

TEST(FindProgramTest, ReportsMissingPrograms) {
  EXPECT_TRUE(absl::IsNotFound(FindProgram("kairos-no-such-program").status()));
  EXPECT_TRUE(absl::IsNotFound(FindProgram("/nonexistent/program").status()));
  EXPECT_TRUE(absl::IsNotFound(FindProgram("/dev/null").status()));  // not a regular file
  EXPECT_TRUE(absl::IsInvalidArgument(FindProgram("").status()));
}

// Sets KAIROS_BIN_DIR for one test.
class BinDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    ASSERT_EQ(::setenv(kBinDirVariable, dir_.c_str(), 1), 0);
  }
  void TearDown() override { ::unsetenv(kBinDirVariable); }
  testing::UniqueTempDir temp_{"kairos-bin-"};
  const std::string dir_ = temp_.path();
};

TEST_F(BinDirTest, BinDirOverridesEverythingElse) {
  std::string path = dir_ + "/kairos-coordinator";
  std::ofstream(path) << "#!/bin/sh\n";
  ASSERT_EQ(::chmod(path.c_str(), 0755), 0);
  EXPECT_EQ(FindKairosProgram("kairos-coordinator").value_or(""), path);
  // Present on PATH but not in the directory: not found, without looking further.
  absl::StatusOr<std::string> sh = FindKairosProgram("sh");
  EXPECT_TRUE(absl::IsNotFound(sh.status()));
  EXPECT_THAT(sh.status().message(), HasSubstr(kBinDirVariable));
}

TEST(FindKairosProgramTest, LooksNextToItsOwnExecutable) {
  ASSERT_EQ(::getenv(kBinDirVariable), nullptr);
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  EXPECT_EQ(FindKairosProgram(self.filename().string()).value_or(""), self.string());
}

TEST(FindKairosProgramTest, FallsBackToPath) {
  ASSERT_EQ(::getenv(kBinDirVariable), nullptr);
  EXPECT_THAT(FindKairosProgram("sh").value_or(""), EndsWith("/sh"));
  absl::StatusOr<std::string> missing = FindKairosProgram("kairos-no-such-program");
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_THAT(missing.status().message(), HasSubstr(kBinDirVariable));
}

}  // namespace
}  // namespace kairos::launch
