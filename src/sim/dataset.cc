// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// IDX reading through zlib's gz* interface (which reads plain files too), and the
// synthetic Gaussian clusters.

#include "sim/dataset.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/random.h"

namespace kairos::sim {
namespace {

constexpr uint32_t kIdxImagesMagic = 0x00000803;  // unsigned byte, 3 dimensions
constexpr uint32_t kIdxLabelsMagic = 0x00000801;  // unsigned byte, 1 dimension

// Closes a gzFile on scope exit.
struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

absl::StatusOr<GzFile> OpenGz(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(absl::StrCat("no such file: ", path));
  }
  GzFile f(gzopen(path.c_str(), "rb"));
  if (f == nullptr) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  return f;
}

// Reads exactly `size` bytes, or says what is wrong.
absl::Status ReadExactly(gzFile_s* f, void* out, size_t size, const std::string& path) {
  const int n = gzread(f, out, static_cast<unsigned>(size));
  if (n < 0 || static_cast<size_t>(n) != size) {
    return absl::DataLossError(absl::StrCat(path, ": truncated (wanted ", size,
                                            " bytes, got ", n < 0 ? 0 : n, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> ReadBigEndian32(gzFile_s* f, const std::string& path) {
  unsigned char b[4];
  if (absl::Status s = ReadExactly(f, b, sizeof b, path); !s.ok()) return s;
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

// Reads the magic number and the `dims` dimension sizes of an IDX header.
absl::StatusOr<std::vector<uint32_t>> ReadIdxHeader(gzFile_s* f, const std::string& path,
                                                    uint32_t magic, int dims) {
  absl::StatusOr<uint32_t> got = ReadBigEndian32(f, path);
  if (!got.ok()) return got.status();
  if (*got != magic) {
    return absl::DataLossError(
        absl::StrCat(path, ": not an IDX file of the expected kind (magic ", *got,
                     ", expected ", magic, ")"));
  }
  std::vector<uint32_t> sizes;
  for (int i = 0; i < dims; ++i) {
    absl::StatusOr<uint32_t> size = ReadBigEndian32(f, path);
    if (!size.ok()) return size.status();
    sizes.push_back(*size);
  }
  return sizes;
}

// At most this many values (bytes) are read from one IDX file (Fashion-MNIST's training
// images are 47 million), and memory grows only as they arrive: a header that announces
// more than the file holds is refused as truncated without being allocated for.
constexpr uint64_t kMaxIdxValues = uint64_t{1} << 31;
constexpr uint64_t kReadBlock = uint64_t{1} << 20;

// Reads `count` bytes of values, a block at a time.
absl::StatusOr<std::vector<unsigned char>> ReadValues(gzFile_s* f, uint64_t count,
                                                      const std::string& path) {
  std::vector<unsigned char> values;
  while (values.size() < count) {
    const std::size_t before = values.size();
    const auto want = static_cast<std::size_t>(std::min<uint64_t>(count - before, kReadBlock));
    values.resize(before + want);
    const int n = gzread(f, values.data() + before, static_cast<unsigned>(want));
    if (n < 0 || static_cast<std::size_t>(n) != want) {
      return absl::DataLossError(absl::StrCat(path, ": truncated (the header announces ", count,
                                              " bytes of values, the file holds ",
                                              before + (n < 0 ? 0 : n), ")"));
    }
  }
  return values;
}

uint32_t Capped(uint32_t available, int max_examples) {
  if (max_examples < 0) return available;
  return std::min(available, static_cast<uint32_t>(max_examples));
}

absl::Status CheckSameCount(const Dataset& d, const std::string& what) {
  if (d.features.rows() != static_cast<Eigen::Index>(d.labels.size())) {
    return absl::DataLossError(absl::StrCat(what, ": ", d.features.rows(), " images but ",
                                            d.labels.size(), " labels"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Dataset> LoadIdxPair(const std::string& images, const std::string& labels,
                                    int max_examples) {
  Dataset d;
  absl::StatusOr<Dataset::Matrix> x = ReadIdxImages(images, max_examples);
  if (!x.ok()) return x.status();
  absl::StatusOr<std::vector<int>> y = ReadIdxLabels(labels, max_examples);
  if (!y.ok()) return y.status();
  d.features = *std::move(x);
  d.labels = *std::move(y);
  d.num_classes = 10;
  if (absl::Status s = CheckSameCount(d, images); !s.ok()) return s;
  for (int label : d.labels) {
    if (label >= d.num_classes) {
      return absl::DataLossError(absl::StrCat(labels, ": label ", label, " out of range"));
    }
  }
  return d;
}

Dataset DrawClusters(const ClusterOptions& o, const Eigen::MatrixXf& centres, int count,
                     Rng& rng) {
  Dataset d;
  d.num_classes = o.num_classes;
  d.features.resize(count, o.num_features);
  d.labels.resize(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    const int label = static_cast<int>(rng.UniformInt(static_cast<uint64_t>(o.num_classes)));
    d.labels[static_cast<size_t>(i)] = label;
    for (int j = 0; j < o.num_features; ++j) {
      d.features(i, j) = centres(label, j) + static_cast<float>(rng.Normal());
    }
  }
  return d;
}

}  // namespace

absl::StatusOr<Dataset::Matrix> ReadIdxImages(const std::string& path, int max_examples) {
  absl::StatusOr<GzFile> f = OpenGz(path);
  if (!f.ok()) return f.status();
  absl::StatusOr<std::vector<uint32_t>> dims = ReadIdxHeader(f->get(), path, kIdxImagesMagic, 3);
  if (!dims.ok()) return dims.status();
  const uint32_t count = Capped((*dims)[0], max_examples);
  const uint64_t pixels = uint64_t{(*dims)[1]} * (*dims)[2];
  if (pixels == 0 || pixels > (1u << 20)) {
    return absl::DataLossError(absl::StrCat(path, ": implausible image size ", (*dims)[1],
                                            " x ", (*dims)[2]));
  }
  if (count * pixels > kMaxIdxValues) {  // < 2^52: no overflow
    return absl::DataLossError(absl::StrCat(path, ": ", count, " images of ", pixels,
                                            " pixels are more than the 2^31 values read"));
  }
  absl::StatusOr<std::vector<unsigned char>> values = ReadValues(f->get(), count * pixels, path);
  if (!values.ok()) return values.status();
  Dataset::Matrix x(count, static_cast<Eigen::Index>(pixels));
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    x.data()[i] = static_cast<float>((*values)[static_cast<std::size_t>(i)]) / 255.0f;
  }
  return x;
}

absl::StatusOr<std::vector<int>> ReadIdxLabels(const std::string& path, int max_examples) {
  absl::StatusOr<GzFile> f = OpenGz(path);
  if (!f.ok()) return f.status();
  absl::StatusOr<std::vector<uint32_t>> dims = ReadIdxHeader(f->get(), path, kIdxLabelsMagic, 1);
  if (!dims.ok()) return dims.status();
  const uint32_t count = Capped((*dims)[0], max_examples);
  if (count > kMaxIdxValues) {
    return absl::DataLossError(absl::StrCat(path, ": ", count, " labels are more than the 2^31 "
                                            "values read"));
  }
  absl::StatusOr<std::vector<unsigned char>> raw = ReadValues(f->get(), count, path);
  if (!raw.ok()) return raw.status();
  return std::vector<int>(raw->begin(), raw->end());
}

absl::StatusOr<DataSplit> LoadFashionMnist(const std::string& dir, int max_train,
                                           int max_test) {
  DataSplit split;
  split.name = "fashion-mnist";
  absl::StatusOr<Dataset> train = LoadIdxPair(dir + "/train-images-idx3-ubyte.gz",
                                              dir + "/train-labels-idx1-ubyte.gz", max_train);
  if (!train.ok()) return train.status();
  absl::StatusOr<Dataset> test = LoadIdxPair(dir + "/t10k-images-idx3-ubyte.gz",
                                             dir + "/t10k-labels-idx1-ubyte.gz", max_test);
  if (!test.ok()) return test.status();
  split.train = *std::move(train);
  split.test = *std::move(test);
  return split;
}

absl::Status CheckDataSplit(const DataSplit& d, std::string_view model) {
  const Dataset& train = d.train;
  if (train.num_classes < 2 || train.num_examples() < 1 || d.test.num_examples() < 1 ||
      d.test.num_features() != train.num_features() ||
      train.labels.size() != static_cast<size_t>(train.num_examples())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s model: need >= 2 classes, a non-empty train and test split with the same "
        "number of features and one label per example; got %d classes, %d x %d train, "
        "%d x %d test",
        model, train.num_classes, train.num_examples(), train.num_features(),
        d.test.num_examples(), d.test.num_features()));
  }
  return absl::OkStatus();
}

Dataset::Matrix Dataset::Rows(std::span<const int> examples) const {
  Matrix x(static_cast<Eigen::Index>(examples.size()), features.cols());
  for (std::size_t i = 0; i < examples.size(); ++i) {
    x.row(static_cast<Eigen::Index>(i)) = features.row(examples[i]);
  }
  return x;
}

void StandardizeFeatures(DataSplit& split) {
  const Dataset::Matrix& x = split.train.features;
  double sum = 0.0;
  double sum_sq = 0.0;
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const double v = x.data()[i];
    sum += v;
    sum_sq += v * v;
  }
  const double n = std::max<double>(1.0, static_cast<double>(x.size()));
  const double mean = sum / n;
  const double stddev = std::sqrt(std::max(0.0, sum_sq / n - mean * mean));
  const double unit = stddev > 0.0 ? stddev : 1.0;
  const auto scale = static_cast<float>(1.0 / unit);
  const auto offset = static_cast<float>(-mean / unit);
  for (Dataset* d : {&split.train, &split.test}) {
    d->features.array() = d->features.array() * scale + offset;
  }
  split.name += "+std";
}

absl::StatusOr<DataSplit> MakeGaussianClusters(const ClusterOptions& o) {
  if (o.num_classes < 2 || o.num_features < 1 || o.num_train < 1 || o.num_test < 1 ||
      !(o.separation >= 0.0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gaussian clusters: need num_classes >= 2, num_features >= 1, num_train >= 1, "
        "num_test >= 1, separation >= 0; got ",
        o.num_classes, ", ", o.num_features, ", ", o.num_train, ", ", o.num_test, ", ",
        o.separation));
  }
  Rng rng(StreamSeed(o.seed, kModelStream, 1));
  Eigen::MatrixXf centres(o.num_classes, o.num_features);
  for (Eigen::Index k = 0; k < centres.rows(); ++k) {
    for (Eigen::Index j = 0; j < centres.cols(); ++j) {
      centres(k, j) = static_cast<float>(o.separation * rng.Normal());
    }
  }
  DataSplit split;
  split.name = "gaussian-clusters";
  split.train = DrawClusters(o, centres, o.num_train, rng);
  split.test = DrawClusters(o, centres, o.num_test, rng);
  return split;
}

}  // namespace kairos::sim
