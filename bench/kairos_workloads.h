// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos workloads: a whole job (coordinator, S servers, W workers) over tcp://127.0.0.1
// inside this process, driven through the public API only.
//
// Thread-safety: a BenchCluster and the Run* functions are used from one thread (the Run*
// functions start their own worker threads and join them).

#ifndef KAIROS_BENCH_KAIROS_WORKLOADS_H_
#define KAIROS_BENCH_KAIROS_WORKLOADS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/bench_report.h"
#include "kairos/coordinator.h"
#include "kairos/keys.h"
#include "kairos/server.h"
#include "kairos/worker.h"

namespace kairos::bench {

// The name of the one table every benchmark job holds.
inline constexpr std::string_view kTable = "bench";

struct ClusterSettings {
  // true: every node shares one TransportContext (one ZeroMQ I/O thread for the whole job,
  // as LocalCluster does); false (default): each node has its own, as separate processes do.
  bool shared_context = false;
  // JobConfig::chunk_elements (the kairos default: 262144 floats, 1 MiB).
  uint64_t chunk_elements = uint64_t{1} << 18;
  std::string policy = "asp";
  // ServerOptions::apply_threads and ::inline_apply_bytes (-1: the library's default).
  int apply_threads = -1;
  int64_t inline_apply_bytes = -1;
  // WorkerOptions::io_spin of every worker, in microseconds (-1: the library's default).
  int io_spin_us = -1;
  // true: the servers' updater does nothing with a gradient (push_noop), which leaves the
  // cost of moving and dispatching pushes without the SGD arithmetic.
  bool discard_updates = false;
  // Every node's CURVE keys (the curve workload); unset: plain connections.
  std::optional<CurveKeys> keys;
  // > 0: the table is sparse (TableSpec::Sparse) with rows of this many floats, and
  // `table_floats` of BenchCluster::Create must be 0 (kairos_sparse_bench).
  uint32_t sparse_row_width = 0;
  // The sparse table's eviction (docs/sparse.md; the churn workload of kairos_sparse_bench).
  RowEviction sparse_eviction;
  // The table's server-side optimizer (UpdaterSpec::name).
  std::string updater = "sgd";
  // The table's TableSpec::compression (--compression of kairos_transport_bench).
  Compression compression = Compression::kNone;
  // The table's TableSpec::merge_pushes (--merge-pushes of kairos_transport_bench).
  bool merge_pushes = false;
  // ServerOptions::checkpoint_dir of every server (empty: none; the checkpoint workload).
  std::string checkpoint_dir;
  // ServerOptions::state_dir and ::log_sync of every server (empty: no update log; the log
  // workload).
  std::string state_dir;
  ServerOptions::LogSync log_sync = ServerOptions::LogSync::kProcess;
};

// A job over tcp loopback. The destructor shuts it down.
class BenchCluster {
 public:
  // Starts the coordinator, `servers` servers and `workers` workers, with one table of
  // `table_floats` floats (zeros, "sgd"; a sparse table when settings.sparse_row_width > 0),
  // and waits until the job has started.
  static absl::StatusOr<std::unique_ptr<BenchCluster>> Create(int servers, int workers,
                                                              uint64_t table_floats,
                                                              const ClusterSettings& settings);
  ~BenchCluster();
  BenchCluster(const BenchCluster&) = delete;
  BenchCluster& operator=(const BenchCluster&) = delete;

  int num_workers() const { return static_cast<int>(workers_.size()); }
  int num_servers() const { return static_cast<int>(servers_.size()); }
  // REQUIRES: 0 <= i < num_workers().
  Worker& worker(int i) { return *workers_[i]; }
  // REQUIRES: 0 <= i < num_servers().
  Server& server(int i) { return *servers_[i]; }

  // Finishes the workers, waits for the job to end and stops every node. Idempotent.
  absl::Status Shutdown();

 private:
  BenchCluster() = default;
  absl::Status StartWorkers(int workers, const JobConfig& job,
                            const std::shared_ptr<TransportContext>& context,
                            const ClusterSettings& settings);

