// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A multilayer perceptron with one hidden layer of ReLU units on a DataSplit: the model of
// the Fashion-MNIST example (examples/fashion_mnist/models.h) and of kairos_policy_bench's
// real runs, so that a calibrated simulation trains the same network.

#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "sim/dataset.h"
#include "sim/model.h"
#include "sim/random.h"

namespace kairos::sim {

namespace {

// Immutable after construction (see Model). Parameters, one flat vector:
//   [W1 (hidden x features, column-major), b1 (hidden), W2 (classes x hidden,
//    column-major), b2 (classes)].
class MlpModel final : public Model {
 public:
  MlpModel(DataSplit data, const MlpOptions& options)
      : data_(std::move(data)),
        hidden_(options.hidden),
        seed_(options.seed),
        classes_(data_.train.num_classes),
        features_(data_.train.num_features()) {
    const Eigen::Index eval =
        std::min<Eigen::Index>(data_.test.num_examples(), options.max_eval_examples);
    eval_x_ = data_.test.features.topRows(eval);
    eval_y_.assign(data_.test.labels.begin(), data_.test.labels.begin() + eval);
  }

  std::string name() const override {
    return absl::StrCat("mlp(", data_.name, ",", features_, "x", hidden_, "x", classes_, ")");
  }
  int num_params() const override {
    return hidden_ * features_ + hidden_ + classes_ * hidden_ + classes_;
  }
  int num_examples() const override { return data_.train.num_examples(); }
  bool has_accuracy() const override { return true; }
  double optimal_loss() const override { return 0.0; }

  // Glorot-uniform weights (+-sqrt(6 / (fan_in + fan_out))), zero biases, as the example.
  Eigen::VectorXf InitialParams() const override {
    Eigen::VectorXf p = Eigen::VectorXf::Zero(num_params());
    Rng rng(StreamSeed(seed_, kModelStream, 2));
    const auto fill = [&](Eigen::Index begin, Eigen::Index count, int fan_in, int fan_out) {
      const double limit = std::sqrt(6.0 / (fan_in + fan_out));
      for (Eigen::Index i = 0; i < count; ++i) {
        p[begin + i] = static_cast<float>((2.0 * rng.Uniform() - 1.0) * limit);
      }
    };
    fill(0, Eigen::Index{hidden_} * features_, features_, hidden_);
    fill(W2Offset(), Eigen::Index{classes_} * hidden_, hidden_, classes_);
    return p;
  }

  void Gradient(const Eigen::VectorXf& params, std::span<const int> batch,
                Eigen::VectorXf* gradient) const override {
    const auto batch_size = static_cast<Eigen::Index>(batch.size());
    const Dataset::Matrix x = data_.train.Rows(batch);
    const Weights w = Map(params);
    Eigen::MatrixXf h = x * w.w1.transpose();  // batch x hidden
    h.rowwise() += w.b1.transpose();
    h = h.cwiseMax(0.0f);
    Eigen::MatrixXf delta = h * w.w2.transpose();  // logits, then (p - onehot) / B
    delta.rowwise() += w.b2.transpose();
    for (Eigen::Index i = 0; i < batch_size; ++i) {
      delta.row(i).array() -= delta.row(i).maxCoeff();
      delta.row(i).array() = delta.row(i).array().exp();
      delta.row(i) /= delta.row(i).sum();
      delta(i, data_.train.labels[static_cast<size_t>(batch[static_cast<size_t>(i)])]) -= 1.0f;
    }
    delta /= static_cast<float>(batch_size);
    gradient->resize(num_params());
    float* g = gradient->data();
    Eigen::Map<Eigen::MatrixXf> g_w1(g, hidden_, features_);
    Eigen::Map<Eigen::VectorXf> g_b1(g + Eigen::Index{hidden_} * features_, hidden_);
    Eigen::Map<Eigen::MatrixXf> g_w2(g + W2Offset(), classes_, hidden_);
    Eigen::Map<Eigen::VectorXf> g_b2(g + W2Offset() + Eigen::Index{classes_} * hidden_,
                                     classes_);
    g_w2.noalias() = delta.transpose() * h;
    g_b2 = delta.colwise().sum().transpose();
    Eigen::MatrixXf dh = delta * w.w2;  // batch x hidden
    dh.array() *= (h.array() > 0.0f).cast<float>();  // ReLU: through where active
    g_w1.noalias() = dh.transpose() * x;
    g_b1 = dh.colwise().sum().transpose();
  }

  // Cross-entropy and accuracy on the evaluation rows (float forward pass, double sums).
  Evaluation Evaluate(const Eigen::VectorXf& params) const override {
    const Weights w = Map(params);
    Eigen::MatrixXf h = eval_x_ * w.w1.transpose();
    h.rowwise() += w.b1.transpose();
    h = h.cwiseMax(0.0f);
    Eigen::MatrixXf logits = h * w.w2.transpose();
    logits.rowwise() += w.b2.transpose();
    double loss = 0.0;
    int correct = 0;
    for (Eigen::Index i = 0; i < logits.rows(); ++i) {
      Eigen::Index best = 0;
      const double max = logits.row(i).maxCoeff(&best);
      const double log_sum =
          max + std::log((logits.row(i).cast<double>().array() - max).exp().sum());
      const int label = eval_y_[static_cast<size_t>(i)];
      loss += log_sum - logits(i, label);
      correct += best == label ? 1 : 0;
    }
    const auto n = static_cast<double>(std::max<Eigen::Index>(logits.rows(), 1));
    return {.loss = loss / n, .accuracy = correct / n};
  }

 private:
  struct Weights {
    Eigen::Map<const Eigen::MatrixXf> w1;
    Eigen::Map<const Eigen::VectorXf> b1;
    Eigen::Map<const Eigen::MatrixXf> w2;
    Eigen::Map<const Eigen::VectorXf> b2;
  };
  Eigen::Index W2Offset() const { return Eigen::Index{hidden_} * features_ + hidden_; }
  Weights Map(const Eigen::VectorXf& params) const {
    const float* p = params.data();
    return {Eigen::Map<const Eigen::MatrixXf>(p, hidden_, features_),
            Eigen::Map<const Eigen::VectorXf>(p + Eigen::Index{hidden_} * features_, hidden_),
            Eigen::Map<const Eigen::MatrixXf>(p + W2Offset(), classes_, hidden_),
            Eigen::Map<const Eigen::VectorXf>(p + W2Offset() + Eigen::Index{classes_} * hidden_,
                                              classes_)};
  }

  const DataSplit data_;
  const int hidden_;
  const uint64_t seed_;
  const int classes_;
  const int features_;
  Dataset::Matrix eval_x_;  // the evaluation rows
  std::vector<int> eval_y_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const Model>> MakeMlpModel(DataSplit data,
                                                          const MlpOptions& options) {
  if (absl::Status s = CheckDataSplit(data, "mlp"); !s.ok()) return s;
  if (options.hidden < 1 || options.hidden > kMaxMlpHidden || options.max_eval_examples < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("mlp model: need hidden in 1..", kMaxMlpHidden,
                     " and max_eval_examples >= 1; got ", options.hidden, " and ",
                     options.max_eval_examples));
  }
  return std::make_shared<const MlpModel>(std::move(data), options);
}

}  // namespace kairos::sim
