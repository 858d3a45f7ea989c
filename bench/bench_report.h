// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// What the benchmark programs share: the header that describes the machine and the build
// (and warns when the figures cannot be trusted), latency summaries, value-size parsing, and
// the report: one line per workload on stdout and, optionally, a CSV file for plots.
//
// Thread-safety: Report is used from the main thread only; the free functions are
// thread-safe.

#ifndef KAIROS_BENCH_BENCH_REPORT_H_
#define KAIROS_BENCH_BENCH_REPORT_H_

#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kairos::bench {

inline constexpr double kMegabyte = 1e6;  // MB/s figures are 10^6 bytes per second

// How long a workload runs: `warmup_s` unmeasured, then `seconds` measured.
struct Budget {
  double warmup_s = 0.25;
  double seconds = 1.0;
};

// The clock the workloads measure their budgets with.
using SteadyClock = std::chrono::steady_clock;
// `seconds` after `t`.
inline SteadyClock::time_point After(SteadyClock::time_point t, double seconds) {
  return t +
         std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(seconds));
}

// Throughput over a measured interval; MB/s counts value bytes moved, in 10^6 bytes.
// `cpu_us_per_mb` is the CPU time of this whole process (every thread, user + system) per
// MB moved: unlike MB/s it hardly depends on what else the machine runs, and on an idle
// machine of N cores a CPU-bound workload cannot exceed N * 10^6 / cpu_us_per_mb MB/s.
// `faults_per_mb` counts the page faults of this whole process per MB moved (minor faults:
// a page the process touches for the first time since the system gave it, zeroed): memory
// the allocator gave back and the next message takes again costs one per 4 KiB, work that
// moves no byte (docs/benchmarks.md, "Where the time and the memory go").
struct Throughput {
  uint64_t ops = 0;
  double seconds = 0;
  double ops_per_s = 0;
  double mb_per_s = 0;
  double cpu_us_per_mb = 0;  // 0 when not measured
  std::optional<double> faults_per_mb;
};

// What this process has used so far: CPU time (user + system) of every thread, in seconds,
// and page faults (getrusage's ru_minflt).
struct ProcessUsage {
  double cpu_seconds = 0;
  uint64_t minor_faults = 0;
};
ProcessUsage ReadProcessUsage();
// What this process has used since `begin` (a ReadProcessUsage).
ProcessUsage UsageSince(const ProcessUsage& begin);

// Throughput of `ops` operations of `value_bytes` each in `seconds`, which cost `usage`:
// the process's CPU time (0: not measured) and page faults over the same interval.
Throughput MakeThroughput(uint64_t ops, uint64_t value_bytes, double seconds,
                          const ProcessUsage& usage);

// The machine, read from /proc and uname.
struct MachineInfo {
  std::string cpu_model;      // /proc/cpuinfo "model name"
  int cores = 0;              // online hardware threads
  uint64_t memory_bytes = 0;  // /proc/meminfo MemTotal
  std::string kernel;         // uname -sr
};
MachineInfo ReadMachineInfo();

// The contents of /proc/loadavg without the trailing newline ("2.01 1.50 0.90 3/120 42").
std::string LoadAverage();

// Measures how much CPU time other processes took while the benchmark ran: the machine's busy
// time (/proc/stat) minus this process's and its reaped children's (getrusage).
class OtherLoadMeter {
 public:
  OtherLoadMeter();  // starts measuring
  // The cores other processes kept busy on average since the start (0.42).
  double OtherCores() const;
  // "other processes used 0.42 of 2 cores (21%) over 200.1 s".
  std::string Describe() const;

 private:
  double start_busy_s_ = 0;
  double start_own_s_ = 0;
  double start_wall_s_ = 0;
};

// Why this build's figures are not representative: no optimisation (NDEBUG undefined or
// CMAKE_BUILD_TYPE not Release), sanitizers. Empty for a clean Release build.
std::vector<std::string> BuildWarnings();
// CMAKE_BUILD_TYPE of this build ("Release", ...).
std::string BuildType();

// Prints the machine, build and `settings` lines (already formatted) to stdout, with a
// WARNING line per BuildWarnings() entry.
void PrintHeader(std::string_view program, const std::vector<std::string>& settings);

// Prints the closing lines: the load average at the end, what other processes took while
// the benchmark ran (`other_load`, started at its beginning) and the build's warnings.
void PrintFooter(const OtherLoadMeter& other_load);

// Latency of many identical operations.
struct LatencySummary {
  std::size_t samples = 0;
  double p50_us = 0;
  double p99_us = 0;
  double mean_us = 0;
  double min_us = 0;
};
// REQUIRES: !samples_us.empty(). Reorders samples_us.
LatencySummary Summarize(std::vector<double>& samples_us);

// "4096", "4K", "64KiB", "1M", "16MiB" -> bytes (binary units). InvalidArgument otherwise.
absl::StatusOr<uint64_t> ParseSize(const std::string& text);
// 4096 -> "4 KiB", 1048576 -> "1 MiB", 100 -> "100 B".
std::string FormatSize(uint64_t bytes);

// The window sweep's verdict for one operation and size: throughput must not
// collapse as requests pile up. `mb_per_s[i]` was measured with `windows[i]` requests in
// flight (windows ascending). A window collapses when its throughput is below `floor`
// (0.8) of the best of every smaller or equal window: more requests in flight must never
// cost more than a fifth of what fewer achieved.
struct WindowVerdict {
  bool ok = true;
  int best_window = 0;   // the window of the highest throughput
  double best_mb = 0;
  int worst_window = 0;  // the window with the lowest ratio to the best before it...
  double worst_ratio = 1;  // ...and that ratio
  std::string ToString() const;
};
// REQUIRES: windows.size() == mb_per_s.size() > 0, windows ascending.
WindowVerdict JudgeWindows(const std::vector<int>& windows, const std::vector<double>& mb_per_s,
                           double floor = 0.8);

// One measured workload. Unmeasured fields stay empty and print as blanks.
struct Result {
  std::string workload;      // e.g. "push", "raw_oneway", "push_sync", "memory"
  uint64_t value_bytes = 0;  // value (message or table) size
  int servers = 0;           // 0: not a kairos cluster
  int workers = 0;
  std::string policy;  // memory: "asp" / "bsp"
  std::optional<double> ops_per_s;
  std::optional<double> mb_per_s;
  std::optional<double> raw_ratio;      // against the raw ceiling of the same run shape
  std::optional<double> cpu_us_per_mb;  // see Throughput
  std::optional<double> faults_per_mb;  // see Throughput
  std::optional<LatencySummary> latency;
  std::optional<double> raw_p50_us;   // latency: raw ZeroMQ round trip of the same size
  std::optional<uint64_t> rss_bytes;  // memory: server VmHWM
  std::optional<uint64_t> baseline_rss_bytes;
  std::optional<uint64_t> bound_bytes;
  std::string note;
};

// Prints results as they come and writes them to a CSV file when one is given.
class Report {
 public:
  // Opens `csv_path` (when not empty) and writes the CSV header.
  absl::Status Open(const std::string& csv_path);
  // Prints the column header of the workload lines.
  void PrintColumns() const;
  void Add(const Result& result);
  const std::vector<Result>& results() const { return results_; }

 private:
  std::vector<Result> results_;
  std::ofstream csv_;
};

}  // namespace kairos::bench

#endif  // KAIROS_BENCH_BENCH_REPORT_H_
