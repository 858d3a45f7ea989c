// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Softmax regression and the one-hidden-layer MLP (models.h): forward pass, loss, and the gradients
// by backpropagation, with parameters moved by kairos::PullAll / PushAll.

#include "fashion_mnist/models.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "fashion_mnist/streams.h"
#include "kairos/eigen.h"
#include "kairos/kairos.h"

namespace fmnist {
namespace {

constexpr int kEvalBatch = 1000;

class SoftmaxModel final : public Model {
 public:
  explicit SoftmaxModel(int features)
      : W_(Eigen::MatrixXf::Zero(kNumClasses, features)),
        b_(Eigen::VectorXf::Zero(kNumClasses)),
        gW_(Eigen::MatrixXf::Zero(kNumClasses, features)),
        gb_(Eigen::VectorXf::Zero(kNumClasses)) {
    // Checked by MakeModel: the sizes are valid, so Add cannot fail.
    (void)layout_.Add("W", "softmax", kNumClasses, features);
    (void)layout_.Add("b", "softmax", kNumClasses);
  }

  std::string name() const override { return "softmax"; }

  std::vector<kairos::TableSpec> Tables(const kairos::UpdaterSpec &updater,
                                        uint64_t seed) const override {
    return {*layout_.Table("softmax", kairos::Initializer::Zeros(), updater)};
  }

  std::vector<Eigen::Ref<Eigen::MatrixXf>> parameters() override { return {W_, b_}; }
  std::vector<Eigen::Ref<Eigen::MatrixXf>> gradients() override { return {gW_, gb_}; }

  absl::Status Pull(kairos::Worker &worker) override {
    return kairos::PullAll(worker, layout_, {W_, b_});
  }
  absl::Status Push(kairos::Worker &worker) override {
    return kairos::PushAll(worker, layout_, {gW_, gb_});
  }

  float Loss(const Eigen::MatrixXf &x, std::span<const int> y, bool gradient) override {
    logits_.noalias() = W_ * x;
    logits_.colwise() += b_;
    const float loss = SoftmaxCrossEntropy(logits_, y, gradient);
    if (gradient) {  // logits_ now holds dLoss/dlogits
      gW_.noalias() = logits_ * x.transpose();
      gb_ = logits_.rowwise().sum();
    }
    return loss;
  }

 protected:
  Eigen::MatrixXf Logits(const Eigen::MatrixXf &x) override {
    Eigen::MatrixXf z = W_ * x;
    z.colwise() += b_;
    return z;
  }

 private:
  Eigen::MatrixXf W_;
  Eigen::VectorXf b_;
  Eigen::MatrixXf gW_;
  Eigen::VectorXf gb_;
  Eigen::MatrixXf logits_;
};

class MlpModel final : public Model {
 public:
  MlpModel(int features, int hidden)
      : features_(features),
        hidden_(hidden),
        W1_(Eigen::MatrixXf::Zero(hidden, features)),
        b1_(Eigen::VectorXf::Zero(hidden)),
        W2_(Eigen::MatrixXf::Zero(kNumClasses, hidden)),
        b2_(Eigen::VectorXf::Zero(kNumClasses)),
        gW1_(W1_),
        gb1_(b1_),
        gW2_(W2_),
        gb2_(b2_) {
    (void)layout_.Add("W1", "mlp.W1", hidden, features);
    (void)layout_.Add("b1", "mlp.b", hidden);
    (void)layout_.Add("W2", "mlp.W2", kNumClasses, hidden);
    (void)layout_.Add("b2", "mlp.b", kNumClasses);
  }

  std::string name() const override { return absl::StrCat("mlp(", hidden_, " hidden)"); }

  std::vector<kairos::TableSpec> Tables(const kairos::UpdaterSpec &updater,
                                        uint64_t seed) const override {
    const MlpInitializers init = MlpInit(features_, hidden_, kNumClasses, seed);
    return {*layout_.Table("mlp.W1", init.w1, updater),
            *layout_.Table("mlp.b", kairos::Initializer::Zeros(), updater),
            *layout_.Table("mlp.W2", init.w2, updater)};
  }

  std::vector<Eigen::Ref<Eigen::MatrixXf>> parameters() override { return {W1_, b1_, W2_, b2_}; }
  std::vector<Eigen::Ref<Eigen::MatrixXf>> gradients() override { return {gW1_, gb1_, gW2_, gb2_}; }

