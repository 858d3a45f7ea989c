// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// SimServer (see sim_server.h). The order of the policy calls mirrors server_impl.cc, so
// that a policy behaves here as it does in a real shard.

#include "sim/sim_server.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kairos::sim {

using policy::MemberState;
using policy::Tick;
using policy::WorkerId;

SimServer::SimServer(const policy::PolicySpec& spec, int num_workers,
                     Eigen::VectorXf initial_params, float learning_rate)
    : gate_(policy::MakeGate(spec, num_workers)),
      aggregation_(policy::MakeAggregation(spec, num_workers)),
      weighting_(policy::MakeWeighting(spec, num_workers)),
      straggler_(policy::MakeStragglerPolicy(spec, num_workers)),
      learning_rate_(learning_rate),
      params_(std::move(initial_params)),
      version_read_(static_cast<size_t>(num_workers), 0),
      metrics_(static_cast<size_t>(num_workers)),
      dropped_(static_cast<size_t>(num_workers), 0) {
  for (int w = 0; w < num_workers; ++w) metrics_[static_cast<size_t>(w)].rank = w;
  track_drift_ = weighting_->NeedsValueStaleness();
  bound_ = spec.weighting.value_mode == policy::WeightingSpec::ValueMode::kBound;
  if (track_drift_ && bound_) drift_bound_.assign(static_cast<size_t>(num_workers), 0.0);
  if (track_drift_ && !bound_) {
    drift_.assign(static_cast<size_t>(num_workers), Eigen::VectorXf::Zero(params_.size()));
  }
}

double SimServer::ValueStaleness(WorkerId w) const {
  if (!track_drift_) return 0.0;
  if (bound_) return drift_bound_[static_cast<size_t>(w)];
  double sum = 0;
  for (float x : drift_[static_cast<size_t>(w)]) sum += static_cast<double>(x) * x;
  return std::sqrt(sum);
}

std::vector<ServedRead> SimServer::OnRead(WorkerId w, Tick clock, absl::Time now) {
  std::vector<ServedRead> served;
  if (!gate_->clocks().active(w)) return served;
  if (gate_->Admits(w, clock)) {
    Serve(w, clock, /*waited=*/false, now, now, &served);
  } else {
    ++metrics_[static_cast<size_t>(w)].blocked_reads;
    waiting_.push_back({w, clock, now});
  }
  return served;
}

void SimServer::Serve(WorkerId w, Tick clock, bool waited, absl::Time arrived, absl::Time now,
                      std::vector<ServedRead>* served) {
  WorkerMetrics& m = metrics_[static_cast<size_t>(w)];
  version_read_[static_cast<size_t>(w)] = version_;
  if (track_drift_ && bound_) drift_bound_[static_cast<size_t>(w)] = 0.0;
  if (track_drift_ && !bound_) drift_[static_cast<size_t>(w)].setZero();
  ++m.pulls;
  const Tick min = gate_->clocks().MinActiveClock();
  if (min != policy::kUnbounded) m.max_read_lead = std::max<int64_t>(m.max_read_lead, clock - min);
  if (waited) m.blocked_time += now - arrived;
  served->push_back({w, clock});
}

bool SimServer::OnPush(WorkerId w, Tick clock, const Eigen::VectorXf& gradient,
                       absl::Time now, float extra) {
  if (!gate_->clocks().active(w)) return false;
  policy::StalenessInfo info{clock, version_read_[static_cast<size_t>(w)], version_};
  WorkerMetrics& m = metrics_[static_cast<size_t>(w)];
  ++m.pushes;
  m.staleness.Add(info.iteration_staleness());
  const policy::StragglerDecision verdict = straggler_->OnPush(w, info);
  gate_->OnPush(w, clock, now);
  if (verdict.action == policy::StragglerDecision::Action::kDrop) {
    ++dropped_[static_cast<size_t>(w)];
    ++m.dropped;
    if (verdict.refresh) ++m.refreshes;
    LogPush(m, PushRecord{clock, 0, info.iteration_staleness(), 0.0, 0.0f, true});
    return verdict.refresh;
  }
  if (verdict.refresh) ++m.refreshes;
  // On demand, verdict.refresh needs no action (every iteration pulls before it computes);
  // an eager worker skips its local step (the simulation reads the return value).
  if (track_drift_) {
    info.value_staleness = ValueStaleness(w);
    m.value_staleness.Add(info.value_staleness);
  }
  const float scale =
      weighting_->Scale(w, info) * extra *
      (verdict.action == policy::StragglerDecision::Action::kDownWeight ? verdict.weight : 1.0f);
  m.scale.Add(scale);
  LogPush(m, PushRecord{clock, 0, info.iteration_staleness(), info.value_staleness, scale,
                        false});
  const policy::AggregateDecision d = aggregation_->OnPush(w, clock);
  if (d.kind == policy::AggregateDecision::Kind::kApplyNow) {
    Apply(gradient, scale);
    return verdict.refresh;
  }
  Eigen::VectorXf& sum = buckets_[d.bucket];
  if (sum.size() == 0) sum = Eigen::VectorXf::Zero(params_.size());
  sum += scale * gradient;
  ApplyReadyBuckets();
  return verdict.refresh;
}

