// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_transport_bench: Runner's kairos workloads (push, pull, push_pull over the grid of
// sizes, servers and workers; push_copy, pull_copy, push_noop; curve; push_sync, pull_sync;
// memory; small), and what every workload shares: the workload list, failures, medians.

#include "bench/transport_bench_runner.h"

#include <algorithm>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/memory_workload.h"
#include "kairos/keys.h"

namespace kairos::bench::transport_bench {

bool Faster(const Throughput& a, const Throughput& b) { return a.mb_per_s > b.mb_per_s; }
bool Quicker(const LatencySummary& a, const LatencySummary& b) { return a.p50_us < b.p50_us; }

Result MakeResult(std::string workload, uint64_t value_bytes, int servers, int workers) {
  Result r;
  r.workload = std::move(workload);
  r.value_bytes = value_bytes;
  r.servers = servers;
  r.workers = workers;
  return r;
}

bool Runner::RunAll() {
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

void Runner::Fail(const std::string& workload, const absl::Status& s) {
  ok_ = false;
  std::cerr << "ERROR: " << workload << ": " << s << std::endl;
}

std::string Runner::BestNote(int runs) {
  return runs > 1 ? absl::StrFormat(", best of %d", runs) : std::string();
}

double Runner::Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// push, pull or push_pull for every size, server count and worker count.
void Runner::Matrix(Op op) {
  for (uint64_t size : plan_.sizes) {
    for (int s : flags_.servers) {
      for (int w : flags_.workers) Pipelined(op, size, s, w);
    }
  }
}

// `name` and `settings` override the workload's name and the plan's cluster settings.
// `always_ceiling`: compare with the ceiling even when raw_oneway is not selected.
void Runner::Pipelined(Op op, uint64_t size, int servers, int workers, std::string name,
                       const ClusterSettings* settings, bool always_ceiling) {
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
    if (const Ceiling* c = EnsureCeiling(size, servers, workers); c != nullptr && c->mb_per_s > 0) {
      r.raw_ratio = t->mb_per_s / c->mb_per_s;
      vs = absl::StrFormat("; vs raw %s %.0f MB/s", c->variant, c->mb_per_s);
    }
  }
  r.note = absl::StrFormat("window %d%s%s", EffectiveWindow(plan_.pipeline, size),
                           BestNote(flags_.repetitions), vs);
  report_.Add(r);
}

void Runner::Copying(Op op) {
  Pipelined(op, kCopyValueBytes, 1, 1, "", nullptr, /*always_ceiling=*/true);
}

// push with servers that discard the gradients: what moving and dispatching a push costs
// without the update's arithmetic.
void Runner::PushNoop() {
  ClusterSettings settings = plan_.cluster;
  settings.discard_updates = true;
  Pipelined(Op::kPush, kCopyValueBytes, 1, 1, "push_noop", &settings, /*always_ceiling=*/true);
}

// curve: for each --curve-sizes value and for push and pull (1 server, 1 worker), --pairs
// rounds of one run without keys and one with CURVE keys, back to back (alternating which
// goes first), each on its own cluster made once. The median ratio (CURVE / plain) is the
// throughput cost of encryption, taken on the same machine in the same minute.
void Runner::Curve() {
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
        auto run_plain = [&] { p = RunPipelined(**plain, op, size, plan_.budget, plan_.pipeline); };
        auto run_curve = [&] { c = RunPipelined(**curve, op, size, plan_.budget, plan_.pipeline); };
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

void Runner::SyncAll(Op op) {
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

void Runner::MemoryAll() {
  for (uint64_t size : plan_.memory_sizes) {
    for (const std::string& policy : flags_.memory_policies) {
      for (const std::string& updater : flags_.memory_updaters) {
        absl::StatusOr<MemoryFigures> m =
            MeasureServerMemory(flags_.server_binary, size, policy, flags_.memory_rounds, updater);
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
void Runner::Small() {
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
      const double k_cpu = k->cpu_us_per_mb * bytes / kMegabyte;      // us per request
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

}  // namespace kairos::bench::transport_bench
