// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// What the benchmark programs' command lines share: the flags that several of them take with
// the same meaning and help text, and how a program reports bad flags and failed runs
// (the exit statuses of docs/benchmarks.md: 0 when everything ran, 1 when something failed,
// 2 for bad flags).
//
// Thread-safety: called from the main thread.

#ifndef KAIROS_BENCH_BENCH_COMMON_H_
#define KAIROS_BENCH_BENCH_COMMON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

// The kairos-server that --server-binary defaults to: the build's (bench/CMakeLists.txt
// defines it for the programs with a memory workload), else the one on the PATH.
#ifndef KAIROS_BENCH_SERVER_BINARY
#define KAIROS_BENCH_SERVER_BINARY "kairos-server"
#endif

namespace CLI {
class App;
}  // namespace CLI

namespace kairos::bench {

// A field of /proc/<pid>/status in bytes ("VmRSS", "VmHWM"), or 0.
uint64_t StatusBytes(int pid, const char* field);

// The exit status for bad flags.
inline constexpr int kExitBadFlags = 2;

// --benchmarks: the comma-separated workloads to run, out of `all` (comma-separated too).
void AddBenchmarksOption(CLI::App& app, std::string& benchmarks, absl::string_view all);
// The workloads --benchmarks names, in its order, or InvalidArgument naming the first that
// is not in `all`.
absl::StatusOr<std::vector<std::string>> ParseBenchmarks(absl::string_view benchmarks,
                                                         absl::string_view all);

// --seconds (measured seconds per workload) and --warmup (unmeasured seconds before each).
void AddBudgetOptions(CLI::App& app, double& seconds, double& warmup);

// --quick's budgets for --seconds and --warmup where not given: 0.1 s measured after 0.05 s
// of warm-up.
void ApplyQuickBudget(const CLI::App& app, double& seconds, double& warmup);

// --server-binary: the kairos-server the memory workload runs as a child.
void AddServerBinaryOption(CLI::App& app, std::string& server_binary);

// --csv: a file every result is also written to.
void AddCsvOption(CLI::App& app, std::string& csv);

// Prints "<program>: <message>" to stderr and returns kExitBadFlags.
int BadFlags(absl::string_view program, absl::string_view message);

// Prints "<program>: <n> <noun>[s] <what>:" and then each of `failures` indented to
// stderr, unless `failures` is empty. Returns whether it printed.
bool PrintFailures(absl::string_view program, absl::string_view noun, absl::string_view what,
                   const std::vector<std::string>& failures);

}  // namespace kairos::bench

#endif  // KAIROS_BENCH_BENCH_COMMON_H_
