// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "bench/kairos_workloads.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <span>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "bench/bench_log.h"
#include "kairos/buffer.h"
#include "kairos/status.h"
#include "kairos/transport_context.h"
#include "kairos/updater.h"

namespace kairos::bench {
namespace {

JobConfig MakeJob(uint64_t table_floats, const ClusterSettings& settings) {
  JobConfig job;
  TableSpec table;
  if (settings.sparse_row_width > 0) {
    table = TableSpec::Sparse(std::string(kTable), settings.sparse_row_width);
    table.eviction = settings.sparse_eviction;
  } else {
    table.name = std::string(kTable);
    table.size = table_floats;
  }
  table.updater.name = settings.updater;
  table.compression = settings.compression;
  table.merge_pushes = settings.merge_pushes;
  job.tables.push_back(table);
  job.policy = settings.policy;
  job.chunk_elements = settings.chunk_elements;
  return job;
}


// One worker's memory for RunPipelined: the gradient it pushes and the destinations of its
// pulls (request i writes into slot i % window, and request i - window, the previous
// user, has completed before request i is issued). The zero-copy pulls get read-only
// buffers (one may come back as the server's own memory, over inproc), each first holding
// the bench's own zeroed memory, which a pull over several chunks is joined into;
// pull_copy writes into the bench's own memory. Made before the clock starts: zeroing a
// window of 16 or 64 MiB destinations (256 MiB) takes a noticeable part of a second.
struct WorkerBuffers {
  Buffer gradient;
  std::vector<ConstBuffer> outs;  // pull, push_pull
  std::vector<Buffer> copies;     // pull_copy
};

WorkerBuffers MakeWorkerBuffers(Op op, uint64_t value_bytes, int window) {
  const uint64_t floats = value_bytes / sizeof(float);
  WorkerBuffers b;
  b.gradient = Buffer::Allocate(floats);
  std::fill(b.gradient.data(), b.gradient.data() + floats, 1e-6f);
  for (int i = 0; i < window; ++i) {  // pages touched
    if (op == Op::kPull || op == Op::kPushPull) b.outs.push_back(Buffer::Zeros(floats));
    if (op == Op::kPullCopy) b.copies.push_back(Buffer::Zeros(floats));
  }
  return b;
}

// One worker's pipelined loop (see RunPipelined).
void PipelineLoop(Worker& worker, Op op, uint64_t value_bytes, int window,
                  SteadyClock::time_point measure_begin, SteadyClock::time_point end,
                  WorkerBuffers& buffers, WorkerTally& tally) {
  const uint64_t floats = value_bytes / sizeof(float);
  const Buffer& gradient = buffers.gradient;
  std::vector<ConstBuffer>& outs = buffers.outs;
  std::vector<Buffer>& copies = buffers.copies;
  std::deque<Request> in_flight;
  auto complete_oldest = [&] {
    absl::Status s = in_flight.front().Wait();
    in_flight.pop_front();
    tally.Complete(s, 1, measure_begin, end);
  };
  for (uint64_t issued = 0; SteadyClock::now() < end && tally.status.ok(); ++issued) {
    if (in_flight.size() == static_cast<std::size_t>(window)) complete_oldest();
    const bool pull = op == Op::kPull || (op == Op::kPushPull && issued % 2 == 1);
    if (pull) {
      in_flight.push_back(worker.PullAsync(kTable, 0, floats, &outs[issued % window]));
    } else if (op == Op::kPullCopy) {
      in_flight.push_back(worker.PullAsync(kTable, 0, copies[issued % window].span()));
    } else if (op == Op::kPushCopy) {
      in_flight.push_back(worker.PushAsync(kTable, 0, std::span<const float>(gradient.span())));
    } else {
      in_flight.push_back(worker.PushAsync(kTable, 0, gradient));
    }
  }
  while (!in_flight.empty()) complete_oldest();
}

// The server updater of push_noop: receives every gradient and does nothing with it.
class DiscardingUpdater final : public Updater {
 public:
  void Apply(std::span<float>, std::span<float>, const Update&) const override {}
};

}  // namespace

const char* OpName(Op op) {
  switch (op) {
    case Op::kPush:
      return "push";
    case Op::kPushCopy:
      return "push_copy";
    case Op::kPull:
      return "pull";
    case Op::kPullCopy:
      return "pull_copy";
    case Op::kPushPull:
      return "push_pull";
  }
  return "?";
}

absl::StatusOr<std::unique_ptr<BenchCluster>> BenchCluster::Create(
    int servers, int workers, uint64_t table_floats, const ClusterSettings& settings) {
  std::unique_ptr<BenchCluster> cluster(new BenchCluster());
  const JobConfig job = MakeJob(table_floats, settings);
  std::shared_ptr<TransportContext> context;
  if (settings.shared_context) context = TransportContext::Create();
  CoordinatorOptions co;
  co.log_level = BenchLogLevel();
  co.listen = "tcp://127.0.0.1:0";
  co.num_servers = servers;
  co.num_workers = workers;
  co.job = job;
  co.context = context;
  co.keys = settings.keys;
  KAIROS_ASSIGN_OR_RETURN(cluster->coordinator_, Coordinator::Create(co));
  for (int s = 0; s < servers; ++s) {
    ServerOptions so;
    so.log_level = BenchLogLevel();
    so.coordinator = cluster->coordinator_->endpoint();
    so.listen = "tcp://127.0.0.1:*";
    so.context = context;
    so.keys = settings.keys;
    if (settings.apply_threads >= 0) so.apply_threads = settings.apply_threads;
    so.checkpoint_dir = settings.checkpoint_dir;
    so.checkpoint_at_end = false;
    so.state_dir = settings.state_dir;
    so.log_sync = settings.log_sync;
    if (settings.inline_apply_bytes >= 0) so.inline_apply_bytes = settings.inline_apply_bytes;
    if (settings.discard_updates) {
      so.updater_factory = [](const UpdaterSpec&) -> absl::StatusOr<std::unique_ptr<Updater>> {
        return std::make_unique<DiscardingUpdater>();
      };
    }
    KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Create(so));
    cluster->servers_.push_back(std::move(server));
  }
  KAIROS_RETURN_IF_ERROR(cluster->StartWorkers(workers, job, context, settings));
  return cluster;
}

