// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_sparse_bench: sparse tables end to end (docs/sparse.md, docs/benchmarks.md), in the
// manner of kairos_transport_bench. Over tcp://127.0.0.1 on this machine it measures
//
//   ceiling  the local ceiling: one thread doing the same lookups and updates on an
//            absl::flat_hash_map in this process (pull: find each key, copy its row out;
//            push: find each key, row -= lr x gradient), every row of the key space present
//   pull     PullSparseAsync of batches of distinct keys, `--window` requests in flight per
//            worker, from S servers holding every row of the key space
//   push     PushSparseAsync of the same batches (asp, sgd): rows updated in place
//   churn    PushSparseAsync of batches of keys never pushed before (a stream of new ids),
//            every row created: push_new without a bound (memory grows), push_new_evict
//            with RowEviction::max_bytes of --evict-rows rows (least recently updated go);
//            target: eviction costs at most 10 % of the keys/s
//   memory   the peak resident memory of a kairos-server child process after `--memory-rows`
//            distinct rows were pushed and pulled, against the rows' raw bytes
//
// for every --widths x --batches, and checks the targets: pull of the largest batch at least
// 25% of the ceiling's keys/s; server memory at most 2 x the rows' raw bytes + 64 MiB (with
// an optimizer's state: 2 x (values + state) + 64 MiB). Each
// measurement prints one line; --csv writes them to a file too. It exits 1 when a workload
// fails (a target missed is reported, not an exit status: speed depends on the machine).
//
//   kairos_sparse_bench [--benchmarks=ceiling,pull,push,memory] [--widths=16,64]
//                       [--batches=1K,16K] [--key-space=1M] [--servers=1] [--workers=1]
//                       [--window=4] [--seconds=1] [--csv=FILE] [--quick]

#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/bench_common.h"
#include "bench/bench_report.h"
#include "bench/kairos_workloads.h"
#include "bench/memory_workload.h"
#include "bench/sparse_workloads.h"
#include "kairos/job.h"
#include "kairos/status.h"

namespace kairos::bench {
namespace {

constexpr char kAllBenchmarks[] = "ceiling,pull,push,churn,memory";
constexpr double kChurnTarget = 0.9;  // push_new_evict's keys/s of push_new's, at least
constexpr double kPullTarget = 0.25;  // of the ceiling's keys/s, at the largest batch
constexpr int kBatchesPerRun = 64;    // distinct batches each run cycles through

struct Flags {
  std::string benchmarks = kAllBenchmarks;
  std::vector<uint32_t> widths = {16, 64};
  std::vector<std::string> batches = {"1K", "16K"};
  std::string key_space = "1M";
  int servers = 1;
  int workers = 1;
  int window = 4;
  double seconds = 1.0;
  double warmup = 0.25;
  std::string evict_rows = "256K";
  std::string memory_rows = "1M";
  std::vector<uint32_t> memory_widths = {16, 64};
  std::string memory_updater = "sgd";
  uint64_t seed = 1;
  std::string server_binary = KAIROS_BENCH_SERVER_BINARY;
  std::string csv;
  bool quick = false;
};

void AddFlags(CLI::App& app, Flags& f) {
  AddBenchmarksOption(app, f.benchmarks, kAllBenchmarks);
  app.add_option("--widths", f.widths, "Row widths (floats per row)")
      ->delimiter(',')
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  app.add_option("--batches", f.batches, "Keys per request (1K = 1024)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--key-space", f.key_space,
                 "Rows the batches are drawn from (uniformly); every one exists before the "
                 "measurement")
      ->capture_default_str();
  app.add_option("--servers", f.servers, "Servers of the push/pull job")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--workers", f.workers, "Workers of the push/pull job, each on its own thread")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--window", f.window, "Requests each worker keeps in flight")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--evict-rows", f.evict_rows,
                 "The churn workload's bound: RowEviction::max_bytes of this many rows per server")
      ->capture_default_str();
  AddBudgetOptions(app, f.seconds, f.warmup);
  app.add_option("--memory-rows", f.memory_rows, "Distinct rows the memory workload pushes")
      ->capture_default_str();
  app.add_option("--memory-widths", f.memory_widths, "Row widths of the memory workload")
      ->delimiter(',')
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  app.add_option("--memory-updater", f.memory_updater,
                 "The memory workload's optimizer (its state counts in the server's memory, not "
                 "in the rows' raw bytes)")
      ->capture_default_str();
  app.add_option("--seed", f.seed, "Seed of the key batches")->capture_default_str();
  AddServerBinaryOption(app, f.server_binary);
  AddCsvOption(app, f.csv);
  app.add_flag("--quick", f.quick,
               "Smoke run: 0.1 s budgets, width 16, batches 16K, a 64K key space, 64K rows of "
               "memory, a churn bound of 16K rows (flags given explicitly still win)");
}

