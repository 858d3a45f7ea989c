// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_transport_bench's verdicts: the paired and sweep workloads, which measure in
// alternating rounds on one cluster so that a drifting machine weighs on every side alike,
// and the targets of docs/benchmarks.md judged on every result after the runs.

#include <algorithm>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/raw_zmq_workloads.h"
#include "bench/transport_bench_runner.h"

namespace kairos::bench::transport_bench {

// paired: for each size of 1 MiB and more, and for push, pull and push_noop (1 server, 1
// worker; push_noop is not a target, it shows what the update's arithmetic costs),
// --pairs rounds of one run of every raw variant of the ceiling and one kairos run back
// to back (alternating whether kairos goes first or last), on one cluster. Each pair gives
// the ratio of kairos to the best raw variant of that pair; the median is the verdict. On
// a shared VM raw ZeroMQ drifts by tens of percent within minutes, so a best-of-N raw
// figure and a best-of-N kairos figure taken minutes apart compare two different machines.
void Runner::Paired() {
  for (uint64_t size : plan_.sizes) {
    if (size < (uint64_t{1} << 20)) continue;
    const std::vector<RawVariant> variants = RawVariants(size, 1, 1);
    struct Variant {
      const char* name;  // the workload column is 16 characters wide
      Op op;
      bool discard_updates;
    };
    for (const Variant& v :
         {Variant{"paired_push", Op::kPush, false}, Variant{"paired_pull", Op::kPull, false},
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
void Runner::Sweep() {
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
          absl::StatusOr<Throughput> t = RunPipelined(**cluster, op, size, plan_.budget, pipeline);
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
      sweep_verdicts_.push_back({std::string(OpName(op)), size, JudgeWindows(windows, bests)});
    }
  }
}

void PrintCurveCost(const std::vector<Runner::CurveRatio>& ratios) {
  if (ratios.empty()) return;
  std::cout << "CURVE cost (reported, not a target; S=1 W=1, median of the pairs)\n";
  for (const Runner::CurveRatio& r : ratios) {
    std::cout << absl::StrFormat("  %-4s %6s with keys: %5.1f%% of the throughput without\n",
                                 r.workload.substr(6), FormatSize(r.value_bytes), 100 * r.ratio);
  }
}

void PrintTargets(const Report& report, const Runner& runner) {
  std::cout << std::string(100, '-') << "\nTargets (throughput: against the raw ceiling, the "
            << "best raw variant moving the same bytes; see Ceiling above)\n";
  // The verdict: the median ratio of back-to-back pairs (see Runner::Paired).
  for (const Result& r : report.results()) {
    if (!absl::StartsWith(r.workload, "paired_") || !r.raw_ratio.has_value()) continue;
    if (r.workload == "paired_noop") continue;  // not a target
    std::cout << absl::StrFormat("  %-4s %6s S=1 W=1 >= 80%% of the raw ceiling: %5.1f%% %s (%s)\n",
                                 r.workload.substr(7), FormatSize(r.value_bytes),
                                 100 * *r.raw_ratio, *r.raw_ratio >= 0.8 ? "PASS" : "FAIL", r.note);
  }
  // Best-of-N figures against the ceiling: shown for reference (labelled "best-of" when the
  // paired verdict is there too). The CPU-cost ratio (the ceiling's CPU per MB / kairos CPU
  // per MB) predicts the throughput ratio on an idle machine, where both are CPU-bound; it
  // is much less sensitive to other load.
  const bool paired =
      std::any_of(report.results().begin(), report.results().end(),
                  [](const Result& r) { return absl::StartsWith(r.workload, "paired_"); });
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
        FormatSize(v.bytes), v.window, v.cpu_us, v.raw_cpu_us, ratio, ratio <= 2 ? "PASS" : "FAIL");
    if (v.bytes == 1024 && v.window == 16) {
      std::cout << absl::StrFormat("  small   1 KiB window 16 >= 100000 requests/s: %.0f  %s\n",
                                   v.requests_per_s, v.requests_per_s >= 100000 ? "PASS" : "FAIL");
    }
  }
  // The sweep's verdict: no window below 80% of the best smaller window.
  for (const Runner::SweepVerdict& v : runner.sweep_verdicts()) {
    std::cout << absl::StrFormat(
        "  sweep %-4s %6s S=1 W=1 no window < 80%% of the best smaller window (best rounds): "
        "%s\n",
        v.op, FormatSize(v.value_bytes), v.verdict.ToString());
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

}  // namespace kairos::bench::transport_bench
