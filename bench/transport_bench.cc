// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_transport_bench: the end-to-end transport benchmark (in the manner of leveldb's
// db_bench). It measures, over tcp://127.0.0.1 on this machine:
//
//   raw_oneway  the ceiling: one-way throughput of bare ZeroMQ sockets (zero-copy sends)
//               moving the same bytes as kairos over as many connections, in kairos's
//               message (chunk) size, streamed or with kairos's messages in flight, and in
//               one message per value; the best of these variants is the ceiling
//   raw_rtt     the round trip of a small message between two bare ZeroMQ sockets
//   push        pipelined zero-copy Worker::PushAsync of whole values, S servers, W workers
//   pull        pipelined Worker::PullAsync into a kairos::ConstBuffer (zero-copy within a chunk)
//   push_pull   push and pull alternately
//   push_copy   the span-copying PushAsync (1 MiB, 1 server, 1 worker): the cost of the copy
//   pull_copy   PullAsync into preallocated memory (1 MiB, 1 server, 1 worker): the same
//   push_noop   push (1 MiB, 1 server, 1 worker) to servers whose updater does nothing: the
//               cost of moving and dispatching pushes without the SGD arithmetic
//   paired      push and pull against the raw variants in back-to-back pairs (sizes >= 1
//               MiB, 1 server, 1 worker): the median ratio to the best raw variant of each
//               pair is the throughput verdict
//   sweep       push and pull (1 server, 1 worker) at each --sweep-sizes value with each
//               --sweep-windows number of requests in flight, --sweep-rounds rounds (the
//               windows in rising, then falling order): the median of each, and a verdict
//               per size, on each window's best round, that flags a window below 80% of
//               the best smaller window (throughput must not collapse as
//               requests pile up; a verdict, not a test)
//   push_sync   blocking Worker::Push of 64 B and 4 KiB: median and p99 latency
//   small       pipelined pushes of 64 B, 1 KiB and 4 KiB (1 server, 1 worker) with 1 and 16
//               in flight, against raw ZeroMQ DEALER -> ROUTER with 1-byte replies and the
//               same window: requests/s and CPU us per request vs per raw message (the
//               target: at most 2x; 1 KiB x 16 in flight at least 100k requests/s)
//   pull_sync   blocking Worker::Pull of 64 B and 4 KiB
//   curve       push and pull (4 KiB and 1 MiB, 1 server, 1 worker) with CURVE keys against
//               the same workload without keys, in back-to-back pairs: the median ratio is
//               the throughput cost of encryption (reported, not a target)
//   memory      peak resident memory of a kairos-server child process holding one table
//   checkpoint  Server::Checkpoint of one table (adam: values + 2 floats of state per
//               element) to --checkpoint-dir, fsynced: seconds and MB/s of file; and 1 MiB
//               push throughput while checkpoints run back to back against the same
//               cluster without them, in pairs (docs/durability.md; reported, not a target)
//   log         pipelined pushes (--log-sizes, default 4 KiB and 1 MiB; 1 server, 1 worker)
//               with the server's update log off, at log_sync process and at log_sync
//               machine (under --log-dir), in rounds that alternate the three: MB/s of
//               each and the median same-run ratio against no log (docs/durability.md;
//               reported, not a target)
//
// and then checks the targets (docs/benchmarks.md). Each workload prints one line; --csv
// writes them to a file too. Run with --help for the flags; --quick is a smoke run for CI.
//
//   kairos_transport_bench [--benchmarks=push,pull] [--sizes=1M,16M] [--seconds=1]
//                          [--servers=1,2] [--workers=1,2,3,4] [--csv=FILE] [--quick]
//
// The nodes log at level error unless KAIROS_LOG_LEVEL says otherwise: every node without
// keys would say once that its traffic is not encrypted.

#include <stdlib.h>

#include <algorithm>
#include <thread>
#include <filesystem>
#include <functional>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "bench/bench_common.h"
#include "bench/bench_report.h"
#include "bench/kairos_workloads.h"
#include "bench/memory_workload.h"
#include "bench/raw_zmq_workloads.h"
#include "kairos/allocator.h"
#include "kairos/options.h"
#include "kairos/status.h"
#include "zmq.h"

