// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Host: the cores a simulated job's nodes share (HostOptions, simulator.h), as the lab's
// workers and servers share one machine. Processor sharing: the running jobs (each a fixed
// amount of CPU work) advance together, each at min(1, cores / (n + background)) of real
// time with n jobs running, where `background` is the weight of a job that always runs at a
// lower priority (a thread at nice 10 weighs about 0.11): it takes only what the jobs leave,
// and a share of what they would take once they outnumber the cores.
// That is Linux's fair scheduler seen over intervals longer than its time slices.
//
// With run_to_completion, a job runs alone on its core until it is done: at most
// max(1, floor(cores)) run at once (each at the rate above), and the others wait, in the
// order they were added, for one to end. That is the same scheduler seen at the scale of
// jobs shorter than its time slice (0.75 ms or more), which it does not cut: a thread that
// wakes while the cores are busy waits for one of them.
//
// It knows no events: the simulation adds a job when it starts, asks when the next one ends
// (NextEnd), advances the host to that time and takes the jobs that ended (Advance,
// TakeEnded). Any Add or ended job changes the rates, so an end asked for before is stale:
// version() tells.
//
// Thread-safety: none; one simulation owns it.

#ifndef KAIROS_SIM_HOST_H_
#define KAIROS_SIM_HOST_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/time/time.h"

namespace kairos::sim {

class Host {
 public:
  // REQUIRES: cores > 0, background >= 0, both finite.
  Host(double cores, double background, bool run_to_completion = false);

  // Adds a job of `work` (>= 0) CPU time at `now` (Advance(now) first). Returns its id
  // (1, 2, ...).
  uint64_t Add(absl::Duration work, absl::Time now);
  // When the job that ends first ends if no job is added, to the nanosecond above; the last
  // time given if an ended job was not taken; InfiniteFuture if no job runs.
  absl::Time NextEnd() const;
  // Advances to `now`: not before the last time given, not after NextEnd().
  void Advance(absl::Time now);
  // The jobs that ended and were not taken yet, in the order they were added.
  std::vector<uint64_t> TakeEnded();
  // Changes with every Add and with every Advance that ends a job.
  uint64_t version() const { return version_; }
  int running() const { return static_cast<int>(left_ns_.size()); }
  // run_to_completion: the jobs added that wait for a core.
  int waiting() const { return static_cast<int>(waiting_.size()); }
  // The rate each running job advances at now: min(1, cores / (running + background)).
  double Rate() const;

 private:
  // When the running job that ends first ends if no job is added.
  absl::Time RunningEnd() const;

  const double cores_;
  const double background_;
  // run_to_completion: how many jobs run at once; else no limit.
  const size_t slots_;
  absl::Time last_ = absl::InfinitePast();
  absl::btree_map<uint64_t, double> left_ns_;  // per running job, its work left (ns)
  std::deque<std::pair<uint64_t, double>> waiting_;  // run_to_completion: id, work (ns)
  std::vector<uint64_t> ended_;
  uint64_t next_id_ = 1;
  uint64_t version_ = 0;
};

}  // namespace kairos::sim

#endif  // KAIROS_SIM_HOST_H_
