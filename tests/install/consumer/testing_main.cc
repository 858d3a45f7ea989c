// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The install test's second consumer: a program's own test built on the installed
// kairos::testing target. A BSP job of one server (keeping an update log) and two workers
// runs on a FaultyNetwork that delays every PUSH and on a FaultyEnv that counts the update
// log's writes; the values must still be exact (every element of "w" goes from 0 to -1), and
// both must have seen the job. Then the time seam: a ManualEnv stands still until moved.
// Prints "consumer testing ok" and exits 0 on success.

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "kairos/kairos.h"
#include "kairos/testing/faulty_env.h"
#include "kairos/testing/faulty_network.h"
#include "kairos/testing/manual_env.h"

namespace {

constexpr int kTableSize = 8;

int Fail(const std::string& what) {
  std::fprintf(stderr, "consumer testing: %s\n", what.c_str());
  return 1;
}

absl::Status Train(kairos::Worker& worker) {
  std::vector<float> params(kTableSize);
  const std::vector<float> ones(kTableSize, 1.0f);
  KAIROS_RETURN_IF_ERROR(worker.Push("w", ones));
  KAIROS_RETURN_IF_ERROR(worker.AdvanceClock());
  KAIROS_RETURN_IF_ERROR(worker.Pull("w", params));
  for (int i = 0; i < kTableSize; ++i) {
    if (params[i] != -1.0f) return absl::InternalError("w[" + std::to_string(i) + "] is not -1");
  }
  return absl::OkStatus();
}

}  // namespace

int main() {
  char dir_template[] = "/tmp/kairos-consumer-XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) return Fail("mkdtemp failed");
  const std::string dir = dir_template;

  kairos::testing::NetworkFaultPlan plan;
  plan.faults.push_back({.action = kairos::testing::FaultAction::kDelay,
                         .kinds = {"PUSH"},
                         .direction = kairos::testing::FaultDirection::kSend,
                         .delay = absl::Milliseconds(20)});
  absl::StatusOr<std::unique_ptr<kairos::testing::FaultyNetwork>> net =
      kairos::testing::FaultyNetwork::Create(plan);
  if (!net.ok()) return Fail(net.status().ToString());
  auto env = std::make_shared<kairos::testing::FaultyEnv>();

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
  options.server.state_dir = dir;
  options.env = env;
  options.transport_factory = (*net)->factory();
  options.worker.log_level = kairos::LogLevel::kError;
  options.server.log_level = kairos::LogLevel::kError;
  options.coordinator.log_level = kairos::LogLevel::kError;

  absl::StatusOr<std::unique_ptr<kairos::LocalCluster>> cluster =
      kairos::LocalCluster::Create(options);
  if (!cluster.ok()) return Fail(cluster.status().ToString());
  const absl::Status trained = (*cluster)->Run(Train);
  if (!trained.ok()) return Fail(trained.ToString());
  if (absl::Status s = (*cluster)->Shutdown(); !s.ok()) return Fail(s.ToString());
  std::system(("rm -rf " + dir).c_str());

  if ((*net)->Count(kairos::testing::FaultAction::kDelay, "PUSH") < 2) {
    return Fail("the network delayed no PUSH: " + (*net)->Summary());
  }
  if (env->calls(kairos::testing::FileOp::kAppend) == 0) {
    return Fail("the update log was not written through the FaultyEnv");
  }

  kairos::testing::ManualEnv time(absl::FromUnixSeconds(100));
  time.Advance(absl::Seconds(5));
  if (time.Now() != absl::FromUnixSeconds(105) || !time.IsVirtual()) {
    return Fail("ManualEnv did not move by exactly 5 s");
  }
  std::printf("consumer testing ok\n");
  return 0;
}
