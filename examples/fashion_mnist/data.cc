// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// IDX reading through zlib's gz* interface (which reads plain files too). The header's sizes are
// checked against bounds before anything is allocated, and the values are read in blocks, so a
// header that announces more than the file holds costs no more memory than the file itself before
// it is reported as truncated.

#include "fashion_mnist/data.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fmnist {
namespace {

constexpr uint32_t kIdxImagesMagic = 0x00000803;  // unsigned bytes, 3 dimensions
constexpr uint32_t kIdxLabelsMagic = 0x00000801;  // unsigned bytes, 1 dimension
constexpr size_t kReadBlock = size_t{1} << 20;

struct GzCloser {
  void operator()(gzFile_s *f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

absl::StatusOr<GzFile> Open(const std::string &path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return absl::NotFoundError(absl::StrCat(path, ": no such file"));
  }
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::DataLossError(absl::StrCat(path, ": not a regular file"));
  }
  GzFile f(gzopen(path.c_str(), "rb"));
  if (f == nullptr) return absl::NotFoundError(absl::StrCat(path, ": cannot be opened"));
  return f;
}

// Reads up to `size` bytes into `out`; returns how many, or an error for a corrupt gzip stream.
absl::StatusOr<size_t> ReadSome(gzFile_s *f, uint8_t *out, size_t size, const std::string &path) {
  size_t done = 0;
  while (done < size) {
    const auto want = static_cast<unsigned>(std::min(size - done, kReadBlock));
    const int n = gzread(f, out + done, want);
    if (n < 0) {
      int code = 0;
      const char *message = gzerror(f, &code);
      return absl::DataLossError(absl::StrCat(path, ": cannot be decompressed after ", done,
                                              " bytes of values (", message, ")"));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

// The magic number and the dimension sizes of an IDX header.
absl::StatusOr<std::vector<uint32_t>> ReadHeader(gzFile_s *f, const std::string &path,
                                                 uint32_t magic, int dims) {
  std::vector<uint8_t> raw(4 * (1 + static_cast<size_t>(dims)));
  absl::StatusOr<size_t> got = ReadSome(f, raw.data(), raw.size(), path);
  if (!got.ok()) return got.status();
  const auto word = [&](size_t i) {
    return (uint32_t{raw[4 * i]} << 24) | (uint32_t{raw[4 * i + 1]} << 16) |
           (uint32_t{raw[4 * i + 2]} << 8) | uint32_t{raw[4 * i + 3]};
  };
  if (*got >= 4 && word(0) != magic) {
    return absl::DataLossError(
        absl::StrFormat("%s: not an IDX %s file (magic number 0x%08x, expected 0x%08x)", path,
                        magic == kIdxImagesMagic ? "image" : "label", word(0), magic));
  }
  if (*got < raw.size()) {
    return absl::DataLossError(
        absl::StrCat(path, ": truncated in its header (", *got, " of ", raw.size(), " bytes)"));
  }
  std::vector<uint32_t> sizes;
  for (int i = 1; i <= dims; ++i) sizes.push_back(word(static_cast<size_t>(i)));
  return sizes;
}

uint64_t Capped(uint32_t available, int max_examples) {
  if (max_examples < 0) return available;
  return std::min<uint64_t>(available, static_cast<uint64_t>(max_examples));
}

// Reads exactly `count` bytes of values, or says how far the file got.
absl::StatusOr<std::vector<uint8_t>> ReadValues(gzFile_s *f, uint64_t count,
                                                const std::string &path,
                                                const std::string &announced) {
  std::vector<uint8_t> values;
  values.reserve(static_cast<size_t>(std::min<uint64_t>(count, kReadBlock)));
  while (values.size() < count) {
    const size_t before = values.size();
    const size_t want = static_cast<size_t>(std::min<uint64_t>(count - before, kReadBlock));
    values.resize(before + want);
    absl::StatusOr<size_t> got = ReadSome(f, values.data() + before, want, path);
    if (!got.ok()) return got.status();
    if (*got < want) {
      return absl::DataLossError(absl::StrCat(path, ": truncated: the header announces ", announced,
                                              " but the file ends after ", before + *got,
                                              " of the ", count, " bytes of values read"));
    }
  }
  return values;
}

absl::StatusOr<Dataset> LoadPair(const std::string &images, const std::string &labels,
                                 int max_examples) {
  absl::StatusOr<PixelMatrix> x = ReadIdxImages(images, max_examples);
  if (!x.ok()) return x.status();
  absl::StatusOr<std::vector<int>> y = ReadIdxLabels(labels, max_examples);
  if (!y.ok()) return y.status();
  if (x->cols() != static_cast<Eigen::Index>(y->size())) {
    return absl::DataLossError(absl::StrCat(images, " holds ", x->cols(), " images but ", labels,
                                            " holds ", y->size(), " labels"));
  }
  Dataset d;
  d.pixels = *std::move(x);
  d.labels = *std::move(y);
  return d;
}

}  // namespace

void Dataset::Gather(std::span<const int> examples, Eigen::MatrixXf *x, std::vector<int> *y) const {
  const auto n = static_cast<Eigen::Index>(examples.size());
  x->resize(pixels.rows(), n);
  y->resize(examples.size());
  for (Eigen::Index j = 0; j < n; ++j) {
    const int e = examples[static_cast<size_t>(j)];
    x->col(j) = (pixels.col(e).cast<float>() * scale).array() + offset;
    (*y)[static_cast<size_t>(j)] = labels[static_cast<size_t>(e)];
  }
}

Eigen::MatrixXf Dataset::Features(int first, int count) const {
  return (pixels.middleCols(first, count).cast<float>() * scale).array() + offset;
}

void Dataset::Standardize() {
  double sum = 0.0;
  double sum_sq = 0.0;
  for (Eigen::Index i = 0; i < pixels.size(); ++i) {
    const double p = pixels.data()[i];
    sum += p;
    sum_sq += p * p;
  }
  const double n = std::max<double>(1.0, static_cast<double>(pixels.size()));
  const double mean = sum / n;
  const double stddev = std::sqrt(std::max(0.0, sum_sq / n - mean * mean));
  const double unit = stddev > 0.0 ? stddev : 255.0;
  scale = static_cast<float>(1.0 / unit);
  offset = static_cast<float>(-mean / unit);
}

absl::StatusOr<PixelMatrix> ReadIdxImages(const std::string &path, int max_examples) {
  absl::StatusOr<GzFile> f = Open(path);
  if (!f.ok()) return f.status();
  absl::StatusOr<std::vector<uint32_t>> dims = ReadHeader(f->get(), path, kIdxImagesMagic, 3);
  if (!dims.ok()) return dims.status();
  const uint64_t count = Capped((*dims)[0], max_examples);
  const uint64_t pixels = uint64_t{(*dims)[1]} * (*dims)[2];
  if (pixels == 0 || pixels > (uint64_t{1} << 24) || (*dims)[0] == 0 ||
      count * pixels > kMaxIdxValues) {
    return absl::DataLossError(absl::StrCat(path, ": implausible sizes ", (*dims)[0], " x ",
                                            (*dims)[1], " x ", (*dims)[2],
                                            " (images of 1 to 2^24 pixels, at most 2^31 "
                                            "values read)"));
  }
  absl::StatusOr<std::vector<uint8_t>> values =
      ReadValues(f->get(), count * pixels, path,
                 absl::StrCat((*dims)[0], " images of ", (*dims)[1], " x ", (*dims)[2]));
  if (!values.ok()) return values.status();
  // The file is row-major count x pixels: as a column-major pixels x count matrix, each image is a
  // column.
  return Eigen::Map<const PixelMatrix>(values->data(), static_cast<Eigen::Index>(pixels),
                                       static_cast<Eigen::Index>(count));
}

absl::StatusOr<std::vector<int>> ReadIdxLabels(const std::string &path, int max_examples) {
  absl::StatusOr<GzFile> f = Open(path);
  if (!f.ok()) return f.status();
  absl::StatusOr<std::vector<uint32_t>> dims = ReadHeader(f->get(), path, kIdxLabelsMagic, 1);
  if (!dims.ok()) return dims.status();
  const uint64_t count = Capped((*dims)[0], max_examples);
  if ((*dims)[0] == 0 || count > kMaxIdxValues) {
    return absl::DataLossError(absl::StrCat(path, ": implausible label count ", (*dims)[0]));
  }
  absl::StatusOr<std::vector<uint8_t>> values =
      ReadValues(f->get(), count, path, absl::StrCat((*dims)[0], " labels"));
  if (!values.ok()) return values.status();
  for (size_t i = 0; i < values->size(); ++i) {
    if ((*values)[i] >= kNumClasses) {
      return absl::DataLossError(absl::StrCat(path, ": label ", int{(*values)[i]}, " of example ",
                                              i, " is not a class (0 to ", kNumClasses - 1, ")"));
    }
  }
  return std::vector<int>(values->begin(), values->end());
}

absl::StatusOr<FashionMnist> LoadFashionMnist(const std::string &dir, int max_train, int max_test) {
  FashionMnist data;
  absl::StatusOr<Dataset> train =
      LoadPair(dir + "/train-images-idx3-ubyte.gz", dir + "/train-labels-idx1-ubyte.gz", max_train);
  if (!train.ok()) return train.status();
  absl::StatusOr<Dataset> test =
      LoadPair(dir + "/t10k-images-idx3-ubyte.gz", dir + "/t10k-labels-idx1-ubyte.gz", max_test);
  if (!test.ok()) return test.status();
  if (train->num_features() != test->num_features()) {
    return absl::DataLossError(absl::StrCat(dir, ": training images have ", train->num_features(),
                                            " pixels, test images ", test->num_features()));
  }
  data.train = *std::move(train);
  data.test = *std::move(test);
  data.train.Standardize();
  data.test.scale = data.train.scale;
  data.test.offset = data.train.offset;
  return data;
}

}  // namespace fmnist
