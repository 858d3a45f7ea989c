// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// What every model shares, and the Fashion-MNIST chooser: the real files when they are
// installed, Gaussian clusters shaped like them otherwise.

#include "sim/model.h"

#include <memory>
#include <utility>

#include <Eigen/Core>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/dataset.h"

namespace kairos::sim {

Eigen::VectorXf Model::InitialParams() const { return Eigen::VectorXf::Zero(num_params()); }

absl::StatusOr<std::shared_ptr<const Model>> MakeFashionModel(const FashionOptions& options) {
  absl::StatusOr<DataSplit> data =
      LoadFashionMnist(options.dir, options.max_train, options.max_test);
  if (absl::IsNotFound(data.status())) data = MakeGaussianClusters(options.fallback);
  if (!data.ok()) return data.status();
  if (options.standardize) StandardizeFeatures(*data);
  if (options.mlp_hidden > 0) {
    MlpOptions mlp = options.mlp;
    mlp.hidden = options.mlp_hidden;
    return MakeMlpModel(*std::move(data), mlp);
  }
  return MakeSoftmaxModel(*std::move(data), options.softmax);
}

}  // namespace kairos::sim
