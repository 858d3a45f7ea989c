// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// What a node logs and where (NodeOptions::log_level, NodeOptions::log_sink). Each node
// has its own logger, made from its options: nothing is registered process-wide, so two
// clusters in one process may log at different levels to different places. The library
// never reads the environment for it; the programs do (KAIROS_LOG_LEVEL, kairos/run.h's
// ReadNodeEnvironment).
//
//   kairos::WorkerOptions options;
//   options.log_level = kairos::LogLevel::kInfo;
//   options.log_sink = [](kairos::LogLevel level, std::string_view line) {
//     my_logging_system.Write(kairos::LogLevelName(level), line);
//   };

#ifndef KAIROS_LOG_H_
#define KAIROS_LOG_H_

#include <functional>
#include <string_view>

#include "absl/status/statusor.h"
#include "kairos/export.h"

namespace kairos {

// From the most to the least verbose; kOff logs nothing.
enum class LogLevel { kDebug, kInfo, kWarning, kError, kOff };

// Receives each line a node logs at or above its level: the level and the text (the node's
// message, without a time stamp or a trailing newline). Called on the node's threads, so it
// must be thread-safe, quick, and must not call back into the node. Null: the lines go to
// stderr, time-stamped.
using LogSink = std::function<void(LogLevel level, std::string_view line)>;

// "debug", "info", "warning", "error" or "off".
KAIROS_EXPORT std::string_view LogLevelName(LogLevel level);
// The level of one of those names, case-insensitive ("warn" is "warning"); InvalidArgument
// naming them otherwise.
KAIROS_EXPORT absl::StatusOr<LogLevel> ParseLogLevel(std::string_view name);

}  // namespace kairos

#endif  // KAIROS_LOG_H_
