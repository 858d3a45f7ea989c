// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "common/callback_sink.h"

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace kairos::internal {
namespace {

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

// Derives from spdlog's sink interface itself (not base_sink, a template whose instances
// libkairos would export); lines come whole, as the node logged them, so no formatter is
// involved.
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

}  // namespace

spdlog::sinks::sink* NewCallbackSink(LogSink sink) { return new CallbackSink(std::move(sink)); }

void DeleteCallbackSink(spdlog::sinks::sink* sink) { delete sink; }

}  // namespace kairos::internal
