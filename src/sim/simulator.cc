// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The event loop of Simulate (see simulator.h for the model of one iteration): workers are
// plain state advanced by events, the server is a SimServer, and everything random comes
// from per-worker streams (sim/random.h), so a run depends only on its options.

#include "sim/simulator.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "kairos/pace.h"
#include "sim/event_queue.h"
#include "sim/lanes.h"
#include "sim/links.h"
#include "sim/random.h"
#include "sim/sim_read_cache.h"
#include "sim/sim_server.h"

namespace kairos::sim {
namespace {

// The pace model of the compute options (validated by ValidateSimOptions, so Create cannot
// fail).
PaceModel PaceOf(const SimOptions& o) { return *PaceModel::Create(PaceOptionsOf(o)); }

using policy::MemberState;
using policy::Tick;
using policy::WorkerId;

// The origin of virtual time. Any fixed instant would do: results report durations.
const absl::Time kStart = absl::UnixEpoch();

// One simulated job. Thread-safety: none; Run() is called once, on one thread.
class Simulation {
 public:
  Simulation(const SimOptions& options, const policy::PolicySpec& spec,
             std::shared_ptr<const Model> model);
  absl::StatusOr<SimResult> Run();

 private:
  // A push a worker sent that the server has not applied yet. Only a worker whose reads
  // its copy answers (cache_clocks) can have several: they are applied in clock order.
  struct Push {
    Tick clock = 0;
    Eigen::VectorXf gradient;
    float scale = 1.0f;  // eager pull: the worker's learning-rate scale
    absl::Time sent;     // when it left
    // Its parts (one per shard) whose applies have not started, and when each shard's
    // apply is done.
    int parts_left = 0;
    std::vector<absl::Time> part_done;
    bool waits = false;  // it arrived before an earlier push of its worker was applied
  };

  // A read the server served whose reply is on its way back (a worker has one at a time),
  // and what the worker does once it is back. The math is done when the read is served, on
  // the parameters served then; only the times wait for the reply.
  struct Reply {
    Tick clock = 0;
    absl::Time served;
    int parts_left = 0;  // shards whose part has not left yet
    // Per shard: a carried read's part that waits for the shard's part of the push.
    std::vector<bool> part_waits;
    absl::Time back = absl::InfinitePast();  // the latest part's arrival so far
    // The gradient the worker pushes next (on-demand pull: of the served parameters; eager
    // pull: g_t of its step), how long it computes it, its eager scale, and (eager) how
    // long its next gradient g_{t+1} takes.
    Eigen::VectorXf gradient;
    absl::Duration compute;
    float scale = 1.0f;
    absl::Duration next_compute;
  };

  // The worker side: what a worker needs between its events.
  struct Worker {
    int64_t target = 0;                              // iterations to run
    absl::Time fails_at = absl::InfiniteFuture();    // when it stops
    Rng profile{0};                                  // draws from a measured profile
    std::deque<Push> pushes;                         // in flight, oldest first
    absl::Duration compute_time;
    absl::Duration pull_time;  // SimWorkerResult::pull_time, the gate's wait not included
    absl::Duration push_time;  // SimWorkerResult::push_time
    absl::Time push_sent;      // push_waits: when its push applied last left
    // When its latest push took effect: a read served then is the one it carried (eager).
    absl::Time applied_at = absl::InfinitePast();
    Reply reply;
    // Eager pull: when each shard's part of the read its latest push carries was read
    // (InfinitePast: not yet).
    std::vector<absl::Time> carried_read;
    Tick carried_clock = -1;  // that push's clock
    // Eager pull only: the worker's parameters x_t, the gradient g_t computed on them (and
    // how long it took), when that gradient is done, and the latest clocks it was told (the
    // foreign updates between its two latest reads come from them).
    Eigen::VectorXf params;
    Eigen::VectorXf next;
    absl::Duration next_compute;
    absl::Time next_done;
    std::vector<Tick> seen_clocks;

    Push& PushAt(Tick clock) {
      return *std::find_if(pushes.begin(), pushes.end(),
                           [clock](const Push& p) { return p.clock == clock; });
    }
  };

