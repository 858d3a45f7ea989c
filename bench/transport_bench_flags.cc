// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "bench/transport_bench_flags.h"

#include <algorithm>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "kairos/options.h"
#include "kairos/status.h"
#include "zmq.h"

namespace kairos::bench::transport_bench {
namespace {

absl::StatusOr<std::vector<uint64_t>> ParseSizes(const std::vector<std::string>& texts) {
  std::vector<uint64_t> sizes;
  for (const std::string& t : texts) {
    absl::StatusOr<uint64_t> s = ParseSize(t);
    if (!s.ok()) return s.status();
    if (*s % sizeof(float) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(t, " is not a whole number of floats"));
    }
    sizes.push_back(*s);
  }
  return sizes;
}

}  // namespace

void AddFlags(CLI::App& app, Flags& f) {
  AddBenchmarksOption(app, f.benchmarks, kAllBenchmarks);
  app.add_option("--sizes", f.sizes, "Value sizes for raw_oneway, push, pull, push_pull")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--servers", f.servers, "Server counts of the push/pull clusters")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--workers", f.workers, "Worker counts of the push/pull clusters")
      ->delimiter(',')
      ->capture_default_str();
  AddBudgetOptions(app, f.seconds, f.warmup);
  app.add_option("--repetitions", f.repetitions,
                 "Runs of each kairos throughput/latency workload; the best is reported")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--raw-repetitions", f.raw_repetitions,
                 "Runs of each raw ZeroMQ workload (of each raw variant of a one-connection "
                 "ceiling); the best is reported")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--grid-raw-repetitions", f.grid_raw_repetitions,
                 "Runs of each raw variant of the ceiling of a push/pull cell with more than "
                 "one connection (servers x workers > 1)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--raw-variants", f.raw_variants,
                 "Raw ZeroMQ variants whose best is the ceiling: stream (kairos's message "
                 "size, PUSH->PULL, --raw-queue-bytes queued), window (the same messages "
                 "DEALER->ROUTER, one reply each, as many unanswered as kairos keeps in "
                 "flight), whole (one message per value, when larger than kairos's message)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--pairs", f.pairs,
                 "paired: raw/kairos run pairs per size and operation; the median ratio is "
                 "the verdict")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--raw-queue-bytes", f.raw_queue_bytes,
                 "raw stream and whole variants: bytes queued on each side "
                 "(ZMQ_SNDHWM/RCVHWM in messages)")
      ->capture_default_str();
  app.add_option("--window", f.window, "Outstanding requests per worker (push/pull)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--max-window-bytes", f.max_window_bytes,
                 "Cap on the value bytes a worker keeps outstanding (window >= 2 anyway)")
      ->capture_default_str();
  app.add_option("--chunk-elements", f.chunk_elements, "JobConfig::chunk_elements (floats)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--tune-allocator", f.tune_allocator,
               "Call kairos::TuneProcessAllocator() first: glibc keeps freed memory for reuse "
               "instead of giving it back (kairos-server does this by default; a program "
               "that links kairos chooses; docs/performance.md)");
  app.add_flag("--shared-context", f.shared_context,
               "All nodes share one ZeroMQ context (as LocalCluster does) instead of one "
               "each (as separate processes)");
  app.add_option("--apply-threads", f.apply_threads,
                 "ServerOptions::apply_threads of every server (-1: the library default)")
      ->check(CLI::Range(-1, 64))
      ->capture_default_str();
  app.add_option("--inline-apply-bytes", f.inline_apply_bytes,
                 "ServerOptions::inline_apply_bytes of every server (-1: the library default)")
      ->check(CLI::Range(int64_t{-1}, int64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--compression", f.compression,
                 "TableSpec::compression of the kairos workloads' table: none, fp16, bf16 or "
                 "int8 (MB/s still counts float32 value bytes)")
      ->capture_default_str();
  app.add_flag("--merge-pushes", f.merge_pushes,
               "TableSpec::merge_pushes of the kairos workloads' table: pushes that wait to "
               "be sent are summed into one message (dense, uncompressed)");
  app.add_option("--io-spin-us", f.io_spin_us,
                 "WorkerOptions::io_spin of every worker in microseconds: how long its I/O "
                 "thread polls before it sleeps (-1: the library default; 0: never)")
      ->check(CLI::Range(-1, 1000))
      ->capture_default_str();
  app.add_option("--latency-samples", f.latency_samples, "Most timed calls per latency workload")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--curve-sizes", f.curve_sizes, "Value sizes of the curve workload")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--memory-sizes", f.memory_sizes, "Table sizes of the memory workload")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--memory-policies", f.memory_policies, "Policies of the memory workload")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--memory-updaters", f.memory_updaters,
                 "Server-side optimizers of the memory workload (sgd, momentum, adam, ...)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--memory-rounds", f.memory_rounds,
                 "push + clock + pull rounds of the memory workload")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--sweep-sizes", f.sweep_sizes, "Value sizes of the sweep workload")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--sweep-windows", f.sweep_windows,
                 "Requests in flight of the sweep workload (ascending; not capped by "
                 "--max-window-bytes)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--sweep-rounds", f.sweep_rounds,
                 "sweep: rounds over every window (the median of each window is reported)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--small-sizes", f.small_sizes, "Request sizes of the small workload")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--small-windows", f.small_windows, "Requests in flight of the small workload")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--checkpoint-sizes", f.checkpoint_sizes, "Table sizes of the checkpoint workload")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--checkpoint-dir", f.checkpoint_dir,
                 "Where the checkpoint workload writes (a fresh directory under it, removed "
                 "after)")
      ->capture_default_str();
  app.add_option("--log-sizes", f.log_sizes, "Value sizes of the log workload")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--log-dir", f.log_dir,
                 "Where the log workload's servers keep their update logs (a fresh directory "
                 "under it, removed after)")
      ->capture_default_str();
  AddServerBinaryOption(app, f.server_binary);
  AddCsvOption(app, f.csv);
  app.add_flag("--quick", f.quick,
               "Smoke run: 0.1 s budgets, sizes 4K,1M, workers 1,2, memory 16M, small 1K, "
               "checkpoint 4M, log 4K (flags given explicitly still win)");
}

