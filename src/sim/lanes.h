// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Lanes: the server's threads as the simulation sees them. A lane (a shard's thread) runs
// one job at a time, in the order its jobs became ready, each from its start to its end.
//
// It knows no time: the simulation submits a job when it becomes ready, starts what Submit
// or End says starts (at that moment), and calls End at the job's end. A job is placed when
// it is ready, never ahead, so a job that becomes ready later never finds its lane taken by
// one placed in advance.
//
// Thread-safety: none; one simulation owns it.

#ifndef KAIROS_SIM_LANES_H_
#define KAIROS_SIM_LANES_H_

#include <cstdint>
#include <deque>
#include <optional>

#include "absl/container/flat_hash_map.h"

namespace kairos::sim {

class Lanes {
 public:
  // Job `id` (not submitted before) of lane `lane` is ready: true if it starts now (its lane
  // has no job), else it waits behind the lane's others.
  bool Submit(uint64_t id, int lane);
  // Job `id`, started, ends now. Returns the job of its lane that starts now, if any.
  std::optional<uint64_t> End(uint64_t id);
  // Whether `lane` has no job, running or waiting.
  bool Idle(int lane) const { return !waiting_.contains(lane); }

 private:
  // Per lane that has a job running, the jobs waiting behind it, in the order they became
  // ready.
  absl::flat_hash_map<int, std::deque<uint64_t>> waiting_;
  absl::flat_hash_map<uint64_t, int> lane_of_;  // each running job's lane
};

}  // namespace kairos::sim

#endif  // KAIROS_SIM_LANES_H_
