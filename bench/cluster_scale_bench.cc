// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_cluster_scale_bench: how large an embedded cluster (LocalCluster, every node in this
// process) runs, and what it costs. W workers and S servers run BSP rounds over one table:
// each worker pulls the table, checks it holds exactly the value the rounds so far give
// (every worker pushes rank + 1 into every element; SGD at rate 1 on the round's average
// moves each element by -(W + 1) / 2 per round), pushes, and advances its clock. Reports the
// time to create the cluster, the resident memory it added per worker (before any table
// buffer of the program's), the time per round (median and slowest, the first excluded), and
// the time from the last round to the job's end (the workers' finish, the SHUTDOWN).
// --coordinator-state-dir DIR gives the coordinator a state directory (docs/durability.md,
// "Coordinator restarts"): what keeping the job's state costs at START and at the end.
//
//   kairos_cluster_scale_bench --workers 1024 --servers 8 --size 100000 --rounds 20
//
// Exit status: 0 when every value was exact, 1 when a run failed or a value was not, 2 for
// bad flags.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_common.h"
#include "bench/bench_log.h"
#include "kairos/kairos.h"

namespace kairos::bench {
namespace {

struct Flags {
  int workers = 1024;
  int servers = 8;
  uint64_t size = 100000;
  int rounds = 20;
  std::string transport = "inproc";
  std::string coordinator_state_dir;
};

absl::Status Run(const Flags& f) {
  ClusterOptions o;
  o.num_servers = f.servers;
  o.num_workers = f.workers;
  absl::StatusOr<TransportKind> transport = ParseTransportKind(f.transport);
  if (!transport.ok()) return transport.status();
  o.transport = *transport;
  o.job.policy = "bsp";
  o.job.chunk_elements = std::max<uint64_t>(1, (f.size + f.servers - 1) / f.servers);
  o.job.tables.push_back({"w", f.size, Initializer::Zeros(), {"sgd", 1.0f}});
  for (NodeOptions* node :
       {static_cast<NodeOptions*>(&o.worker), static_cast<NodeOptions*>(&o.server),
        static_cast<NodeOptions*>(&o.coordinator)}) {
    node->log_level = BenchLogLevel();
  }
  o.worker.join_timeout = absl::Minutes(5);
  o.worker.request_timeout = absl::Minutes(5);
  o.coordinator.join_timeout = absl::Minutes(5);
  o.coordinator.state_dir = f.coordinator_state_dir;

  const uint64_t rss_before = StatusBytes(::getpid(), "VmRSS");
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Create(o);
  if (!cluster.ok()) return cluster.status();
  const absl::Duration create = absl::Now() - start;
  const uint64_t rss_created = StatusBytes(::getpid(), "VmRSS");

  std::vector<absl::Time> round_starts(f.rounds);  // worker 0's pull of each round returned
  std::atomic<int64_t> last_clock_ns{0};           // the last worker's last AdvanceClock
  const absl::Status run = (*cluster)->Run([&](Worker& w) -> absl::Status {
    std::vector<float> params(f.size);
    const std::vector<float> grad(f.size, static_cast<float>(w.rank() + 1));
    for (int t = 0; t < f.rounds; ++t) {
      KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
      if (w.rank() == 0) round_starts[t] = absl::Now();
      const float want = -static_cast<float>(t) * static_cast<float>(f.workers + 1) / 2.0f;
      const auto bad =
          std::find_if(params.begin(), params.end(), [want](float v) { return v != want; });
      if (bad != params.end()) {
        return absl::InternalError(
            absl::StrFormat("round %d: w[%d] = %g, want %g", t, bad - params.begin(), *bad, want));
      }
      KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
      KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
    }
    const int64_t now = absl::ToUnixNanos(absl::Now());
    for (int64_t seen = last_clock_ns.load(); seen < now;) {
      if (last_clock_ns.compare_exchange_weak(seen, now)) break;
    }
    return absl::OkStatus();
  });
  const uint64_t peak = StatusBytes(::getpid(), "VmHWM");
  const absl::Status shutdown = (*cluster)->Shutdown();
  const absl::Duration end = absl::Now() - absl::FromUnixNanos(last_clock_ns.load());
  if (!run.ok()) return run;
  if (!shutdown.ok()) return shutdown;

  std::vector<double> rounds_ms;
  for (int t = 1; t + 1 < f.rounds; ++t) {
    rounds_ms.push_back(absl::ToDoubleMilliseconds(round_starts[t + 1] - round_starts[t]));
  }
  std::sort(rounds_ms.begin(), rounds_ms.end());
  const double median = rounds_ms.empty() ? 0.0 : rounds_ms[rounds_ms.size() / 2];
  const double slowest = rounds_ms.empty() ? 0.0 : rounds_ms.back();
  std::printf("%-8s %7s %7s %9s %8s %10s %14s %10s %10s %9s %7s\n", "transport", "workers",
              "servers", "size", "rounds", "create s", "KiB/worker", "round ms", "max ms",
              "peak MiB", "end s");
  std::printf("%-8s %7d %7d %9llu %8d %10.2f %14.0f %10.1f %10.1f %9.0f %7.2f\n",
              f.transport.c_str(), f.workers, f.servers, static_cast<unsigned long long>(f.size),
              f.rounds, absl::ToDoubleSeconds(create),
              static_cast<double>(rss_created - rss_before) / 1024.0 / f.workers, median, slowest,
              static_cast<double>(peak) / (1 << 20), absl::ToDoubleSeconds(end));
  std::printf("every value exact: yes (%d rounds of %d workers)\n", f.rounds, f.workers);
  return absl::OkStatus();
}

}  // namespace
}  // namespace kairos::bench

int main(int argc, char** argv) {
  kairos::bench::Flags f;
  CLI::App app(
      "How large an embedded cluster runs: BSP rounds of W workers and S servers in one "
      "process, every value checked; creation time, memory per worker, time per round.");
  app.add_option("--workers", f.workers, "Workers")->check(CLI::Range(1, 65536));
  app.add_option("--servers", f.servers, "Servers")->check(CLI::Range(1, 1024));
  app.add_option("--size", f.size, "Elements of the table")->check(CLI::Range(1, 1 << 28));
  app.add_option("--rounds", f.rounds, "BSP rounds")->check(CLI::Range(1, 100000));
  app.add_option("--transport", f.transport, "inproc, tcp or ipc");
  app.add_option("--coordinator-state-dir", f.coordinator_state_dir,
                 "Give the coordinator this state directory (its state kept on disk)");
  CLI11_PARSE(app, argc, argv);
  if (!kairos::ParseTransportKind(f.transport).ok()) {
    return kairos::bench::BadFlags("kairos_cluster_scale_bench",
                                   kairos::ParseTransportKind(f.transport).status().message());
  }
  const absl::Status s = kairos::bench::Run(f);
  if (!s.ok()) {
    std::fprintf(stderr, "kairos_cluster_scale_bench: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
