// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Loggers are injected by name (NodeOptions::logger); this finds or creates them.

#ifndef KAIROS_COMMON_LOGGING_H_
#define KAIROS_COMMON_LOGGING_H_

#include <memory>
#include <string>

#include "spdlog/spdlog.h"

namespace kairos::internal {

// The spdlog logger called `name`, created (stderr, level from KAIROS_LOG_LEVEL or "warn")
// when it does not exist yet. Thread-safe.
std::shared_ptr<spdlog::logger> GetLogger(const std::string& name);

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_LOGGING_H_
