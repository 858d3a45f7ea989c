// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// SyncDirectory: a directory's entries made durable, and the errno of a failure kept for the
// caller's error.

#include "common/file_sync.h"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

TEST(SyncDirectoryTest, AnExistingDirectorySyncs) {
  EXPECT_TRUE(SyncDirectory(::testing::TempDir()));
}

TEST(SyncDirectoryTest, AMissingDirectoryFailsWithItsErrno) {
  const std::string missing =
      (std::filesystem::path(::testing::TempDir()) / "kairos-no-such-directory").string();
  std::filesystem::remove_all(missing);
  errno = 0;
  EXPECT_FALSE(SyncDirectory(missing));
  EXPECT_EQ(errno, ENOENT);
}

TEST(SyncDirectoryTest, AFileIsNotADirectory) {
  const std::string file =
      (std::filesystem::path(::testing::TempDir()) / "kairos-file-sync-test-file").string();
  std::FILE* f = std::fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  errno = 0;
  EXPECT_FALSE(SyncDirectory(file));
  EXPECT_EQ(errno, ENOTDIR);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace kairos::internal
