// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_transport_bench's command line: its flags (Flags, AddFlags, --quick), what the
// workloads take from them (Plan: the sizes parsed, the budget, the raw variants, the
// cluster settings) and the header lines that describe them.
//
// Thread-safety: called from the main thread.

#ifndef KAIROS_BENCH_TRANSPORT_BENCH_FLAGS_H_
#define KAIROS_BENCH_TRANSPORT_BENCH_FLAGS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/bench_common.h"
#include "bench/bench_report.h"
#include "bench/kairos_workloads.h"

namespace kairos::bench::transport_bench {

inline constexpr char kAllBenchmarks[] =
    "raw_oneway,raw_rtt,push,pull,push_pull,push_copy,pull_copy,push_noop,paired,sweep,"
    "push_sync,pull_sync,small,curve,memory,checkpoint,log";

struct Flags {
  std::string benchmarks = kAllBenchmarks;
  std::vector<std::string> sizes = {"4K", "64K", "1M", "16M", "64M"};
  std::vector<int> servers = {1, 2};
  std::vector<int> workers = {1, 2, 3, 4};
  double seconds = 1.0;
  double warmup = 0.25;
  int repetitions = 1;
  int raw_repetitions = 5;
  int grid_raw_repetitions = 1;
  std::vector<std::string> raw_variants = {"stream", "window", "whole"};
  int pairs = 7;
  std::string raw_queue_bytes = "64M";
  // 16 x 1 MiB fills WorkerOptions::max_bytes_in_flight_per_server (16 MiB), the most the
  // library keeps in flight to one server; raw_oneway keeps 64 MiB queued.
  int window = 16;
  std::string max_window_bytes = "256M";
  uint64_t chunk_elements = uint64_t{1} << 18;
  bool shared_context = false;
  bool tune_allocator = false;
  int apply_threads = -1;
  int64_t inline_apply_bytes = -1;
  int io_spin_us = -1;
  std::string compression = "none";
  bool merge_pushes = false;
  std::size_t latency_samples = 200000;
  std::vector<std::string> curve_sizes = {"4K", "1M"};
  std::vector<std::string> memory_sizes = {"64M", "256M"};
  std::vector<std::string> memory_policies = {"asp", "bsp"};
  std::vector<std::string> memory_updaters = {"sgd"};
  int memory_rounds = 3;
  std::vector<std::string> sweep_sizes = {"1M", "16M", "64M"};
  std::vector<int> sweep_windows = {1, 2, 4, 8, 16};
  int sweep_rounds = 3;
  std::vector<std::string> small_sizes = {"64", "1K", "4K"};
  std::vector<int> small_windows = {1, 16};
  std::vector<std::string> checkpoint_sizes = {"64M", "256M"};
  std::string checkpoint_dir = "/tmp";
  std::vector<std::string> log_sizes = {"4K", "1M"};
  std::string log_dir = "/tmp";
  std::string server_binary = KAIROS_BENCH_SERVER_BINARY;
  std::string csv;
  bool quick = false;
};

// Adds the program's flags to `app`, bound to `f`.
void AddFlags(CLI::App& app, Flags& f);

// --quick: small budgets, except where a flag was given explicitly.
void ApplyQuick(const CLI::App& app, Flags& f);

// Everything the workloads need, parsed.
struct Plan {
  std::vector<std::string> benchmarks;
  std::vector<uint64_t> sizes;
  std::vector<uint64_t> curve_sizes;
  std::vector<uint64_t> memory_sizes;
  std::vector<uint64_t> sweep_sizes;
  Budget budget;
  uint64_t raw_queue_bytes = 0;
  std::vector<std::string> raw_variants;  // in the order stream, window, whole
  PipelineOptions pipeline;
  ClusterSettings cluster;
};

// The plan of `f`, or InvalidArgument naming the flag that is wrong.
absl::StatusOr<Plan> MakePlan(const Flags& f);

// The header lines that describe the settings (PrintHeader's `settings`).
std::vector<std::string> SettingsLines(const Flags& f, const Plan& p);

}  // namespace kairos::bench::transport_bench

#endif  // KAIROS_BENCH_TRANSPORT_BENCH_FLAGS_H_
