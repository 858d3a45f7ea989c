// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The SSP gate, which covers BSP (s = 0) and ASP (s = kUnbounded), and its registration.
// DSSP (dssp_gate.cc) and PSP (psp_gate.cc) live beside it.

#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "policy/policy.h"
#include "policy/registry.h"

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

// bsp, asp and ssp:s=N: one policy, two aliases, three presets.
PolicyDef SspGatePolicy() {
  return {
      .name = "ssp",
      .kind = KindOf(GateSpec::Kind::kSsp),
      .help = "stale synchronous parallel (Ho et al. 2013): a read at clock c waits until "
              "c - (slowest active clock) <= s",
      .params = {{.key = "s",
                  .help = "the staleness bound",
                  .default_value = kUnbounded,
                  .required = true,
                  .example = "3",
                  .binding = Field(&GateSpec::staleness, "staleness")}},
      .aliases = {{"bsp", "s=0", "bulk synchronous parallel: wait for every active worker"},
                  {"asp", absl::StrCat("s=", kUnbounded), "asynchronous parallel: never wait"}},
      .presets = {{"bsp", "gate=bsp+agg=round", std::nullopt,
                   "BSP: the barrier gate, each round applied once as the average of its pushes"},
                  {"asp", "gate=asp", std::nullopt, "ASP: never wait, apply every push at once"},
                  {"ssp", "gate=ssp", Seam::kGate, "SSP(s), every push applied at once"}},
      .make = GateFactory([](const PolicySpec& spec, int num_workers) -> std::unique_ptr<Gate> {
        return std::make_unique<SspGate>(num_workers, spec.gate.staleness);
      }),
  };
}

}  // namespace internal
}  // namespace kairos::policy
