// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the models: gradients against central finite differences of the loss, the
// quadratic's solved optimum, and the Fashion-MNIST chooser's synthetic fallback.

#include "sim/model.h"

#include <memory>
#include <numeric>
#include <vector>

#include <Eigen/Core>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "sim/dataset.h"

namespace kairos::sim {
namespace {

std::vector<int> AllRows(int n) {
  std::vector<int> rows(static_cast<size_t>(n));
  std::iota(rows.begin(), rows.end(), 0);
  return rows;
}

// Checks model.Gradient over every training example against central differences of
// model.Evaluate (which must then be the mean loss over the same examples).
void ExpectGradientMatchesFiniteDifferences(const Model& model, const Eigen::VectorXf& at) {
  Eigen::VectorXf gradient;
  model.Gradient(at, AllRows(model.num_examples()), &gradient);
  ASSERT_EQ(gradient.size(), model.num_params());
  const float h = 1e-2f;
  for (int i = 0; i < model.num_params(); i += std::max(1, model.num_params() / 17)) {
    Eigen::VectorXf plus = at;
    Eigen::VectorXf minus = at;
    plus(i) += h;
    minus(i) -= h;
    const double numeric = (model.Evaluate(plus).loss - model.Evaluate(minus).loss) / (2 * h);
    EXPECT_NEAR(gradient(i), numeric, 2e-3 * (1 + std::abs(numeric))) << "parameter " << i;
  }
}

TEST(QuadraticModelTest, GradientMatchesFiniteDifferences) {
  absl::StatusOr<std::shared_ptr<const Model>> model =
      MakeQuadraticModel({.dim = 6, .num_examples = 40, .seed = 3});
  ASSERT_TRUE(model.ok()) << model.status();
  Eigen::VectorXf at = Eigen::VectorXf::LinSpaced(6, -1.0f, 1.0f);
  ExpectGradientMatchesFiniteDifferences(**model, at);
}

TEST(QuadraticModelTest, OptimalLossIsBelowEveryOtherPointAndZeroWithoutNoise) {
  absl::StatusOr<std::shared_ptr<const Model>> noisy =
      MakeQuadraticModel({.dim = 8, .num_examples = 64, .noise = 0.5});
  ASSERT_TRUE(noisy.ok());
  EXPECT_GT((*noisy)->optimal_loss(), 0.0);
  EXPECT_LT((*noisy)->optimal_loss(), (*noisy)->Evaluate((*noisy)->InitialParams()).loss);
  absl::StatusOr<std::shared_ptr<const Model>> exact =
      MakeQuadraticModel({.dim = 8, .num_examples = 64, .noise = 0.0});
  ASSERT_TRUE(exact.ok());
  EXPECT_NEAR((*exact)->optimal_loss(), 0.0, 1e-9);
}

TEST(QuadraticModelTest, DescribesItselfAndHasNoAccuracy) {
  absl::StatusOr<std::shared_ptr<const Model>> model =
      MakeQuadraticModel({.dim = 5, .num_examples = 10});
  ASSERT_TRUE(model.ok());
  EXPECT_EQ((*model)->name(), "quadratic(d=5,n=10)");
  EXPECT_EQ((*model)->num_params(), 5);
  EXPECT_EQ((*model)->num_examples(), 10);
  EXPECT_FALSE((*model)->has_accuracy());
  EXPECT_EQ((*model)->InitialParams(), Eigen::VectorXf::Zero(5));
}

TEST(QuadraticModelTest, RejectsBadOptions) {
  EXPECT_TRUE(absl::IsInvalidArgument(MakeQuadraticModel({.dim = 0}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(MakeQuadraticModel({.dim = 8, .num_examples = 4}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(MakeQuadraticModel({.condition = 0.5}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(MakeQuadraticModel({.noise = -1}).status()));
}

// Clusters whose test split is the training split, so that Evaluate's loss is the mean
// loss over the examples Gradient sees.
DataSplit SameTrainAndTest(int classes, int features, int n) {
  absl::StatusOr<DataSplit> data = MakeGaussianClusters(
      {.num_classes = classes, .num_features = features, .num_train = n, .num_test = 1});
  data->test = data->train;
  return *std::move(data);
}

TEST(SoftmaxModelTest, GradientMatchesFiniteDifferences) {
  absl::StatusOr<std::shared_ptr<const Model>> model =
      MakeSoftmaxModel(SameTrainAndTest(3, 4, 30), {.l2 = 0.1, .max_eval_examples = 1000});
  ASSERT_TRUE(model.ok()) << model.status();
  Eigen::VectorXf at(15);
  for (int i = 0; i < 15; ++i) at(i) = 0.1f * static_cast<float>((i * 7) % 5 - 2);
  ExpectGradientMatchesFiniteDifferences(**model, at);
}

TEST(SoftmaxModelTest, StartsAtLogClassesLossAndReportsAccuracy) {
  absl::StatusOr<std::shared_ptr<const Model>> model =
      MakeSoftmaxModel(SameTrainAndTest(4, 3, 50), {});
  ASSERT_TRUE(model.ok());
  EXPECT_TRUE((*model)->has_accuracy());
  EXPECT_EQ((*model)->num_params(), 4 * 3 + 4);
  const Evaluation e = (*model)->Evaluate((*model)->InitialParams());
  EXPECT_NEAR(e.loss, std::log(4.0), 1e-9);
  EXPECT_GE(e.accuracy, 0.0);
  EXPECT_LE(e.accuracy, 1.0);
}

TEST(SoftmaxModelTest, RejectsMismatchedSplits) {
  DataSplit data = SameTrainAndTest(3, 4, 10);
  data.test.features.resize(1, 5);
  EXPECT_TRUE(absl::IsInvalidArgument(MakeSoftmaxModel(std::move(data), {}).status()));
}

TEST(FashionModelTest, FallsBackToClustersWhenTheFilesAreMissing) {
  FashionOptions o;
  o.dir = ::testing::TempDir() + "/no-fashion-here";
  o.fallback.num_train = 64;
  o.fallback.num_test = 16;
  absl::StatusOr<std::shared_ptr<const Model>> model = MakeFashionModel(o);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->name(), "softmax(gaussian-clusters,784x10)");
  EXPECT_EQ((*model)->num_examples(), 64);
}

}  // namespace
}  // namespace kairos::sim
