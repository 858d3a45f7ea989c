// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// How a request travels in a Simulation (simulation.h): the shards' threads (Lanes), a
// served read's reply, a push and its parts, the clock report; and the workers' steps on
// what the server served, on-demand and eager.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "sim/simulation.h"

namespace kairos::sim::internal {

void Simulation::RunOnLane(int lane, absl::Duration duration,
                           std::function<void(absl::Time end)> act) {
  if (duration == absl::ZeroDuration() && lanes_.Idle(lane)) {
    act(now_);
    return;
  }
  const uint64_t id = next_job_++;
  shard_jobs_.emplace(id, ShardJob{duration, std::move(act)});
  if (lanes_.Submit(id, lane)) StartJob(id);
}

void Simulation::ReadOnShard(int shard, std::function<void(absl::Time end)> act) {
  const int lane =
      options_.server_cost.transport_thread && lanes_.Idle(shard) ? TransportLane(shard) : shard;
  RunOnLane(lane, ReadCost(lane), std::move(act));
}

void Simulation::StartJob(uint64_t id) {
  if (host_) {
    // Its work on the host; at its end it acts and its thread's next job starts.
    OnHost(shard_jobs_.at(id).duration, [this, id] {
      shard_jobs_.extract(id).mapped().act(now_);
      if (const std::optional<uint64_t> next = lanes_.End(id)) StartJob(*next);
    });
    return;
  }
  auto job = shard_jobs_.extract(id);
  const absl::Time end = now_ + job.mapped().duration;
  queue_.Schedule({.time = end, .kind = EventKind::kJobEnds, .job = id});
  job.mapped().act(end);
}

void Simulation::OnHost(absl::Duration work, std::function<void()> at_end) {
  host_jobs_.emplace(host_->Add(work, now_), std::move(at_end));
  ScheduleHostTick();
}

void Simulation::OnHostFrom(absl::Time from, absl::Duration work, std::function<void()> at_end) {
  if (from <= now_) return OnHost(work, std::move(at_end));
  const uint64_t id = next_later_host_job_++;
  later_host_jobs_.emplace(id, LaterHostJob{work, std::move(at_end)});
  queue_.Schedule({.time = from, .kind = EventKind::kHostJobStarts, .job = id});
}

void Simulation::ScheduleHostTick() {
  const absl::Time at = host_->NextEnd();
  if (host_->version() == host_tick_ || at == absl::InfiniteFuture()) return;
  host_tick_ = host_->version();
  queue_.Schedule({.time = at, .kind = EventKind::kHostTick, .job = host_tick_});
}

void Simulation::HostTick(uint64_t version) {
  if (version != host_->version()) return;  // the host changed since it was scheduled
  host_tick_ = kNoTick;
  host_->Advance(now_);
  for (const uint64_t id : host_->TakeEnded()) {
    std::function<void()> at_end = std::move(host_jobs_.extract(id).mapped());
    if (at_end) at_end();
  }
  ScheduleHostTick();
}

void Simulation::LoadGradient(absl::Time at) {
  if (!host_ || options_.host.gradient_cpu == absl::ZeroDuration()) return;
  OnHostFrom(at, options_.host.gradient_cpu, nullptr);
}

absl::Duration Simulation::ReadCost(int lane) const {
  const ServerCostOptions& cost = options_.server_cost;
  return (lanes_.Idle(lane) ? cost.read : cost.queued_read.value_or(cost.read)) +
         drift_passes_per_read_ * cost.drift_pass;
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
  ReadOnShard(i, [this, w, i](absl::Time end) { ReplyPartLeaves(w, i, end); });
}

void Simulation::ReplyPartLeaves(WorkerId w, int i, absl::Time at) {
  AfterTransfer(links_ ? links_->Send(Links::Shard(i), w, part_bytes_, at) : at + transfer_down_,
                [this, w](absl::Time back) { ReplyPartBack(w, back); });
}

void Simulation::ReplyPartBack(WorkerId w, absl::Time back) {
  Reply& r = workers_[static_cast<size_t>(w)].reply;
  r.back = std::max(r.back, back);
  if (--r.parts_left == 0) TakeReply(w, std::max(r.back, now_));
}

void Simulation::TakeReply(WorkerId w, absl::Time back) {
  const absl::Duration cpu = options_.worker_cost.receive;
  if (cpu == absl::ZeroDuration()) return Received(w, back);
  if (!host_) return Received(w, back + cpu);
  OnHostFrom(back, cpu, [this, w] { Received(w, now_); });
}

void Simulation::AfterTransfer(absl::Time crossed, std::function<void(absl::Time arrived)> then) {
  const absl::Duration per_mb = options_.host.transfer_cpu_per_mb;
  if (!TransferCpu()) {
    then(crossed);
    return;
  }
  const absl::Duration cpu = per_mb * (part_bytes_ / 1e6);
  const double after = options_.host.transfer_cpu_after_link;
  // Once the share beside the crossing is done: the share after it, from the crossing (or
  // from now, if the crossing is past).
  auto beside_done = [this, crossed, cpu, after, then = std::move(then)]() mutable {
    if (after == 0.0) return then(std::max(crossed, now_));
    OnHostFrom(crossed, cpu * after, [this, then = std::move(then)] { then(now_); });
  };
  if (after == 1.0) {
    beside_done();
  } else {
    OnHost(cpu * (1.0 - after), std::move(beside_done));
  }
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
      queue_.Schedule({.time = at + transfer_up_ + ReceiveDelay(),
                       .kind = EventKind::kPartArrives,
                       .worker = w,
                       .clock = clock,
                       .shard = i});
    }
    return;
  }
  queue_.Schedule({.time = at, .kind = EventKind::kPushSent, .worker = w, .clock = clock});
}

