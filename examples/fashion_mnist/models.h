// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The example's two models, written in Eigen: softmax regression and a multilayer
// perceptron with one hidden layer of ReLU units. Each object is one worker's replica: its
// parameters (pulled from the job's tables with kairos::PullAll), the gradients of its last
// batch (pushed with kairos::PushAll), and the scratch space of the computation.
//
// Examples are columns: a batch x is num_features x B (standardized pixels), and the loss
// is the mean cross-entropy of the batch's softmax outputs.
//
//   softmax: logits = W x + b                       W: 10 x F        table "softmax"
//                                                   b: 10            table "softmax"
//   mlp:     h = max(0, W1 x + b1)                  W1: H x F        table "mlp.W1"
//            logits = W2 h + b2                     b1: H            table "mlp.b"
//                                                   W2: 10 x H       table "mlp.W2"
//                                                   b2: 10           table "mlp.b"
//
// Initial values (a table has one Initializer, kairos/table.h): the softmax table is zeros
// (the loss is convex, and zeros are its usual start); the MLP's weight matrices each have
// a table of their own, uniform in +-sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio 2010,
// docs/references.md#glorot), which breaks the symmetry between hidden units, and both bias
// vectors share a table of zeros.
//
// Thread-safety: none; one replica per worker thread.

#ifndef KAIROS_EXAMPLES_FASHION_MNIST_MODELS_H_
#define KAIROS_EXAMPLES_FASHION_MNIST_MODELS_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fashion_mnist/data.h"
#include "kairos/eigen.h"
#include "kairos/kairos.h"

namespace fmnist {

struct Evaluation {
  double loss = 0.0;      // mean cross-entropy
  double accuracy = 0.0;  // fraction of examples whose largest logit is their label
};

class Model {
 public:
  virtual ~Model() = default;

  virtual std::string name() const = 0;
  // Where the parameters live in the job's tables.
  const kairos::ParameterLayout& layout() const { return layout_; }
  // The declarations of those tables, with their initial values (see the file comment),
  // each updated by `updater`. `seed` draws the random initial values.
  virtual std::vector<kairos::TableSpec> Tables(const kairos::UpdaterSpec& updater,
                                                uint64_t seed) const = 0;

  // This replica's parameters and the gradients of the last Loss(..., gradient = true),
  // one per tensor of layout(), in its order.
  virtual std::vector<Eigen::Ref<Eigen::MatrixXf>> parameters() = 0;
  virtual std::vector<Eigen::Ref<Eigen::MatrixXf>> gradients() = 0;

  // Reads the parameters from the job (kairos::PullAll), as the gate allows.
  virtual absl::Status Pull(kairos::Worker& worker) = 0;
  // Sends the gradients of the last batch (kairos::PushAll).
  virtual absl::Status Push(kairos::Worker& worker) = 0;

  // The mean cross-entropy of batch (x, y) under the current parameters; with `gradient`,
  // also sets the gradients of that loss. REQUIRES: x has num_features rows and y.size()
  // columns, every label below kNumClasses.
  virtual float Loss(const Eigen::MatrixXf& x, std::span<const int> y, bool gradient) = 0;

  // Loss and accuracy on `data` (in batches of 1000 examples).
  Evaluation Evaluate(const Dataset& data);

 protected:
  // The logits (kNumClasses x x.cols()) of batch x.
  virtual Eigen::MatrixXf Logits(const Eigen::MatrixXf& x) = 0;

  kairos::ParameterLayout layout_;
};

// "softmax" or "mlp" (with `hidden` units) over examples of `features` pixels, with zero
// parameters until the first Pull. InvalidArgument for another name or sizes below 1.
absl::StatusOr<std::unique_ptr<Model>> MakeModel(const std::string& name, int features,
                                                 int hidden);

// The mean cross-entropy of the softmax of each column of `logits` against labels y; with
// `gradient`, replaces logits by the loss's gradient with respect to them,
// (softmax - onehot(y)) / B. Either way `logits` is overwritten.
float SoftmaxCrossEntropy(Eigen::MatrixXf& logits, std::span<const int> y, bool gradient);

}  // namespace fmnist

#endif  // KAIROS_EXAMPLES_FASHION_MNIST_MODELS_H_