void SimServer::LogPush(WorkerMetrics& m, const PushRecord& r) const {
  if (push_log_size_ <= 0) return;
  if (static_cast<int>(m.push_log.size()) >= push_log_size_) m.push_log.erase(m.push_log.begin());
  m.push_log.push_back(r);
}

void SimServer::Apply(const Eigen::VectorXf& gradient, float scale) {
  ++version_;
  if (!track_drift_) {
    params_ -= (learning_rate_ * scale) * gradient;
    return;
  }
  // As ShardTable::ApplyTracked: the change is what the apply did to the values.
  const Eigen::VectorXf before = params_;
  params_ -= (learning_rate_ * scale) * gradient;
  if (bound_) {
    double sum = 0;
    for (Eigen::Index i = 0; i < params_.size(); ++i) {
      const double d = static_cast<double>(params_[i]) - before[i];
      sum += d * d;
    }
    for (double& b : drift_bound_) b += std::sqrt(sum);
    return;
  }
  for (Eigen::VectorXf& d : drift_) d += params_ - before;
}

void SimServer::ApplyReadyBuckets() {
  for (const policy::ReadyBucket& ready : aggregation_->TakeReady(gate_->clocks())) {
    auto it = buckets_.find(ready.bucket);
    if (it == buckets_.end()) continue;
    const Eigen::VectorXf sum = std::move(it->second);
    buckets_.erase(it);
    Apply(sum, ready.divisor > 0 ? 1.0f / ready.divisor : 1.0f);
  }
}

std::vector<ServedRead> SimServer::OnClock(WorkerId w, Tick clock, absl::Time now) {
  if (!gate_->clocks().active(w)) return {};
  gate_->OnClock(w, clock, now);
  return Reevaluate(now);
}

std::vector<ServedRead> SimServer::OnLeave(WorkerId w, MemberState why, absl::Time now) {
  if (!gate_->clocks().active(w)) return {};
  gate_->OnLeave(w, why);
  // Reads of a worker that left have nobody to answer; their wait ends now.
  std::erase_if(waiting_, [&](const WaitingRead& r) {
    if (r.worker != w) return false;
    metrics_[static_cast<size_t>(w)].blocked_time += now - r.arrived;
    return true;
  });
  return Reevaluate(now);
}

std::vector<ServedRead> SimServer::Reevaluate(absl::Time now) {
  ApplyReadyBuckets();
  std::vector<ServedRead> served;
  std::deque<WaitingRead> still;
  for (const WaitingRead& r : waiting_) {
    if (gate_->Admits(r.worker, r.clock)) {
      Serve(r.worker, r.clock, /*waited=*/true, r.arrived, now, &served);
    } else {
      still.push_back(r);
    }
  }
  waiting_.swap(still);
  return served;
}

void SimServer::Finish(absl::Time now) {
  for (const WaitingRead& r : waiting_) {
    metrics_[static_cast<size_t>(r.worker)].blocked_time += now - r.arrived;
  }
  waiting_.clear();
}

std::string SimServer::DescribeWaiting() const {
  std::vector<std::string> reads;
  for (const WaitingRead& r : waiting_) {
    std::vector<std::string> who;
    for (WorkerId b : gate_->Blockers(r.worker, r.clock)) {
      who.push_back(absl::StrCat(b, " (clock ", gate_->clocks().clock(b), ")"));
    }
    reads.push_back(absl::StrCat("worker ", r.worker, "'s read at clock ", r.clock,
                                 " waits for workers [", absl::StrJoin(who, ", "), "]"));
  }
  return absl::StrJoin(reads, "; ");
}

}  // namespace kairos::sim
