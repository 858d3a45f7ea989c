// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The install test's consumer: uses the installed public API end to end, through both
// libraries (kairos::kairos and kairos::process). Two workers of a
// BSP job each pull, push a gradient of ones and clock; SGD with learning rate 1 applies the
// round's average, so every element of "w" goes from 0 to -1. Prints "consumer ok" and
// exits 0 on success.

#include <cstdio>
#include <string>
#include <vector>

#include "kairos/kairos.h"
#include "kairos/run.h"

namespace {

constexpr int kTableSize = 8;

absl::Status Train(kairos::Worker& worker) {
  std::vector<float> params(kTableSize);
  KAIROS_RETURN_IF_ERROR(worker.Pull("w", params));
  const std::vector<float> ones(kTableSize, 1.0f);
  KAIROS_RETURN_IF_ERROR(worker.Push("w", ones));
  KAIROS_RETURN_IF_ERROR(worker.AdvanceClock());
  KAIROS_RETURN_IF_ERROR(worker.Pull("w", params));
  for (int i = 0; i < kTableSize; ++i) {
    if (params[i] != -1.0f) {
      return absl::InternalError("w[" + std::to_string(i) + "] = " +
                                 std::to_string(params[i]) + ", want -1");
    }
  }
  return absl::OkStatus();
}

}  // namespace

int main() {
  kairos::ClusterOptions options;
  options.num_servers = 1;
  options.num_workers = 2;
  kairos::TableSpec w;
  w.name = "w";
  w.size = kTableSize;
  w.init = kairos::Initializer::Zeros();
  w.updater.name = "sgd";
  w.updater.learning_rate = 1.0f;
  options.job.tables.push_back(w);
  options.job.policy = "bsp";

  options.worker.log_level = kairos::LogLevel::kError;
  // RunWorkers (libkairos_process): started on its own, it runs the job embedded.
  const absl::Status status = kairos::RunWorkers(options, Train);
  if (!status.ok()) {
    std::fprintf(stderr, "RunWorkers: %s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("consumer ok\n");
  return 0;
}
