// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// DSSP, dynamic stale synchronous parallel (Zhao, An, Liu, Chen, ICDCS 2019;
// docs/references.md DSSP-1 to DSSP-7): SSP with the lower bound s_L, plus grants of up to
// r_max extra clocks that the synchronization controller gives the fastest worker so that
// it stops waiting when the slowest worker is predicted to finish an iteration.
//
// The paper's push/OK protocol mapped onto kairos' read gate: "OK after push number c" is
// "the read at clock c is admitted". Iteration boundaries are Gate::OnClock events (one per
// iteration per shard), never Gate::OnPush (one per chunk message).

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "policy/policy.h"
#include "policy/registry.h"

namespace kairos::policy {
namespace {

// min over k in [0, k_max] of |offset - k * step|. The distance is convex in k, so the
// minimum over the range is at the unconstrained nearest k clamped to the range, which is
// one of q - 1, q, q + 1 for q = offset / step truncated (exact integer division).
absl::Duration NearestDistance(absl::Duration offset, absl::Duration step, Tick k_max) {
  if (step == absl::ZeroDuration()) return absl::AbsDuration(offset);
  absl::Duration remainder;
  const int64_t q =
      std::clamp<int64_t>(absl::IDivDuration(offset, step, &remainder), -1, k_max + 1);
  absl::Duration best = absl::InfiniteDuration();
  for (int64_t k = q - 1; k <= q + 1; ++k) {
    const int64_t in_range = std::clamp<int64_t>(k, 0, k_max);
    best = std::min(best, absl::AbsDuration(offset - in_range * step));
  }
  return best;
}

constexpr Tick kNoGrant = -1;  // below every clock

// Not thread-safe (see policy.h).
class DsspGate final : public Gate {
 public:
  DsspGate(const GateSpec& spec, int num_workers)
      : clocks_(num_workers),
        lower_(spec.staleness),
        r_max_(spec.r_max),
        grant_(spec.grant),
        bound_(spec.bound),
        table_(clocks_.num_workers()),
        granted_until_(clocks_.num_workers(), kNoGrant),
        counts_(clocks_.num_workers()) {}

  // Records the boundary in table A (for every worker: docs/references.md DSSP-2), then, if
  // w is a fastest active worker more than s_L ahead with no grant covering this clock, asks
  // the controller for a grant (Algorithm 1, lines 7-13; docs/references.md DSSP-4).
  void OnClock(WorkerId w, Tick clock, absl::Time now) override {
    if (clock <= clocks_.clock(w)) return;  // late or duplicated: not a new boundary
    clocks_.SetClock(w, clock);
    table_[w].Record(clock, now);
    if (!clocks_.active(w) || clock <= granted_until_[w]) return;
    const Tick min = clocks_.MinActiveClock();
    const Tick gap = clock - min;  // min <= clock: w is active
    if (gap <= lower_ || clock != clocks_.MaxActiveClock()) return;
    const Tick r_star = RStar(w);
    const Tick reads = ReadsFor(r_star, gap);
    GateCounts& counts = counts_[w];
    ++counts.controller_calls;
    if (r_star == 0) ++counts.zero_answers;
    if (reads > 0) {
      granted_until_[w] = clock > kUnbounded - reads ? kUnbounded : clock + reads - 1;
      ++counts.grants;
      counts.granted_reads += static_cast<uint64_t>(reads);
    }
  }

  GateCounts counts(WorkerId w) const override {
    return w >= 0 && w < static_cast<WorkerId>(counts_.size()) ? counts_[w] : GateCounts{};
  }

  void OnLeave(WorkerId w, MemberState why) override { clocks_.SetState(w, why); }

  // A rejoined worker starts a fresh row of table A (its old boundaries would span the
  // time it was away) and holds no grant.
  void OnRejoin(WorkerId w, Tick clock, absl::Time now) override {
    clocks_.SetClock(w, clock);
    table_[w] = Row();
    granted_until_[w] = kNoGrant;
    clocks_.SetState(w, MemberState::kActive);
  }

  bool Admits(WorkerId w, Tick clock) override { return Decide(w, clock); }

  // As SSP(s_L) for a read its grant does not cover: the active workers below clock - s_L.
  std::vector<WorkerId> Blockers(WorkerId w, Tick clock) const override {
    if (Decide(w, clock)) return {};
    return clocks_.ActiveBelow(clock - lower_);
  }

  const WorkerClocks& clocks() const override { return clocks_; }

 private:
  // Table A's row for one worker, with the clocks of the two boundaries so that a report
  // that skips clocks yields a per-iteration interval.
  struct Row {
    int count = 0;  // boundaries recorded, at most 2 kept
    absl::Time latest;
    absl::Time previous;
    Tick latest_clock = 0;
    Tick previous_clock = 0;

    void Record(Tick clock, absl::Time now) {
      previous = latest;
      previous_clock = latest_clock;
      latest = now;
      latest_clock = clock;
      count = std::min(count + 1, 2);
    }
    // A[i] as the controller reads it (previous = one iteration before latest), or nullopt
    // while the interval is unknown (fewer than two boundaries: cold start).
    std::optional<DsspHistory> History() const {
      if (count < 2) return std::nullopt;
      const absl::Duration interval = (latest - previous) / (latest_clock - previous_clock);
      return DsspHistory{latest, latest - interval};
    }
  };

  // Admitted iff within s_L of the slowest active worker, or covered by w's grant.
  bool Decide(WorkerId w, Tick clock) const {
    const Tick min = clocks_.MinActiveClock();
    if (min == kUnbounded || clock <= min || clock - min <= lower_) return true;
    return clock <= granted_until_[w];
  }