namespace kairos::bench {
namespace {

constexpr char kAllBenchmarks[] =
    "raw_oneway,raw_rtt,push,pull,push_pull,push_copy,pull_copy,push_noop,paired,sweep,"
    "push_sync,pull_sync,small,curve,memory,checkpoint,log";
constexpr uint64_t kSmallValueBytes = 64;      // 16 floats
constexpr uint64_t kRawSmallBytes = 100;       // a 64 B push is ~100 bytes on the wire
constexpr uint64_t kPageValueBytes = 4096;     // 4 KiB
constexpr uint64_t kCopyValueBytes = 1 << 20;  // push_copy, pull_copy

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

// --quick: small budgets, except where a flag was given explicitly.
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
  if (f.sweep_windows.empty() ||
      !std::is_sorted(f.sweep_windows.begin(), f.sweep_windows.end())) {
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
                      "policy asp; server apply_threads %s, inline_apply_bytes %s; worker "
                      "io_spin %s",
                      f.window, FormatSize(p.pipeline.max_window_bytes), f.chunk_elements,
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

// Runs `run` `n` times and keeps the best result (better(a, b): a beats b); the first error
// ends the runs.
template <typename T, typename Run, typename Better>
absl::StatusOr<T> BestOf(int n, const Run& run, const Better& better) {
  absl::StatusOr<T> best = run();
  for (int i = 1; i < n && best.ok(); ++i) {
    absl::StatusOr<T> next = run();
    if (!next.ok()) return next.status();
    if (better(*next, *best)) best = std::move(next);
  }
  return best;
}

bool Faster(const Throughput& a, const Throughput& b) { return a.mb_per_s > b.mb_per_s; }
bool Quicker(const LatencySummary& a, const LatencySummary& b) { return a.p50_us < b.p50_us; }

Result MakeResult(std::string workload, uint64_t value_bytes, int servers = 0, int workers = 0) {
  Result r;
  r.workload = std::move(workload);
  r.value_bytes = value_bytes;
  r.servers = servers;
  r.workers = workers;
  return r;
}

// The raw ceiling of a kairos run (the header's rule): the best raw variant.
struct Ceiling {
  double mb_per_s = 0;
  double cpu_us_per_mb = 0;  // 0 when not measured
  std::string variant;       // "stream", "window" or "whole"
};
// A kairos run's shape: value bytes, servers, workers.
using CeilingKey = std::tuple<uint64_t, int, int>;

// Runs the workloads and keeps what later ones compare with.
class Runner {
 public:
  Runner(const Flags& flags, const Plan& plan, Report& report)
      : flags_(flags), plan_(plan), report_(report) {}

  // Runs every selected workload; false when one failed.
  bool RunAll() {
    for (const std::string& b : plan_.benchmarks) {
      if (b == "raw_oneway") RawOneWayAll();
      if (b == "raw_rtt") RawRttAll();
      if (b == "push") Matrix(Op::kPush);
      if (b == "pull") Matrix(Op::kPull);
      if (b == "push_pull") Matrix(Op::kPushPull);
      if (b == "push_copy") Copying(Op::kPushCopy);
      if (b == "pull_copy") Copying(Op::kPullCopy);
      if (b == "push_noop") PushNoop();
      if (b == "paired") Paired();
      if (b == "sweep") Sweep();
      if (b == "push_sync") SyncAll(Op::kPush);
      if (b == "pull_sync") SyncAll(Op::kPull);
      if (b == "curve") Curve();
      if (b == "memory") MemoryAll();
      if (b == "checkpoint") CheckpointAll();
      if (b == "log") LogAll();
      if (b == "small") Small();
    }
    return ok_;
  }

 private:
  void Fail(const std::string& workload, const absl::Status& s) {
    ok_ = false;
    std::cerr << "ERROR: " << workload << ": " << s << std::endl;
  }

  static std::string BestNote(int runs) {
    return runs > 1 ? absl::StrFormat(", best of %d", runs) : std::string();
  }

  // One raw variant of the ceiling of a kairos run: what it is and how to run it.
  struct RawVariant {
    std::string name;         // "stream", "window", "whole"
    std::string description;  // e.g. "16 x 1 MiB msgs PUSH->PULL, 64 MiB queued"
    RawSpec spec;
  };

  // The raw variants (--raw-variants) that move the same bytes as a kairos run of `size`
  // values with `servers` servers and `workers` workers: kairos's message size over as many
  // connections, streamed (stream) or with kairos's messages in flight (window), and one
  // message per value (whole; left out when that is kairos's message size already).
  std::vector<RawVariant> RawVariants(uint64_t size, int servers, int workers) const {
    const WireShape shape =
        KairosWireShape(size, servers, workers, plan_.cluster.chunk_elements, plan_.pipeline);
    const std::string conns =
        shape.connections > 1 ? absl::StrFormat(" x %d conns", shape.connections) : "";
    std::vector<RawVariant> variants;
    for (const std::string& v : plan_.raw_variants) {
      RawVariant rv;
      rv.name = v;
      rv.spec.connections = shape.connections;
      rv.spec.queue_bytes = plan_.raw_queue_bytes;
      rv.spec.message_bytes = v == "whole" ? size : shape.message_bytes;
      // One message per value is the stream variant already (unless stream is left out).
      if (v == "whole" && size == shape.message_bytes && variants.size() > 0 &&
          variants.front().name == "stream") {
        continue;
      }
      if (v == "window") {
        rv.spec.mode = RawMode::kWindow;
        rv.spec.window = shape.messages_in_flight;
        rv.description =
            absl::StrFormat("%s msgs DEALER->ROUTER, %d in flight%s",
                            FormatSize(shape.message_bytes), shape.messages_in_flight, conns);
      } else if (v == "stream") {
        rv.description =
            absl::StrFormat("%s msgs PUSH->PULL, %s queued%s", FormatSize(rv.spec.message_bytes),
                            FormatSize(plan_.raw_queue_bytes), conns);
      } else {
        rv.description = absl::StrFormat("one %s msg per value PUSH->PULL, %s queued%s",
                                         FormatSize(rv.spec.message_bytes),
                                         FormatSize(plan_.raw_queue_bytes), conns);
      }
      variants.push_back(std::move(rv));
    }
    return variants;
  }

  // The ceiling of a kairos run of `size` values, S servers and W workers (the header's
  // rule): the best of its raw variants, measured on first use (best of --raw-repetitions
  // runs of each variant for one connection, of --grid-raw-repetitions for several), one
  // `raw_oneway` line per variant. Null when a raw run failed.
  const Ceiling* EnsureCeiling(uint64_t size, int servers, int workers) {
    const CeilingKey key{size, servers, workers};
    if (auto it = ceilings_.find(key); it != ceilings_.end()) return &it->second;
    const std::vector<RawVariant> variants = RawVariants(size, servers, workers);
    if (variants.empty()) return nullptr;
    const int runs = variants.front().spec.connections > 1 ? flags_.grid_raw_repetitions
                                                           : flags_.raw_repetitions;
    std::vector<Throughput> measured;
    for (const RawVariant& v : variants) {
      absl::StatusOr<Throughput> t = BestOf<Throughput>(
          runs, [&] { return RawOneWay(v.spec, plan_.budget); }, Faster);
      if (!t.ok()) {
        Fail("raw_oneway", t.status());
        return nullptr;
      }
      measured.push_back(*t);
    }
    std::size_t best = 0;
    for (std::size_t i = 1; i < measured.size(); ++i) {
      if (measured[i].mb_per_s > measured[best].mb_per_s) best = i;
    }
    for (std::size_t i = 0; i < measured.size(); ++i) {
      Result r = MakeResult("raw_oneway", size, servers, workers);
      r.mb_per_s = measured[i].mb_per_s;
      r.ops_per_s = measured[i].ops_per_s;
      if (measured[i].cpu_us_per_mb > 0) r.cpu_us_per_mb = measured[i].cpu_us_per_mb;
      r.faults_per_mb = measured[i].faults_per_mb;
      r.note = absl::StrFormat("%s: %s%s%s", variants[i].name, variants[i].description,
                               BestNote(runs), i == best ? "  <- ceiling" : "");
      report_.Add(r);
    }
    Ceiling c;
    c.mb_per_s = measured[best].mb_per_s;
    c.cpu_us_per_mb = measured[best].cpu_us_per_mb;
    c.variant = variants[best].name;
    return &ceilings_.emplace(key, c).first->second;
  }

  void RawOneWayAll() {
    for (uint64_t size : plan_.sizes) EnsureCeiling(size, 1, 1);
  }

  void RawRttAll() {
    for (uint64_t size : {kRawSmallBytes, kPageValueBytes}) {
      absl::StatusOr<LatencySummary> l = BestOf<LatencySummary>(
          flags_.raw_repetitions,
          [&] { return RawRoundTrip(size, plan_.budget, flags_.latency_samples); }, Quicker);
      if (!l.ok()) {
        Fail("raw_rtt", l.status());
        continue;
      }
      raw_rtt_p50_[size] = l->p50_us;
      Result r = MakeResult("raw_rtt", size);
      r.latency = *l;
      r.note = absl::StrFormat("DEALER<->ROUTER echo, %d samples%s", l->samples,
                               BestNote(flags_.raw_repetitions));
      report_.Add(r);
    }
  }

  // push, pull or push_pull for every size, server count and worker count.
  void Matrix(Op op) {
    for (uint64_t size : plan_.sizes) {
      for (int s : flags_.servers) {
        for (int w : flags_.workers) Pipelined(op, size, s, w);
      }
    }
  }

  // `name` and `settings` override the workload's name and the plan's cluster settings.
  // `always_ceiling`: compare with the ceiling even when raw_oneway is not selected.
  void Pipelined(Op op, uint64_t size, int servers, int workers, std::string name = "",
                 const ClusterSettings* settings = nullptr, bool always_ceiling = false) {
    if (name.empty()) name = OpName(op);
    auto cluster = BenchCluster::Create(servers, workers, size / sizeof(float),
                                        settings != nullptr ? *settings : plan_.cluster);
    if (!cluster.ok()) return Fail(name, cluster.status());
    absl::StatusOr<Throughput> t = BestOf<Throughput>(
        flags_.repetitions,
        [&] { return RunPipelined(**cluster, op, size, plan_.budget, plan_.pipeline); }, Faster);
    if (absl::Status s = (*cluster)->Shutdown(); t.ok() && !s.ok()) t = s;
    if (!t.ok()) return Fail(name, t.status());
    Result r = MakeResult(name, size, servers, workers);
    r.mb_per_s = t->mb_per_s;
    r.ops_per_s = t->ops_per_s;
    if (t->cpu_us_per_mb > 0) r.cpu_us_per_mb = t->cpu_us_per_mb;
    r.faults_per_mb = t->faults_per_mb;
    std::string vs;
    if (ceilings_wanted_ || always_ceiling) {
      if (const Ceiling* c = EnsureCeiling(size, servers, workers);
          c != nullptr && c->mb_per_s > 0) {
        r.raw_ratio = t->mb_per_s / c->mb_per_s;
        vs = absl::StrFormat("; vs raw %s %.0f MB/s", c->variant, c->mb_per_s);
      }
    }
    r.note = absl::StrFormat("window %d%s%s", EffectiveWindow(plan_.pipeline, size),
                             BestNote(flags_.repetitions), vs);
    report_.Add(r);
  }

  void Copying(Op op) {
    Pipelined(op, kCopyValueBytes, 1, 1, "", nullptr, /*always_ceiling=*/true);
  }

  // push with servers that discard the gradients: what moving and dispatching a push costs
  // without the update's arithmetic.
  void PushNoop() {
    ClusterSettings settings = plan_.cluster;
    settings.discard_updates = true;
    Pipelined(Op::kPush, kCopyValueBytes, 1, 1, "push_noop", &settings, /*always_ceiling=*/true);
  }

  // paired: for each size of 1 MiB and more, and for push, pull and push_noop (1 server, 1
  // worker; push_noop is not a target, it shows what the update's arithmetic costs),
  // --pairs rounds of one run of every raw variant of the ceiling and one kairos run back
  // to back (alternating whether kairos goes first or last), on one cluster. Each pair gives
  // the ratio of kairos to the best raw variant of that pair; the median is the verdict. On
  // a shared VM raw ZeroMQ drifts by tens of percent within minutes, so a best-of-N raw
  // figure and a best-of-N kairos figure taken minutes apart compare two different machines.
  void Paired() {
    for (uint64_t size : plan_.sizes) {
      if (size < (uint64_t{1} << 20)) continue;
      const std::vector<RawVariant> variants = RawVariants(size, 1, 1);
      struct Variant {
        const char* name;  // the workload column is 16 characters wide
        Op op;
        bool discard_updates;
      };
      for (const Variant& v : {Variant{"paired_push", Op::kPush, false},
                               Variant{"paired_pull", Op::kPull, false},
                               Variant{"paired_noop", Op::kPush, true}}) {
        const std::string name = v.name;
        const Op op = v.op;
        ClusterSettings settings = plan_.cluster;
        settings.discard_updates = v.discard_updates;
        auto cluster = BenchCluster::Create(1, 1, size / sizeof(float), settings);
        if (!cluster.ok()) return Fail(name, cluster.status());
        std::vector<double> ratios, kairos_mb, ceiling_mb, kairos_cpu, ceiling_cpu, kairos_faults;
        std::vector<std::vector<double>> variant_mb(variants.size());
        std::vector<int> wins(variants.size(), 0);
        absl::Status status;
        for (int i = 0; i < flags_.pairs && status.ok(); ++i) {
          std::vector<Throughput> raw;
          absl::StatusOr<Throughput> k;
          auto run_raw = [&] {
            for (const RawVariant& rv : variants) {
              absl::StatusOr<Throughput> t = RawOneWay(rv.spec, plan_.budget);
              if (!t.ok()) {
                status = t.status();
                return;
              }
              raw.push_back(*t);
            }
          };
          auto run_kairos = [&] {
            k = RunPipelined(**cluster, op, size, plan_.budget, plan_.pipeline);
          };
          if (i % 2 == 0) {
            run_raw();
            if (status.ok()) run_kairos();
          } else {
            run_kairos();
            if (k.ok()) run_raw();
          }
          if (!k.ok() && status.ok()) status = k.status();
          if (!status.ok()) break;
          std::size_t best = 0;
          for (std::size_t j = 0; j < raw.size(); ++j) {
            variant_mb[j].push_back(raw[j].mb_per_s);
            if (raw[j].mb_per_s > raw[best].mb_per_s) best = j;
          }
          if (raw[best].mb_per_s <= 0) break;
          ++wins[best];
          ratios.push_back(k->mb_per_s / raw[best].mb_per_s);
          kairos_mb.push_back(k->mb_per_s);
          ceiling_mb.push_back(raw[best].mb_per_s);
          kairos_cpu.push_back(k->cpu_us_per_mb);
          ceiling_cpu.push_back(raw[best].cpu_us_per_mb);
          if (k->faults_per_mb.has_value()) kairos_faults.push_back(*k->faults_per_mb);
        }
        if (absl::Status s = (*cluster)->Shutdown(); status.ok()) status = s;
        if (!status.ok()) return Fail(name, status);
        if (ratios.empty()) continue;
        Result r = MakeResult(name, size, 1, 1);
        r.mb_per_s = Median(kairos_mb);
        r.raw_ratio = Median(ratios);
        if (Median(kairos_cpu) > 0) r.cpu_us_per_mb = Median(kairos_cpu);
        if (!kairos_faults.empty()) r.faults_per_mb = Median(kairos_faults);
        // Which variant was the ceiling, how often, and each variant's median.
        std::vector<std::string> won, medians;
        for (std::size_t j = 0; j < variants.size(); ++j) {
          if (wins[j] > 0) won.push_back(absl::StrFormat("%s %d", variants[j].name, wins[j]));
          medians.push_back(absl::StrFormat("%s %.0f", variants[j].name, Median(variant_mb[j])));
        }
        r.note = absl::StrFormat(
            "median of %d pairs: ratio %.0f-%.0f%%; ceiling %.0f MB/s (%.0f us/MB), best raw "
            "variant in pairs: %s; raw medians MB/s: %s",
            ratios.size(), 100 * *std::min_element(ratios.begin(), ratios.end()),
            100 * *std::max_element(ratios.begin(), ratios.end()), Median(ceiling_mb),
            Median(ceiling_cpu), absl::StrJoin(won, ", "), absl::StrJoin(medians, ", "));
        report_.Add(r);
      }
    }
  }

  // sweep: for push and pull (1 server, 1 worker) and each --sweep-sizes value, on one
  // cluster made once, --sweep-rounds rounds over every --sweep-windows window (rising,
  // then falling order, so that a drift of the machine does not favour one end), not capped
  // by --max-window-bytes; one line per window (the median) against the same run's raw
  // ceiling, and a verdict per operation and size (JudgeWindows) on the best round of each
  // window: a collapse slows every round, while other processes on a shared machine slow
  // some rounds of any window (medians of 3 rounds moved by 2x on the loaded 2-core VM).
  void Sweep() {
    for (const Op op : {Op::kPush, Op::kPull}) {
      for (uint64_t size : plan_.sweep_sizes) {
        const std::string name = absl::StrCat("sweep_", OpName(op));
        const Ceiling* ceiling = EnsureCeiling(size, 1, 1);
        auto cluster = BenchCluster::Create(1, 1, size / sizeof(float), plan_.cluster);
        if (!cluster.ok()) return Fail(name, cluster.status());
        const std::vector<int>& windows = flags_.sweep_windows;
        std::vector<std::vector<double>> mb(windows.size()), cpu(windows.size()),
            faults(windows.size());
        absl::Status status;
        for (int round = 0; round < flags_.sweep_rounds && status.ok(); ++round) {
          for (std::size_t k = 0; k < windows.size() && status.ok(); ++k) {
            const std::size_t i = round % 2 == 0 ? k : windows.size() - 1 - k;
            const PipelineOptions pipeline{windows[i], std::numeric_limits<uint64_t>::max()};
            absl::StatusOr<Throughput> t =
                RunPipelined(**cluster, op, size, plan_.budget, pipeline);
            if (!t.ok()) {
              status = t.status();
              break;
            }
            mb[i].push_back(t->mb_per_s);
            cpu[i].push_back(t->cpu_us_per_mb);
            if (t->faults_per_mb.has_value()) faults[i].push_back(*t->faults_per_mb);
          }
        }
        if (absl::Status s = (*cluster)->Shutdown(); status.ok()) status = s;
        if (!status.ok()) return Fail(name, status);
        std::vector<double> bests;
        for (std::size_t i = 0; i < windows.size(); ++i) {
          Result r = MakeResult(name, size, 1, 1);
          r.mb_per_s = Median(mb[i]);
          bests.push_back(*std::max_element(mb[i].begin(), mb[i].end()));
          if (Median(cpu[i]) > 0) r.cpu_us_per_mb = Median(cpu[i]);
          if (!faults[i].empty()) r.faults_per_mb = Median(faults[i]);
          std::string vs;
          if (ceiling != nullptr && ceiling->mb_per_s > 0) {
            r.raw_ratio = *r.mb_per_s / ceiling->mb_per_s;
            vs = absl::StrFormat("; vs raw %s %.0f MB/s", ceiling->variant, ceiling->mb_per_s);
          }
          r.note = absl::StrFormat("window %d, median of %d (%.0f-%.0f MB/s)%s", windows[i],
                                   mb[i].size(), *std::min_element(mb[i].begin(), mb[i].end()),
                                   *std::max_element(mb[i].begin(), mb[i].end()), vs);
          report_.Add(r);
        }
        sweep_verdicts_.push_back(
            {std::string(OpName(op)), size, JudgeWindows(windows, bests)});
      }
    }
  }

  // curve: for each --curve-sizes value and for push and pull (1 server, 1 worker), --pairs
  // rounds of one run without keys and one with CURVE keys, back to back (alternating which
  // goes first), each on its own cluster made once. The median ratio (CURVE / plain) is the
  // throughput cost of encryption, taken on the same machine in the same minute.
  void Curve() {
    absl::StatusOr<CurveKeys> keys = GenerateCurveKeys();
    if (!keys.ok()) return Fail("curve", keys.status());
    for (uint64_t size : plan_.curve_sizes) {
      for (const Op op : {Op::kPush, Op::kPull}) {
        const std::string name = absl::StrCat("curve_", OpName(op));
        ClusterSettings curve_settings = plan_.cluster;
        curve_settings.keys = *keys;
        auto plain = BenchCluster::Create(1, 1, size / sizeof(float), plan_.cluster);
        if (!plain.ok()) return Fail(name, plain.status());
        auto curve = BenchCluster::Create(1, 1, size / sizeof(float), curve_settings);
        if (!curve.ok()) return Fail(name, curve.status());
        std::vector<double> ratios, curve_mb, curve_ops, plain_mb, curve_cpu, plain_cpu;
        absl::Status status;
        for (int i = 0; i < flags_.pairs && status.ok(); ++i) {
          absl::StatusOr<Throughput> p, c;
          auto run_plain = [&] {
            p = RunPipelined(**plain, op, size, plan_.budget, plan_.pipeline);
          };
          auto run_curve = [&] {
            c = RunPipelined(**curve, op, size, plan_.budget, plan_.pipeline);
          };
          if (i % 2 == 0) {
            run_plain();
            run_curve();
          } else {
            run_curve();
            run_plain();
          }
          if (!p.ok()) status = p.status();
          if (!c.ok()) status = c.status();
          if (!status.ok() || p->mb_per_s <= 0) break;
          ratios.push_back(c->mb_per_s / p->mb_per_s);
          curve_mb.push_back(c->mb_per_s);
          curve_ops.push_back(c->ops_per_s);
          plain_mb.push_back(p->mb_per_s);
          curve_cpu.push_back(c->cpu_us_per_mb);
          plain_cpu.push_back(p->cpu_us_per_mb);
        }
        if (absl::Status s = (*plain)->Shutdown(); status.ok()) status = s;
        if (absl::Status s = (*curve)->Shutdown(); status.ok()) status = s;
        if (!status.ok()) return Fail(name, status);
        if (ratios.empty()) continue;
        Result r = MakeResult(name, size, 1, 1);
        r.mb_per_s = Median(curve_mb);
        r.ops_per_s = Median(curve_ops);
        if (Median(curve_cpu) > 0) r.cpu_us_per_mb = Median(curve_cpu);
        curve_ratios_.push_back({name, size, Median(ratios)});
        r.note = absl::StrFormat(
            "CURVE/plain %.0f%% (median of %d pairs, %.0f-%.0f%%); plain %.0f MB/s (%.0f us/MB)",
            100 * Median(ratios), ratios.size(),
            100 * *std::min_element(ratios.begin(), ratios.end()),
            100 * *std::max_element(ratios.begin(), ratios.end()), Median(plain_mb),
            Median(plain_cpu));
        report_.Add(r);
      }
    }
  }

 public:
  // sweep: the verdict of each operation and size, in order.
  struct SweepVerdict {
    std::string op;
    uint64_t value_bytes = 0;
    WindowVerdict verdict;
  };
  const std::vector<SweepVerdict>& sweep_verdicts() const { return sweep_verdicts_; }

  // curve: the median CURVE / plain throughput ratio of each workload and size, in order.
  struct CurveRatio {
    std::string workload;
    uint64_t value_bytes = 0;
    double ratio = 0;
  };
  const std::vector<CurveRatio>& curve_ratios() const { return curve_ratios_; }
  // The ceiling measured for a run shape, or null.
  const Ceiling* FindCeiling(uint64_t size, int servers, int workers) const {
    auto it = ceilings_.find(CeilingKey{size, servers, workers});
    return it == ceilings_.end() ? nullptr : &it->second;
  }

 private:
  static double Median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  void SyncAll(Op op) {
    const std::string name = absl::StrCat(OpName(op), "_sync");
    for (uint64_t size : {kSmallValueBytes, kPageValueBytes}) {
      auto cluster = BenchCluster::Create(1, 1, size / sizeof(float), plan_.cluster);
      if (!cluster.ok()) return Fail(name, cluster.status());
      absl::StatusOr<LatencySummary> l = BestOf<LatencySummary>(
          flags_.repetitions,
          [&] { return RunSync(**cluster, op, size, plan_.budget, flags_.latency_samples); },
          Quicker);
      if (absl::Status s = (*cluster)->Shutdown(); l.ok() && !s.ok()) l = s;
      if (!l.ok()) return Fail(name, l.status());
      Result r = MakeResult(name, size, 1, 1);
      r.latency = *l;
      const uint64_t raw_size = size == kSmallValueBytes ? kRawSmallBytes : size;
      if (auto raw = raw_rtt_p50_.find(raw_size); raw != raw_rtt_p50_.end()) {
        r.raw_p50_us = raw->second;
        r.note = absl::StrFormat("p50 = raw RTT(%s) + %.1f us", FormatSize(raw_size),
                                 l->p50_us - raw->second);
      }
      report_.Add(r);
    }
  }

  void MemoryAll() {
    for (uint64_t size : plan_.memory_sizes) {
      for (const std::string& policy : flags_.memory_policies) {
        for (const std::string& updater : flags_.memory_updaters) {
          absl::StatusOr<MemoryFigures> m = MeasureServerMemory(flags_.server_binary, size, policy,
                                                                flags_.memory_rounds, updater);
          if (!m.ok()) {
            Fail("memory", m.status());
            continue;
          }
          Result r = MakeResult("memory", size, 1, 1);
          // The policy column names the optimizer too unless it is the default sgd.
          r.policy = updater == "sgd" ? policy : absl::StrCat(policy, "/", updater);
          r.rss_bytes = m->peak_rss_bytes;
          r.baseline_rss_bytes = m->baseline_rss_bytes;
          r.bound_bytes = m->bound_bytes;
          r.note = absl::StrFormat(
              "%s, %s (%d state floats per element): server VmHWM %s = %.2f x table "
              "(baseline %s, after %s); bound %s: %s",
              policy, updater, m->state_per_element, FormatSize(m->peak_rss_bytes),
              static_cast<double>(m->peak_rss_bytes) / size, FormatSize(m->baseline_rss_bytes),
              FormatSize(m->final_rss_bytes), FormatSize(m->bound_bytes),
              m->peak_rss_bytes <= m->bound_bytes ? "ok" : "OVER");
          report_.Add(r);
        }
      }
    }
  }

  // The small workload (see the file comment): best of --repetitions on each side.
  void Small() {
    for (const std::string& text : flags_.small_sizes) {
      absl::StatusOr<uint64_t> size = ParseSize(text);
      if (!size.ok() || *size == 0 || *size % 4 != 0) {
        Fail("small", absl::InvalidArgumentError(absl::StrCat("bad size ", text)));
        continue;
      }
      auto cluster = BenchCluster::Create(1, 1, *size / sizeof(float), plan_.cluster);
      if (!cluster.ok()) return Fail("small", cluster.status());
      for (const int window : flags_.small_windows) {
        PipelineOptions pipeline = plan_.pipeline;
        pipeline.window = window;
        absl::StatusOr<Throughput> k = BestOf<Throughput>(
            flags_.repetitions,
            [&] { return RunPipelined(**cluster, Op::kPush, *size, plan_.budget, pipeline); },
            Faster);
        RawSpec spec;
        spec.message_bytes = *size;
        spec.mode = RawMode::kWindow;
        spec.window = window;
        absl::StatusOr<Throughput> raw = BestOf<Throughput>(
            flags_.raw_repetitions, [&] { return RawOneWay(spec, plan_.budget); }, Faster);
        if (!k.ok() || !raw.ok()) {
          Fail(absl::StrCat("small ", text, " window ", window), k.ok() ? raw.status() : k.status());
          continue;
        }
        const double bytes = static_cast<double>(*size);
        const double k_cpu = k->cpu_us_per_mb * bytes / kMegabyte;    // us per request
        const double raw_cpu = raw->cpu_us_per_mb * bytes / kMegabyte;  // us per message
        Result r = MakeResult("small", *size, 1, 1);
        r.ops_per_s = k->ops_per_s;
        r.mb_per_s = k->mb_per_s;
        r.cpu_us_per_mb = k->cpu_us_per_mb;
        r.note = absl::StrFormat(
            "window %d: %.0f requests/s, CPU %.1f us per request; raw ZeroMQ %.0f msgs/s, "
            "%.1f us per message: %.2fx",
            window, k->ops_per_s, k_cpu, raw->ops_per_s, raw_cpu,
            raw_cpu > 0 ? k_cpu / raw_cpu : 0.0);
        report_.Add(r);
        small_verdicts_.push_back({*size, window, k->ops_per_s, k_cpu, raw_cpu});
      }
    }
  }

 public:
  struct SmallVerdict {
    uint64_t bytes;
    int window;
    double requests_per_s, cpu_us, raw_cpu_us;
  };
  const std::vector<SmallVerdict>& small_verdicts() const { return small_verdicts_; }

 private:
  std::vector<SmallVerdict> small_verdicts_;

  // The checkpoint workload (see the file comment).
  void CheckpointAll() {
    ForEachSizeInTempDir("checkpoint", flags_.checkpoint_sizes, flags_.checkpoint_dir,
                         [this](uint64_t size, const std::string& dir) {
                           return Checkpoint(size, dir);
                         });
  }

  // Runs `run` once per size of `sizes` (a whole number of floats, > 0) with a fresh
  // directory under `parent`, removed after; a bad size or a failed run fails `name`.
  void ForEachSizeInTempDir(const char* name, const std::vector<std::string>& sizes,
                            const std::string& parent,
                            const std::function<absl::Status(uint64_t, const std::string&)>& run) {
    for (const std::string& text : sizes) {
      absl::StatusOr<uint64_t> size = ParseSize(text);
      if (!size.ok() || *size % 4 != 0 || *size == 0) {
        Fail(name, absl::InvalidArgumentError(absl::StrCat("bad size ", text)));
        continue;
      }
      std::string dir = absl::StrCat(parent, "/kairos-bench-", name, "-XXXXXX");
      if (::mkdtemp(dir.data()) == nullptr) {
        Fail(name, absl::UnavailableError(absl::StrCat("cannot create ", dir)));
        continue;
      }
      absl::Status s = run(*size, dir);
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
      if (!s.ok()) Fail(absl::StrCat(name, " ", text), s);
    }
  }

  absl::Status Checkpoint(uint64_t size, const std::string& dir) {
    ClusterSettings settings = plan_.cluster;
    settings.updater = "adam";
    settings.checkpoint_dir = dir;
    KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<BenchCluster> cluster,
                            BenchCluster::Create(1, 1, size / 4, settings));
    // Values, then three checkpoints timed one by one.
    KAIROS_RETURN_IF_ERROR(RunPipelined(*cluster, Op::kPush, size, Budget{0, 0.05},
                                        plan_.pipeline)
                               .status());
    std::vector<double> seconds;
    for (int i = 0; i < 3; ++i) {
      const absl::Time start = absl::Now();
      KAIROS_RETURN_IF_ERROR(cluster->server(0).Checkpoint(absl::Minutes(5)).status());
      seconds.push_back(absl::ToDoubleSeconds(absl::Now() - start));
    }
    std::sort(seconds.begin(), seconds.end());
    const double file_mb = 3.0 * static_cast<double>(size) / kMegabyte;  // adam: 3 floats
    Result r = MakeResult("checkpoint", size, 1, 1);
    r.policy = "asp/adam";
    r.note = absl::StrFormat(
        "checkpoint of %s of values + %s of adam state, fsynced: median %.3f s (%.0f MB/s of "
        "file), range %.3f-%.3f s",
        FormatSize(size), FormatSize(2 * size), seconds[1], file_mb / seconds[1], seconds[0],
        seconds[2]);
    report_.Add(r);
    // Pushes of 1 MiB values meanwhile: a cluster of its own, whose server checkpoints
    // back to back during the "with" runs of each pair.
    const uint64_t push_bytes = uint64_t{1} << 20;
    ClusterSettings push_settings = settings;
    KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<BenchCluster> pushing,
                            BenchCluster::Create(1, 1, size / 4, push_settings));
    std::vector<double> ratios;
    uint64_t taken = 0;
    for (int pair = 0; pair < std::max(1, flags_.pairs); ++pair) {
      KAIROS_ASSIGN_OR_RETURN(Throughput without,
                              RunPipelined(*pushing, Op::kPush, push_bytes, plan_.budget,
                                           plan_.pipeline));
      std::atomic<bool> stop{false};
      absl::Status background;
      std::thread checkpoints([&] {
        while (!stop.load() && background.ok()) {
          background = pushing->server(0).Checkpoint(absl::Minutes(5)).status();
          ++taken;
        }
      });
      absl::StatusOr<Throughput> with =
          RunPipelined(*pushing, Op::kPush, push_bytes, plan_.budget, plan_.pipeline);
      stop.store(true);
      checkpoints.join();
      KAIROS_RETURN_IF_ERROR(background);
      KAIROS_RETURN_IF_ERROR(with.status());
      if (without.mb_per_s > 0) ratios.push_back(with->mb_per_s / without.mb_per_s);
    }
    std::sort(ratios.begin(), ratios.end());
    Result p = MakeResult("checkpoint_push", push_bytes, 1, 1);
    p.policy = "asp/adam";
    const double median = ratios.empty() ? 0 : ratios[ratios.size() / 2];
    p.note = absl::StrFormat(
        "1 MiB pushes (into a %s table) while the server checkpoints back to back (%d "
        "checkpoints): median %.0f%% of the throughput without, over %d pairs (range "
        "%.0f-%.0f%%)",
        FormatSize(size), taken, 100 * median, ratios.size(),
        ratios.empty() ? 0 : 100 * ratios.front(), ratios.empty() ? 0 : 100 * ratios.back());
    report_.Add(p);
    return absl::OkStatus();
  }

