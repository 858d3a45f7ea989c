// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The Fashion-MNIST example's models: the gradients of softmax regression and of the MLP against
// central finite differences of the loss (in double, from float parameters), the cross-entropy's
// exact values, evaluation, and the tables each model declares.

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "fashion_mnist/models.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fmnist {
namespace {

using ::testing::HasSubstr;

constexpr int kFeatures = 6;
constexpr int kHidden = 5;
constexpr int kBatch = 4;

void Randomize(Model &model, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  for (Eigen::Ref<Eigen::MatrixXf> p : model.parameters()) {
    for (Eigen::Index i = 0; i < p.size(); ++i) p.data()[i] = normal(rng);
  }
}

// Every parameter's gradient against (L(p + h) - L(p - h)) / 2h.
void CheckGradients(const std::string &name) {
  absl::StatusOr<std::unique_ptr<Model>> made = MakeModel(name, kFeatures, kHidden);
  ASSERT_TRUE(made.ok()) << made.status();
  Model &model = **made;
  Randomize(model, 3);
  std::mt19937_64 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Eigen::MatrixXf x(kFeatures, kBatch);
  for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = normal(rng);
  const std::vector<int> y = {3, 0, 9, 3};

  model.Loss(x, y, /*gradient=*/true);
  std::vector<Eigen::MatrixXf> analytic;
  for (const Eigen::Ref<Eigen::MatrixXf> &g : model.gradients()) analytic.emplace_back(g);
  std::vector<Eigen::Ref<Eigen::MatrixXf>> params = model.parameters();
  ASSERT_EQ(params.size(), analytic.size());
  ASSERT_EQ(static_cast<int>(params.size()), model.layout().num_tensors());

  constexpr float kStep = 1e-3f;
  int checked = 0;
  for (size_t t = 0; t < params.size(); ++t) {
    ASSERT_EQ(params[t].rows(), analytic[t].rows());
    ASSERT_EQ(params[t].size(), static_cast<Eigen::Index>(model.layout().tensors()[t].size()));
    for (Eigen::Index i = 0; i < params[t].size(); ++i) {
      float &p = params[t].data()[i];
      const float saved = p;
      p = saved + kStep;
      const double up = model.Loss(x, y, false);
      p = saved - kStep;
      const double down = model.Loss(x, y, false);
      p = saved;
      const double numeric = (up - down) / (2.0 * kStep);
      EXPECT_NEAR(analytic[t].data()[i], numeric, 2e-3 + 2e-2 * std::abs(numeric))
          << name << " tensor " << model.layout().tensors()[t].name << " element " << i;
      ++checked;
    }
  }
  EXPECT_EQ(checked, static_cast<int>(model.layout().total_size()));
}

TEST(ModelsTest, SoftmaxGradientMatchesFiniteDifferences) { CheckGradients("softmax"); }
TEST(ModelsTest, MlpGradientMatchesFiniteDifferences) { CheckGradients("mlp"); }

TEST(ModelsTest, CrossEntropyExactValues) {
  // Equal logits: loss log(10), gradient (1/10 - onehot) / B.
  Eigen::MatrixXf z = Eigen::MatrixXf::Zero(kNumClasses, 2);
  const std::vector<int> y = {1, 7};
  EXPECT_NEAR(SoftmaxCrossEntropy(z, y, true), std::log(10.0f), 1e-6f);
  EXPECT_NEAR(z(0, 0), 0.05f, 1e-7f);
  EXPECT_NEAR(z(1, 0), -0.45f, 1e-7f);
  EXPECT_NEAR(z(7, 1), -0.45f, 1e-7f);
  // Huge logits do not overflow: the label's logit 1000 above the others costs ~0.
  Eigen::MatrixXf big = Eigen::MatrixXf::Constant(kNumClasses, 1, -500.0f);
  big(4, 0) = 500.0f;
  const std::vector<int> four = {4};
  EXPECT_NEAR(SoftmaxCrossEntropy(big, four, false), 0.0f, 1e-6f);
  // The wrong way round: the nine others at -500 and the label at -1500 cost log(9 + e^-1000) +
  // 1000.
  big = Eigen::MatrixXf::Constant(kNumClasses, 1, -500.0f);
  big(4, 0) = -1500.0f;
  EXPECT_NEAR(SoftmaxCrossEntropy(big, four, false), 1000.0f + std::log(9.0f), 1e-3f);
}

TEST(ModelsTest, EvaluateCountsCorrectExamples) {
  // A softmax model that predicts class (first pixel) on one-hot images.
  absl::StatusOr<std::unique_ptr<Model>> made = MakeModel("softmax", kNumClasses, 0);
  ASSERT_TRUE(made.ok());
  Model &model = **made;
  model.parameters()[0] = 10.0f * Eigen::MatrixXf::Identity(kNumClasses, kNumClasses);
  Dataset d;
  d.pixels = PixelMatrix::Zero(kNumClasses, 2500);
  d.scale = 1.0f;
  for (int i = 0; i < 2500; ++i) {
    d.pixels(i % kNumClasses, i) = 1;
    // Every fifth example is labelled wrong.
    d.labels.push_back(i % 5 == 0 ? (i + 1) % kNumClasses : i % kNumClasses);
  }
  const Evaluation e = model.Evaluate(d);
  EXPECT_DOUBLE_EQ(e.accuracy, 0.8);
  EXPECT_GT(e.loss, 0.0);
}

TEST(ModelsTest, DeclaresItsTables) {
  const kairos::UpdaterSpec sgd{"sgd", 0.5f};
  absl::StatusOr<std::unique_ptr<Model>> softmax = MakeModel("softmax", 784, 0);
  ASSERT_TRUE(softmax.ok());
  std::vector<kairos::TableSpec> t = (*softmax)->Tables(sgd, 1);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].name, "softmax");
  EXPECT_EQ(t[0].size, 7850u);
  EXPECT_EQ(t[0].init, kairos::Initializer::Zeros());
  EXPECT_EQ(t[0].updater, sgd);

  absl::StatusOr<std::unique_ptr<Model>> mlp = MakeModel("mlp", 784, 128);
  ASSERT_TRUE(mlp.ok());
  t = (*mlp)->Tables(sgd, 1);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].name, "mlp.W1");
  EXPECT_EQ(t[0].size, 128u * 784u);
  EXPECT_EQ(t[0].init.kind, kairos::Initializer::Kind::kUniform);
  EXPECT_NEAR(t[0].init.b, std::sqrt(6.0 / (784 + 128)), 1e-6);
  EXPECT_EQ(t[0].init.a, -t[0].init.b);
  EXPECT_EQ(t[1].name, "mlp.b");
  EXPECT_EQ(t[1].size, 138u);
  EXPECT_EQ(t[1].init, kairos::Initializer::Zeros());
  EXPECT_EQ(t[2].name, "mlp.W2");
  EXPECT_EQ(t[2].size, 1280u);
  EXPECT_NE(t[0].init.seed, t[2].init.seed);
  EXPECT_EQ((*mlp)->layout().tensor("b2")->offset, 128u);

  EXPECT_THAT(MakeModel("cnn", 784, 0).status().message(), HasSubstr("unknown model 'cnn'"));
  EXPECT_THAT(MakeModel("mlp", 784, 0).status().message(), HasSubstr("--hidden"));
}

}  // namespace
}  // namespace fmnist