  // The controller's r* for p, or 0 while p or the slowest worker has no interval yet.
  Tick RStar(WorkerId p) const {
    if (r_max_ == 0) return 0;
    const std::optional<DsspHistory> fastest = table_[p].History();
    const std::optional<DsspHistory> slowest = table_[Slowest()].History();
    if (!fastest || !slowest) return 0;
    return DsspController(*fastest, *slowest, r_max_);
  }

  // The active worker with the smallest clock; among several, the one predicted to finish
  // its running iteration last (A[s][0] + I_s), where a worker with no interval yet counts
  // as latest (nothing can be predicted, so r* = 0), then the smallest id.
  // REQUIRES: an active worker exists.
  WorkerId Slowest() const {
    const Tick min = clocks_.MinActiveClock();
    WorkerId slowest = -1;
    std::optional<absl::Time> slowest_next;
    for (WorkerId v = 0; v < clocks_.num_workers(); ++v) {
      if (!clocks_.active(v) || clocks_.clock(v) != min) continue;
      const std::optional<DsspHistory> history = table_[v].History();
      if (!history) return v;
      const absl::Time next = history->latest + (history->latest - history->previous);
      if (slowest < 0 || next > *slowest_next) {
        slowest = v;
        slowest_next = next;
      }
    }
    return slowest;
  }

  // The number of reads, from the grant's clock on, that a controller answer r* releases:
  // r* (exact) or r* + 1 (literal), none for r* = 0; with the strict bound cut so that the
  // last one is at gap <= s_U = s_L + r_max, i.e. reads <= s_U - gap + 1 (docs/references.md
  // DSSP-6). The slowest worker's clock never goes back, so the gap of a later read is
  // at most the gap at the grant plus the clocks granted.
  Tick ReadsFor(Tick r_star, Tick gap) const {
    if (r_star == 0) return 0;
    Tick reads = grant_ == GateSpec::DsspGrant::kExact ? r_star : r_star + 1;
    if (bound_ == GateSpec::DsspBound::kStrict) {
      const Tick upper = lower_ + r_max_;  // ValidatePolicySpec: no overflow
      reads = std::min(reads, std::max<Tick>(0, upper - gap + 1));
    }
    return reads;
  }

  WorkerClocks clocks_;
  const Tick lower_;  // s_L
  const Tick r_max_;
  const GateSpec::DsspGrant grant_;
  const GateSpec::DsspBound bound_;
  std::vector<Row> table_;           // table A, by worker
  std::vector<Tick> granted_until_;  // reads at clocks <= this are admitted; kNoGrant
  std::vector<GateCounts> counts_;   // by worker
};

}  // namespace

Tick DsspController(const DsspHistory& fastest, const DsspHistory& slowest, Tick r_max) {
  const absl::Duration fastest_interval = fastest.latest - fastest.previous;
  const absl::Duration slowest_interval = slowest.latest - slowest.previous;
  const absl::Time slowest_next = slowest.latest + slowest_interval;  // Sim_s[0]
  Tick best_r = 0;
  absl::Duration best = absl::InfiniteDuration();
  for (Tick r = 0; r <= r_max; ++r) {
    const absl::Time sim_p = fastest.latest + r * fastest_interval;
    const absl::Duration distance = NearestDistance(sim_p - slowest_next, slowest_interval, r_max);
    if (distance < best) {  // strict: the smallest r wins ties
      best = distance;
      best_r = r;
    }
  }
  return best_r;
}

namespace internal {

PolicyDef DsspGatePolicy() {
  return {
      .name = "dssp",
      .kind = KindOf(GateSpec::Kind::kDssp),
      .help = "dynamic SSP (Zhao et al. 2019): SSP(s_L), plus grants of up to r extra clocks "
              "to the fastest worker, sized by the synchronization controller",
      .params =
          {{.key = "s",
            .help = "the lower bound s_L",
            .default_value = kDsspDefaultLowerBound,
            .always_printed = true,
            .binding = Field(&GateSpec::staleness, "staleness")},
           {.key = "r",
            .help = "r_max = s_U - s_L, the most extra clocks one grant gives",
            .max = kDsspMaxRMax,
            .range_note = "the controller costs O(r) per iteration",
            .default_value = kDsspDefaultRMax,
            .always_printed = true,
            .binding = Field(&GateSpec::r_max, "r_max")},
           {.key = "grant",
            .type = ParamDef::Type::kChoice,
            .help = "a grant of r* admits r* reads (exact) or r* + 1 as printed (literal)",
            .choices = {"exact", "literal"},
            .binding = Field(&GateSpec::grant, "grant")},
           {.key = "bound",
            .type = ParamDef::Type::kChoice,
            .help = "cut grants at s_U = s_L + r_max ahead of the slowest (strict), or not",
            .choices = {"strict", "none"},
            .binding = Field(&GateSpec::bound, "bound")}},
      .presets = {{"dssp", "gate=dssp", Seam::kGate, "DSSP, every push applied at once"}},
      .check = [](const PolicySpec& spec) -> absl::Status {
        const GateSpec& gate = spec.gate;
        if (gate.staleness <= kUnbounded - gate.r_max) return absl::OkStatus();
        return absl::InvalidArgumentError(
            absl::StrCat("s + r (the upper bound s_U) must be at most ", kUnbounded,
                         ", got s=", gate.staleness, ", r=", gate.r_max));
      },
      .make = GateFactory([](const PolicySpec& spec, int num_workers) -> std::unique_ptr<Gate> {
        return std::make_unique<DsspGate>(spec.gate, num_workers);
      }),
  };
}

}  // namespace internal
}  // namespace kairos::policy
