// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_transport_bench's workloads: Runner runs those --benchmarks selects, in its order,
// and keeps what later ones and the targets compare with (the raw ceilings and round trips,
// the verdicts). transport_bench.cc's file comment says what each workload measures; their
// code is in
//
//   transport_bench_runner.cc      the kairos workloads: push/pull/push_pull, push_copy,
//                                  pull_copy, push_noop, curve, push_sync, pull_sync, memory,
//                                  small
//   transport_bench_ceiling.cc     the raw ZeroMQ ceiling (raw_oneway) and round trip (raw_rtt)
//   transport_bench_verdicts.cc    paired and sweep, and the targets judged on every result
//   transport_bench_durability.cc  checkpoint and log
//
// Thread-safety: a Runner is used from the main thread (its workloads start and join their
// own threads).

#ifndef KAIROS_BENCH_TRANSPORT_BENCH_RUNNER_H_
#define KAIROS_BENCH_TRANSPORT_BENCH_RUNNER_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/bench_report.h"
#include "bench/kairos_workloads.h"
#include "bench/raw_zmq_workloads.h"
#include "bench/transport_bench_flags.h"

namespace kairos::bench::transport_bench {

inline constexpr uint64_t kSmallValueBytes = 64;      // 16 floats
inline constexpr uint64_t kRawSmallBytes = 100;       // a 64 B push is ~100 bytes on the wire
inline constexpr uint64_t kPageValueBytes = 4096;     // 4 KiB
inline constexpr uint64_t kCopyValueBytes = 1 << 20;  // push_copy, pull_copy

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

bool Faster(const Throughput& a, const Throughput& b);
bool Quicker(const LatencySummary& a, const LatencySummary& b);

Result MakeResult(std::string workload, uint64_t value_bytes, int servers = 0, int workers = 0);

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
  bool RunAll();

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

  struct SmallVerdict {
    uint64_t bytes;
    int window;
    double requests_per_s, cpu_us, raw_cpu_us;
  };
  const std::vector<SmallVerdict>& small_verdicts() const { return small_verdicts_; }

 private:
  // One raw variant of the ceiling of a kairos run: what it is and how to run it.
  struct RawVariant {
    std::string name;         // "stream", "window", "whole"
    std::string description;  // e.g. "16 x 1 MiB msgs PUSH->PULL, 64 MiB queued"
    RawSpec spec;
  };

  // The kairos workloads and what they all use (transport_bench_runner.cc).
  void Fail(const std::string& workload, const absl::Status& s);
  static std::string BestNote(int runs);
  static double Median(std::vector<double> v);
  void Matrix(Op op);
  void Pipelined(Op op, uint64_t size, int servers, int workers, std::string name = "",
                 const ClusterSettings* settings = nullptr, bool always_ceiling = false);
  void Copying(Op op);
  void PushNoop();
  void Curve();
  void SyncAll(Op op);
  void MemoryAll();
  void Small();

  // The raw ceiling (transport_bench_ceiling.cc).
  std::vector<RawVariant> RawVariants(uint64_t size, int servers, int workers) const;
  const Ceiling* EnsureCeiling(uint64_t size, int servers, int workers);
  void RawOneWayAll();
  void RawRttAll();

  // The verdicts (transport_bench_verdicts.cc).
  void Paired();
  void Sweep();

  // The durability workloads (transport_bench_durability.cc).
  void CheckpointAll();
  void ForEachSizeInTempDir(const char* name, const std::vector<std::string>& sizes,
                            const std::string& parent,
                            const std::function<absl::Status(uint64_t, const std::string&)>& run);
  absl::Status Checkpoint(uint64_t size, const std::string& dir);
  void LogAll();
  absl::Status Log(uint64_t size, const std::string& dir);

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
  std::vector<SmallVerdict> small_verdicts_;
};

// What is printed after the workloads (transport_bench_verdicts.cc).
// The throughput cost of CURVE: reported, not a target.
void PrintCurveCost(const std::vector<Runner::CurveRatio>& ratios);
// The targets of docs/benchmarks.md, judged on what was measured.
void PrintTargets(const Report& report, const Runner& runner);

}  // namespace kairos::bench::transport_bench

#endif  // KAIROS_BENCH_TRANSPORT_BENCH_RUNNER_H_
