// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The simulated workers' read caches (SimOptions::cache_clocks, docs/simulator.md), modelled
// on a real worker's (src/worker/read_cache.h, docs/performance.md "The read cache"): per
// worker the copy of the parameters its latest read from the server brought, kept with that
// read's clock and the smallest clock of an active worker when the server served it, which
// answers a later read of the worker when policy::CacheBound says it may. The worker's own
// pushes go into its copy (copy -= learning_rate * g) where the server applies them as
// exactly that (policy::AppliesPushesAsIssued: the simulator's updater is sgd); otherwise
// the copy lacks them. It also keeps the
// per-read log (SimOptions::read_log).
//
// Thread-safety: none; one simulation owns it.

#ifndef KAIROS_SIM_SIM_READ_CACHE_H_
#define KAIROS_SIM_SIM_READ_CACHE_H_

#include <Eigen/Core>
#include <cstdint>
#include <deque>
#include <vector>

#include "policy/cache_bound.h"
#include "policy/policy.h"
#include "sim/simulator.h"

namespace kairos::sim {

class SimReadCache {
 public:
  // `cache_clocks` 0: nothing is cached; `log`: every read is recorded (SimRead).
  // REQUIRES: num_workers >= 1.
  SimReadCache(const policy::PolicySpec& spec, int num_workers, uint32_t cache_clocks,
               float learning_rate, bool log);

  bool caches() const { return bound_.cache_clocks > 0; }
  bool writes_through() const { return write_through_; }

  // w's read at `clock` is served now with `params`, while the smallest clock of an active
  // worker is `min_clock` (kUnbounded: none active) and the server has taken pushes[v] of
  // each worker v's pushes: kept as w's copy (when caching) and recorded (when logging).
  void Served(policy::WorkerId w, policy::Tick clock,
              const Eigen::Ref<const Eigen::VectorXf>& params, policy::Tick min_clock,
              const std::vector<int64_t>& pushes);
  // Whether w's copy answers its read at `clock` (policy::CacheBound::Serves). If it does,
  // the read is counted and recorded, and Answered(w, clock) is true once.
  bool TryRead(policy::WorkerId w, policy::Tick clock);
  // The read at `clock` that w sends behind its clock report was answered by its copy
  // (TryRead); the server must not get it. Reads are asked about in clock order.
  bool Answered(policy::WorkerId w, policy::Tick clock);
  // w's copy. REQUIRES: a read of w was Served while caching.
  const Eigen::VectorXf& params(policy::WorkerId w) const {
    return copies_[static_cast<size_t>(w)].params;
  }
  // w pushes `gradient`: its copy takes it where the server applies it as exactly
  // w -= learning_rate * g.
  void Pushed(policy::WorkerId w, const Eigen::VectorXf& gradient);

  int64_t reads_cached(policy::WorkerId w) const {
    return copies_[static_cast<size_t>(w)].reads_cached;
  }
  // w's reads in order (empty unless logging).
  std::vector<SimRead> TakeLog(policy::WorkerId w) {
    return std::move(copies_[static_cast<size_t>(w)].log);
  }

 private:
  struct Copy {
    bool held = false;
    Eigen::VectorXf params;
    policy::Tick read_clock = 0;
    policy::Tick min_clock = 0;
    std::vector<int64_t> pushes;        // logging only
    std::deque<policy::Tick> answered;  // reads answered and not yet seen by Answered
    int64_t reads_cached = 0;
    std::vector<SimRead> log;
  };

  const policy::CacheBound bound_;
  const bool write_through_;
  const float learning_rate_;
  const bool log_;
  std::vector<Copy> copies_;
};

}  // namespace kairos::sim

#endif  // KAIROS_SIM_SIM_READ_CACHE_H_