  void Start();
  void Handle(const Event& e);
  // w's push at `clock` takes effect (its parts' applies have started): now, or after w's
  // earlier pushes.
  void OnPushArrives(WorkerId w, Tick clock);
  // Shard e.shard's part of e.worker's push arrives: applied on the shard's thread.
  void OnPartArrives(const Event& e);
  // A job on shard `shard`'s thread (Lanes): `at_start` runs when it starts (now or at a
  // later event), given its end, `duration` after. A job of no duration runs at once unless
  // the thread has work.
  void RunOnShard(int shard, absl::Duration duration, std::function<void(absl::Time end)> at_start);
  void StartJob(uint64_t id);
  // What a read placed on shard `shard`'s thread now costs: ServerCostOptions::queued_read
  // behind other work (reads served back to back), else read.
  absl::Duration ReadCost(int shard) const;
  // Shard i serves its part of w's reply (Worker::reply): read, then sent.
  void SendReplyPart(WorkerId w, int i);
  // Shard i's part of w's reply leaves at `at`; Received once the last part is in.
  void ReplyPartLeaves(WorkerId w, int i, absl::Time at);
  // w's push at `clock` is applied now; its acknowledgement leaves at `acked_at`.
  void OnPushApplied(WorkerId w, Tick clock, absl::Time acked_at);
  // WorkerCostOptions::push_waits: the server takes w's clock `clock` + 1, then its next
  // read (or its finish).
  void OnClockArrives(WorkerId w, Tick clock);
  // The reply to w's read, served now (Worker::reply), leaves each shard once the shard's
  // thread has read its part, then crosses the links; Received once the last part is in.
  void SendReply(WorkerId w);
  // w has its reply at `back` (>= now): it computes and pushes.
  void Received(WorkerId w, absl::Time back);
  // w sends its push of `gradient` at `clock` at time `at`: it arrives one transfer later,
  // or (serialized links) the event kPushSent takes its links at `at`, in time order with
  // other senders.
  void SendPush(WorkerId w, Tick clock, absl::Time at, Eigen::VectorXf gradient,
                float scale = 1.0f);
  // The workers whose reads were served compute and push (see simulator.h, steps 3-5).
  void Compute(const std::vector<ServedRead>& served);
  // w computes `gradient` (its iteration at `clock`) from `start` for `compute`, then pushes
  // it (and without push_waits sends its next read right behind).
  void ComputeAndPush(WorkerId w, Tick clock, Eigen::VectorXf gradient, absl::Time start,
                      absl::Duration compute);
  // cache_clocks: w would send its read at `clock` at `at` (>= now): when its copy answers
  // it, w computes on the copy from then (OnCachedRead) and the read is not sent.
  void ReadFromCopy(WorkerId w, Tick clock, absl::Time at);
  void OnCachedRead(WorkerId w, Tick clock);
  // Eager pull (PS+): the reply of w's read at `clock` is served now; see simulator.h. The
  // step's math is done now (Worker::reply), its times once the reply is back (EagerTimes).
  void EagerStep(const ServedRead& r);
  void EagerTimes(WorkerId w, absl::Time back);
  // How long w computes its iteration `iteration` (the one that starts with the read at
  // that clock).
  absl::Duration DrawComputeTime(WorkerId w, int64_t iteration);
  // w's mini-batch for its iteration `iteration` (SimOptions::batches); valid until the
  // next call. A batch that breaks the hook's contract is replaced by SampleBatch's and
  // fails the run at its end (batch_error_).
  std::span<const int> BatchOf(WorkerId w, int64_t iteration);
  // The worker's own time per eager step (WorkerCostOptions::eager_local, else local).
  absl::Duration EagerLocal() const {
    return options_.worker_cost.eager_local.value_or(options_.worker_cost.local);
  }
  bool AllLeft() const { return server_.clocks().num_active() == 0; }
  // When the last part of a push is applied.
  static absl::Time PartsDone(const std::vector<absl::Time>& part_done) {
    return *std::max_element(part_done.begin(), part_done.end());
  }
  // SimOptions::average_window: worker 0 was served `params` now.
  void AddRead(WorkerId w, const Eigen::Ref<const Eigen::VectorXf>& params);
  // What a sample at `t` evaluates: the server's parameters, or the window's mean read.
  Eigen::VectorXf Evaluated(absl::Time t);
  void SampleBefore(absl::Time t);
  // A sample at t; `during_run`: the stopping rules apply (not to the final samples).
  void TakeSample(absl::Time t, bool during_run = true);
  void FinalSamples();
  SimResult Collect();