void ApplyQuick(const CLI::App& app, Flags& f) {
  if (!f.quick) return;
  if (app.count("--sizes") == 0) f.sizes = {"4K", "1M"};
  if (app.count("--workers") == 0) f.workers = {1, 2};
  ApplyQuickBudget(app, f.seconds, f.warmup);
  if (app.count("--latency-samples") == 0) f.latency_samples = 2000;
  if (app.count("--raw-repetitions") == 0) f.raw_repetitions = 1;
  if (app.count("--pairs") == 0) f.pairs = 1;
  if (app.count("--memory-sizes") == 0) f.memory_sizes = {"16M"};
  if (app.count("--memory-rounds") == 0) f.memory_rounds = 1;
  if (app.count("--sweep-sizes") == 0) f.sweep_sizes = {"1M"};
  if (app.count("--sweep-windows") == 0) f.sweep_windows = {1, 2};
  if (app.count("--sweep-rounds") == 0) f.sweep_rounds = 1;
  if (app.count("--checkpoint-sizes") == 0) f.checkpoint_sizes = {"4M"};
  if (app.count("--log-sizes") == 0) f.log_sizes = {"4K"};
  if (app.count("--small-sizes") == 0) f.small_sizes = {"1K"};
}

absl::StatusOr<Plan> MakePlan(const Flags& f) {
  Plan p;
  KAIROS_ASSIGN_OR_RETURN(p.benchmarks, ParseBenchmarks(f.benchmarks, kAllBenchmarks));
  auto sizes = ParseSizes(f.sizes);
  if (!sizes.ok()) return sizes.status();
  p.sizes = *sizes;
  auto curve_sizes = ParseSizes(f.curve_sizes);
  if (!curve_sizes.ok()) return curve_sizes.status();
  p.curve_sizes = *curve_sizes;
  auto memory_sizes = ParseSizes(f.memory_sizes);
  if (!memory_sizes.ok()) return memory_sizes.status();
  p.memory_sizes = *memory_sizes;
  auto sweep_sizes = ParseSizes(f.sweep_sizes);
  if (!sweep_sizes.ok()) return sweep_sizes.status();
  p.sweep_sizes = *sweep_sizes;
  if (f.sweep_windows.empty() || !std::is_sorted(f.sweep_windows.begin(), f.sweep_windows.end())) {
    return absl::InvalidArgumentError("--sweep-windows: give at least one, in rising order");
  }
  auto max_window = ParseSize(f.max_window_bytes);
  if (!max_window.ok()) return max_window.status();
  auto raw_queue = ParseSize(f.raw_queue_bytes);
  if (!raw_queue.ok()) return raw_queue.status();
  p.raw_queue_bytes = *raw_queue;
  for (const std::string& v : f.raw_variants) {
    if (v != "stream" && v != "window" && v != "whole") {
      return absl::InvalidArgumentError(
          absl::StrCat("--raw-variants: unknown variant '", v, "'; known: stream,window,whole"));
    }
  }
  for (const char* v : {"stream", "window", "whole"}) {
    if (std::find(f.raw_variants.begin(), f.raw_variants.end(), v) != f.raw_variants.end()) {
      p.raw_variants.emplace_back(v);
    }
  }
  if (p.raw_variants.empty()) {
    return absl::InvalidArgumentError("--raw-variants: name at least one variant");
  }
  for (int n : f.servers) {
    if (n < 1) return absl::InvalidArgumentError("--servers: counts must be >= 1");
  }
  for (int n : f.workers) {
    if (n < 1) return absl::InvalidArgumentError("--workers: counts must be >= 1");
  }
  p.budget = Budget{f.warmup, f.seconds};
  p.pipeline = PipelineOptions{f.window, *max_window};
  p.cluster.shared_context = f.shared_context;
  p.cluster.chunk_elements = f.chunk_elements;
  p.cluster.apply_threads = f.apply_threads;
  p.cluster.inline_apply_bytes = f.inline_apply_bytes;
  p.cluster.io_spin_us = f.io_spin_us;
  absl::StatusOr<Compression> compression = ParseCompression(f.compression);
  if (!compression.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--compression: ", compression.status().message()));
  }
  p.cluster.compression = *compression;
  p.cluster.merge_pushes = f.merge_pushes;
  if (f.merge_pushes && p.cluster.compression != Compression::kNone) {
    return absl::InvalidArgumentError("--merge-pushes: the table must not be compressed");
  }
  return p;
}