// --quick: small budgets, except where a flag was given explicitly.
void ApplyQuick(const CLI::App& app, Flags& f) {
  if (!f.quick) return;
  if (app.count("--widths") == 0) f.widths = {16};
  if (app.count("--batches") == 0) f.batches = {"16K"};
  if (app.count("--key-space") == 0) f.key_space = "64K";
  ApplyQuickBudget(app, f.seconds, f.warmup);
  if (app.count("--memory-rows") == 0) f.memory_rows = "64K";
  if (app.count("--evict-rows") == 0) f.evict_rows = "16K";
  if (app.count("--memory-widths") == 0) f.memory_widths = {16};
}

struct Plan {
  std::vector<std::string> benchmarks;
  std::vector<uint32_t> batches;
  uint64_t key_space = 0;
  uint64_t memory_rows = 0;
  uint64_t evict_rows = 0;
  Budget budget;
};

// "1K" -> 1024 (a count, in ParseSize's binary units).
absl::StatusOr<uint64_t> ParseCount(const std::string& flag, const std::string& text) {
  absl::StatusOr<uint64_t> n = ParseSize(text);
  if (!n.ok() || *n == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": '", text, "' is not a positive count (e.g. 1024, 16K, 1M)"));
  }
  return *n;
}

absl::StatusOr<Plan> MakePlan(const Flags& f) {
  Plan p;
  KAIROS_ASSIGN_OR_RETURN(p.benchmarks, ParseBenchmarks(f.benchmarks, kAllBenchmarks));
  KAIROS_ASSIGN_OR_RETURN(p.key_space, ParseCount("--key-space", f.key_space));
  KAIROS_ASSIGN_OR_RETURN(p.memory_rows, ParseCount("--memory-rows", f.memory_rows));
  KAIROS_ASSIGN_OR_RETURN(p.evict_rows, ParseCount("--evict-rows", f.evict_rows));
  for (const std::string& b : f.batches) {
    KAIROS_ASSIGN_OR_RETURN(uint64_t n, ParseCount("--batches", b));
    // The library takes at most kMaxSparseKeys keys per call; the batch's keys are distinct.
    if (n > kMaxSparseKeys || n > p.key_space) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--batches: ", b, " keys is more than the key space (", p.key_space,
          ") or the library's limit per call (", kMaxSparseKeys, ")"));
    }
    p.batches.push_back(static_cast<uint32_t>(n));
  }
  p.budget.seconds = f.seconds;
  p.budget.warmup_s = f.warmup;
  return p;
}

// One measured line.
struct Line {
  std::string workload;  // ceiling_pull, ceiling_push, pull, push, memory
  uint32_t width = 0;
  uint32_t batch = 0;  // keys per request (0: memory)
  int servers = 0;     // 0: not a kairos job
  int workers = 0;
  int window = 0;
  std::optional<KeyThroughput> throughput;
  std::optional<double> ceiling_ratio;
  std::optional<SparseMemoryFigures> memory;
};

class Output {
 public:
  absl::Status Open(const std::string& path) {
    if (path.empty()) return absl::OkStatus();
    csv_.open(path);
    if (!csv_) return absl::UnavailableError(absl::StrCat("cannot write ", path));
    csv_ << "workload,width,batch,servers,workers,window,keys_per_s,mb_per_s,cpu_ns_per_key,"
            "ceiling_ratio,rows,raw_bytes,baseline_rss_bytes,peak_rss_bytes,bound_bytes\n";
    return absl::OkStatus();
  }

  void PrintColumns() const {
    std::cout << absl::StrFormat("%-13s %5s %6s %3s %3s %4s %12s %9s %11s %8s\n", "workload",
                                 "width", "batch", "S", "W", "win", "keys/s", "MB/s",
                                 "CPU ns/key", "ceiling");
  }