  const SimOptions& options_;
  const std::string policy_;
  const std::shared_ptr<const Model> model_;
  const double message_bytes_;     // one parameter or gradient message: 4 per parameter
  // Such a message without contention, from a worker and from the server (a message's
  // shard parts, NetworkOptions::server_shards, together take as long), and a part's bytes.
  const absl::Duration transfer_up_;
  const absl::Duration transfer_down_;
  const int shards_;
  const double part_bytes_;
  std::optional<Links> links_;     // NetworkOptions::serialize_links
  // The shards' threads and the jobs submitted to them, not started yet.
  struct ShardJob {
    absl::Duration duration;
    std::function<void(absl::Time end)> at_start;
  };
  Lanes lanes_;
  absl::flat_hash_map<uint64_t, ShardJob> shard_jobs_;
  uint64_t next_job_ = 1;
  const PaceModel pace_;           // the compute times, as a paced real worker's
  const policy::PullSpec pull_;
  const bool eager_;
  SimServer server_;
  SimReadCache cache_;  // the workers' copies (cache_clocks) and the read log
  // Per worker, the pushes the server has taken (SimRead::pushes).
  std::vector<int64_t> pushes_taken_;
  EventQueue queue_;
  std::vector<Worker> workers_;
  std::vector<int> sampled_;  // BatchOf's batch when it samples
  absl::Status batch_error_;  // the first batch SimOptions::batches got wrong
  absl::Time now_ = kStart;
  absl::Time next_sample_ = kStart;
  std::vector<SimSample> samples_;
  // SimOptions::average_window: worker 0's reads since the last sample, and per sample in
  // the window, its time and reads (the sum and how many).
  struct ReadSum {
    absl::Time time;
    Eigen::VectorXf sum;
    int64_t reads = 0;
  };
  ReadSum reads_since_sample_;
  std::deque<ReadSum> read_window_;
  uint64_t events_ = 0;
  bool time_limited_ = false;
  bool reached_ = false;  // a sample met options_.stop_at_accuracy or stop_after
};

absl::Duration TransferTime(const NetworkOptions& n, absl::Duration latency, double bytes) {
  if (n.bandwidth_bytes_per_s == 0.0) return latency;
  return latency + absl::Seconds(bytes / n.bandwidth_bytes_per_s);
}

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
  const NetworkOptions& n = options.network;
  if (n.serialize_links) {
    links_.emplace(options.num_workers, n.to_server(), n.to_worker(), n.bandwidth_bytes_per_s,
                   n.server_bandwidth_bytes_per_s < 0 ? n.bandwidth_bytes_per_s
                                                      : n.server_bandwidth_bytes_per_s,
                   shards_);
  }
}

void Simulation::RunOnShard(int shard, absl::Duration duration,
                            std::function<void(absl::Time end)> at_start) {
  if (duration == absl::ZeroDuration() && lanes_.Idle(shard)) {
    at_start(now_);
    return;
  }
  const uint64_t id = next_job_++;
  shard_jobs_.emplace(id, ShardJob{duration, std::move(at_start)});
  if (lanes_.Submit(id, shard)) StartJob(id);
}

void Simulation::StartJob(uint64_t id) {
  auto job = shard_jobs_.extract(id);
  const absl::Time end = now_ + job.mapped().duration;
  queue_.Schedule({.time = end, .kind = EventKind::kJobEnds, .job = id});
  job.mapped().at_start(end);
}

absl::Duration Simulation::ReadCost(int shard) const {
  const ServerCostOptions& cost = options_.server_cost;
  return lanes_.Idle(shard) ? cost.read : cost.queued_read.value_or(cost.read);
}

void Simulation::SendReply(WorkerId w) {
  Worker& worker = workers_[static_cast<size_t>(w)];
  Reply& reply = worker.reply;
  reply.back = absl::InfinitePast();
  reply.parts_left = shards_;
  reply.part_waits.assign(static_cast<size_t>(shards_), false);
  if (!(eager_ && worker.applied_at == now_)) {
    for (int i = 0; i < shards_; ++i) SendReplyPart(w, i);
    return;
  }
  // Carried by the eager push applied now. Each shard served (or will serve) its part
  // right behind its own part of the push (kPartApplied), as a real shard serves the read
  // that rides on a push, so the first parts of the reply may leave before the last part of
  // the push is in: parts already read leave when their read ended, in time order; the
  // others when theirs ends.
  std::vector<std::pair<absl::Time, int>> read;  // (leaves, shard)
  for (int i = 0; i < shards_; ++i) {
    const absl::Time leaves = worker.carried_read[static_cast<size_t>(i)];
    if (leaves == absl::InfinitePast()) {
      reply.part_waits[static_cast<size_t>(i)] = true;
    } else {
      read.emplace_back(leaves, i);
    }
  }
  std::sort(read.begin(), read.end());
  for (const auto& [t, i] : read) ReplyPartLeaves(w, i, t);
}

void Simulation::SendReplyPart(WorkerId w, int i) {
  RunOnShard(i, ReadCost(i), [this, w, i](absl::Time end) { ReplyPartLeaves(w, i, end); });
}

void Simulation::ReplyPartLeaves(WorkerId w, int i, absl::Time at) {
  Reply& r = workers_[static_cast<size_t>(w)].reply;
  r.back = std::max(
      r.back, links_ ? links_->Send(Links::Shard(i), w, part_bytes_, at) : at + transfer_down_);
  if (--r.parts_left == 0) Received(w, std::max(r.back, now_));
}

void Simulation::Received(WorkerId w, absl::Time back) {
  if (eager_) {
    EagerTimes(w, back);
    return;
  }
  Worker& worker = workers_[static_cast<size_t>(w)];
  Reply& reply = worker.reply;
  // The request's latency, the server's queue and read, the reply's transfer.
  worker.pull_time += options_.network.to_server() + (back - reply.served);
  ComputeAndPush(w, reply.clock, std::move(reply.gradient), back, reply.compute);
}

void Simulation::SendPush(WorkerId w, Tick clock, absl::Time at, Eigen::VectorXf gradient,
                          float scale) {
  Push& push = workers_[static_cast<size_t>(w)].pushes.emplace_back();
  push.clock = clock;
  push.gradient = std::move(gradient);
  push.scale = scale;
  push.sent = at;
  push.parts_left = shards_;
  push.part_done.assign(static_cast<size_t>(shards_), absl::InfinitePast());
  if (eager_) {
    Worker& worker = workers_[static_cast<size_t>(w)];
    worker.carried_read.assign(static_cast<size_t>(shards_), absl::InfinitePast());
    worker.carried_clock = clock;
  }
  if (!links_) {
    // Without contention a message's parts together take the message's time.
    for (int i = 0; i < shards_; ++i) {
      queue_.Schedule({.time = at + transfer_up_ + options_.server_cost.receive,
                       .kind = EventKind::kPartArrives,
                       .worker = w,
                       .clock = clock,
                       .shard = i});
    }
    return;
  }
  queue_.Schedule({.time = at, .kind = EventKind::kPushSent, .worker = w, .clock = clock});
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
        queue_.Schedule({.time = links_->Send(e.worker, Links::Shard(i), part_bytes_, now_) +
                                 options_.server_cost.receive,
                         .kind = EventKind::kPartArrives,
                         .worker = e.worker,
                         .clock = e.clock,
                         .shard = i});
      }
      return;
    case EventKind::kPartArrives:
      OnPartArrives(e);
      return;
    case EventKind::kPartApplied:
      // The shard reads its part of the read the push carries, whether or not the gate will
      // serve it (the simulation's one gate decides once the whole push is in); it leaves
      // if the read was served (SendReply).
      RunOnShard(
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
      Compute(server_.OnLeave(e.worker, MemberState::kDead, now_));
      return;
  }
}

