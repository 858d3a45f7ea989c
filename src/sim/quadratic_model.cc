// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The least-squares model 0.5 * ||A w - b||^2 / n with its optimum solved at construction.

#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "sim/model.h"
#include "sim/random.h"

namespace kairos::sim {

namespace {

// Immutable after construction (see Model).
class QuadraticModel final : public Model {
 public:
  QuadraticModel(Eigen::MatrixXf a, Eigen::VectorXf b)
      : a_(std::move(a)), b_(std::move(b)), a64_(a_.cast<double>()), b64_(b_.cast<double>()) {
    // Normal equations in double: d is small and A^T A is positive definite for n >> d.
    const Eigen::MatrixXd hessian = a64_.transpose() * a64_;
    optimum_ = hessian.ldlt().solve(a64_.transpose() * b64_);
    optimal_loss_ = Loss(optimum_);
  }

  std::string name() const override {
    return absl::StrCat("quadratic(d=", a_.cols(), ",n=", a_.rows(), ")");
  }
  int num_params() const override { return static_cast<int>(a_.cols()); }
  int num_examples() const override { return static_cast<int>(a_.rows()); }
  bool has_accuracy() const override { return false; }
  double optimal_loss() const override { return optimal_loss_; }

  void Gradient(const Eigen::VectorXf& params, std::span<const int> batch,
                Eigen::VectorXf* gradient) const override {
    gradient->setZero(num_params());
    for (int row : batch) {
      const float residual = a_.row(row).dot(params) - b_(row);
      *gradient += residual * a_.row(row).transpose();
    }
    *gradient /= static_cast<float>(batch.size());
  }

  Evaluation Evaluate(const Eigen::VectorXf& params) const override {
    return {.loss = Loss(params.cast<double>()), .accuracy = 0.0};
  }

 private:
  double Loss(const Eigen::VectorXd& w) const {
    return 0.5 * (a64_ * w - b64_).squaredNorm() / static_cast<double>(a64_.rows());
  }

  const Eigen::MatrixXf a_;
  const Eigen::VectorXf b_;
  const Eigen::MatrixXd a64_;
  const Eigen::VectorXd b64_;
  Eigen::VectorXd optimum_;
  double optimal_loss_ = 0.0;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const Model>> MakeQuadraticModel(const QuadraticOptions& o) {
  if (o.dim < 1 || o.num_examples < o.dim || !(o.condition >= 1.0) || !(o.noise >= 0.0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "quadratic model: need dim >= 1, num_examples >= dim, condition >= 1, noise >= 0; "
        "got dim ", o.dim, ", num_examples ", o.num_examples, ", condition ", o.condition,
        ", noise ", o.noise));
  }
  Rng rng(StreamSeed(o.seed, kModelStream, 0));
  Eigen::VectorXf w_true(o.dim);
  for (int j = 0; j < o.dim; ++j) w_true(j) = static_cast<float>(rng.Normal());
  Eigen::MatrixXf a(o.num_examples, o.dim);
  for (int j = 0; j < o.dim; ++j) {
    // log-spaced curvature in [1 / condition, 1]
    const double t = o.dim == 1 ? 1.0 : static_cast<double>(j) / (o.dim - 1);
    const double scale = std::sqrt(std::pow(o.condition, t - 1.0));
    for (int i = 0; i < o.num_examples; ++i) {
      a(i, j) = static_cast<float>(scale * rng.Normal());
    }
  }
  Eigen::VectorXf b = a * w_true;
  for (int i = 0; i < o.num_examples; ++i) b(i) += static_cast<float>(o.noise * rng.Normal());
  return std::make_shared<const QuadraticModel>(std::move(a), std::move(b));
}

}  // namespace kairos::sim
