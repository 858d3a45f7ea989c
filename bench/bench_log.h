// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The log level of the nodes a benchmark runs in its own process: KAIROS_LOG_LEVEL when it
// names a level (kairos/log.h), else errors only, so that the nodes' notices (a node
// without keys says once that its traffic is not encrypted) do not bury the report. Header
// only: the benchmarks link libkairos or its layers, and this calls into either.

#ifndef KAIROS_BENCH_BENCH_LOG_H_
#define KAIROS_BENCH_BENCH_LOG_H_

#include <cstdlib>

#include "absl/status/statusor.h"
#include "kairos/log.h"

namespace kairos::bench {

inline LogLevel BenchLogLevel() {
  const char* name = std::getenv("KAIROS_LOG_LEVEL");
  if (name == nullptr) return LogLevel::kError;
  const absl::StatusOr<LogLevel> level = ParseLogLevel(name);
  return level.ok() ? *level : LogLevel::kError;
}

}  // namespace kairos::bench

#endif  // KAIROS_BENCH_BENCH_LOG_H_
