// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A training program for the multi-host test (tests/apps/netns_test.sh): a worker of a job
// under SSP (s = 1), so no worker runs more than one clock ahead of the slowest. The last
// rank takes --pace-ms per iteration, which paces the whole job; every rank prints
// "rank R iteration T" each 10 iterations, "rank R final V" (element 0 once every worker
// has finished pushing) and "rank R done" at the end, or the error and exits 1.
//
//   paced_training [--iterations N] [--pace-ms MS]

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "kairos/kairos.h"
#include "kairos/run.h"

int main(int argc, char** argv) {
  int iterations = 30;
  int pace_ms = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--iterations") iterations = std::atoi(argv[i + 1]);
    if (flag == "--pace-ms") pace_ms = std::atoi(argv[i + 1]);
  }
  constexpr uint64_t kSize = 64;
  kairos::ClusterOptions options;
  options.job.policy = "ssp:s=1";
  options.job.tables.push_back({"w", kSize, kairos::Initializer::Zeros(), {"sgd", 0.01f}});
  absl::Status s = kairos::RunWorkers(options, [&](kairos::Worker& w) -> absl::Status {
    std::vector<float> params(kSize), grad(kSize, 1.0f);
    const bool paced = w.rank() == w.num_workers() - 1;
    for (int t = 0; t < iterations; ++t) {
      KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
      // The pace of a slow worker (compute time), not a synchronization.
      if (paced) std::this_thread::sleep_for(std::chrono::milliseconds(pace_ms));
      KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
      KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
      if (t % 10 == 0) {
        std::printf("rank %d iteration %d\n", w.rank(), t);
        std::fflush(stdout);
      }
    }
    // Every worker's pushes are in once all have passed the barrier: the final value.
    KAIROS_RETURN_IF_ERROR(w.Barrier());
    KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
    std::printf("rank %d final %.9g\n", w.rank(), params[0]);
    std::printf("rank %d done\n", w.rank());
    std::fflush(stdout);
    return absl::OkStatus();
  });
  if (!s.ok()) {
    std::fprintf(stderr, "paced_training: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
