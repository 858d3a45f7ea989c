// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "sim/host.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/time/time.h"

namespace kairos::sim {
namespace {

// Work left at or below this is done: the slack for rounding the times to whole
// nanoseconds, far below any cost the simulation models. NextEnd aims at half of it.
constexpr double kDoneNs = 1e-3;

}  // namespace

Host::Host(double cores, double background, bool run_to_completion)
    : cores_(cores),
      background_(background),
      slots_(run_to_completion ? static_cast<size_t>(std::max(1.0, std::floor(cores))) : SIZE_MAX) {
  if (!(cores > 0.0 && std::isfinite(cores) && background >= 0.0 && std::isfinite(background))) {
    std::abort();
  }
}

double Host::Rate() const {
  return std::min(1.0, cores_ / (static_cast<double>(left_ns_.size()) + background_));
}

uint64_t Host::Add(absl::Duration work, absl::Time now) {
  if (work < absl::ZeroDuration() || work == absl::InfiniteDuration()) std::abort();
  Advance(now);  // the jobs running so far advanced at the old rate up to now
  const uint64_t id = next_id_++;
  if (left_ns_.size() < slots_) {
    left_ns_.emplace(id, absl::ToDoubleNanoseconds(work));
  } else {
    waiting_.emplace_back(id, absl::ToDoubleNanoseconds(work));
  }
  ++version_;
  return id;
}

absl::Time Host::NextEnd() const { return ended_.empty() ? RunningEnd() : last_; }

absl::Time Host::RunningEnd() const {
  if (left_ns_.empty()) return absl::InfiniteFuture();
  double least = left_ns_.begin()->second;
  for (const auto& [id, left] : left_ns_) least = std::min(least, left);
  const double ns = std::ceil(std::max(0.0, least - kDoneNs / 2) / Rate());
  return last_ + absl::Nanoseconds(static_cast<int64_t>(ns));
}

void Host::Advance(absl::Time now) {
  if (last_ != absl::InfinitePast() && (now < last_ || now > RunningEnd())) std::abort();
  if (left_ns_.empty()) {
    last_ = now;
    return;
  }
  const double progress = absl::ToDoubleNanoseconds(now - last_) * Rate();
  last_ = now;
  const size_t before = ended_.size();
  for (auto it = left_ns_.begin(); it != left_ns_.end();) {
    it->second -= progress;
    if (it->second <= kDoneNs) {
      ended_.push_back(it->first);
      it = left_ns_.erase(it);
    } else {
      ++it;
    }
  }
  if (ended_.size() == before) return;
  ++version_;
  // The cores the ended jobs freed take the jobs that waited longest, from now.
  while (left_ns_.size() < slots_ && !waiting_.empty()) {
    left_ns_.insert(waiting_.front());
    waiting_.pop_front();
  }
}

std::vector<uint64_t> Host::TakeEnded() { return std::exchange(ended_, {}); }

}  // namespace kairos::sim
