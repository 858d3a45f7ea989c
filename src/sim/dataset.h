// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Labelled data sets for the simulator's classification model: Fashion-MNIST read from its
// gzip'd IDX files (with zlib), and a synthetic stand-in (Gaussian clusters) that needs no
// file, so that tests never depend on the data set being installed.

#ifndef KAIROS_SIM_DATASET_H_
#define KAIROS_SIM_DATASET_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kairos::sim {

// Examples as rows. Thread-safety: immutable once built; share it as const.
struct Dataset {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Matrix features;          // num_examples x num_features
  std::vector<int> labels;  // num_examples, each in [0, num_classes)
  int num_classes = 0;

  int num_examples() const { return static_cast<int>(features.rows()); }
  int num_features() const { return static_cast<int>(features.cols()); }
  // The feature rows of `examples` (a minibatch), in their order.
  Matrix Rows(std::span<const int> examples) const;
};

struct DataSplit {
  Dataset train;
  Dataset test;
  std::string name;  // "fashion-mnist" or "gaussian-clusters"
};

// Maps every feature value v of both splits to (v - mean) / stddev, with the mean and the
// standard deviation of all the training split's values together (a stddev of 0 counts as
// 1), as examples/fashion_mnist/data.h's Dataset::Standardize does with its pixels. Appends
// "+std" to the split's name.
void StandardizeFeatures(DataSplit& split);

// What a model needs of its data: >= 2 classes, non-empty train and test splits with the
// same number of features, one label per training example. InvalidArgument naming `model`
// and what it got otherwise.
absl::Status CheckDataSplit(const DataSplit& d, std::string_view model);

// Where Fashion-MNIST is installed (the Debian package dataset-fashion-mnist).
inline constexpr char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";

// Reads one IDX image file (magic 0x00000803, gzip'd or not: zlib reads both) into rows of
// floats in [0, 1] (pixel / 255), at most `max_examples` of them (< 0: all). NotFound when
// the file does not exist, DataLoss when it is truncated, not an IDX image file, or
// announces more than 2^31 values. Memory grows with what the file holds, not with what its
// header announces.
absl::StatusOr<Dataset::Matrix> ReadIdxImages(const std::string& path, int max_examples);
// Reads one IDX label file (magic 0x00000801), at most `max_examples` labels (< 0: all),
// with the same errors and bounds.
absl::StatusOr<std::vector<int>> ReadIdxLabels(const std::string& path, int max_examples);

// Fashion-MNIST from `dir` (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz,
// t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz): the first `max_train` training
// and `max_test` test examples (< 0: all; 60000 and 10000 exist). NotFound when a file is
// missing; DataLoss when one is malformed or images and labels disagree in count.
absl::StatusOr<DataSplit> LoadFashionMnist(const std::string& dir, int max_train,
                                           int max_test);

// Synthetic classification data: `num_classes` Gaussian clusters in `num_features`
// dimensions. Class centres are drawn from N(0, separation^2) per coordinate, each example
// is its class centre plus N(0, 1) noise, classes are drawn uniformly. Deterministic for
// `seed`.
struct ClusterOptions {
  int num_classes = 10;
  int num_features = 32;
  int num_train = 4096;
  int num_test = 1024;
  double separation = 0.5;  // larger: easier to separate
  uint64_t seed = 1;
};
absl::StatusOr<DataSplit> MakeGaussianClusters(const ClusterOptions& options);

}  // namespace kairos::sim

#endif  // KAIROS_SIM_DATASET_H_