std::vector<std::string> SettingsLines(const Flags& f, const Plan& p) {
  int major = 0, minor = 0, patch = 0;
  zmq_version(&major, &minor, &patch);
  std::vector<std::string> sizes, curve_sizes, sweep_sizes;
  for (uint64_t s : p.sizes) sizes.push_back(FormatSize(s));
  for (uint64_t s : p.curve_sizes) curve_sizes.push_back(FormatSize(s));
  for (uint64_t s : p.sweep_sizes) sweep_sizes.push_back(FormatSize(s));
  return {
      absl::StrFormat("ZeroMQ:     %d.%d.%d, tcp://127.0.0.1, %s", major, minor, patch,
                      f.shared_context ? "one context shared by all nodes"
                                       : "one context (1 I/O thread) per node / per side"),
      f.tune_allocator
          ? std::string("Allocator:  tuned, kairos::TuneProcessAllocator() (freed memory kept "
                        "for reuse, allocations up to 32 MiB from the heap)")
          : std::string("Allocator:  glibc's defaults (a program that does not call "
                        "kairos::TuneProcessAllocator; --tune-allocator calls it)"),
      absl::StrFormat("Workloads:  %s", absl::StrJoin(p.benchmarks, ",")),
      absl::StrFormat("Sizes:      %s; servers %s; workers %s; curve %s",
                      absl::StrJoin(sizes, ", "), absl::StrJoin(f.servers, ","),
                      absl::StrJoin(f.workers, ","), absl::StrJoin(curve_sizes, ", ")),
      absl::StrFormat("Sweep:      sizes %s; windows %s; %d rounds (push and pull, S=1 W=1)",
                      absl::StrJoin(sweep_sizes, ", "), absl::StrJoin(f.sweep_windows, ","),
                      f.sweep_rounds),
      absl::StrFormat("Budget:     %.2f s warm-up + %.2f s measured per run; best of %d runs "
                      "(raw ZeroMQ: best of %d per variant, of %d for a ceiling of several "
                      "connections)",
                      f.warmup, f.seconds, f.repetitions, f.raw_repetitions,
                      f.grid_raw_repetitions),
      absl::StrFormat("kairos:     window %d requests (<= %s) per worker; chunk %d floats; "
                      "policy asp; compression %s; merge_pushes %s; server apply_threads %s, "
                      "inline_apply_bytes %s; worker io_spin %s",
                      f.window, FormatSize(p.pipeline.max_window_bytes), f.chunk_elements,
                      f.compression, f.merge_pushes ? "on" : "off",
                      f.apply_threads < 0 ? "default" : absl::StrCat(f.apply_threads),
                      f.inline_apply_bytes < 0 ? "default" : FormatSize(f.inline_apply_bytes),
                      f.io_spin_us < 0 ? absl::FormatDuration(WorkerOptions().io_spin)
                                       : absl::StrCat(f.io_spin_us, "us")),
      absl::StrFormat(
          "Ceiling:    'vs raw' divides by the best of the raw ZeroMQ variants %s moving the "
          "same bytes as the kairos run over as many connections at once (one pair per "
          "worker and server, counted as kairos counts): stream = kairos's message (its "
          "chunk, <= %d floats) PUSH->PULL with %s queued per side; window = the same "
          "messages DEALER->ROUTER with a reply each and as many unanswered as kairos keeps "
          "in flight; whole = one message per value. paired: the best variant of each pair",
          absl::StrJoin(p.raw_variants, ","), f.chunk_elements, FormatSize(p.raw_queue_bytes)),
      "Units:      MB/s = 10^6 value bytes per second, all workers together; CPU us/MB = "
      "CPU time of the whole process (all threads, user + system) per MB; flt/MB = page "
      "faults of the whole process per MB (memory touched afresh: 256 per MB when every "
      "byte lands in pages the allocator gave back); latency in us",
  };
}

}  // namespace kairos::bench::transport_bench
