// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of each node's logger (common/logging.h) and the level names (kairos/log.h): a
// logger sends the lines at its level or above to its sink, with their level and text; two
// loggers are independent (no registry); the names parse back to their levels.

#include "common/logging.h"

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// A LogSink that keeps what it is given.
struct Captured {
  std::mutex mu;
  std::vector<std::pair<LogLevel, std::string>> lines;

  LogSink Sink() {
    return [this](LogLevel level, std::string_view line) {
      std::lock_guard<std::mutex> lock(mu);
      lines.emplace_back(level, std::string(line));
    };
  }
};

TEST(MakeLoggerTest, SendsTheLinesAtItsLevelOrAboveToTheSink) {
  Captured got;
  auto log = MakeLogger(LogLevel::kInfo, got.Sink());
  log->debug("not {}", "this");
  log->info("info {}", 1);
  log->warn("warning {}", 2);
  log->error("error {}", 3);
  EXPECT_THAT(got.lines,
              ElementsAre(Pair(LogLevel::kInfo, "info 1"), Pair(LogLevel::kWarning, "warning 2"),
                          Pair(LogLevel::kError, "error 3")));
}

TEST(MakeLoggerTest, OffSendsNothingAndDebugSendsEverything) {
  Captured off, debug;
  auto quiet = MakeLogger(LogLevel::kOff, off.Sink());
  auto verbose = MakeLogger(LogLevel::kDebug, debug.Sink());
  for (auto* log : {quiet.get(), verbose.get()}) {
    log->debug("d");
    log->error("e");
  }
  EXPECT_TRUE(off.lines.empty());
  EXPECT_THAT(debug.lines, ElementsAre(Pair(LogLevel::kDebug, "d"), Pair(LogLevel::kError, "e")));
}

TEST(MakeLoggerTest, TheOptionsGiveTheLevelAndSinkAndLoggersAreIndependent) {
  Captured a, b;
  WorkerOptions quiet;
  quiet.log_level = LogLevel::kError;
  quiet.log_sink = a.Sink();
  CoordinatorOptions chatty;
  chatty.log_level = LogLevel::kInfo;
  chatty.log_sink = b.Sink();
  MakeLogger(quiet)->warn("dropped");
  MakeLogger(chatty)->warn("kept");
  EXPECT_TRUE(a.lines.empty());
  EXPECT_THAT(b.lines, ElementsAre(Pair(LogLevel::kWarning, "kept")));
  EXPECT_EQ(NodeOptions().log_level, LogLevel::kWarning);  // the default
}

TEST(LogLevelNameTest, EveryNameParsesBackToItsLevel) {
  for (LogLevel level :
       {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarning, LogLevel::kError, LogLevel::kOff}) {
    absl::StatusOr<LogLevel> parsed = ParseLogLevel(LogLevelName(level));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, level);
  }
  EXPECT_EQ(*ParseLogLevel("WARN"), LogLevel::kWarning);
  const absl::StatusOr<LogLevel> bad = ParseLogLevel("loud");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("'loud'"));
}

}  // namespace
}  // namespace kairos::internal
