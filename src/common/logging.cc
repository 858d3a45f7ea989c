// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "common/logging.h"

#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "common/callback_sink.h"
#include "spdlog/sinks/stdout_color_sinks.h"

namespace kairos {
namespace internal {
namespace {

spdlog::level::level_enum SpdlogLevel(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarning:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
    case LogLevel::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::warn;
}

// The control blocks of the logger and the callback sink name a type of this file (their
// deleter), so that the shared_ptr's instances stay inside libkairos
// (make_shared<spdlog::logger> would export one: spdlog's types are visible).
struct DeleteLogger {
  void operator()(spdlog::logger* logger) const { delete logger; }
};
struct DeleteSink {
  void operator()(spdlog::sinks::sink* sink) const { DeleteCallbackSink(sink); }
};

}  // namespace

std::shared_ptr<spdlog::logger> MakeLogger(LogLevel level, const LogSink& sink) {
  spdlog::sink_ptr to;
  if (sink) {
    to = spdlog::sink_ptr(NewCallbackSink(sink), DeleteSink());
  } else {
    to = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  }
  std::shared_ptr<spdlog::logger> logger(new spdlog::logger("kairos", std::move(to)),
                                         DeleteLogger());
  logger->set_level(SpdlogLevel(level));
  return logger;
}

std::shared_ptr<spdlog::logger> MakeLogger(const NodeOptions& options) {
  return MakeLogger(options.log_level, options.log_sink);
}

}  // namespace internal

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
    case LogLevel::kOff:
      return "off";
  }
  return "unknown";
}

absl::StatusOr<LogLevel> ParseLogLevel(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(std::string(name));
  if (lower == "warn") return LogLevel::kWarning;
  for (LogLevel level :
       {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarning, LogLevel::kError, LogLevel::kOff}) {
    if (lower == LogLevelName(level)) return level;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown log level '%s'; use debug, info, warning, error or off", name));
}

}  // namespace kairos
