// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The simulator's parameter server: one shard holding the whole parameter vector, driving
// the policy objects exactly as src/server/server_impl.cc does (push -> straggler,
// weighting and aggregation decisions; clock -> Gate::OnClock, then ready buckets applied,
// then waiting reads re-checked with Gate::Admits in arrival order), with a plain SGD
// updater (w -= learning_rate * scale * g) instead of libkairos's Updater. It keeps the
// same per-worker metrics as a real server (kairos::WorkerMetrics). Under VSGD weighting
// (Weighting::NeedsValueStaleness) it keeps, as shard.cc does, per worker i the sum D_i of
// the parameter changes applied since i's last served read (or, in bound mode, the scalar
// sum of their norms): a push reads ||D_i|| as its value staleness, every apply adds to each
// D_j, and a served read of i sets D_i = 0.

#ifndef KAIROS_SIM_SIM_SERVER_H_
#define KAIROS_SIM_SIM_SERVER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/time/time.h"
#include "kairos/metrics.h"
#include "policy/policy.h"

namespace kairos::sim {

// A read the server answered. Its parameters are params() as they are when the call that
// returned it comes back (a call serves reads only after its last change to them).
struct ServedRead {
  policy::WorkerId worker = 0;
  policy::Tick clock = 0;
};

// Thread-safety: none; the simulation owns it and calls it from its one thread.
class SimServer {
 public:
  // REQUIRES: policy::ValidatePolicySpec(spec).ok(), num_workers >= 1.
  SimServer(const policy::PolicySpec& spec, int num_workers, Eigen::VectorXf initial_params,
            float learning_rate);

  const Eigen::VectorXf& params() const { return params_; }
  // Updates applied so far (a push applied at once, or a bucket applied as one).
  uint64_t version() const { return version_; }
  const policy::Gate& gate() const { return *gate_; }
  const std::vector<WorkerMetrics>& metrics() const { return metrics_; }
  std::vector<WorkerMetrics>& mutable_metrics() { return metrics_; }
  // Pushes the straggler policy dropped, per worker.
  const std::vector<uint64_t>& dropped() const { return dropped_; }
  // Keeps the latest `n` pushes of each worker in its WorkerMetrics::push_log (0: none).
  void set_push_log_size(int n) { push_log_size_ = n; }
  int num_waiting() const { return static_cast<int>(waiting_.size()); }

  // Worker w's read at `clock` arrives: served now if the gate admits it, else queued.
  std::vector<ServedRead> OnRead(policy::WorkerId w, policy::Tick clock, absl::Time now);
  // Worker w's push at `clock` arrives: dropped, applied, or added to a bucket (a push of
  // a worker that has left is ignored, as a real server refuses it). `extra` multiplies
  // the policy's scale (the worker's own eager-pull learning-rate scale). Returns the
  // straggler policy's refresh verdict (false for an ignored push).
  bool OnPush(policy::WorkerId w, policy::Tick clock, const Eigen::VectorXf& gradient,
              absl::Time now, float extra = 1.0f);
  // Worker w reports that it completed `clock` iterations.
  std::vector<ServedRead> OnClock(policy::WorkerId w, policy::Tick clock, absl::Time now);
  // Worker w finished or was declared dead: it leaves the gate, its waiting reads are
  // dropped (their wait is counted until now), and the others are re-checked.
  std::vector<ServedRead> OnLeave(policy::WorkerId w, policy::MemberState why,
                                  absl::Time now);
  // The simulation ends at `now`: reads still waiting count their wait until then.
  void Finish(absl::Time now);
  // The waiting reads and whom each waits for (Gate::Blockers), for a stall message.
  std::string DescribeWaiting() const;

 private:
  struct WaitingRead {
    policy::WorkerId worker;
    policy::Tick clock;
    absl::Time arrived;
  };

  void Serve(policy::WorkerId w, policy::Tick clock, bool waited, absl::Time arrived,
             absl::Time now, std::vector<ServedRead>* served);
  void ApplyReadyBuckets();
  void Apply(const Eigen::VectorXf& gradient, float scale);
  double ValueStaleness(policy::WorkerId w) const;
  std::vector<ServedRead> Reevaluate(absl::Time now);

  std::unique_ptr<policy::Gate> gate_;
  std::unique_ptr<policy::Aggregation> aggregation_;
  std::unique_ptr<policy::Weighting> weighting_;
  std::unique_ptr<policy::StragglerPolicy> straggler_;
  const float learning_rate_;
  Eigen::VectorXf params_;
  uint64_t version_ = 0;
  std::vector<uint64_t> version_read_;   // per worker: version at its last served read
  // VSGD (track_drift_): D_i per worker (exact mode) or the bound sum ||Delta|| (bound_).
  bool track_drift_ = false;
  bool bound_ = false;
  std::vector<Eigen::VectorXf> drift_;
  std::vector<double> drift_bound_;
  std::map<int64_t, Eigen::VectorXf> buckets_;  // accumulated sums, by bucket
  std::deque<WaitingRead> waiting_;      // in arrival order
  std::vector<WorkerMetrics> metrics_;
  std::vector<uint64_t> dropped_;
  void LogPush(WorkerMetrics& m, const PushRecord& r) const;
  int push_log_size_ = 0;
};

}  // namespace kairos::sim

#endif  // KAIROS_SIM_SIM_SERVER_H_