void Simulation::OnPartArrives(const Event& e) {
  const int k = e.shard;
  RunOnShard(k, options_.server_cost.apply,
             [this, w = e.worker, clock = e.clock, k](absl::Time end) {
               Push& push = workers_[static_cast<size_t>(w)].PushAt(clock);
               push.part_done[static_cast<size_t>(k)] = end;
               if (eager_) {
                 queue_.Schedule({.time = end,
                                  .kind = EventKind::kPartApplied,
                                  .worker = w,
                                  .clock = clock,
                                  .shard = k});
               }
               // The whole push takes effect when its last part's apply starts.
               if (--push.parts_left == 0) OnPushArrives(w, clock);
             });
}

void Simulation::OnPushArrives(WorkerId w, Tick clock) {
  Worker& worker = workers_[static_cast<size_t>(w)];
  if (worker.pushes.front().clock != clock) {
    // An earlier push of w (one its copy let it send sooner) has not taken effect yet: this
    // one follows it.
    worker.PushAt(clock).waits = true;
    return;
  }
  OnPushApplied(w, clock, PartsDone(worker.pushes.front().part_done));
}

void Simulation::OnPushApplied(WorkerId w, Tick clock, absl::Time acked_at) {
  Worker& worker = workers_[static_cast<size_t>(w)];
  const Push push = std::move(worker.pushes.front());
  worker.pushes.pop_front();
  worker.applied_at = now_;
  worker.push_sent = push.sent;
  ++pushes_taken_[static_cast<size_t>(w)];
  Compute(server_.OnPush(w, clock, push.gradient, now_, push.scale, eager_));
  if (options_.worker_cost.push_waits && !eager_) {
    // Acknowledged once applied; the clock report and the read follow the acknowledgement.
    queue_.Schedule({.time = acked_at + options_.network.to_worker(),
                     .kind = EventKind::kAckArrives,
                     .worker = w,
                     .clock = clock});
  } else {
    // The push, the clock report and the next read (or the finish) were sent back to back
    // on w's ordered link: the server handles them in that order, as server_impl.cc would.
    // An eager push asks for the read at clock + 1 itself (pull_after), as EagerSchedule's.
    OnClockArrives(w, clock);
  }
  if (!worker.pushes.empty() && worker.pushes.front().waits) {
    queue_.Schedule({.time = now_,
                     .kind = EventKind::kPushArrives,
                     .worker = w,
                     .clock = worker.pushes.front().clock});
  }
}

