// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Simulate: a Simulation (simulation.h) run by its event loop, its samples and its result.

#include "sim/simulator.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "kairos/pace.h"
#include "sim/simulation.h"

namespace kairos::sim {
namespace {

// The pace model of the compute options (validated by ValidateSimOptions, so Create cannot
// fail).
PaceModel PaceOf(const SimOptions& o) { return *PaceModel::Create(PaceOptionsOf(o)); }

absl::Duration TransferTime(const NetworkOptions& n, absl::Duration latency, double bytes) {
  if (n.bandwidth_bytes_per_s == 0.0) return latency;
  return latency + absl::Seconds(bytes / n.bandwidth_bytes_per_s);
}

// The passes over a shard's part that value weighting adds to an apply and to a read
// (ServerCostOptions::drift_pass, as engine/shard.cc's ApplyTracked and ResetDrift do).
int DriftPassesPerApply(const policy::WeightingSpec& w, int num_workers) {
  if (w.kind != policy::WeightingSpec::Kind::kValue) return 0;
  return w.value_mode == policy::WeightingSpec::ValueMode::kBound ? 2 : 1 + num_workers;
}
int DriftPassesPerRead(const policy::WeightingSpec& w) {
  return w.kind == policy::WeightingSpec::Kind::kValue &&
                 w.value_mode == policy::WeightingSpec::ValueMode::kExact
             ? 1
             : 0;
}

}  // namespace

namespace internal {

Simulation::Simulation(const SimOptions& options, const policy::PolicySpec& spec,
                       std::shared_ptr<const Model> model)
    : options_(options),
      policy_(policy::ToString(spec)),
      model_(std::move(model)),
      message_bytes_(4.0 * model_->num_params()),
      transfer_up_(TransferTime(options.network, options.network.to_server(), message_bytes_)),
      transfer_down_(TransferTime(options.network, options.network.to_worker(), message_bytes_)),
      shards_(options.network.server_shards),
      part_bytes_(message_bytes_ / shards_),
      pace_(PaceOf(options)),
      pull_(spec.pull),
      eager_(spec.pull.kind == policy::PullSpec::Kind::kEager),
      drift_passes_per_apply_(DriftPassesPerApply(spec.weighting, options.num_workers)),
      drift_passes_per_read_(DriftPassesPerRead(spec.weighting)),
      server_(spec, options.num_workers,
              options.initial_params.size() > 0 ? options.initial_params : model_->InitialParams(),
              options.learning_rate, options.push_log_size),
      cache_(spec, options.num_workers, options.cache_clocks, options.learning_rate,
             options.read_log),
      pushes_taken_(static_cast<size_t>(options.num_workers), 0),
      workers_(static_cast<size_t>(options.num_workers)) {
  for (WorkerId w = 0; w < options.num_workers; ++w) {
    Worker& worker = workers_[static_cast<size_t>(w)];
    worker.target = options.iterations_per_worker.empty()
                        ? options.iterations
                        : options.iterations_per_worker[static_cast<size_t>(w)];
    worker.profile = Rng(StreamSeed(options.seed, kProfileStream, static_cast<uint64_t>(w)));
    if (eager_) worker.seen_clocks.assign(static_cast<size_t>(options.num_workers), 0);
  }
  for (const WorkerFailure& f : options.failures) {
    workers_[static_cast<size_t>(f.worker)].fails_at = kStart + f.at;
  }
  if (options.host.cores > 0.0) {
    host_.emplace(options.host.cores, options.host.background, options.host.run_to_completion);
  }
  const NetworkOptions& n = options.network;
  if (n.serialize_links) {
    links_.emplace(options.num_workers, n.to_server(), n.to_worker(), n.bandwidth_bytes_per_s,
                   n.server_bandwidth_bytes_per_s < 0 ? n.bandwidth_bytes_per_s
                                                      : n.server_bandwidth_bytes_per_s,
                   shards_);
  }
}

void Simulation::Start() {
  for (WorkerId w = 0; w < options_.num_workers; ++w) {
    if (workers_[static_cast<size_t>(w)].target == 0) {
      Compute(server_.OnLeave(w, MemberState::kFinished, kStart));
    } else {
      // A read request carries no payload: it takes the latency only.
      queue_.Schedule({.time = kStart + options_.network.to_server(),
                       .kind = EventKind::kReadArrives,
                       .worker = w,
                       .clock = 0});
    }
  }
  for (const WorkerFailure& f : options_.failures) {
    queue_.Schedule({.time = kStart + f.at + options_.detection_delay,
                     .kind = EventKind::kFailureDetected, .worker = f.worker});
  }
}

absl::StatusOr<SimResult> Simulation::Run() {
  Start();
  TakeSample(kStart);
  next_sample_ = kStart + options_.sample_interval;
  const absl::Time limit = kStart + options_.max_time;
  while (!queue_.empty() && !AllLeft() && !reached_) {
    if (queue_.top().time > limit) {
      time_limited_ = true;
      now_ = limit;
      break;
    }
    SampleBefore(queue_.top().time);
    if (reached_) {
      // Stopped at the target: the state is the sample's, the event stays unhandled.
      now_ = kStart + samples_.back().time;
      break;
    }
    const Event e = queue_.Pop();
    now_ = e.time;
    Handle(e);
    ++events_;
  }
  if (!time_limited_ && !reached_ && !AllLeft() && server_.num_waiting() > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("simulation of '", policy_, "' stalled at t=",
                     absl::FormatDuration(now_ - kStart),
                     " with no event left: ", server_.DescribeWaiting()));
  }
  if (!batch_error_.ok()) return batch_error_;
  FinalSamples();
  server_.Finish(now_);
  return Collect();
}

void Simulation::Handle(const Event& e) {
  switch (e.kind) {
    case EventKind::kReadArrives:
      Compute(server_.OnRead(e.worker, e.clock, now_));
      return;
    case EventKind::kPushArrives:
      OnPushArrives(e.worker, e.clock);
      return;
    case EventKind::kPushSent:
      // The parts, one after the other on the worker's link.
      for (int i = 0; i < shards_; ++i) {
        AfterTransfer(links_->Send(e.worker, Links::Shard(i), part_bytes_, now_),
                      [this, w = e.worker, clock = e.clock, i](absl::Time arrived) {
                        queue_.Schedule({.time = arrived + ReceiveDelay(),
                                         .kind = EventKind::kPartArrives,
                                         .worker = w,
                                         .clock = clock,
                                         .shard = i});
                      });
      }
      return;
    case EventKind::kPartArrives:
      OnPartArrives(e);
      return;
    case EventKind::kPartReceived:
      ApplyPart(e.worker, e.clock, e.shard);
      return;
    case EventKind::kPartApplied:
      // The shard reads its part of the read the push carries, whether or not the gate will
      // serve it (the simulation's one gate decides once the whole push is in); it leaves
      // if the read was served (SendReply).
      RunOnLane(
          e.shard, ReadCost(e.shard),
          [this, w = e.worker, clock = e.clock, k = static_cast<size_t>(e.shard)](absl::Time end) {
            Worker& worker = workers_[static_cast<size_t>(w)];
            if (worker.carried_clock != clock) return;  // a push before the latest
            worker.carried_read[k] = end;
            if (k < worker.reply.part_waits.size() && worker.reply.part_waits[k]) {
              worker.reply.part_waits[k] = false;
              ReplyPartLeaves(w, static_cast<int>(k), end);
            }
          });
      return;
    case EventKind::kJobEnds:
      if (const std::optional<uint64_t> next = lanes_.End(e.job)) StartJob(*next);
      return;
    case EventKind::kHostTick:
      HostTick(e.job);
      return;
    case EventKind::kHostJobStarts: {
      LaterHostJob job = std::move(later_host_jobs_.extract(e.job).mapped());
      OnHost(job.work, std::move(job.at_end));
      return;
    }
    case EventKind::kAckArrives: {
      Worker& worker = workers_[static_cast<size_t>(e.worker)];
      if (now_ > worker.fails_at) return;  // died before it could report its clock
      worker.push_time += now_ - worker.push_sent;
      queue_.Schedule({.time = now_ + options_.network.to_server(),
                       .kind = EventKind::kClockArrives,
                       .worker = e.worker,
                       .clock = e.clock});
      // The read would leave now, behind the clock report.
      ReadFromCopy(e.worker, e.clock + 1, now_);
      return;
    }
    case EventKind::kClockArrives:
      OnClockArrives(e.worker, e.clock);
      return;
    case EventKind::kCachedRead:
      OnCachedRead(e.worker, e.clock);
      return;
    case EventKind::kFailureDetected:
      ComputeAfterBuckets([&] { return server_.OnLeave(e.worker, MemberState::kDead, now_); });
      return;
  }
}

std::span<const int> Simulation::BatchOf(WorkerId w, int64_t iteration) {
  if (options_.batches) {
    const std::span<const int> batch = options_.batches(w, iteration);
    const int n = model_->num_examples();
    if (!batch.empty() &&
        std::all_of(batch.begin(), batch.end(), [n](int i) { return i >= 0 && i < n; })) {
      return batch;
    }
    if (batch_error_.ok()) {
      batch_error_ = absl::InvalidArgumentError(
          absl::StrCat("SimOptions::batches: the batch of worker ", w, " at iteration ", iteration,
                       " is ", batch.empty() ? "empty" : absl::StrCat("not in [0, ", n, ")")));
    }
  }
  sampled_ = SampleBatch(options_.seed, w, iteration, options_.batch_size, model_->num_examples());
  return sampled_;
}

absl::Duration Simulation::DrawComputeTime(WorkerId w, int64_t iteration) {
  const ComputeOptions& c = options_.compute;
  if (!c.measured.empty()) {
    // One of the profile's equally likely values.
    Worker& worker = workers_[static_cast<size_t>(w)];
    const std::vector<absl::Duration>& q = c.measured[static_cast<size_t>(w) % c.measured.size()];
    return q[static_cast<size_t>(worker.profile.UniformInt(q.size()))];
  }
  return pace_.IterationTime(w, iteration);
}

void Simulation::SampleBefore(absl::Time t) {
  while (next_sample_ < t && !reached_) {
    TakeSample(next_sample_);
    next_sample_ += options_.sample_interval;
  }
}

void Simulation::AddRead(WorkerId w, const Eigen::Ref<const Eigen::VectorXf>& params) {
  if (w != 0 || options_.average_window <= absl::ZeroDuration()) return;
  Eigen::VectorXf& sum = reads_since_sample_.sum;
  if (sum.size() == 0) sum = Eigen::VectorXf::Zero(params.size());
  sum += params;
  ++reads_since_sample_.reads;
}

Eigen::VectorXf Simulation::Evaluated(absl::Time t) {
  if (options_.average_window <= absl::ZeroDuration()) return server_.params();
  // As the lab's SnapshotWindow: the samples of (t - window, t], each with its reads.
  reads_since_sample_.time = t;
  read_window_.push_back(std::move(reads_since_sample_));
  reads_since_sample_ = ReadSum{};
  while (read_window_.size() > 1 && !(read_window_.front().time > t - options_.average_window)) {
    read_window_.pop_front();
  }
  Eigen::VectorXf mean = Eigen::VectorXf::Zero(server_.params().size());
  int64_t reads = 0;
  for (const ReadSum& r : read_window_) {
    if (r.reads == 0) continue;
    mean += r.sum;
    reads += r.reads;
  }
  if (reads == 0) return server_.params();
  return mean / static_cast<float>(reads);
}

void Simulation::TakeSample(absl::Time t, bool during_run) {
  const Evaluation eval = model_->Evaluate(Evaluated(t));
  int64_t iterations = 0;
  const policy::WorkerClocks& clocks = server_.clocks();
  for (WorkerId w = 0; w < clocks.num_workers(); ++w) iterations += clocks.clock(w);
  samples_.push_back({.time = t - kStart, .version = server_.version(),
                      .iterations = iterations, .loss = eval.loss, .accuracy = eval.accuracy});
  if (!during_run) return;
  if (options_.stop_at_accuracy > 0 && model_->has_accuracy() &&
      eval.accuracy >= options_.stop_at_accuracy) {
    reached_ = true;
  }
  if (options_.stop_after && options_.stop_after(samples_.back())) reached_ = true;
}

void Simulation::FinalSamples() {
  while (next_sample_ <= now_) {
    TakeSample(next_sample_, /*during_run=*/false);
    next_sample_ += options_.sample_interval;
  }
  if (samples_.back().time != now_ - kStart) TakeSample(now_, /*during_run=*/false);
}

SimResult Simulation::Collect() {
  SimResult r;
  r.policy = policy_;
  r.model = model_->name();
  r.has_accuracy = model_->has_accuracy();
  r.optimal_loss = model_->optimal_loss();
  r.end_time = now_ - kStart;
  r.time_limited = time_limited_;
  r.stopped_at_target = reached_;
  r.events = events_;
  r.version = server_.version();
  r.nonfinite_pushes = server_.refused().nonfinite;
  r.samples = samples_;
  const policy::WorkerClocks& clocks = server_.clocks();
  std::vector<WorkerMetrics> metrics = server_.metrics();
  for (WorkerId w = 0; w < options_.num_workers; ++w) {
    const auto i = static_cast<size_t>(w);
    SimWorkerResult wr;
    wr.metrics = std::move(metrics[i]);
    wr.iterations = clocks.clock(w);
    wr.state = clocks.state(w);
    wr.compute_time = workers_[i].compute_time;
    // Under eager pull the gate's wait is already in the wait for the reply.
    wr.pull_time =
        workers_[i].pull_time + (eager_ ? absl::ZeroDuration() : wr.metrics.blocked_time);
    wr.push_time = workers_[i].push_time;
    wr.dropped_pushes = wr.metrics.dropped;
    wr.reads_cached = cache_.reads_cached(w);
    wr.reads = cache_.TakeLog(w);
    r.staleness.Merge(wr.metrics.staleness);
    r.max_read_lead = std::max(r.max_read_lead, wr.metrics.max_read_lead);
    r.total_blocked_time += wr.metrics.blocked_time;
    r.workers.push_back(std::move(wr));
  }
  r.final_params = server_.params();
  return r;
}

}  // namespace internal

