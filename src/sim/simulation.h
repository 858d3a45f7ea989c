// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Simulation: one simulated job, the state and the event handlers behind Simulate (see
// simulator.h for the model of one iteration). Internal to src/sim: simulator.cc holds the
// event loop, the samples and the result; simulation_requests.cc how a request travels (the
// shards' threads, the replies, the pushes) and the workers' steps. Workers are plain state
// advanced by events, the server is a SimServer, and everything random comes from
// per-worker streams (sim/random.h), so a run depends only on its options.

#ifndef KAIROS_SIM_SIMULATION_H_
#define KAIROS_SIM_SIMULATION_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kairos/pace.h"
#include "policy/policy.h"
#include "sim/event_queue.h"
#include "sim/host.h"
#include "sim/lanes.h"
#include "sim/links.h"
#include "sim/model.h"
#include "sim/random.h"
#include "sim/sim_read_cache.h"
#include "sim/sim_server.h"
#include "sim/simulator.h"

namespace kairos::sim::internal {

using policy::MemberState;
using policy::Tick;
using policy::WorkerId;

// The origin of virtual time. Any fixed instant would do: results report durations.
inline const absl::Time kStart = absl::UnixEpoch();

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
    int64_t target = 0;                            // iterations to run
    absl::Time fails_at = absl::InfiniteFuture();  // when it stops
    Rng profile{0};                                // draws from a measured profile
    std::deque<Push> pushes;                       // in flight, oldest first
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
  // w's push at `clock` takes effect (its parts' applies have started; under a host, ended):
  // now, or after w's earlier pushes.
  void OnPushArrives(WorkerId w, Tick clock);
  // Shard e.shard's part of e.worker's push arrives: taken in (ServerCostOptions::receive,
  // beside the shard's thread or on its transport thread), then applied on the shard's
  // (apply) thread (ApplyPart).
  void OnPartArrives(const Event& e);
  void ApplyPart(WorkerId w, Tick clock, int shard);
  // A job on a shard's thread `lane` (Lanes: `shard` is its apply thread, TransportLane its
  // transport's): `act` runs when it starts (now or at a later event), given its end,
  // `duration` after; under a host (HostOptions), whose load decides the end, at its end,
  // given now. A job of no duration runs at once unless the thread has work.
  void RunOnLane(int lane, absl::Duration duration, std::function<void(absl::Time end)> act);
  // ServerCostOptions::transport_thread: shard `shard`'s transport thread.
  int TransportLane(int shard) const { return shards_ + shard; }
  void StartJob(uint64_t id);
  // HostOptions: `work` of CPU starts on the host now; `at_end` (if any) runs when it is done.
  void OnHost(absl::Duration work, std::function<void()> at_end);
  // The same from `from` (now if it is past; else at a kHostJobStarts).
  void OnHostFrom(absl::Time from, absl::Duration work, std::function<void()> at_end);
  // The kHostTick of the host's current state, unless it is scheduled.
  void ScheduleHostTick();
  // A kHostTick of the host's `version`: the jobs that end now act (a stale tick does nothing).
  void HostTick(uint64_t version);
  // HostOptions::gradient_cpu: a worker's gradient loads the host from `at` (>= now).
  void LoadGradient(absl::Time at);
  // When a push's part that arrives now reaches the shard's thread, as a delay: the
  // transport's time (ServerCostOptions::receive), unless a host or the shard's transport
  // thread runs it (OnPartArrives).
  absl::Duration ReceiveDelay() const {
    return host_ || options_.server_cost.transport_thread ? absl::ZeroDuration()
                                                          : options_.server_cost.receive;
  }
  // What a read placed on thread `lane` now costs: ServerCostOptions::queued_read behind
  // other work (reads served back to back), else read.
  absl::Duration ReadCost(int lane) const;
  // Shard `shard` serves a read now: on its transport thread if it has one and the apply
  // thread has no work, else on the apply thread; `act` as RunOnLane's.
  void ReadOnShard(int shard, std::function<void(absl::Time end)> act);
  // Shard i serves its part of w's reply (Worker::reply): read, then sent.
  void SendReplyPart(WorkerId w, int i);
  // Shard i's part of w's reply leaves at `at` (<= now under a host); TakeReply once the
  // last part is in (ReplyPartBack).
  void ReplyPartLeaves(WorkerId w, int i, absl::Time at);
  void ReplyPartBack(WorkerId w, absl::Time back);
  // w's reply is in at `back` (>= now): w takes it in (WorkerCostOptions::receive), then
  // Received.
  void TakeReply(WorkerId w, absl::Time back);
  // A message part leaving now that has crossed its links at `crossed`: `then` gets when it
  // has arrived, `crossed` or, with HostOptions::transfer_cpu_per_mb, once its transfer's
  // CPU on the host is done too (then at a later event).
  void AfterTransfer(absl::Time crossed, std::function<void(absl::Time arrived)> then);
  // Whether a message's transfer costs CPU on the host (HostOptions::transfer_cpu_per_mb).
  bool TransferCpu() const {
    return host_ && options_.host.transfer_cpu_per_mb > absl::ZeroDuration();
  }
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
  // The same for the reads a clock or a leave released (`clock_or_leave` hands the event to
  // the server), which applies the buckets it completes (agg=round): each bucket applied
  // holds every shard's (apply) thread for ServerCostOptions::apply first, and the reads
  // queue behind it, as on a real shard (a read waits for the chunk's work decided before it).
  void ComputeAfterBuckets(const std::function<std::vector<ServedRead>()>& clock_or_leave);
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
  const double message_bytes_;  // one parameter or gradient message: 4 per parameter
  // Such a message without contention, from a worker and from the server (a message's
  // shard parts, NetworkOptions::server_shards, together take as long), and a part's bytes.
  const absl::Duration transfer_up_;
  const absl::Duration transfer_down_;
  const int shards_;
  const double part_bytes_;
  std::optional<Links> links_;  // NetworkOptions::serialize_links
  // The shards' threads and the jobs submitted to them, not started yet.
  struct ShardJob {
    absl::Duration duration;
    std::function<void(absl::Time end)> act;
  };
  Lanes lanes_;
  absl::flat_hash_map<uint64_t, ShardJob> shard_jobs_;
  uint64_t next_job_ = 1;
  // HostOptions::cores > 0: the host, each running job's action at its end, and the version
  // whose kHostTick is scheduled (kNoTick: none).
  static constexpr uint64_t kNoTick = ~uint64_t{0};
  std::optional<Host> host_;
  absl::flat_hash_map<uint64_t, std::function<void()>> host_jobs_;
  uint64_t host_tick_ = kNoTick;
  // The host's jobs that start at a kHostJobStarts (OnHostFrom), by the event's `job`.
  struct LaterHostJob {
    absl::Duration work;
    std::function<void()> at_end;
  };
  absl::flat_hash_map<uint64_t, LaterHostJob> later_host_jobs_;
  uint64_t next_later_host_job_ = 0;
  const PaceModel pace_;  // the compute times, as a paced real worker's
  const policy::PullSpec pull_;
  const bool eager_;
  // Under value weighting: the passes of ServerCostOptions::drift_pass an apply and a read
  // add (0 and 0 under any other weighting).
  const int drift_passes_per_apply_;
  const int drift_passes_per_read_;
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

}  // namespace kairos::sim::internal

#endif  // KAIROS_SIM_SIMULATION_H_