void Simulation::OnClockArrives(WorkerId w, Tick clock) {
  const Worker& worker = workers_[static_cast<size_t>(w)];
  Compute(server_.OnClock(w, clock + 1, now_));
  if (clock + 1 >= worker.target) {
    Compute(server_.OnLeave(w, MemberState::kFinished, now_));
  } else if (!eager_ && !cache_.Answered(w, clock + 1)) {
    Compute(server_.OnRead(w, clock + 1, now_));
  }
}

void Simulation::Compute(const std::vector<ServedRead>& served) {
  for (const ServedRead& r : served) {
    AddRead(r.worker, server_.params());
    if (eager_) {
      EagerStep(r);
      continue;
    }
    cache_.Served(r.worker, r.clock, server_.params(), server_.clocks().MinActiveClock(),
                  pushes_taken_);
    Reply& reply = workers_[static_cast<size_t>(r.worker)].reply;
    reply.clock = r.clock;
    reply.served = now_;
    // Drawn for every read, so that worker w's k-th iteration always takes the same time
    // for a seed, whatever the policy.
    reply.compute = DrawComputeTime(r.worker, r.clock);
    // The gradient is taken now, on the parameters served now: the worker computes on the
    // values the reply carries, so doing the math at send time instead of arrival time
    // changes nothing.
    model_->Gradient(server_.params(), BatchOf(r.worker, r.clock), &reply.gradient);
    SendReply(r.worker);
  }
}

void Simulation::ComputeAndPush(WorkerId w, Tick clock, Eigen::VectorXf gradient, absl::Time start,
                                absl::Duration compute) {
  Worker& worker = workers_[static_cast<size_t>(w)];
  const absl::Time done = start + options_.worker_cost.local + compute;
  if (done > worker.fails_at) return;  // died before it could push
  worker.compute_time += compute;
  cache_.Pushed(w, gradient);  // written through into its copy, where the server does so
  SendPush(w, clock, done, std::move(gradient));
  // Without push_waits the next read leaves right behind the push.
  if (!options_.worker_cost.push_waits) ReadFromCopy(w, clock + 1, done);
}

