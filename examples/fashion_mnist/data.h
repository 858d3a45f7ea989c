// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Fashion-MNIST for the example: the IDX files (gzip'd or plain), read with zlib. Each
// worker's shard of the training set: streams.h.
//
// IDX (the format of MNIST and Fashion-MNIST): a big-endian 32-bit magic number
// 0x000008DD, where 08 says the values are unsigned bytes and DD is the number of
// dimensions, then DD big-endian 32-bit dimension sizes, then the values in row-major
// order. Images are 3 dimensions (count x rows x cols), labels 1 (count).

#ifndef KAIROS_EXAMPLES_FASHION_MNIST_DATA_H_
#define KAIROS_EXAMPLES_FASHION_MNIST_DATA_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"

namespace fmnist {

// Pixels as stored (0..255), one example per column: pixels x count.
using PixelMatrix = Eigen::Matrix<uint8_t, Eigen::Dynamic, Eigen::Dynamic>;

// Labelled images. Thread-safety: immutable once built; share it as const.
struct Dataset {
  PixelMatrix pixels;       // num_features x num_examples
  std::vector<int> labels;  // num_examples, each in [0, kNumClasses)
  // The features the models see: pixel * scale + offset. LoadFashionMnist standardizes
  // both sets with the training set's pixel mean and standard deviation (all pixels
  // together), so that the training features have mean 0 and variance 1.
  float scale = 1.0f / 255.0f;
  float offset = 0.0f;

  int num_examples() const { return static_cast<int>(pixels.cols()); }
  int num_features() const { return static_cast<int>(pixels.rows()); }
  // The features of columns `examples` into *x (num_features x examples.size()) and their
  // labels into *y.
  void Gather(std::span<const int> examples, Eigen::MatrixXf* x, std::vector<int>* y) const;
  // The features of examples [first, first + count).
  Eigen::MatrixXf Features(int first, int count) const;
  // Sets scale and offset so that this set's pixels become mean 0, variance 1 (a set of
  // constant pixels gets scale 1 / 255 and offset -mean / 255).
  void Standardize();
};

inline constexpr int kNumClasses = 10;
// Where the Debian package dataset-fashion-mnist installs the data set.
inline constexpr char kDefaultDataDir[] = "/usr/share/datasets/fashion-mnist";
// The largest IDX file this reader accepts, in values (a bound checked before anything is
// allocated: the header's sizes are not trusted).
inline constexpr uint64_t kMaxIdxValues = uint64_t{1} << 31;

// An IDX image file (magic 0x00000803), gzip'd or not (zlib reads both): at most
// `max_examples` images (< 0: all). Errors name the file: NotFound when it does not exist,
// DataLoss when its magic number is not that of an image file, a dimension is 0 or the
// sizes are implausible, or the file ends before the values the header announces.
absl::StatusOr<PixelMatrix> ReadIdxImages(const std::string& path, int max_examples);
// An IDX label file (magic 0x00000801): at most `max_examples` labels (< 0: all), each
// checked to be below kNumClasses.
absl::StatusOr<std::vector<int>> ReadIdxLabels(const std::string& path, int max_examples);

struct FashionMnist {
  Dataset train;
  Dataset test;
};

// The four files of Fashion-MNIST in `dir` (train-images-idx3-ubyte.gz,
// train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz): the
// first `max_train` training and `max_test` test examples (< 0: all; 60000 and 10000
// exist), both standardized with the training set's statistics (Dataset::Standardize).
// NotFound when a file is missing; DataLoss when one is malformed or a set's images and
// labels differ in count.
absl::StatusOr<FashionMnist> LoadFashionMnist(const std::string& dir, int max_train = -1,
                                              int max_test = -1);

}  // namespace fmnist

#endif  // KAIROS_EXAMPLES_FASHION_MNIST_DATA_H_