void Simulation::OnPartArrives(const Event& e) {
  if (options_.server_cost.transport_thread) {
    RunOnLane(TransportLane(e.shard), options_.server_cost.receive,
              [this, w = e.worker, clock = e.clock, k = e.shard](absl::Time end) {
                if (end == now_) {
                  ApplyPart(w, clock, k);
                } else {
                  queue_.Schedule({.time = end,
                                   .kind = EventKind::kPartReceived,
                                   .worker = w,
                                   .clock = clock,
                                   .shard = k});
                }
              });
    return;
  }
  if (host_ && options_.server_cost.receive > absl::ZeroDuration()) {
    OnHost(options_.server_cost.receive,
           [this, w = e.worker, clock = e.clock, k = e.shard] { ApplyPart(w, clock, k); });
    return;
  }
  ApplyPart(e.worker, e.clock, e.shard);
}

void Simulation::ApplyPart(WorkerId w, Tick clock, int k) {
  const absl::Duration cost =
      options_.server_cost.apply + drift_passes_per_apply_ * options_.server_cost.drift_pass;
  RunOnLane(k, cost, [this, w, clock, k](absl::Time end) {
    Push& push = workers_[static_cast<size_t>(w)].PushAt(clock);
    push.part_done[static_cast<size_t>(k)] = end;
    if (eager_) {
      queue_.Schedule(
          {.time = end, .kind = EventKind::kPartApplied, .worker = w, .clock = clock, .shard = k});
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
  ComputeAfterBuckets([&] { return server_.OnClock(w, clock + 1, now_); });
  if (clock + 1 >= worker.target) {
    ComputeAfterBuckets([&] { return server_.OnLeave(w, MemberState::kFinished, now_); });
  } else if (!eager_ && !cache_.Answered(w, clock + 1)) {
    Compute(server_.OnRead(w, clock + 1, now_));
  }
}

void Simulation::ComputeAfterBuckets(
    const std::function<std::vector<ServedRead>()>& clock_or_leave) {
  const uint64_t version_before = server_.version();
  const std::vector<ServedRead> served = clock_or_leave();
  // Only a bucket's apply moves the version on a clock or a leave.
  const int64_t buckets = static_cast<int64_t>(server_.version() - version_before);
  if (buckets > 0 && options_.server_cost.apply > absl::ZeroDuration()) {
    for (int k = 0; k < shards_; ++k) {
      RunOnLane(k, buckets * options_.server_cost.apply, [](absl::Time) {});
    }
  }
  Compute(served);
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
  LoadGradient(start + options_.worker_cost.local);
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
  if (reply.clock == 0) {
    worker.next_done = back + EagerLocal() + reply.compute;
    LoadGradient(back + EagerLocal());
  }
  const absl::Time step = std::max(back, worker.next_done);
  // What the worker waits for: the reply, once its gradient is done (the first pull whole).
  worker.pull_time += reply.clock == 0 ? options_.network.to_server() + (back - reply.served)
                                       : step - worker.next_done;
  if (step > worker.fails_at) return;  // died before it could push
  worker.compute_time += reply.compute;
  SendPush(w, reply.clock, step, std::move(reply.gradient), reply.scale);
  if (reply.clock + 1 >= worker.target) return;  // its last step: only the push is left
  worker.next_done = step + EagerLocal() + reply.next_compute;
  LoadGradient(step + EagerLocal());
}

}  // namespace kairos::sim::internal
