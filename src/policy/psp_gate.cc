// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// PSP, probabilistic synchronous parallel (Wang, Catterall, Mortier 2017;
// docs/references.md PSP-1, PSP-2): SSP's barrier checked against a random sample of beta
// other workers instead of all of them. The sample comes from a generator the gate owns,
// seeded from the spec, so the decisions are a deterministic function of the seed and the
// sequence of calls.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "absl/time/time.h"
#include "policy/policy.h"
#include "policy/registry.h"

namespace kairos::policy {
namespace {

// A read of w at clock c passes iff c - min(clocks of its sample) <= s, where the sample is
// beta workers drawn uniformly without replacement from the active workers other than w
// (all of them when there are at most beta). The reader itself is not eligible: by the
// clock convention it reads at its own clock, so it could never hold itself back, and a
// slot spent on it would sample one peer fewer. The sample is drawn at the first Admits of
// (w, c) and kept for every later call with the same (w, c), so a waiting read keeps
// waiting for the same workers and the answer only changes on an event; a sampled worker
// that leaves is removed from it. Not thread-safe (see policy.h).
class PspGate final : public Gate {
 public:
  PspGate(const GateSpec& spec, int num_workers)
      : clocks_(num_workers),
        beta_(spec.beta),
        staleness_(spec.staleness),
        generator_(spec.seed),
        samples_(clocks_.num_workers()) {}

  void OnClock(WorkerId w, Tick clock, absl::Time now) override { clocks_.SetClock(w, clock); }

  void OnLeave(WorkerId w, MemberState why) override {
    clocks_.SetState(w, why);
    if (why == MemberState::kActive) return;
    for (Sample& sample : samples_) {
      sample.workers.erase(std::remove(sample.workers.begin(), sample.workers.end(), w),
                           sample.workers.end());
    }
  }

  bool Admits(WorkerId w, Tick clock) override {
    if (NeverWaits()) return true;
    const Sample& sample = SampleFor(w, clock);
    return std::none_of(sample.workers.begin(), sample.workers.end(),
                        [&](WorkerId v) { return HoldsBack(v, clock); });
  }

  // The sampled workers more than s behind `clock`, in increasing id order. Empty when
  // Admits(w, clock) has not been asked yet (the sample is drawn there).
  std::vector<WorkerId> Blockers(WorkerId w, Tick clock) const override {
    if (NeverWaits()) return {};
    const Sample& sample = samples_[w];
    if (!sample.drawn || sample.clock != clock) return {};
    std::vector<WorkerId> blockers;
    for (WorkerId v : sample.workers) {
      if (HoldsBack(v, clock)) blockers.push_back(v);
    }
    return blockers;
  }

  const WorkerClocks& clocks() const override { return clocks_; }

 private:
  struct Sample {
    bool drawn = false;
    Tick clock = 0;                 // the read it was drawn for
    std::vector<WorkerId> workers;  // increasing id order
  };

  bool NeverWaits() const { return beta_ == 0 || staleness_ == kUnbounded; }

  // Clocks are never negative, so c - clock(v) cannot overflow once clock(v) < c.
  bool HoldsBack(WorkerId v, Tick clock) const {
    return clocks_.clock(v) < clock && clock - clocks_.clock(v) > staleness_;
  }

  const Sample& SampleFor(WorkerId w, Tick clock) {
    Sample& sample = samples_[w];
    if (!sample.drawn || sample.clock != clock) {
      sample = Sample{true, clock, Draw(w)};
    }
    return sample;
  }

  // A partial Fisher-Yates shuffle of the eligible workers (id order), keeping the first
  // beta. The index is generator() % bound rather than a std distribution, whose output is
  // implementation-defined: the same seed gives the same samples with every standard
  // library. The modulo bias is below num_workers / 2^64.
  std::vector<WorkerId> Draw(WorkerId w) {
    std::vector<WorkerId> eligible;
    for (WorkerId v = 0; v < clocks_.num_workers(); ++v) {
      if (v != w && clocks_.active(v)) eligible.push_back(v);
    }
    const size_t size = eligible.size();
    if (static_cast<size_t>(beta_) < size) {
      for (size_t i = 0; i < static_cast<size_t>(beta_); ++i) {
        const size_t j = i + static_cast<size_t>(generator_() % (size - i));
        std::swap(eligible[i], eligible[j]);
      }
      eligible.resize(static_cast<size_t>(beta_));
      std::sort(eligible.begin(), eligible.end());
    }
    return eligible;
  }

  WorkerClocks clocks_;
  const int beta_;
  const Tick staleness_;
  std::mt19937_64 generator_;
  std::vector<Sample> samples_;  // by reader: the sample of its latest read
};

}  // namespace

namespace internal {

PolicyDef PspGatePolicy() {
  return {
      .name = "psp",
      .kind = KindOf(GateSpec::Kind::kPsp),
      .help = "probabilistic synchronous parallel (Wang et al. 2017): SSP(s) checked against "
              "beta sampled other workers",
      .params = {{.key = "beta",
                  .help = "the number of workers sampled",
                  .max = std::numeric_limits<int>::max(),
                  .range_note = "it counts workers",
                  .required = true,
                  .example = "2",
                  .binding = Field(&GateSpec::beta, "beta")},
                 {.key = "s",
                  .help = "the staleness bound",
                  .default_value = kUnbounded,
                  .required = true,
                  .example = "1",
                  .binding = Field(&GateSpec::staleness, "staleness")},
                 {.key = "seed",
                  .type = ParamDef::Type::kUnsigned,
                  .help = "seed of the sampler (decisions are deterministic per seed)",
                  .default_value = uint64_t{0},
                  .binding = Field(&GateSpec::seed, "seed")}},
      .presets = {{"psp", "gate=psp", Seam::kGate, "PSP, every push applied at once"}},
      .make = GateFactory([](const PolicySpec& spec, int num_workers) -> std::unique_ptr<Gate> {
        return std::make_unique<PspGate>(spec.gate, num_workers);
      }),
  };
}

}  // namespace internal
}  // namespace kairos::policy
