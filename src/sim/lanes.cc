// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "sim/lanes.h"

#include <cstdint>
#include <cstdlib>
#include <optional>

namespace kairos::sim {

bool Lanes::Submit(uint64_t id, int lane) {
  const auto [it, first] = lanes_.try_emplace(lane);
  if (!first) {
    it->second.waiting.push_back(id);
    return false;
  }
  it->second.running = id;
  if (!lane_of_.emplace(id, lane).second) std::abort();  // submitted twice
  return true;
}

std::optional<uint64_t> Lanes::End(uint64_t id) {
  const auto job = lane_of_.find(id);
  if (job == lane_of_.end()) std::abort();  // ended without running
  const int lane = job->second;
  lane_of_.erase(job);
  Lane& l = lanes_.at(lane);
  if (l.waiting.empty()) {
    lanes_.erase(lane);
    return std::nullopt;
  }
  l.running = l.waiting.front();
  l.waiting.pop_front();
  lane_of_.emplace(l.running, lane);
  return l.running;
}

}  // namespace kairos::sim