int64_t SimResult::total_iterations() const {
  int64_t total = 0;
  for (const SimWorkerResult& w : workers) total += w.iterations;
  return total;
}

PaceOptions PaceOptionsOf(const SimOptions& o) {
  PaceOptions p;
  p.iteration_time = o.compute.compute_time;
  p.slowdown = o.compute.slowdown;
  p.jitter_shift = o.compute.jitter_shift;
  p.jitter_mean = o.compute.jitter_mean;
  p.straggler_prob = o.compute.straggler_prob;
  p.straggler_factor = o.compute.straggler_factor;
  p.seed = o.seed;
  return p;
}

absl::StatusOr<SimResult> Simulate(const SimOptions& options) {
  absl::StatusOr<policy::PolicySpec> spec = policy::ParsePolicySpec(options.policy);
  if (!spec.ok()) return spec.status();
  if (absl::Status s = ValidateSimOptions(options); !s.ok()) return s;
  std::shared_ptr<const Model> model = options.model;
  if (model == nullptr) {
    absl::StatusOr<std::shared_ptr<const Model>> made =
        MakeQuadraticModel({.seed = options.seed});
    if (!made.ok()) return made.status();
    model = *std::move(made);
  }
  if (options.initial_params.size() > 0 && options.initial_params.size() != model->num_params()) {
    return absl::InvalidArgumentError(
        absl::StrCat("initial_params: ", options.initial_params.size(), " values for ",
                     model->name(), " of ", model->num_params(), " parameters"));
  }
  internal::Simulation simulation(options, *spec, std::move(model));
  return simulation.Run();
}

}  // namespace kairos::sim