  void Add(const Line& l) {
    lines_.push_back(l);
    if (l.throughput.has_value()) {
      const KeyThroughput& t = *l.throughput;
      const double mb = t.keys_per_s * l.width * sizeof(float) / kMegabyte;
      std::cout << absl::StrFormat(
          "%-13s %5d %6d %3s %3s %4s %12.0f %9.1f %11.1f %8s\n", l.workload, l.width, l.batch,
          l.servers > 0 ? absl::StrCat(l.servers) : "-",
          l.workers > 0 ? absl::StrCat(l.workers) : "-",
          l.window > 0 ? absl::StrCat(l.window) : "-", t.keys_per_s, mb, t.cpu_ns_per_key,
          l.ceiling_ratio.has_value() ? absl::StrFormat("%.1f%%", 100 * *l.ceiling_ratio) : "");
      if (csv_.is_open()) {
        csv_ << absl::StrFormat("%s,%d,%d,%d,%d,%d,%.1f,%.2f,%.2f,%s,,,,,\n", l.workload, l.width,
                                l.batch, l.servers, l.workers, l.window, t.keys_per_s, mb,
                                t.cpu_ns_per_key,
                                l.ceiling_ratio.has_value()
                                    ? absl::StrFormat("%.4f", *l.ceiling_ratio)
                                    : "");
      }
    }
    if (l.memory.has_value()) {
      const SparseMemoryFigures& m = *l.memory;
      const double per_million = 1e6 / static_cast<double>(m.rows);
      std::cout << absl::StrFormat(
          "%-13s %5d rows %s: server VmHWM %s (listening: %s; pushed: %s; grew %.1f MiB per "
          "million rows), rows' raw bytes %s (%.1f MiB per million), ratio %.2f\n",
          l.workload, l.width, absl::StrCat(m.rows), FormatSize(m.peak_rss_bytes),
          FormatSize(m.baseline_rss_bytes), FormatSize(m.pushed_rss_bytes),
          static_cast<double>(m.peak_rss_bytes - std::min(m.peak_rss_bytes,
                                                          m.baseline_rss_bytes)) *
              per_million / (1 << 20),
          FormatSize(m.raw_bytes), static_cast<double>(m.raw_bytes) * per_million / (1 << 20),
          static_cast<double>(m.peak_rss_bytes) / static_cast<double>(m.raw_bytes));
      if (csv_.is_open()) {
        csv_ << absl::StrFormat("%s,%d,,1,1,,,,,,%d,%d,%d,%d,%d\n", l.workload, l.width, m.rows,
                                m.raw_bytes, m.baseline_rss_bytes, m.peak_rss_bytes,
                                m.bound_bytes);
      }
    }
    std::cout.flush();
  }

  const std::vector<Line>& lines() const { return lines_; }

 private:
  std::vector<Line> lines_;
  std::ofstream csv_;
};

class Runner {
 public:
  Runner(const Flags& flags, const Plan& plan, Output& out)
      : flags_(flags), plan_(plan), out_(out) {}

  bool RunAll() {
    for (const std::string& b : plan_.benchmarks) {
      if (b == "ceiling") Ceiling();
      if (b == "pull") Kairos(SparseOp::kPull);
      if (b == "push") Kairos(SparseOp::kPush);
      if (b == "churn") Churn();
      if (b == "memory") Memory();
    }
    return ok_;
  }

 private:
  const std::vector<std::vector<uint64_t>>& Batches(uint32_t batch) {
    auto it = batches_.find(batch);
    if (it == batches_.end()) {
      it = batches_
               .emplace(batch, MakeKeyBatches(plan_.key_space, batch, kBatchesPerRun,
                                              flags_.seed))
               .first;
    }
    return it->second;
  }

  void Fail(const std::string& what, const absl::Status& s) {
    std::cout << "FAILED " << what << ": " << s << std::endl;
    ok_ = false;
  }

  void Ceiling() {
    for (const uint32_t width : flags_.widths) {
      for (const uint32_t batch : plan_.batches) {
        for (const SparseOp op : {SparseOp::kPull, SparseOp::kPush}) {
          Line l;
          l.workload = absl::StrCat("ceiling_", SparseOpName(op));
          l.width = width;
          l.batch = batch;
          l.throughput = RunLocalCeiling(op, width, plan_.key_space, Batches(batch), plan_.budget);
          ceilings_[{op, width, batch}] = l.throughput->keys_per_s;
          out_.Add(l);
        }
      }
    }
  }

