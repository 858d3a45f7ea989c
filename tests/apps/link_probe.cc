// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A worker that measures its links, for the shaped-links test (tests/apps/shaped_links_test.sh,
// docs/lab.md): the round trip of a one-value pull, then the time of whole pulls of a large
// table. Each worker prints
//
//   probe rank R rtt_ms MIN MEDIAN
//   probe rank R pull BYTES SECONDS       (one line per pull)
//   probe rank R pulls K seconds SECONDS  (all K pulls, from the first one's start)
//
// and "probe rank R done". Under BSP every worker pulls at the same clock, so the pulls of
// several workers meet at the server's link.
//
//   link_probe [--mib M] [--pulls K] [--pings P]

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "kairos/kairos.h"
#include "kairos/run.h"

int main(int argc, char** argv) {
  int mib = 32;
  int pulls = 3;
  int pings = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--mib") mib = std::atoi(argv[i + 1]);
    if (flag == "--pulls") pulls = std::atoi(argv[i + 1]);
    if (flag == "--pings") pings = std::atoi(argv[i + 1]);
  }
  const uint64_t big = static_cast<uint64_t>(mib) << 18;  // floats: 4 bytes each
  kairos::ClusterOptions options;
  options.job.policy = "bsp";
  options.job.tables.push_back({"big", big, kairos::Initializer::Zeros(), {"sgd", 0.01f}});
  options.job.tables.push_back({"one", 1, kairos::Initializer::Zeros(), {"sgd", 0.01f}});
  absl::Status s = kairos::RunWorkers(options, [&](kairos::Worker& w) -> absl::Status {
    std::vector<float> one(1);
    std::vector<float> values(big);
    KAIROS_RETURN_IF_ERROR(w.Pull("one", one));  // the connections are up
    std::vector<double> rtt_ms;
    for (int i = 0; i < pings; ++i) {
      const absl::Time start = absl::Now();
      KAIROS_RETURN_IF_ERROR(w.Pull("one", one));
      rtt_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
    }
    if (!rtt_ms.empty()) {
      std::sort(rtt_ms.begin(), rtt_ms.end());
      std::printf("probe rank %d rtt_ms %.3f %.3f\n", w.rank(), rtt_ms.front(),
                  rtt_ms[rtt_ms.size() / 2]);
    }
    const absl::Time first = absl::Now();
    for (int i = 0; i < pulls; ++i) {
      KAIROS_RETURN_IF_ERROR(w.AdvanceClock());  // every worker's pull i starts at the same clock
      const absl::Time start = absl::Now();
      KAIROS_RETURN_IF_ERROR(w.Pull("big", values));
      std::printf("probe rank %d pull %llu %.4f\n", w.rank(),
                  static_cast<unsigned long long>(big * sizeof(float)),
                  absl::ToDoubleSeconds(absl::Now() - start));
      std::fflush(stdout);
    }
    std::printf("probe rank %d pulls %d seconds %.4f\n", w.rank(), pulls,
                absl::ToDoubleSeconds(absl::Now() - first));
    std::printf("probe rank %d done\n", w.rank());
    std::fflush(stdout);
    return absl::OkStatus();
  });
  if (!s.ok()) {
    std::fprintf(stderr, "link_probe: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
