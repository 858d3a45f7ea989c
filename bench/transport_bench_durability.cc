// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_transport_bench's durability workloads (docs/durability.md): checkpoint (the time
// of Server::Checkpoint, and pushes while checkpoints run) and log (pushes with the
// server's update log off and at each log_sync), each in a fresh directory removed after.

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/transport_bench_runner.h"
#include "kairos/options.h"
#include "kairos/status.h"

namespace kairos::bench::transport_bench {

// The checkpoint workload (see the file comment).
void Runner::CheckpointAll() {
  ForEachSizeInTempDir(
      "checkpoint", flags_.checkpoint_sizes, flags_.checkpoint_dir,
      [this](uint64_t size, const std::string& dir) { return Checkpoint(size, dir); });
}

// Runs `run` once per size of `sizes` (a whole number of floats, > 0) with a fresh
// directory under `parent`, removed after; a bad size or a failed run fails `name`.
void Runner::ForEachSizeInTempDir(
    const char* name, const std::vector<std::string>& sizes, const std::string& parent,
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

absl::Status Runner::Checkpoint(uint64_t size, const std::string& dir) {
  ClusterSettings settings = plan_.cluster;
  settings.updater = "adam";
  settings.checkpoint_dir = dir;
  KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<BenchCluster> cluster,
                          BenchCluster::Create(1, 1, size / 4, settings));
  // Values, then three checkpoints timed one by one.
  KAIROS_RETURN_IF_ERROR(
      RunPipelined(*cluster, Op::kPush, size, Budget{0, 0.05}, plan_.pipeline).status());
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
    KAIROS_ASSIGN_OR_RETURN(Throughput without, RunPipelined(*pushing, Op::kPush, push_bytes,
                                                             plan_.budget, plan_.pipeline));
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
void Runner::LogAll() {
  ForEachSizeInTempDir("log", flags_.log_sizes, flags_.log_dir,
                       [this](uint64_t size, const std::string& dir) { return Log(size, dir); });
}

absl::Status Runner::Log(uint64_t size, const std::string& dir) {
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
      settings.log_sync =
          i == 1 ? ServerOptions::LogSync::kProcess : ServerOptions::LogSync::kMachine;
    }
    KAIROS_ASSIGN_OR_RETURN(levels[i].cluster, BenchCluster::Create(1, 1, size / 4, settings));
  }
  const int rounds = std::max(3, flags_.pairs);
  for (int round = 0; round < rounds; ++round) {
    std::vector<double> got(3, 0);
    for (int k = 0; k < 3; ++k) {
      const int i = (round + k) % 3;  // each level goes first, second and third in turn
      KAIROS_ASSIGN_OR_RETURN(Throughput t, RunPipelined(*levels[i].cluster, Op::kPush, size,
                                                         plan_.budget, plan_.pipeline));
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
        stats.log_commits > 0
            ? static_cast<double>(stats.log_records) / static_cast<double>(stats.log_commits)
            : 0;
    if (l.ratios.empty()) {
      r.note = absl::StrFormat("no update log: the baseline (median of %d rounds)", rounds);
    } else {
      std::sort(l.ratios.begin(), l.ratios.end());
      r.note = absl::StrFormat(
          "update log, log_sync %s: median %.0f%% of no log over %d rounds (range "
          "%.0f-%.0f%%); %.1f records per write, %d syncs, %s of log",
          l.name, 100 * median(l.ratios), l.ratios.size(), 100 * l.ratios.front(),
          100 * l.ratios.back(), records_per_write, stats.log_syncs, FormatSize(stats.log_bytes));
    }
    report_.Add(r);
  }
  return absl::OkStatus();
}

}  // namespace kairos::bench::transport_bench
