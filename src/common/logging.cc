// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "common/logging.h"

#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "spdlog/sinks/sink.h"
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

LogLevel LevelOf(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return LogLevel::kDebug;
    case spdlog::level::info:
      return LogLevel::kInfo;
    case spdlog::level::warn:
      return LogLevel::kWarning;
    default:
      return LogLevel::kError;
  }
}

// Hands each line to the program's LogSink. Derives from spdlog's sink interface itself
// (not base_sink, a template whose instances libkairos would export); lines come whole, as
// the node logged them, so no formatter is involved.
class CallbackSink final : public spdlog::sinks::sink {
 public:
  explicit CallbackSink(LogSink sink) : sink_(std::move(sink)) {}

  void log(const spdlog::details::log_msg& msg) override {
    std::lock_guard<std::mutex> lock(mu_);
    sink_(LevelOf(msg.level), std::string_view(msg.payload.data(), msg.payload.size()));
  }
  void flush() override {}
  void set_pattern(const std::string&) override {}
  void set_formatter(std::unique_ptr<spdlog::formatter>) override {}

 private:
  std::mutex mu_;
  const LogSink sink_;
};

// The logger's control block names only a type of this file (the deleter), so that the
// shared_ptr's instances stay inside libkairos (make_shared<spdlog::logger> would export
// one: spdlog's types are visible).
struct DeleteLogger {
  void operator()(spdlog::logger* logger) const { delete logger; }
};

}  // namespace

std::shared_ptr<spdlog::logger> MakeLogger(LogLevel level, const LogSink& sink) {
  spdlog::sink_ptr to;
  if (sink) {
    to = std::make_shared<CallbackSink>(sink);
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
