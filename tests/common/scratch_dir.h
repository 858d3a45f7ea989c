// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ScratchDir: a directory of a test's own, TempDir()/<prefix><test name>, empty when the
// test starts (whatever an earlier run left is removed) and removed when it ends. Declare
// it as a member of the fixture, before what uses it.
//
// UniqueTempDir: a new directory, TempDir()/<prefix>XXXXXX made by mkdtemp (so two
// processes running one test at once never share it), removed with what it holds when it
// goes. A failure to make it fails the test; ok() says whether it exists.

#ifndef KAIROS_TESTS_COMMON_SCRATCH_DIR_H_
#define KAIROS_TESTS_COMMON_SCRATCH_DIR_H_

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "gtest/gtest.h"

namespace kairos::testing {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix)
      : path_(std::filesystem::path(::testing::TempDir()) /
              (prefix + ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  const std::filesystem::path path_;
};

class UniqueTempDir {
 public:
  explicit UniqueTempDir(const std::string& prefix) {
    std::string path = ::testing::TempDir() + prefix + "XXXXXX";
    if (::mkdtemp(path.data()) != nullptr) {
      path_ = path;
    } else {
      ADD_FAILURE() << "mkdtemp " << path << ": " << std::strerror(errno);
    }
  }
  ~UniqueTempDir() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  UniqueTempDir(const UniqueTempDir&) = delete;
  UniqueTempDir& operator=(const UniqueTempDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  // path()/name.
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace kairos::testing

#endif  // KAIROS_TESTS_COMMON_SCRATCH_DIR_H_