void Simulation::ReadFromCopy(WorkerId w, Tick clock, absl::Time at) {
  if (!cache_.caches() || clock >= workers_[static_cast<size_t>(w)].target) return;
  if (!cache_.TryRead(w, clock)) return;  // sent to the server
  if (at == now_) {
    OnCachedRead(w, clock);
  } else {
    queue_.Schedule({.time = at, .kind = EventKind::kCachedRead, .worker = w, .clock = clock});
  }
}

// No transfer, no server, no gate: the worker computes on its copy at once.
void Simulation::OnCachedRead(WorkerId w, Tick clock) {
  AddRead(w, cache_.params(w));
  const absl::Duration compute = DrawComputeTime(w, clock);
  Eigen::VectorXf gradient;
  model_->Gradient(cache_.params(w), BatchOf(w, clock), &gradient);
  ComputeAndPush(w, clock, std::move(gradient), now_, compute);
}

// The worker's step t (t = r.clock) happens once the reply to its previous request (this
// read, a transfer away) is back and g_t is computed: it pushes g_t together with the read
// at clock t + 1, sets x_{t+1} = W_t - lr * scale * g_t from the parameters W_t served now,
// and computes g_{t+1} on x_{t+1} while that request travels. The first read (clock 0)
// is the initial pull: g_0 is computed on it before step 0. All of the worker's math depends
// only on what was served now, so it is done now; only the times are in the future.
void Simulation::EagerStep(const ServedRead& r) {
  const WorkerId w = r.worker;
  Worker& worker = workers_[static_cast<size_t>(w)];
  if (r.clock >= worker.target) return;  // the read after its last push: it finishes
  Reply& reply = worker.reply;
  reply.clock = r.clock;
  reply.served = now_;
  int64_t foreign = 0;
  if (r.clock == 0) {
    // The initial pull: compute g_0 on it; its reply carries no clocks (as EagerSchedule).
    worker.params = server_.params();
    worker.next_compute = DrawComputeTime(w, 0);
    model_->Gradient(worker.params, BatchOf(w, 0), &worker.next);
  } else {
    const policy::WorkerClocks& clocks = server_.clocks();
    for (WorkerId v = 0; v < clocks.num_workers(); ++v) {
      Tick& seen = worker.seen_clocks[static_cast<size_t>(v)];
      if (v != w) foreign += clocks.clock(v) - seen;
      seen = std::max(seen, clocks.clock(v));
    }
  }
  reply.compute = worker.next_compute;
  reply.scale = policy::EagerLearningRateScale(pull_, foreign, options_.num_workers);
  // x_{t+1}; a refreshed worker (SaPS) takes the served parameters as they are.
  worker.params = server_.params();
  if (!(r.clock > 0 && r.refresh)) {
    worker.params -= (options_.learning_rate * reply.scale) * worker.next;
  }
  reply.gradient = std::move(worker.next);
  if (r.clock + 1 < worker.target) {
    worker.next_compute = DrawComputeTime(w, r.clock + 1);
    model_->Gradient(worker.params, BatchOf(w, r.clock + 1), &worker.next);
  }
  reply.next_compute = worker.next_compute;
  SendReply(w);
}

void Simulation::EagerTimes(WorkerId w, absl::Time back) {
  Worker& worker = workers_[static_cast<size_t>(w)];
  Reply& reply = worker.reply;
  // g_0 is computed on the initial pull once it is back.
  if (reply.clock == 0) worker.next_done = back + EagerLocal() + reply.compute;
  const absl::Time step = std::max(back, worker.next_done);
  // What the worker waits for: the reply, once its gradient is done (the first pull whole).
  worker.pull_time += reply.clock == 0 ? options_.network.to_server() + (back - reply.served)
                                       : step - worker.next_done;
  if (step > worker.fails_at) return;  // died before it could push
  worker.compute_time += reply.compute;
  SendPush(w, reply.clock, step, std::move(reply.gradient), reply.scale);
  if (reply.clock + 1 >= worker.target) return;  // its last step: only the push is left
  worker.next_done = step + EagerLocal() + reply.next_compute;
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

}  // namespace

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
  Simulation simulation(options, *spec, std::move(model));
  return simulation.Run();
}

}  // namespace kairos::sim
