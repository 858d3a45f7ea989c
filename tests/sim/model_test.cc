// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the models: gradients against central finite differences of the loss, the
// quadratic's solved optimum, and the Fashion-MNIST chooser's synthetic fallback.

#include "sim/model.h"

#include <cmath>
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

TEST(MlpModelTest, GradientMatchesFiniteDifferences) {
  absl::StatusOr<std::shared_ptr<const Model>> model =
      MakeMlpModel(SameTrainAndTest(3, 4, 30), {.hidden = 5, .seed = 3, .max_eval_examples = 1000});
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->num_params(), 5 * 4 + 5 + 3 * 5 + 3);
  ExpectGradientMatchesFiniteDifferences(**model, (*model)->InitialParams());
}

TEST(MlpModelTest, StartsFromGlorotWeightsAndZeroBiases) {
  absl::StatusOr<std::shared_ptr<const Model>> model =
      MakeMlpModel(SameTrainAndTest(10, 20, 40), {.hidden = 30});
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->name(), "mlp(gaussian-clusters,20x30x10)");
  const Eigen::VectorXf p = (*model)->InitialParams();
  EXPECT_EQ(p, (*model)->InitialParams());  // deterministic for the seed
  const Eigen::VectorXf w1 = p.head(30 * 20);
  const Eigen::VectorXf b1 = p.segment(30 * 20, 30);
  const Eigen::VectorXf w2 = p.segment(30 * 20 + 30, 10 * 30);
  const Eigen::VectorXf b2 = p.tail(10);
  EXPECT_LE(w1.cwiseAbs().maxCoeff(), std::sqrt(6.0f / 50));
  EXPECT_GT(w1.cwiseAbs().maxCoeff(), 0.8f * std::sqrt(6.0f / 50));
  EXPECT_LE(w2.cwiseAbs().maxCoeff(), std::sqrt(6.0f / 40));
  EXPECT_EQ(b1, Eigen::VectorXf::Zero(30));
  EXPECT_EQ(b2, Eigen::VectorXf::Zero(10));
  MlpOptions other;
  other.hidden = 30;
  other.seed = 2;
  EXPECT_NE(p, (*MakeMlpModel(SameTrainAndTest(10, 20, 40), other))->InitialParams());
}

TEST(MlpModelTest, RejectsBadOptions) {
  EXPECT_TRUE(absl::IsInvalidArgument(MakeMlpModel(SameTrainAndTest(3, 4, 10), {.hidden = 0})
                                          .status()));
  DataSplit data = SameTrainAndTest(3, 4, 10);
  data.test.features.resize(1, 5);
  EXPECT_TRUE(absl::IsInvalidArgument(MakeMlpModel(std::move(data), {}).status()));
}

TEST(DatasetTest, StandardizeFeaturesUsesTheTrainingStatistics) {
  DataSplit split;
  split.name = "hand";
  split.train.features.resize(2, 2);
  split.train.features << 0, 2, 4, 6;  // mean 3, variance 5
  split.test.features.resize(1, 2);
  split.test.features << 3, 8;
  StandardizeFeatures(split);
  const float sd = std::sqrt(5.0f);
  EXPECT_FLOAT_EQ(split.train.features(0, 0), -3 / sd);
  EXPECT_FLOAT_EQ(split.train.features(1, 1), 3 / sd);
  EXPECT_NEAR(split.test.features(0, 0), 0.0f, 1e-6);
  EXPECT_FLOAT_EQ(split.test.features(0, 1), 5 / sd);
  EXPECT_EQ(split.name, "hand+std");
}

TEST(FashionModelTest, TheMlpOptionBuildsTheMlp) {
  FashionOptions o;
  o.dir = ::testing::TempDir() + "/no-fashion-here";
  o.fallback.num_train = 64;
  o.fallback.num_test = 16;
  o.mlp_hidden = 8;
  o.standardize = true;
  absl::StatusOr<std::shared_ptr<const Model>> model = MakeFashionModel(o);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->name(), "mlp(gaussian-clusters+std,784x8x10)");
  EXPECT_EQ((*model)->num_params(), 8 * 784 + 8 + 10 * 8 + 10);
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
