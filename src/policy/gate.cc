// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The gates. SSP(s) covers BSP (s = 0) and ASP (s = kUnbounded); later gates (DSSP, PSP)
// live beside it and are chosen by MakeGate.

#include <memory>
#include <vector>

#include "policy/policy.h"

namespace kairos::policy {
namespace {

// Stale Synchronous Parallel (Ho et al. 2013, papers.md §3): a read at clock c is served iff
// c - MinActiveClock() <= s, the minimum taken over active workers only; with no active
// worker every read is served. Not thread-safe (see policy.h).
class SspGate final : public Gate {
 public:
  SspGate(int num_workers, Tick staleness) : clocks_(num_workers), staleness_(staleness) {}

  void OnClock(WorkerId w, Tick clock, absl::Time now) override { clocks_.SetClock(w, clock); }

  void OnLeave(WorkerId w, MemberState why) override { clocks_.SetState(w, why); }

  bool Admits(WorkerId w, Tick clock) override {
    const Tick min = clocks_.MinActiveClock();
    if (min == kUnbounded || staleness_ == kUnbounded) return true;
    // clock <= min + s, written so that neither side can overflow: both are clocks
    // (>= 0 in practice), and a clock below the minimum is always admitted.
    return clock <= min || clock - min <= staleness_;
  }

  std::vector<WorkerId> Blockers(WorkerId w, Tick clock) const override {
    // A read at `clock` waits for every active worker below clock - s. When clock <= s
    // that bound is <= 0 and no clock is below it (this also keeps clock - s from
    // overflowing when s is kUnbounded).
    if (clock <= staleness_) return {};
    return clocks_.ActiveBelow(clock - staleness_);
  }

  const WorkerClocks& clocks() const override { return clocks_; }

 private:
  WorkerClocks clocks_;
  const Tick staleness_;
};

}  // namespace

std::unique_ptr<Gate> MakeGate(const PolicySpec& spec, int num_workers) {
  switch (spec.gate.kind) {  // -Wswitch points here when a Kind is added
    case GateSpec::Kind::kSsp:
      break;
  }
  return std::make_unique<SspGate>(num_workers, spec.gate.staleness);
}

}  // namespace kairos::policy
