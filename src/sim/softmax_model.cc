// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Multinomial logistic regression on a DataSplit.

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

namespace kairos::sim {

namespace {

// Row-wise softmax of `logits` in place (max-shifted, so exp never overflows).
template <typename M>
void SoftmaxRows(M& logits) {
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    logits.row(i).array() -= logits.row(i).maxCoeff();
    logits.row(i).array() = logits.row(i).array().exp();
    logits.row(i) /= logits.row(i).sum();
  }
}

// Immutable after construction (see Model).
class SoftmaxModel final : public Model {
 public:
  SoftmaxModel(DataSplit data, const SoftmaxOptions& options)
      : data_(std::move(data)),
        l2_(options.l2),
        classes_(data_.train.num_classes),
        features_(data_.train.num_features()) {
    const Eigen::Index eval =
        std::min<Eigen::Index>(data_.test.num_examples(), options.max_eval_examples);
    eval_x_ = data_.test.features.topRows(eval).cast<double>();
    eval_y_.assign(data_.test.labels.begin(), data_.test.labels.begin() + eval);
  }

  std::string name() const override {
    return absl::StrCat("softmax(", data_.name, ",", features_, "x", classes_, ")");
  }
  int num_params() const override { return classes_ * features_ + classes_; }
  int num_examples() const override { return data_.train.num_examples(); }
  bool has_accuracy() const override { return true; }
  double optimal_loss() const override { return 0.0; }

  void Gradient(const Eigen::VectorXf& params, std::span<const int> batch,
                Eigen::VectorXf* gradient) const override {
    const auto batch_size = static_cast<Eigen::Index>(batch.size());
    const Dataset::Matrix x = data_.train.Rows(batch);
    Eigen::Map<const Eigen::MatrixXf> w(params.data(), classes_, features_);
    Eigen::Map<const Eigen::VectorXf> bias(params.data() + classes_ * features_, classes_);
    Eigen::MatrixXf delta = x * w.transpose();  // logits, then p - onehot
    delta.rowwise() += bias.transpose();
    SoftmaxRows(delta);
    for (Eigen::Index i = 0; i < batch_size; ++i) {
      delta(i, data_.train.labels[static_cast<size_t>(batch[static_cast<size_t>(i)])]) -= 1.0f;
    }
    gradient->resize(num_params());
    Eigen::Map<Eigen::MatrixXf> grad_w(gradient->data(), classes_, features_);
    Eigen::Map<Eigen::VectorXf> grad_b(gradient->data() + classes_ * features_, classes_);
    const float inv = 1.0f / static_cast<float>(batch_size);
    grad_w.noalias() = inv * (delta.transpose() * x);
    if (l2_ != 0.0) grad_w += static_cast<float>(l2_) * w;
    grad_b = inv * delta.colwise().sum().transpose();
  }

  Evaluation Evaluate(const Eigen::VectorXf& params) const override {
    const Eigen::VectorXd p = params.cast<double>();
    Eigen::Map<const Eigen::MatrixXd> w(p.data(), classes_, features_);
    Eigen::Map<const Eigen::VectorXd> bias(p.data() + classes_ * features_, classes_);
    Eigen::MatrixXd logits = eval_x_ * w.transpose();
    logits.rowwise() += bias.transpose();
    double loss = 0.0;
    int correct = 0;
    for (Eigen::Index i = 0; i < logits.rows(); ++i) {
      Eigen::Index best = 0;
      const double max = logits.row(i).maxCoeff(&best);
      const double log_sum = max + std::log((logits.row(i).array() - max).exp().sum());
      const int label = eval_y_[static_cast<size_t>(i)];
      loss += log_sum - logits(i, label);
      correct += best == label ? 1 : 0;
    }
    const auto n = static_cast<double>(std::max<Eigen::Index>(logits.rows(), 1));
    return {.loss = loss / n + 0.5 * l2_ * w.squaredNorm(), .accuracy = correct / n};
  }

 private:
  const DataSplit data_;
  const double l2_;
  const int classes_;
  const int features_;
  Eigen::MatrixXd eval_x_;  // the evaluation rows, in double
  std::vector<int> eval_y_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const Model>> MakeSoftmaxModel(DataSplit data,
                                                              const SoftmaxOptions& options) {
  if (absl::Status s = CheckDataSplit(data, "softmax"); !s.ok()) return s;
  if (!(options.l2 >= 0.0) || options.max_eval_examples < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("softmax model: need l2 >= 0 and max_eval_examples >= 1; got ",
                     options.l2, " and ", options.max_eval_examples));
  }
  return std::make_shared<const SoftmaxModel>(std::move(data), options);
}

}  // namespace kairos::sim
