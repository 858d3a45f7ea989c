// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The pace model (kairos/pace.h).

#include "kairos/pace.h"

#include <cmath>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/random.h"

namespace kairos {
namespace {

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("pace: ", what));
}

}  // namespace

absl::Status ValidatePaceOptions(const PaceOptions& o) {
  if (o.iteration_time < absl::ZeroDuration() || o.iteration_time == absl::InfiniteDuration()) {
    return Bad(absl::StrCat("iteration_time must be a finite duration >= 0, got ",
                            absl::FormatDuration(o.iteration_time)));
  }
  for (size_t i = 0; i < o.slowdown.size(); ++i) {
    if (!(o.slowdown[i] > 0.0) || !std::isfinite(o.slowdown[i])) {
      return Bad(
          absl::StrCat("slowdown[", i, "] must be a finite number > 0, got ", o.slowdown[i]));
    }
  }
  if (!(o.jitter_shift > 0.0) || !std::isfinite(o.jitter_shift)) {
    return Bad(absl::StrCat("jitter_shift must be a finite number > 0, got ", o.jitter_shift));
  }
  if (!(o.jitter_mean >= 0.0) || !std::isfinite(o.jitter_mean)) {
    return Bad(absl::StrCat("jitter_mean must be a finite number >= 0, got ", o.jitter_mean));
  }
  if (!(o.straggler_prob >= 0.0 && o.straggler_prob <= 1.0)) {
    return Bad(absl::StrCat("straggler_prob must be in [0, 1], got ", o.straggler_prob));
  }
  if (!(o.straggler_factor >= 1.0) || !std::isfinite(o.straggler_factor)) {
    return Bad(
        absl::StrCat("straggler_factor must be a finite number >= 1, got ", o.straggler_factor));
  }
  return absl::OkStatus();
}

absl::StatusOr<PaceModel> PaceModel::Create(PaceOptions options) {
  if (absl::Status s = ValidatePaceOptions(options); !s.ok()) return s;
  return PaceModel(std::move(options));
}

PaceModel::Draw PaceModel::DrawFor(int rank, int64_t iteration) const {
  // One stream per (seed, rank, iteration): the jitter's word first, then the straggler's,
  // drawn even when unused so that a setting never shifts another's draw.
  internal::Rng rng(internal::StreamSeed(options_.seed, internal::kTimingStream,
                                         static_cast<uint64_t>(rank),
                                         static_cast<uint64_t>(iteration)));
  Draw d;
  d.jitter = options_.jitter_shift + rng.Exponential(options_.jitter_mean);
  d.straggles = rng.Bernoulli(options_.straggler_prob);
  return d;
}

double PaceModel::Slowdown(int rank) const {
  const auto r = static_cast<size_t>(rank);
  return r < options_.slowdown.size() ? options_.slowdown[r] : 1.0;
}

double PaceModel::Factor(int rank, int64_t iteration) const {
  const Draw d = DrawFor(rank, iteration);
  return Slowdown(rank) * d.jitter * (d.straggles ? options_.straggler_factor : 1.0);
}

bool PaceModel::Straggles(int rank, int64_t iteration) const {
  return DrawFor(rank, iteration).straggles;
}

absl::Duration PaceModel::IterationTime(int rank, int64_t iteration) const {
  return absl::Nanoseconds(
      std::llround(absl::ToDoubleNanoseconds(options_.iteration_time) * Factor(rank, iteration)));
}

absl::Duration PaceModel::MeanIterationTime(int rank) const {
  const double mean = Slowdown(rank) * (options_.jitter_shift + options_.jitter_mean) *
                      (1.0 + options_.straggler_prob * (options_.straggler_factor - 1.0));
  return options_.iteration_time * mean;
}

}  // namespace kairos
