// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The models the simulator trains, with real gradients (Eigen, float like the servers):
//   quadratic  0.5 * ||A w - b||^2 / n, a least-squares problem whose optimum is solved
//              exactly at construction, so the loss gap to the optimum is known;
//   softmax    multinomial logistic regression on a labelled data set (Fashion-MNIST or
//              synthetic Gaussian clusters), reporting cross-entropy and accuracy;
//   mlp        one hidden layer of ReLU units on such a data set: the Fashion-MNIST
//              example's network (the model of kairos_policy_bench's real runs).
// Parameters are one flat vector, as one table of a real job.

#ifndef KAIROS_SIM_MODEL_H_
#define KAIROS_SIM_MODEL_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "sim/dataset.h"

namespace kairos::sim {

// The loss of a parameter vector, and its accuracy for a classifier.
struct Evaluation {
  double loss = 0.0;
  double accuracy = 0.0;  // in [0, 1]; 0 for a model without accuracy
  friend bool operator==(const Evaluation&, const Evaluation&) = default;
};

// A differentiable model over a fixed training set. Thread-safety: immutable after
// construction, so its const methods may run concurrently; share it as
// std::shared_ptr<const Model> between simulations.
class Model {
 public:
  virtual ~Model() = default;

  // e.g. "quadratic(d=32,n=1024)" or "softmax(fashion-mnist,784x10)".
  virtual std::string name() const = 0;
  virtual int num_params() const = 0;
  // Training examples that mini-batches index.
  virtual int num_examples() const = 0;
  virtual bool has_accuracy() const = 0;
  // The smallest loss any parameters reach (quadratic: exact, from the solved optimum);
  // 0 where it is unknown (softmax).
  virtual double optimal_loss() const = 0;

  // Parameters a job starts from (zeros for both models here).
  virtual Eigen::VectorXf InitialParams() const;
  // The mean gradient over the training examples `batch` at `params`, into *gradient
  // (resized). REQUIRES: params.size() == num_params(), every index in
  // [0, num_examples()), batch not empty.
  virtual void Gradient(const Eigen::VectorXf& params, std::span<const int> batch,
                        Eigen::VectorXf* gradient) const = 0;
  // Loss (and accuracy) at `params`: quadratic over the whole training set, softmax over
  // its evaluation set. Computed in double.
  virtual Evaluation Evaluate(const Eigen::VectorXf& params) const = 0;
};

// ------------------------------------------------------------------------- quadratic
// A (n x d) has independent N(0, 1) entries, column j scaled by sqrt(lambda_j), with the
// curvatures lambda_j log-spaced from 1 / condition to 1, so that the Hessian A^T A / n has
// eigenvalues near [1 / condition, 1] and learning rates up to about 1 are stable for
// sequential SGD. b = A w_true + noise * N(0, 1), w_true ~ N(0, 1).
struct QuadraticOptions {
  int dim = 32;            // d: number of parameters
  int num_examples = 1024; // n: rows of A
  double condition = 10.0; // ratio of the largest to the smallest curvature, >= 1
  double noise = 0.1;      // label noise: 0 makes the optimum loss 0
  uint64_t seed = 1;
};
absl::StatusOr<std::shared_ptr<const Model>> MakeQuadraticModel(const QuadraticOptions& options);

// -------------------------------------------------------------------------- softmax
// Multinomial logistic regression: params = [W (classes x features, column-major), bias
// (classes)], loss = mean cross-entropy + 0.5 * l2 * ||W||^2. Evaluated on at most
// `max_eval_examples` examples of the test split (the first ones).
struct SoftmaxOptions {
  double l2 = 0.0;
  int max_eval_examples = 2000;
};
absl::StatusOr<std::shared_ptr<const Model>> MakeSoftmaxModel(DataSplit data,
                                                              const SoftmaxOptions& options);

// ------------------------------------------------------------------------------ mlp
// h = max(0, W1 x + b1), logits = W2 h + b2, loss = mean cross-entropy: the network of
// examples/fashion_mnist/models.h. params = [W1 (hidden x features, column-major), b1
// (hidden), W2 (classes x hidden, column-major), b2 (classes)]. InitialParams: W1 and W2
// uniform in +-sqrt(6 / (fan_in + fan_out)) (Glorot), drawn from `seed`; biases zero.
// Evaluated on at most `max_eval_examples` examples of the test split (the first ones).
inline constexpr int kMaxMlpHidden = 4096;
struct MlpOptions {
  int hidden = 64;  // 1 .. kMaxMlpHidden
  uint64_t seed = 1;
  int max_eval_examples = 2000;
};
absl::StatusOr<std::shared_ptr<const Model>> MakeMlpModel(DataSplit data,
                                                          const MlpOptions& options);

// Softmax regression on Fashion-MNIST from `dir` (the first `max_train` training and
// `max_test` test images), or, when the files are not there, on Gaussian clusters shaped
// like it (784 features, 10 classes, `fallback.num_train` / `num_test` examples). The
// name() says which one was used. Any error other than a missing file is returned. With
// mlp_hidden > 0 the model is the MLP instead, and with `standardize` the features are
// standardized first (below).
struct FashionOptions {
  std::string dir = kFashionMnistDir;
  int max_train = 10000;
  int max_test = 2000;
  ClusterOptions fallback = {.num_classes = 10, .num_features = 784, .num_train = 4096,
                             .num_test = 1024, .separation = 0.15, .seed = 1};
  SoftmaxOptions softmax;
  // > 0: the MLP with this many hidden units (its seed and evaluation size from `mlp`)
  // instead of softmax regression.
  int mlp_hidden = 0;
  MlpOptions mlp;
  // Standardize the features with the training split's mean and standard deviation over
  // all values (StandardizeFeatures), as the example's data loader does.
  bool standardize = false;
};
absl::StatusOr<std::shared_ptr<const Model>> MakeFashionModel(const FashionOptions& options);

}  // namespace kairos::sim

#endif  // KAIROS_SIM_MODEL_H_
