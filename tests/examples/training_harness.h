// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// What the examples' training tests share: the LocalCluster they train on, and hooks that
// collect the trainers' records (the examples' Trainer::Hooks) from every worker's thread.

#ifndef KAIROS_TESTS_EXAMPLES_TRAINING_HARNESS_H_
#define KAIROS_TESTS_EXAMPLES_TRAINING_HARNESS_H_

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "kairos/kairos.h"

namespace kairos::testing {

// Two servers and `workers` workers under `policy`; a request may take 60 s.
inline ClusterOptions TrainingCluster(int workers, const std::string& policy) {
  ClusterOptions options;
  options.num_servers = 2;
  options.num_workers = workers;
  options.job.policy = policy;
  options.worker.request_timeout = absl::Seconds(60);
  return options;
}

// A hook that appends each record to `out`, holding `mu` (several workers' threads call a
// trainer's hooks at once).
template <typename Record>
std::function<void(const Record &)> AppendTo(std::mutex &mu, std::vector<Record> &out) {
  return [&mu, &out](const Record &r) {
    std::lock_guard<std::mutex> lock(mu);
    out.push_back(r);
  };
}

}  // namespace kairos::testing

#endif  // KAIROS_TESTS_EXAMPLES_TRAINING_HARNESS_H_
