// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The server-side optimizers and learning-rate schedules through a whole cluster: one
// worker pushes known gradients for a few iterations over two servers (tables cut into
// several chunks per shard), and the values it pulls are compared with a reference written
// from PyTorch's formulas (tests/engine/optimizer_reference.h). Also: a job whose updater
// no server knows fails at start with the server's error.

#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "tests/common/param_name.h"
#include "tests/engine/optimizer_reference.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kSize = 100;
constexpr int kIterations = 6;

float Gradient(int iteration, uint64_t i) {
  return std::sin(0.37f * static_cast<float>(i) + 1.3f * static_cast<float>(iteration)) +
         0.1f * static_cast<float>(iteration % 3);
}

ClusterOptions Options(const std::string& policy, const UpdaterSpec& updater) {
  ClusterOptions o;
  o.num_servers = 2;
  o.num_workers = 1;
  o.job.policy = policy;
  o.job.chunk_elements = 16;  // several chunks per shard
  o.job.tables.push_back({"w", kSize, Initializer::Zeros(), updater});
  o.worker.request_timeout = absl::Seconds(30);
  return o;
}

// Runs kIterations of push(gradient), clock on one worker and returns the pulled values.
absl::StatusOr<std::vector<float>> Train(const ClusterOptions& o) {
  auto cluster = LocalCluster::Create(o);
  if (!cluster.ok()) return cluster.status();
  std::vector<float> params(kSize);
  absl::Status s = (*cluster)->Run([&](Worker& w) -> absl::Status {
    std::vector<float> grad(kSize);
    for (int t = 0; t < kIterations; ++t) {
      for (uint64_t i = 0; i < kSize; ++i) grad[i] = Gradient(t, i);
      KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
      KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
    }
    return w.Pull("w", params);
  });
  if (!s.ok()) return s;
  return params;
}

struct Case {
  std::string spec;
  std::string kind;
  reference::RefParams params;
};

class OptimizerClusterTest : public ::testing::TestWithParam<std::tuple<std::string, Case>> {};

TEST_P(OptimizerClusterTest, PulledValuesMatchTheReference) {
  const std::string policy = std::get<0>(GetParam());
  const Case c = std::get<1>(GetParam());
  constexpr float kLr = 0.05f;
  // With one worker every update has gradient_scale 1 (a round of one push) and
  // step_scale 1 (no weighting); its step is the iteration's number, 1-based.
  absl::StatusOr<std::vector<float>> got = Train(Options(policy, {c.spec, kLr}));
  ASSERT_TRUE(got.ok()) << got.status();
  const reference::RefStep ref = reference::Reference(c.kind, c.params);
  for (uint64_t i = 0; i < kSize; ++i) {
    double w = 0;
    std::vector<double> s(2, 0.0);
    for (int t = 0; t < kIterations; ++t) ref(w, s, Gradient(t, i), kLr, t + 1);
    ASSERT_NEAR((*got)[i], w, 1e-5 * (1 + std::abs(w))) << c.spec << " element " << i;
  }
}

std::vector<Case> Cases() {
  reference::RefParams adamw;
  adamw.wd = 0.01;
  reference::RefParams mom;
  mom.mu = 0.95;
  mom.wd = 1e-2;
  reference::RefParams ada;
  ada.eps = 1e-10;
  reference::RefParams adam;
  adam.beta1 = 0.8;
  adam.eps = 1e-7;
  adam.wd = 0.1;
  return {{"sgd", "sgd", {}},           {"momentum:mu=0.95,wd=1e-2", "momentum", mom},
          {"nesterov", "nesterov", {}}, {"adagrad", "adagrad", ada},
          {"adam", "adam", {}},         {"adam:beta1=0.8,eps=1e-7,wd=0.1", "adam", adam},
          {"adamw", "adamw", adamw},    {"add", "add", {}}};
}

INSTANTIATE_TEST_SUITE_P(Optimizers, OptimizerClusterTest,
                         ::testing::Combine(::testing::Values("bsp", "asp"),
                                            ::testing::ValuesIn(Cases())),
                         [](const auto& info) {
                           return testing::ParamName(std::get<0>(info.param) + "_" +
                                                     std::get<1>(info.param).spec);
                         });

// The schedule's t is the worker's clock (a push on its own) or the round (a round's sum):
// either way the user's iteration. Exact: lr 0.5, g = 1, factors 1, 1, 0.5, 0.5, 0.25, 0.25.
TEST(ScheduleClusterTest, StepScheduleCountsTheWorkersIterations) {
  for (const std::string policy : {"bsp", "asp"}) {
    ClusterOptions o = Options(policy, {"sgd", 0.5f, "step:every=2,gamma=0.5"});
    auto cluster = LocalCluster::Create(o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    std::vector<std::vector<float>> seen;
    absl::Status s = (*cluster)->Run([&](Worker& w) -> absl::Status {
      const std::vector<float> ones(kSize, 1.0f);
      std::vector<float> params(kSize);
      for (int t = 0; t < kIterations; ++t) {
        KAIROS_RETURN_IF_ERROR(w.Push("w", ones));
        KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
        KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
        seen.push_back(params);
      }
      return absl::OkStatus();
    });
    ASSERT_TRUE(s.ok()) << s;
    const std::vector<float> expected = {-0.5f, -1.0f, -1.25f, -1.5f, -1.625f, -1.75f};
    for (int t = 0; t < kIterations; ++t) {
      for (uint64_t i = 0; i < kSize; ++i) {
        ASSERT_EQ(seen[t][i], expected[t]) << policy << " iteration " << t << " element " << i;
      }
    }
  }
}

// Servers decide which updaters exist: one they cannot build fails the job at start, and
// the worker's Create (here LocalCluster::Create) returns the server's error.
TEST(OptimizerClusterTest, UnknownOptimizerFailsTheStartWithTheServersError) {
  auto cluster = LocalCluster::Create(Options("bsp", {"lion", 0.1f}));
  ASSERT_FALSE(cluster.ok());
  // LocalCluster::Create reports what Worker::Create returned ("worker 0: ...").
  EXPECT_THAT(cluster.status().message(), HasSubstr("worker 0: server "));
  EXPECT_THAT(cluster.status().message(),
              HasSubstr("could not start: table 'w': unknown optimizer 'lion'; built in: sgd"));
}

}  // namespace
}  // namespace kairos
