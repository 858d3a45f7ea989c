// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The simulator's parameter server: the server's own ShardEngine (src/engine/) holding the
// whole parameter vector as one table of one chunk, with the built-in SGD updater
// (w -= learning_rate * scale * g), driven on the simulation's virtual time. Every policy
// decision (straggler verdict, gate, aggregation, weighting, VSGD's drift, the order in
// which waiting reads are re-checked) is the engine's, so a policy behaves here exactly as
// in a real shard. The engine's chunk work runs at once, on the simulation's thread.

#ifndef KAIROS_SIM_SIM_SERVER_H_
#define KAIROS_SIM_SIM_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/time/time.h"
#include "engine/shard_engine.h"
#include "kairos/metrics.h"
#include "policy/policy.h"

namespace kairos::sim {

// A read the server answered. Its parameters are params() as they are when the call that
// returned it comes back (a call serves reads only after its last change to them).
struct ServedRead {
  policy::WorkerId worker = 0;
  policy::Tick clock = 0;
  // The read after an eager push (OnPushPull): the straggler policy told the worker to
  // refresh (its push was dropped or down-weighted).
  bool refresh = false;
};

// Thread-safety: none; the simulation owns it and calls it from its one thread.
class SimServer final : private internal::EngineHost {
 public:
  // REQUIRES: policy::ValidatePolicySpec(spec).ok(), num_workers >= 1, at least one
  // parameter. `push_log_size`: pushes kept per worker in WorkerMetrics::push_log.
  SimServer(const policy::PolicySpec& spec, int num_workers,
            const Eigen::VectorXf& initial_params, float learning_rate, int push_log_size = 0);

  // The parameters now (a view: valid until the next event).
  Eigen::Map<const Eigen::VectorXf> params() const;
  // Updates applied so far (a push applied at once, or a bucket applied as one).
  uint64_t version() const { return engine_->counters().version; }
  const policy::WorkerClocks& clocks() const { return engine_->clocks(); }
  std::vector<WorkerMetrics> metrics() const { return engine_->metrics(); }
  // Pushes the straggler policy dropped, per worker.
  std::vector<uint64_t> dropped() const;
  // Pushes and reads the engine refused (a non-finite gradient, a worker that left, ...).
  RefusalCounts refused() const { return engine_->refused(); }
  int num_waiting() const { return engine_->num_waiting(); }

  // Worker w's read at `clock` arrives: served now if the gate admits it, else queued.
  std::vector<ServedRead> OnRead(policy::WorkerId w, policy::Tick clock, absl::Time now);
  // Worker w's push at `clock` arrives: dropped, applied, or added to a bucket (a push of
  // a worker that has left is refused, as by a real server). `extra` multiplies the
  // policy's scale (the worker's own eager-pull learning-rate scale). With `pull_after`
  // (pull=eager) the push asks for the read at clock + 1, served now if the gate admits it
  // (returned, with the straggler policy's refresh verdict) or when a later event does; the
  // engine then measures the push's staleness as for a real eager worker (from the read
  // before its latest). A plain push serves no read: nothing is returned.
  std::vector<ServedRead> OnPush(policy::WorkerId w, policy::Tick clock,
                                 const Eigen::VectorXf& gradient, absl::Time now,
                                 float extra = 1.0f, bool pull_after = false);
  // Worker w reports that it completed `clock` iterations.
  std::vector<ServedRead> OnClock(policy::WorkerId w, policy::Tick clock, absl::Time now);
  // Worker w finished or was declared dead: it leaves the gate, its waiting reads are
  // dropped (their wait is counted until now), and the others are re-checked.
  std::vector<ServedRead> OnLeave(policy::WorkerId w, policy::MemberState why,
                                  absl::Time now);
  // The simulation ends at `now`: reads still waiting count their wait until now.
  void Finish(absl::Time now) { engine_->DropWaiting(now); }
  // The waiting reads and whom each waits for (Gate::Blockers), for a stall message.
  std::string DescribeWaiting() const { return engine_->DescribeWaiting(); }

 private:
  void RunOnLane(uint64_t key, std::function<void()> job) override;
  void Answer(internal::EngineAnswer answer) override;
  internal::EngineRequest Request(internal::EngineRequest::Kind kind, policy::WorkerId w,
                                  policy::Tick clock);
  // The reads answered since the last call.
  std::vector<ServedRead> TakeServed();

  const uint64_t size_;
  std::unique_ptr<internal::ShardEngine> engine_;
  uint64_t next_id_ = 1;
  std::vector<ServedRead> served_;  // reads answered by the current event
};

}  // namespace kairos::sim

#endif  // KAIROS_SIM_SIM_SERVER_H_