  std::unique_ptr<Coordinator> coordinator_;
  std::vector<std::unique_ptr<Server>> servers_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

enum class Op {
  kPush,      // PushAsync of a kairos::Buffer: zero-copy
  kPushCopy,  // PushAsync of a span: the call copies the gradient first
  kPull,      // PullAsync into a kairos::ConstBuffer: zero-copy when the value is one chunk
  kPullCopy,  // PullAsync into preallocated memory: the values are copied into place
  kPushPull,  // push and pull alternately
};
const char* OpName(Op op);

struct PipelineOptions {
  // Requests each worker keeps outstanding (it waits on the oldest before issuing more)...
  int window = 8;
  // ...but no more than this many value bytes (and never fewer than 2 requests).
  uint64_t max_window_bytes = uint64_t{256} << 20;
};

// The window RunPipelined uses for values of `value_bytes`.
int EffectiveWindow(const PipelineOptions& pipeline, uint64_t value_bytes);

// How a job of BenchCluster moves one whole value, for the raw ceiling of the same shape.
struct WireShape {
  // The largest chunk: one message per chunk. The table of value_bytes / 4 floats is cut
  // into K chunks, K the smallest multiple of the server count with at most chunk_elements
  // floats per chunk (docs/design.md, "Tables, partitions and chunks").
  uint64_t message_bytes = 0;
  int chunks = 0;  // K
  // Chunk messages one worker keeps in flight to one server: the pipeline's window of
  // requests, K / servers chunk messages each, capped by the worker's flow control
  // (WorkerOptions::max_bytes_in_flight_per_server, whose default the benchmark keeps).
  int messages_in_flight = 0;
  // Connections that carry the values: every worker has one to every server that owns a
  // chunk.
  int connections = 0;
};
// REQUIRES: value_bytes is a positive multiple of 4, servers, workers and chunk_elements
// positive.
WireShape KairosWireShape(uint64_t value_bytes, int servers, int workers, uint64_t chunk_elements,
                          const PipelineOptions& pipeline);

// Every worker, on its own thread, issues `op` on the whole table (value_bytes) with a window
// of outstanding requests for budget.warmup_s + budget.seconds, and counts the requests that
// complete in the measured interval. REQUIRES: the table holds value_bytes / 4 floats.
absl::StatusOr<Throughput> RunPipelined(BenchCluster& cluster, Op op, uint64_t value_bytes,
                                        const Budget& budget, const PipelineOptions& pipeline);

// What each worker thread of a pipelined workload counted in the measured interval.
struct WorkerTally {
  uint64_t count = 0;
  absl::Status status;

  // A request that completed now with `s`: counts `n` when it succeeded within the measured
  // interval [measure_begin, end); keeps the first error.
  void Complete(const absl::Status& s, uint64_t n, SteadyClock::time_point measure_begin,
                SteadyClock::time_point end);
};
// The measured interval of every worker thread: (count summed over the workers, the
// process's CPU seconds and page faults in the interval), or the first worker's error (its
// rank prefixed).
struct MeasuredRun {
  uint64_t count = 0;
  ProcessUsage usage;
};
// Runs body(worker, measure_begin, end, tally) for every worker of `cluster`, each on its
// own thread, with the measured interval starting budget.warmup_s from now and lasting
// budget.seconds, and measures the CPU time of the whole process (every thread: workers,
// servers, coordinator, their ZeroMQ I/O threads) over that interval.
absl::StatusOr<MeasuredRun> RunOnWorkerThreads(
    BenchCluster& cluster, const Budget& budget,
    const std::function<void(int worker, std::chrono::steady_clock::time_point measure_begin,
                             std::chrono::steady_clock::time_point end, WorkerTally& tally)>&
        body);

// Worker 0 issues blocking Push (op kPush) or Pull (op kPull) calls of the whole table
// (value_bytes), one at a time, and times each. At most `max_samples` are timed.
absl::StatusOr<LatencySummary> RunSync(BenchCluster& cluster, Op op, uint64_t value_bytes,
                                       const Budget& budget, std::size_t max_samples);

}  // namespace kairos::bench

#endif  // KAIROS_BENCH_KAIROS_WORKLOADS_H_
