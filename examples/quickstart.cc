// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The README's example, built with the project so that it cannot rot: minimise
// sum_i (w_i - i)^2 / 2 with BSP; every worker's gradient is w - target.

#include <cstdio>
#include <vector>

#include "kairos/kairos.h"
#include "kairos/run.h"

namespace {

void ComputeGradient(const std::vector<float>& params, std::vector<float>& grad) {
  for (size_t i = 0; i < params.size(); ++i) grad[i] = params[i] - static_cast<float>(i);
}

}  // namespace

int main() {
  kairos::ClusterOptions options;            // 2 servers, 4 workers by default
  options.job.policy = "bsp";
  options.job.tables.push_back({"w", 1000, kairos::Initializer::Zeros(), {"sgd", 0.1f}});
  absl::Status s = kairos::RunWorkers(options, [](kairos::Worker& w) -> absl::Status {
    std::vector<float> params(1000), grad(1000);
    for (int it = 0; it < 100; ++it) {
      KAIROS_RETURN_IF_ERROR(w.Pull("w", params));   // waits as the policy says
      ComputeGradient(params, grad);                  // your model
      KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
      KAIROS_RETURN_IF_ERROR(w.AdvanceClock());  // end of the iteration
    }
    if (w.rank() == 0) std::printf("w[999] = %.3f (target 999)\n", params[999]);
    return absl::OkStatus();
  });
  if (!s.ok()) std::fprintf(stderr, "%s\n", s.ToString().c_str());
  return s.ok() ? 0 : 1;
}