  // push_new without a bound, then with one, per width and batch; the second line's
  // "ceiling" column is its share of the first's keys/s.
  void Churn() {
    for (const uint32_t width : flags_.widths) {
      // What a tracked row of sgd costs (SparseTableStats::bytes_per_row): values, step,
      // key and last-update stamp, two hash-map slots.
      const uint64_t per_row = uint64_t{width} * sizeof(float) + 8 + 16 + 2 * (16 + 1);
      for (const uint32_t batch : plan_.batches) {
        std::optional<double> unbounded;
        for (const bool evict : {false, true}) {
          ClusterSettings settings;
          settings.sparse_row_width = width;
          if (evict) settings.sparse_eviction.max_bytes = plan_.evict_rows * per_row;
          const std::string name = evict ? "push_new_evict" : "push_new";
          std::optional<KeyThroughput> t = RunOnce(SparseOp::kPushNew, width, batch, settings,
                                                   /*populate=*/false, name);
          if (!t.has_value()) break;
          Line l = KairosLine(name, width, batch, *t);
          if (!evict) unbounded = t->keys_per_s;
          if (evict && unbounded.has_value() && *unbounded > 0) {
            l.ceiling_ratio = t->keys_per_s / *unbounded;
          }
          out_.Add(l);
        }
      }
    }
  }

  // One cluster, one measured run of `op` with `batch` keys per request; nullopt (and a
  // failure recorded) when it fails.
  std::optional<KeyThroughput> RunOnce(SparseOp op, uint32_t width, uint32_t batch,
                                       const ClusterSettings& settings, bool populate,
                                       const std::string& name) {
    const std::string what = absl::StrFormat("%s width %d batch %d S=%d W=%d", name, width, batch,
                                             flags_.servers, flags_.workers);
    absl::StatusOr<std::unique_ptr<BenchCluster>> cluster =
        BenchCluster::Create(flags_.servers, flags_.workers, 0, settings);
    if (!cluster.ok()) {
      Fail(what, cluster.status());
      return std::nullopt;
    }
    if (populate) {
      if (absl::Status s = PopulateSparseTable(**cluster, width, plan_.key_space); !s.ok()) {
        Fail(what, s);
        return std::nullopt;
      }
    }
    absl::StatusOr<KeyThroughput> t =
        RunSparsePipelined(**cluster, op, width, Batches(batch), flags_.window, plan_.budget);
    if (!t.ok()) Fail(what, t.status());
    if (absl::Status s = (*cluster)->Shutdown(); !s.ok()) Fail(what, s);
    return t.ok() ? std::optional<KeyThroughput>(*t) : std::nullopt;
  }

  Line KairosLine(const std::string& name, uint32_t width, uint32_t batch,
                  const KeyThroughput& t) const {
    Line l;
    l.workload = name;
    l.width = width;
    l.batch = batch;
    l.servers = flags_.servers;
    l.workers = flags_.workers;
    l.window = flags_.window;
    l.throughput = t;
    return l;
  }

  void Kairos(SparseOp op) {
    for (const uint32_t width : flags_.widths) {
      ClusterSettings settings;
      settings.sparse_row_width = width;
      const std::string what = absl::StrFormat("%s width %d S=%d W=%d", SparseOpName(op), width,
                                               flags_.servers, flags_.workers);
      absl::StatusOr<std::unique_ptr<BenchCluster>> cluster =
          BenchCluster::Create(flags_.servers, flags_.workers, 0, settings);
      if (!cluster.ok()) {
        Fail(what, cluster.status());
        continue;
      }
      if (absl::Status s = PopulateSparseTable(**cluster, width, plan_.key_space); !s.ok()) {
        Fail(what, s);
        continue;
      }
      for (const uint32_t batch : plan_.batches) {
        absl::StatusOr<KeyThroughput> t = RunSparsePipelined(**cluster, op, width, Batches(batch),
                                                             flags_.window, plan_.budget);
        if (!t.ok()) {
          Fail(absl::StrCat(what, " batch ", batch), t.status());
          break;
        }
        Line l = KairosLine(SparseOpName(op), width, batch, *t);
        if (auto c = ceilings_.find({op, width, batch}); c != ceilings_.end() && c->second > 0) {
          l.ceiling_ratio = t->keys_per_s / c->second;
        }
        out_.Add(l);
      }
      if (absl::Status s = (*cluster)->Shutdown(); !s.ok()) Fail(what, s);
    }
  }

  void Memory() {
    for (const uint32_t width : flags_.memory_widths) {
      absl::StatusOr<SparseMemoryFigures> m = MeasureSparseServerMemory(
          flags_.server_binary, plan_.memory_rows, width, flags_.memory_updater);
      if (!m.ok()) {
        Fail(absl::StrCat("memory width ", width), m.status());
        continue;
      }
      Line l;
      l.workload = "memory";
      l.width = width;
      l.memory = *m;
      out_.Add(l);
    }
  }

