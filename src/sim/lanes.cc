// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "sim/lanes.h"

#include <cstdint>
#include <cstdlib>
#include <optional>

namespace kairos::sim {

bool Lanes::Submit(uint64_t id, int lane) {
  const auto [it, idle] = waiting_.try_emplace(lane);
  if (!idle) {
    it->second.push_back(id);
    return false;
  }
  if (!lane_of_.emplace(id, lane).second) std::abort();  // submitted twice
  return true;
}

std::optional<uint64_t> Lanes::End(uint64_t id) {
  const auto job = lane_of_.find(id);
  if (job == lane_of_.end()) std::abort();  // ended without running
  const int lane = job->second;
  lane_of_.erase(job);
  const auto it = waiting_.find(lane);
  if (it->second.empty()) {
    waiting_.erase(it);
    return std::nullopt;
  }
  const uint64_t next = it->second.front();
  it->second.pop_front();
  lane_of_.emplace(next, lane);
  return next;
}

}  // namespace kairos::sim
