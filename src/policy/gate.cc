// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The SSP gate, which covers BSP (s = 0) and ASP (s = kUnbounded), and MakeGate. DSSP
// (dssp_gate.cc) and PSP (psp_gate.cc) live beside it.

#include <memory>
#include <vector>

#include "policy/gates.h"
#include "policy/policy.h"

namespace kairos::policy {
namespace {

// Stale Synchronous Parallel (Ho et al. 2013; docs/references.md SSP-2): a read at clock c
// is served iff c - MinActiveClock() <= s, the minimum taken over active workers only; with
// no active worker every read is served. Not thread-safe (see policy.h).
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

namespace internal {

std::unique_ptr<Gate> NewSspGate(const GateSpec& spec, int num_workers) {
  return std::make_unique<SspGate>(num_workers, spec.staleness);
}

}  // namespace internal

std::unique_ptr<Gate> MakeGate(const PolicySpec& spec, int num_workers) {
  switch (spec.gate.kind) {  // -Wswitch points here when a Kind is added
    case GateSpec::Kind::kSsp:
      break;
    case GateSpec::Kind::kDssp:
      return internal::NewDsspGate(spec.gate, num_workers);
    case GateSpec::Kind::kPsp:
      return internal::NewPspGate(spec.gate, num_workers);
  }
  return internal::NewSspGate(spec.gate, num_workers);
}

}  // namespace kairos::policy
