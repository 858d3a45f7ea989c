// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of GetLogger: one logger per name, created on first use.

#include "common/logging.h"

#include <cstdlib>

#include "gtest/gtest.h"
#include "spdlog/sinks/stdout_sinks.h"

namespace kairos::internal {
namespace {

TEST(GetLoggerTest, ReturnsTheSameLoggerForOneName) {
  auto a = GetLogger("kairos-logging-test-same");
  auto b = GetLogger("kairos-logging-test-same");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a->name(), "kairos-logging-test-same");
}

TEST(GetLoggerTest, DifferentNamesGetDifferentLoggers) {
  EXPECT_NE(GetLogger("kairos-logging-test-x"), GetLogger("kairos-logging-test-y"));
}

TEST(GetLoggerTest, LevelComesFromEnvironmentAtCreation) {
  spdlog::drop("kairos-logging-test-debug");  // loggers outlive a test (--gtest_repeat)
  spdlog::drop("kairos-logging-test-default");
  ASSERT_EQ(::setenv("KAIROS_LOG_LEVEL", "debug", 1), 0);
  auto debug = GetLogger("kairos-logging-test-debug");
  ASSERT_EQ(::unsetenv("KAIROS_LOG_LEVEL"), 0);
  auto quiet = GetLogger("kairos-logging-test-default");
  EXPECT_EQ(debug->level(), spdlog::level::debug);
  EXPECT_EQ(quiet->level(), spdlog::level::warn);
}

TEST(GetLoggerTest, FindsLoggersRegisteredElsewhere) {
  spdlog::drop("kairos-logging-test-registered");
  auto mine = spdlog::stderr_logger_mt("kairos-logging-test-registered");
  EXPECT_EQ(GetLogger("kairos-logging-test-registered"), mine);
}

}  // namespace
}  // namespace kairos::internal
