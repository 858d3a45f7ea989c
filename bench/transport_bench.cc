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
//
// The code: transport_bench_flags.h (the flags and what the workloads take from them),
// transport_bench_runner.h (the workloads; its file comment says which file has which).

#include <stdlib.h>

#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bench/bench_common.h"
#include "bench/bench_report.h"
#include "bench/transport_bench_flags.h"
#include "bench/transport_bench_runner.h"
#include "kairos/allocator.h"

namespace kairos::bench::transport_bench {
namespace {

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
}  // namespace kairos::bench::transport_bench

int main(int argc, char** argv) { return kairos::bench::transport_bench::Main(argc, argv); }