  absl::Status Pull(kairos::Worker &worker) override {
    return kairos::PullAll(worker, layout_, {W1_, b1_, W2_, b2_});
  }
  absl::Status Push(kairos::Worker &worker) override {
    return kairos::PushAll(worker, layout_, {gW1_, gb1_, gW2_, gb2_});
  }

  float Loss(const Eigen::MatrixXf &x, std::span<const int> y, bool gradient) override {
    Forward(x);
    const float loss = SoftmaxCrossEntropy(logits_, y, gradient);
    if (gradient) {  // logits_ now holds dLoss/dlogits
      gW2_.noalias() = logits_ * h_.transpose();
      gb2_ = logits_.rowwise().sum();
      dh_.noalias() = W2_.transpose() * logits_;
      dh_.array() *= (h_.array() > 0.0f).cast<float>();  // ReLU: through where active
      gW1_.noalias() = dh_ * x.transpose();
      gb1_ = dh_.rowwise().sum();
    }
    return loss;
  }

 protected:
  Eigen::MatrixXf Logits(const Eigen::MatrixXf &x) override {
    Forward(x);
    return logits_;
  }

 private:
  void Forward(const Eigen::MatrixXf &x) {
    h_.noalias() = W1_ * x;
    h_.colwise() += b1_;
    h_ = h_.cwiseMax(0.0f);
    logits_.noalias() = W2_ * h_;
    logits_.colwise() += b2_;
  }

  const int features_;
  const int hidden_;
  Eigen::MatrixXf W1_;
  Eigen::VectorXf b1_;
  Eigen::MatrixXf W2_;
  Eigen::VectorXf b2_;
  Eigen::MatrixXf gW1_;
  Eigen::VectorXf gb1_;
  Eigen::MatrixXf gW2_;
  Eigen::VectorXf gb2_;
  Eigen::MatrixXf h_;       // hidden activations of the batch
  Eigen::MatrixXf dh_;      // their gradient
  Eigen::MatrixXf logits_;  // the logits, then their gradient
};

}  // namespace

float SoftmaxCrossEntropy(Eigen::MatrixXf &logits, std::span<const int> y, bool gradient) {
  const Eigen::Index n = logits.cols();
  double loss = 0.0;
  for (Eigen::Index j = 0; j < n; ++j) {
    auto z = logits.col(j);
    const int label = y[static_cast<size_t>(j)];
    const float max = z.maxCoeff();
    const float shifted_label = z[label] - max;  // log of the label's unnormalized softmax
    z.array() = (z.array() - max).exp();
    const float sum = z.sum();
    loss += std::log(sum) - shifted_label;
    if (gradient) {
      z /= sum;
      z[label] -= 1.0f;
    }
  }
  if (gradient) logits /= static_cast<float>(n);
  return static_cast<float>(loss / static_cast<double>(std::max<Eigen::Index>(n, 1)));
}

Evaluation Model::Evaluate(const Dataset &data) {
  double loss = 0.0;
  int64_t correct = 0;
  const int n = data.num_examples();
  for (int first = 0; first < n; first += kEvalBatch) {
    const int count = std::min(kEvalBatch, n - first);
    const Eigen::MatrixXf x = data.Features(first, count);
    Eigen::MatrixXf z = Logits(x);
    const std::span<const int> y(data.labels.data() + first, static_cast<size_t>(count));
    for (int j = 0; j < count; ++j) {
      Eigen::Index best = 0;
      z.col(j).maxCoeff(&best);
      correct += best == y[static_cast<size_t>(j)] ? 1 : 0;
    }
    loss += static_cast<double>(SoftmaxCrossEntropy(z, y, false)) * count;
  }
  const double total = std::max(n, 1);
  return {.loss = loss / total, .accuracy = static_cast<double>(correct) / total};
}

absl::StatusOr<std::unique_ptr<Model>> MakeModel(const std::string &name, int features,
                                                 int hidden) {
  if (features < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("model: examples need at least one feature, got ", features));
  }
  if (name == "softmax") return std::make_unique<SoftmaxModel>(features);
  if (name == "mlp") {
    if (hidden < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("model mlp: --hidden must be at least 1, got ", hidden));
    }
    return std::make_unique<MlpModel>(features, hidden);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown model '", name, "': softmax or mlp"));
}

}  // namespace fmnist