  const Flags& flags_;
  const Plan& plan_;
  Output& out_;
  bool ok_ = true;
  std::map<uint32_t, std::vector<std::vector<uint64_t>>> batches_;
  std::map<std::tuple<SparseOp, uint32_t, uint32_t>, double> ceilings_;
};

void PrintTargets(const Output& out, const Plan& plan, const Flags& flags) {
  std::cout << std::string(100, '-') << "\nTargets\n";
  const uint32_t largest = plan.batches.empty() ? 0 : *std::max_element(plan.batches.begin(),
                                                                         plan.batches.end());
  for (const Line& l : out.lines()) {
    if (l.workload == "pull" && l.batch == largest && l.ceiling_ratio.has_value()) {
      std::cout << absl::StrFormat(
          "  pull %d keys width %d S=%d W=%d >= %.0f%% of the local ceiling: %.1f%%  %s\n",
          l.batch, l.width, l.servers, l.workers, 100 * kPullTarget, 100 * *l.ceiling_ratio,
          *l.ceiling_ratio >= kPullTarget ? "PASS" : "FAIL");
    }
    if (l.workload == "push_new_evict" && l.ceiling_ratio.has_value()) {
      std::cout << absl::StrFormat(
          "  push_new_evict %d keys width %d S=%d W=%d >= %.0f%% of push_new's keys/s: %.1f%%  "
          "%s\n",
          l.batch, l.width, l.servers, l.workers, 100 * kChurnTarget, 100 * *l.ceiling_ratio,
          *l.ceiling_ratio >= kChurnTarget ? "PASS" : "FAIL");
    }
    if (l.memory.has_value()) {
      const SparseMemoryFigures& m = *l.memory;
      std::cout << absl::StrFormat(
          "  memory %d rows width %d (%s) VmHWM <= 2 x raw x (1 + %d state) + 64 MiB: %s vs %s  "
          "%s\n",
          m.rows, m.width, flags.memory_updater, m.state_per_element, FormatSize(m.peak_rss_bytes), FormatSize(m.bound_bytes),
          m.peak_rss_bytes <= m.bound_bytes ? "PASS" : "FAIL");
    }
  }
}

std::vector<std::string> SettingsLines(const Flags& f, const Plan& p) {
  return {
      absl::StrFormat("Workloads:  %s", absl::StrJoin(p.benchmarks, ",")),
      absl::StrFormat("Rows:       widths %s; batches of %s distinct keys drawn uniformly from "
                      "%d rows (all present); %d batches cycled",
                      absl::StrJoin(f.widths, ","), absl::StrJoin(p.batches, ","), p.key_space,
                      kBatchesPerRun),
      absl::StrFormat("Job:        %d server(s), %d worker(s), %d requests in flight each, "
                      "asp, sgd; tcp://127.0.0.1, a ZeroMQ context per node",
                      f.servers, f.workers, f.window),
      absl::StrFormat("Churn:      new keys every request; bound of %d rows per server "
                      "(least recently updated go)",
                      p.evict_rows),
      absl::StrFormat("Budget:     %.2f s measured after %.2f s warm-up", f.seconds, f.warmup),
      absl::StrFormat("Memory:     %d rows of widths %s, updater %s, in %s", p.memory_rows,
                      absl::StrJoin(f.memory_widths, ","), f.memory_updater, f.server_binary),
  };
}

int Main(int argc, char** argv) {
  CLI::App app(
      "kairos sparse-table benchmark: keys/s of sparse push and pull against a local "
      "flat_hash_map ceiling, and server memory per million rows.",
      "kairos_sparse_bench");
  Flags flags;
  AddFlags(app, flags);
  CLI11_PARSE(app, argc, argv);
  ApplyQuick(app, flags);
  absl::StatusOr<Plan> plan = MakePlan(flags);
  if (!plan.ok()) return BadFlags("kairos_sparse_bench", plan.status().message());
  ::setenv("KAIROS_LOG_LEVEL", "error", /*overwrite=*/0);
  PrintHeader("kairos_sparse_bench", SettingsLines(flags, *plan));
  Output out;
  if (absl::Status s = out.Open(flags.csv); !s.ok()) {
    return BadFlags("kairos_sparse_bench", s.message());
  }
  out.PrintColumns();
  const OtherLoadMeter other_load;
  Runner runner(flags, *plan, out);
  const bool ok = runner.RunAll();
  PrintTargets(out, *plan, flags);
  PrintFooter(other_load);
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace kairos::bench

int main(int argc, char** argv) { return kairos::bench::Main(argc, argv); }
