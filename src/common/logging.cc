// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "common/logging.h"

#include <cstdlib>
#include <mutex>

#include "spdlog/sinks/stdout_color_sinks.h"

namespace kairos::internal {

std::shared_ptr<spdlog::logger> GetLogger(const std::string& name) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (auto logger = spdlog::get(name)) return logger;
  auto logger = spdlog::stderr_color_mt(name);
  const char* level = std::getenv("KAIROS_LOG_LEVEL");
  logger->set_level(level != nullptr ? spdlog::level::from_str(level) : spdlog::level::warn);
  return logger;
}

}  // namespace kairos::internal