  // The log workload (see the file comment).
  void LogAll() {
    ForEachSizeInTempDir("log", flags_.log_sizes, flags_.log_dir,
                         [this](uint64_t size, const std::string& dir) { return Log(size, dir); });
  }

  absl::Status Log(uint64_t size, const std::string& dir) {
    struct Level {
      const char* name;
      std::unique_ptr<BenchCluster> cluster;
      std::vector<double> mb_per_s;
      std::vector<double> cpu_us_per_mb;
      std::vector<double> ratios;  // against "off" of the same round
    };
    std::vector<Level> levels(3);
    levels[0].name = "off";
    levels[1].name = "process";
    levels[2].name = "machine";
    for (int i = 0; i < 3; ++i) {
      ClusterSettings settings = plan_.cluster;
      if (i > 0) {
        settings.state_dir = absl::StrCat(dir, "/", levels[i].name);
        settings.log_sync = i == 1 ? ServerOptions::LogSync::kProcess
                                   : ServerOptions::LogSync::kMachine;
      }
      KAIROS_ASSIGN_OR_RETURN(levels[i].cluster, BenchCluster::Create(1, 1, size / 4, settings));
    }
    const int rounds = std::max(3, flags_.pairs);
    for (int round = 0; round < rounds; ++round) {
      std::vector<double> got(3, 0);
      for (int k = 0; k < 3; ++k) {
        const int i = (round + k) % 3;  // each level goes first, second and third in turn
        KAIROS_ASSIGN_OR_RETURN(
            Throughput t,
            RunPipelined(*levels[i].cluster, Op::kPush, size, plan_.budget, plan_.pipeline));
        got[i] = t.mb_per_s;
        levels[i].mb_per_s.push_back(t.mb_per_s);
        levels[i].cpu_us_per_mb.push_back(t.cpu_us_per_mb);
      }
      for (int i = 1; i < 3; ++i) {
        if (got[0] > 0) levels[i].ratios.push_back(got[i] / got[0]);
      }
    }
    const auto median = [](std::vector<double> v) {
      if (v.empty()) return 0.0;
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    for (Level& l : levels) {
      const ServerStats stats = l.cluster->server(0).stats();
      Result r = MakeResult(absl::StrCat("log_", l.name), size, 1, 1);
      r.mb_per_s = median(l.mb_per_s);
      r.ops_per_s = *r.mb_per_s * kMegabyte / static_cast<double>(size);
      r.cpu_us_per_mb = median(l.cpu_us_per_mb);
      const double records_per_write =
          stats.log_commits > 0 ? static_cast<double>(stats.log_records) /
                                      static_cast<double>(stats.log_commits)
                                : 0;
      if (l.ratios.empty()) {
        r.note = absl::StrFormat("no update log: the baseline (median of %d rounds)", rounds);
      } else {
        std::sort(l.ratios.begin(), l.ratios.end());
        r.note = absl::StrFormat(
            "update log, log_sync %s: median %.0f%% of no log over %d rounds (range "
            "%.0f-%.0f%%); %.1f records per write, %d syncs, %s of log",
            l.name, 100 * median(l.ratios), l.ratios.size(), 100 * l.ratios.front(),
            100 * l.ratios.back(), records_per_write, stats.log_syncs,
            FormatSize(stats.log_bytes));
      }
      report_.Add(r);
    }
    return absl::OkStatus();
  }

  const Flags& flags_;
  const Plan& plan_;
  Report& report_;
  bool ok_ = true;
  // The ceiling of each kairos run shape measured so far (EnsureCeiling).
  std::map<CeilingKey, Ceiling> ceilings_;
  // raw_oneway is selected: the push/pull/push_pull cells are compared with their ceilings.
  const bool ceilings_wanted_ = std::find(plan_.benchmarks.begin(), plan_.benchmarks.end(),
                                          "raw_oneway") != plan_.benchmarks.end();
  std::map<uint64_t, double> raw_rtt_p50_;  // message bytes -> us
  std::vector<CurveRatio> curve_ratios_;
  std::vector<SweepVerdict> sweep_verdicts_;
};

// The throughput cost of CURVE: reported, not a target.
void PrintCurveCost(const std::vector<Runner::CurveRatio>& ratios) {
  if (ratios.empty()) return;
  std::cout << "CURVE cost (reported, not a target; S=1 W=1, median of the pairs)\n";
  for (const Runner::CurveRatio& r : ratios) {
    std::cout << absl::StrFormat("  %-4s %6s with keys: %5.1f%% of the throughput without\n",
                                 r.workload.substr(6), FormatSize(r.value_bytes), 100 * r.ratio);
  }
}

// The targets of docs/benchmarks.md, judged on what was measured.
void PrintTargets(const Report& report, const Runner& runner) {
  std::cout << std::string(100, '-') << "\nTargets (throughput: against the raw ceiling, the "
            << "best raw variant moving the same bytes; see Ceiling above)\n";
  // The verdict: the median ratio of back-to-back pairs (see Runner::Paired).
  for (const Result& r : report.results()) {
    if (!absl::StartsWith(r.workload, "paired_") || !r.raw_ratio.has_value()) continue;
    if (r.workload == "paired_noop") continue;  // not a target
    std::cout << absl::StrFormat("  %-4s %6s S=1 W=1 >= 80%% of the raw ceiling: %5.1f%% %s (%s)\n",
                                 r.workload.substr(7), FormatSize(r.value_bytes),
                                 100 * *r.raw_ratio, *r.raw_ratio >= 0.8 ? "PASS" : "FAIL",
                                 r.note);
  }
  // Best-of-N figures against the ceiling: shown for reference (labelled "best-of" when the
  // paired verdict is there too). The CPU-cost ratio (the ceiling's CPU per MB / kairos CPU
  // per MB) predicts the throughput ratio on an idle machine, where both are CPU-bound; it
  // is much less sensitive to other load.
  const bool paired = std::any_of(report.results().begin(), report.results().end(),
                                  [](const Result& r) {
                                    return absl::StartsWith(r.workload, "paired_");
                                  });
  for (const std::string op : {"push", "pull"}) {
    for (const Result& r : report.results()) {
      if (r.workload != op || r.value_bytes < (1u << 20) || !r.raw_ratio.has_value()) continue;
      if (r.servers != 1 || r.workers != 1) continue;
      std::string cpu_ratio = "n/a";
      std::string variant = "?";
      if (const Ceiling* c = runner.FindCeiling(r.value_bytes, 1, 1); c != nullptr) {
        variant = c->variant;
        if (c->cpu_us_per_mb > 0 && r.cpu_us_per_mb.value_or(0) > 0) {
          cpu_ratio = absl::StrFormat("%.0f%%", 100 * c->cpu_us_per_mb / *r.cpu_us_per_mb);
        }
      }
      std::cout << absl::StrFormat(
          "  %-4s %6s S=1 W=1 >= 80%% of the raw ceiling%s: %5.1f%% %s (ceiling: raw %s; "
          "CPU-cost ratio %s)\n",
          op, FormatSize(r.value_bytes), paired ? " (best-of)" : "", 100 * *r.raw_ratio,
          *r.raw_ratio >= 0.8 ? "PASS" : "FAIL", variant, cpu_ratio);
    }
  }
  // Small requests: CPU per request at most 2x raw ZeroMQ's per message; 1 KiB
  // pushes with 16 in flight at least 100k requests/s.
  for (const Runner::SmallVerdict& v : runner.small_verdicts()) {
    const double ratio = v.raw_cpu_us > 0 ? v.cpu_us / v.raw_cpu_us : 0;
    std::cout << absl::StrFormat(
        "  small %6s window %2d CPU per request <= 2x raw ZeroMQ's per message: %.1f vs %.1f "
        "us = %.2fx  %s\n",
        FormatSize(v.bytes), v.window, v.cpu_us, v.raw_cpu_us, ratio,
        ratio <= 2 ? "PASS" : "FAIL");
    if (v.bytes == 1024 && v.window == 16) {
      std::cout << absl::StrFormat(
          "  small   1 KiB window 16 >= 100000 requests/s: %.0f  %s\n", v.requests_per_s,
          v.requests_per_s >= 100000 ? "PASS" : "FAIL");
    }
  }
  // The sweep's verdict: no window below 80% of the best smaller window.
  for (const Runner::SweepVerdict& v : runner.sweep_verdicts()) {
    std::cout << absl::StrFormat(
        "  sweep %-4s %6s S=1 W=1 no window < 80%% of the best smaller window (best rounds): "
        "%s\n",
        v.op,
        FormatSize(v.value_bytes), v.verdict.ToString());
  }
  for (const Result& r : report.results()) {
    if (r.workload == "push_sync" && r.raw_p50_us.has_value()) {
      const double extra = r.latency->p50_us - *r.raw_p50_us;
      std::cout << absl::StrFormat("  push_sync %6s p50 <= raw RTT + 20 us: raw + %5.1f us  %s\n",
                                   FormatSize(r.value_bytes), extra, extra <= 20 ? "PASS" : "FAIL");
    }
    if (r.workload == "memory") {
      std::cout << absl::StrFormat(
          "  memory %s %s VmHWM <= (1.3 + state) x table + 64 MiB: %s vs %s  %s\n", r.policy,
          FormatSize(r.value_bytes), FormatSize(*r.rss_bytes), FormatSize(*r.bound_bytes),
          *r.rss_bytes <= *r.bound_bytes ? "PASS" : "FAIL");
      if (r.policy == "bsp" || r.policy.starts_with("bsp/")) {
        // bsp keeps one round sum per chunk while a round is open (docs/design.md): its own
        // documented bound is one table more (the 1.3 x table allowed 0.3 of it already).
        const uint64_t bsp_bound =
            *r.bound_bytes + static_cast<uint64_t>(0.7 * static_cast<double>(r.value_bytes));
        std::cout << absl::StrFormat(
            "  memory %s %s VmHWM <= (2 + state) x table + 64 MiB (bsp's round sums): %s vs "
            "%s  %s\n",
            r.policy, FormatSize(r.value_bytes), FormatSize(*r.rss_bytes), FormatSize(bsp_bound),
            *r.rss_bytes <= bsp_bound ? "PASS" : "FAIL");
      }
    }
  }
}

int Main(int argc, char** argv) {
  CLI::App app(
      "kairos transport benchmark: raw ZeroMQ ceiling, push/pull throughput, "
      "small-push latency and server memory over tcp loopback.",
      "kairos_transport_bench");
  Flags flags;
  AddFlags(app, flags);
  CLI11_PARSE(app, argc, argv);
  ApplyQuick(app, flags);
  absl::StatusOr<Plan> plan = MakePlan(flags);
  if (!plan.ok()) return BadFlags("kairos_transport_bench", plan.status().message());
  if (flags.tune_allocator) {
    if (absl::Status s = TuneProcessAllocator(); !s.ok()) {
      return BadFlags("kairos_transport_bench", absl::StrCat("--tune-allocator: ", s.message()));
    }
  }
  ::setenv("KAIROS_LOG_LEVEL", "error", /*overwrite=*/0);
  PrintHeader("kairos_transport_bench", SettingsLines(flags, *plan));
  Report report;
  if (absl::Status s = report.Open(flags.csv); !s.ok()) {
    return BadFlags("kairos_transport_bench", s.message());
  }
  report.PrintColumns();
  const OtherLoadMeter other_load;
  Runner runner(flags, *plan, report);
  const bool ok = runner.RunAll();
  PrintTargets(report, runner);
  PrintCurveCost(runner.curve_ratios());
  PrintFooter(other_load);
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace kairos::bench

int main(int argc, char** argv) { return kairos::bench::Main(argc, argv); }
