// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Each node's logger, made from its options (kairos/log.h): an spdlog logger of its own,
// registered nowhere, at the options' level, writing to the options' sink or to stderr.

#ifndef KAIROS_COMMON_LOGGING_H_
#define KAIROS_COMMON_LOGGING_H_

#include <memory>

#include "kairos/log.h"
#include "kairos/options.h"
#include "spdlog/spdlog.h"

namespace kairos::internal {

// A new logger at `level` that writes to `sink` (null: stderr). Thread-safe.
std::shared_ptr<spdlog::logger> MakeLogger(LogLevel level, const LogSink& sink);
// The logger of a node: MakeLogger(options.log_level, options.log_sink).
std::shared_ptr<spdlog::logger> MakeLogger(const NodeOptions& options);

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_LOGGING_H_