// Workers join in parallel: each Create returns once the whole job has started.
absl::Status BenchCluster::StartWorkers(int workers, const JobConfig& job,
                                        const std::shared_ptr<TransportContext>& context,
                                        const ClusterSettings& settings) {
  std::vector<absl::StatusOr<std::unique_ptr<Worker>>> made(workers);
  std::vector<std::thread> threads;
  for (int r = 0; r < workers; ++r) {
    threads.emplace_back([&, r] {
      WorkerOptions wo;
      wo.log_level = BenchLogLevel();
      wo.coordinator = coordinator_->endpoint();
      wo.job = job;
      wo.rank = r;
      wo.context = context;
      wo.keys = settings.keys;
      if (settings.io_spin_us >= 0) wo.io_spin = absl::Microseconds(settings.io_spin_us);
      made[r] = Worker::Create(wo);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < workers; ++r) {
    if (!made[r].ok()) {
      return absl::Status(made[r].status().code(),
                          absl::StrFormat("worker %d: %s", r, made[r].status().message()));
    }
    workers_.push_back(*std::move(made[r]));
  }
  return absl::OkStatus();
}

BenchCluster::~BenchCluster() { Shutdown().IgnoreError(); }

absl::Status BenchCluster::Shutdown() {
  if (coordinator_ == nullptr) return absl::OkStatus();
  absl::Status status;
  for (auto& w : workers_) status.Update(w->Shutdown());
  status.Update(coordinator_->Wait(absl::Seconds(30)));
  workers_.clear();
  for (auto& s : servers_) s->Shutdown();
  servers_.clear();
  coordinator_.reset();
  return status;
}

int EffectiveWindow(const PipelineOptions& pipeline, uint64_t value_bytes) {
  const uint64_t by_bytes = std::max<uint64_t>(2, pipeline.max_window_bytes / value_bytes);
  return static_cast<int>(std::max<uint64_t>(1, std::min<uint64_t>(pipeline.window, by_bytes)));
}

WireShape KairosWireShape(uint64_t value_bytes, int servers, int workers, uint64_t chunk_elements,
                          const PipelineOptions& pipeline) {
  // The arithmetic of the library's table partition (docs/design.md, "Tables, partitions
  // and chunks").
  const uint64_t floats = value_bytes / sizeof(float);
  const uint64_t shards = static_cast<uint64_t>(servers);
  uint64_t k = (floats + chunk_elements - 1) / chunk_elements;
  k = std::max(k, shards);
  k = (k + shards - 1) / shards * shards;
  k = std::min(k, floats);
  WireShape shape;
  shape.chunks = static_cast<int>(k);
  shape.message_bytes = (floats + k - 1) / k * sizeof(float);
  const uint64_t per_server = (k + shards - 1) / shards;  // chunks of one value per server
  const uint64_t flow_cap =
      std::max<uint64_t>(1, static_cast<uint64_t>(WorkerOptions{}.max_bytes_in_flight_per_server) /
                                shape.message_bytes);
  shape.messages_in_flight = static_cast<int>(std::min<uint64_t>(
      static_cast<uint64_t>(EffectiveWindow(pipeline, value_bytes)) * per_server, flow_cap));
  shape.connections = workers * static_cast<int>(std::min<uint64_t>(shards, k));
  return shape;
}

void WorkerTally::Complete(const absl::Status& s, uint64_t n,
                           SteadyClock::time_point measure_begin, SteadyClock::time_point end) {
  const SteadyClock::time_point now = SteadyClock::now();
  if (!s.ok() && status.ok()) status = s;
  if (s.ok() && now >= measure_begin && now < end) count += n;
}

absl::StatusOr<MeasuredRun> RunOnWorkerThreads(
    BenchCluster& cluster, const Budget& budget,
    const std::function<void(int, SteadyClock::time_point, SteadyClock::time_point,
                             WorkerTally&)>& body) {
  const SteadyClock::time_point measure_begin = After(SteadyClock::now(), budget.warmup_s);
  const SteadyClock::time_point end = After(measure_begin, budget.seconds);
  std::vector<WorkerTally> tallies(cluster.num_workers());
  std::vector<std::thread> threads;
  for (int i = 0; i < cluster.num_workers(); ++i) {
    threads.emplace_back([&, i] { body(i, measure_begin, end, tallies[i]); });
  }
  std::this_thread::sleep_until(measure_begin);
  const ProcessUsage begin = ReadProcessUsage();
  std::this_thread::sleep_until(end);
  MeasuredRun run;
  run.usage = UsageSince(begin);
  for (std::thread& t : threads) t.join();
  for (std::size_t i = 0; i < tallies.size(); ++i) {
    if (!tallies[i].status.ok()) {
      return absl::Status(tallies[i].status.code(),
                          absl::StrCat("worker ", i, ": ", tallies[i].status.message()));
    }
    run.count += tallies[i].count;
  }
  return run;
}

absl::StatusOr<Throughput> RunPipelined(BenchCluster& cluster, Op op, uint64_t value_bytes,
                                        const Budget& budget, const PipelineOptions& pipeline) {
  const int window = EffectiveWindow(pipeline, value_bytes);
  std::vector<WorkerBuffers> buffers;
  for (int i = 0; i < cluster.num_workers(); ++i) {
    buffers.push_back(MakeWorkerBuffers(op, value_bytes, window));
  }
  KAIROS_ASSIGN_OR_RETURN(
      MeasuredRun run,
      RunOnWorkerThreads(cluster, budget,
                         [&](int i, SteadyClock::time_point measure_begin,
                             SteadyClock::time_point end, WorkerTally& tally) {
                           PipelineLoop(cluster.worker(i), op, value_bytes, window,
                                        measure_begin, end, buffers[i], tally);
                         }));
  return MakeThroughput(run.count, value_bytes, budget.seconds, run.usage);
}

absl::StatusOr<LatencySummary> RunSync(BenchCluster& cluster, Op op, uint64_t value_bytes,
                                       const Budget& budget, std::size_t max_samples) {
  Worker& worker = cluster.worker(0);
  Buffer values = Buffer::Zeros(value_bytes / sizeof(float));
  auto call = [&] {
    return op == Op::kPull ? worker.Pull(kTable, values.span())
                           : worker.Push(kTable, std::span<const float>(values.span()));
  };
  const SteadyClock::time_point warm_end = After(SteadyClock::now(), budget.warmup_s);
  while (SteadyClock::now() < warm_end) KAIROS_RETURN_IF_ERROR(call());
  std::vector<double> samples;
  samples.reserve(max_samples);
  const SteadyClock::time_point end = After(SteadyClock::now(), budget.seconds);
  while (samples.size() < max_samples && SteadyClock::now() < end) {
    const SteadyClock::time_point start = SteadyClock::now();
    KAIROS_RETURN_IF_ERROR(call());
    samples.push_back(
        std::chrono::duration<double, std::micro>(SteadyClock::now() - start).count());
  }
  return Summarize(samples);
}

}  // namespace kairos::bench
