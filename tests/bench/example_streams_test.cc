// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_policy_sim --example-streams (bench/example_streams.h): the example's initial
// tables in the simulator's MLP layout, element for element, and a simulated run on the
// example's batches from those tables, checked against the steps replayed by hand.

#include "bench/example_streams.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "engine/initializer.h"
#include "fashion_mnist/streams.h"
#include "gtest/gtest.h"
#include "sim/dataset.h"
#include "sim/model.h"
#include "sim/simulator.h"

namespace kairos::sim {
namespace {

TEST(ExampleStreamsTest, InitialParamsAreTheExamplesTablesInTheSimulatorsLayout) {
  constexpr int kFeatures = 6, kHidden = 4, kClasses = 3;
  const Eigen::VectorXf p = ExampleInitialParams(kFeatures, kHidden, kClasses, 7);
  const fmnist::MlpInitializers init = fmnist::MlpInit(kFeatures, kHidden, kClasses, 7);
  const int w1 = kHidden * kFeatures, w2 = kClasses * kHidden;
  ASSERT_EQ(p.size(), w1 + kHidden + w2 + kClasses);
  for (int i = 0; i < w1; ++i) EXPECT_EQ(p[i], internal::InitialValue(init.w1, i)) << i;
  for (int i = 0; i < kHidden; ++i) EXPECT_EQ(p[w1 + i], 0.0f);
  for (int i = 0; i < w2; ++i) {
    EXPECT_EQ(p[w1 + kHidden + i], internal::InitialValue(init.w2, i)) << i;
  }
  for (int i = 0; i < kClasses; ++i) EXPECT_EQ(p[w1 + kHidden + w2 + i], 0.0f);
  EXPECT_NE(p, ExampleInitialParams(kFeatures, kHidden, kClasses, 8));
  EXPECT_NE(p[0], 0.0f);
}

// One worker under BSP: each step is w -= lr * gradient(w, the example's batch of that
// iteration), from the example's tables.
TEST(ExampleStreamsTest, ARunTakesTheExamplesBatchesFromItsTables) {
  constexpr int kFeatures = 6, kHidden = 4, kClasses = 3, kExamples = 30;
  absl::StatusOr<DataSplit> data = MakeGaussianClusters(
      {.num_classes = kClasses, .num_features = kFeatures, .num_train = kExamples, .num_test = 10});
  ASSERT_TRUE(data.ok()) << data.status();
  absl::StatusOr<std::shared_ptr<const Model>> model =
      MakeMlpModel(*std::move(data), {.hidden = kHidden});
  ASSERT_TRUE(model.ok()) << model.status();
  SimOptions o;
  o.policy = "bsp";
  o.num_workers = 1;
  o.model = *model;
  o.batch_size = 5;
  o.iterations = 9;  // past the first epoch of 6 batches
  o.seed = 3;
  UseExampleStreams(kExamples, kFeatures, kHidden, kClasses, o);
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();

  fmnist::RunBatches batches(kExamples, 1, 5, 3);
  Eigen::VectorXf w = ExampleInitialParams(kFeatures, kHidden, kClasses, 3);
  Eigen::VectorXf g;
  for (int64_t k = 0; k < o.iterations; ++k) {
    (*model)->Gradient(w, batches.Batch(0, k), &g);
    w -= o.learning_rate * g;
  }
  ASSERT_EQ(r->final_params.size(), w.size());
  for (Eigen::Index i = 0; i < w.size(); ++i) {
    EXPECT_NEAR(r->final_params[i], w[i], 1e-6f * (1.0f + std::abs(w[i]))) << i;
  }
  // The positive control: the sampled batches from the model's weights end elsewhere.
  SimOptions sampled = o;
  sampled.batches = nullptr;
  sampled.initial_params.resize(0);
  absl::StatusOr<SimResult> other = Simulate(sampled);
  ASSERT_TRUE(other.ok());
  EXPECT_GT((other->final_params - w).norm(), 1e-3f);
}

}  // namespace
}  // namespace kairos::sim
