// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos::PaceModel: how long each iteration of each worker computes, for testbeds that run
// a heterogeneous cluster on one machine (docs/lab.md). A paced worker computes its real
// gradient and then waits until the iteration's compute phase has lasted
//
//     IterationTime(rank, k) = iteration_time * slowdown[rank] * jitter(rank, k)
//                              * (straggler_factor if straggles(rank, k) else 1)
//
// where jitter is a shifted exponential (jitter_shift + Exp(mean jitter_mean)) and a
// transient straggler hits each iteration with probability straggler_prob. Both draws of
// iteration k of worker `rank` come from one reproducible stream keyed by (seed, rank, k),
// the stream the simulator draws from (docs/simulator.md): iteration k of worker w lasts the
// same under every policy, in every run with that seed, and in the simulator.
//
//   kairos::PaceOptions pace;
//   pace.iteration_time = absl::Milliseconds(20);
//   pace.slowdown = {1, 1, 1, 4};                 // the last rank is four times slower
//   KAIROS_ASSIGN_OR_RETURN(kairos::PaceModel model, kairos::PaceModel::Create(pace));
//   absl::Duration target = model.IterationTime(rank, iteration);
//
// Thread-safety: a PaceModel is immutable; any thread may call it.

#ifndef KAIROS_PACE_H_
#define KAIROS_PACE_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kairos/export.h"

namespace kairos {

struct PaceOptions {
  // The compute phase of an iteration of a worker of slowdown 1, before jitter and
  // stragglers. >= 0; zero makes IterationTime zero (no pacing) while Factor still holds.
  absl::Duration iteration_time = absl::ZeroDuration();
  // Per-rank multiplier of iteration_time (4 = four times slower), each > 0 and finite.
  // Ranks past its end are 1.
  std::vector<double> slowdown;
  // Jitter, a shifted exponential: jitter_shift + Exp(mean jitter_mean), drawn per
  // iteration. jitter_shift > 0, jitter_mean >= 0 (0: no jitter).
  double jitter_shift = 1.0;
  double jitter_mean = 0.0;
  // Transient stragglers: an iteration is straggler_factor times longer with probability
  // straggler_prob. 0 <= straggler_prob <= 1, straggler_factor >= 1.
  double straggler_prob = 0.0;
  double straggler_factor = 5.0;
  // Keys the draws (with the rank and the iteration).
  uint64_t seed = 1;
};

// OK iff every field is in its documented range; InvalidArgument names the first that is
// not ("pace: slowdown[3] must be a finite number > 0, got 0").
KAIROS_EXPORT absl::Status ValidatePaceOptions(const PaceOptions& options);

class KAIROS_EXPORT PaceModel {
 public:
  // InvalidArgument as ValidatePaceOptions.
  static absl::StatusOr<PaceModel> Create(PaceOptions options);

  // slowdown[rank] * jitter * straggler of iteration `iteration` (0-based) of `rank`.
  // REQUIRES: rank >= 0, iteration >= 0.
  double Factor(int rank, int64_t iteration) const;
  // Whether that iteration is a transient straggler's.
  bool Straggles(int rank, int64_t iteration) const;
  // iteration_time * Factor(rank, iteration), rounded to a nanosecond.
  absl::Duration IterationTime(int rank, int64_t iteration) const;
  // The mean of IterationTime over iterations: iteration_time * slowdown[rank] *
  // (jitter_shift + jitter_mean) * (1 + straggler_prob * (straggler_factor - 1)).
  absl::Duration MeanIterationTime(int rank) const;

  const PaceOptions& options() const { return options_; }

 private:
  struct Draw {
    double jitter;
    bool straggles;
  };
  explicit PaceModel(PaceOptions options) : options_(std::move(options)) {}
  Draw DrawFor(int rank, int64_t iteration) const;
  double Slowdown(int rank) const;

  PaceOptions options_;
};

}  // namespace kairos

#endif  // KAIROS_PACE_H_
