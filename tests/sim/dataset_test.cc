// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the data sets: the IDX reader on small gzip'd files written here with zlib, the
// synthetic clusters, and a Fashion-MNIST subset that is skipped when it is not installed.

#include "sim/dataset.h"

#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kairos::sim {
namespace {

using ::testing::HasSubstr;

void PutBigEndian32(std::vector<unsigned char>& out, uint32_t x) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<unsigned char>(x >> shift));
  }
}

void WriteGz(const std::string& path, const std::vector<unsigned char>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

// `count` images of rows x cols pixels, pixel (i, j) = (i * 10 + j) % 256.
std::vector<unsigned char> IdxImages(uint32_t count, uint32_t rows, uint32_t cols) {
  std::vector<unsigned char> out;
  PutBigEndian32(out, 0x00000803);
  PutBigEndian32(out, count);
  PutBigEndian32(out, rows);
  PutBigEndian32(out, cols);
  for (uint32_t i = 0; i < count; ++i) {
    for (uint32_t j = 0; j < rows * cols; ++j) {
      out.push_back(static_cast<unsigned char>((i * 10 + j) % 256));
    }
  }
  return out;
}

std::vector<unsigned char> IdxLabels(const std::vector<unsigned char>& labels) {
  std::vector<unsigned char> out;
  PutBigEndian32(out, 0x00000801);
  PutBigEndian32(out, static_cast<uint32_t>(labels.size()));
  out.insert(out.end(), labels.begin(), labels.end());
  return out;
}

class IdxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = std::filesystem::path(::testing::TempDir()) / ("kairos_idx_" + test);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

TEST_F(IdxTest, ReadsImagesScaledToUnitInterval) {
  WriteGz(Path("img.gz"), IdxImages(3, 2, 2));
  absl::StatusOr<Dataset::Matrix> x = ReadIdxImages(Path("img.gz"), -1);
  ASSERT_TRUE(x.ok()) << x.status();
  ASSERT_EQ(x->rows(), 3);
  ASSERT_EQ(x->cols(), 4);
  EXPECT_FLOAT_EQ((*x)(0, 0), 0.0f);
  EXPECT_FLOAT_EQ((*x)(2, 3), 23.0f / 255.0f);
}

TEST_F(IdxTest, ReadsAtMostMaxExamples) {
  WriteGz(Path("img.gz"), IdxImages(5, 2, 2));
  WriteGz(Path("lab.gz"), IdxLabels({1, 2, 3, 4, 5}));
  absl::StatusOr<Dataset::Matrix> x = ReadIdxImages(Path("img.gz"), 2);
  absl::StatusOr<std::vector<int>> y = ReadIdxLabels(Path("lab.gz"), 2);
  ASSERT_TRUE(x.ok() && y.ok());
  EXPECT_EQ(x->rows(), 2);
  EXPECT_EQ(*y, (std::vector<int>{1, 2}));
}

TEST_F(IdxTest, MissingFileIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(ReadIdxImages(Path("nothing.gz"), -1).status()));
  EXPECT_TRUE(absl::IsNotFound(LoadFashionMnist(Path("nowhere"), 10, 10).status()));
}

TEST_F(IdxTest, WrongMagicIsDataLoss) {
  WriteGz(Path("lab.gz"), IdxLabels({1, 2}));
  EXPECT_TRUE(absl::IsDataLoss(ReadIdxImages(Path("lab.gz"), -1).status()));
  WriteGz(Path("img.gz"), IdxImages(1, 2, 2));
  EXPECT_TRUE(absl::IsDataLoss(ReadIdxLabels(Path("img.gz"), -1).status()));
}

TEST_F(IdxTest, TruncatedFileIsDataLoss) {
  std::vector<unsigned char> bytes = IdxImages(4, 3, 3);
  bytes.resize(bytes.size() - 5);
  WriteGz(Path("img.gz"), bytes);
  EXPECT_TRUE(absl::IsDataLoss(ReadIdxImages(Path("img.gz"), -1).status()));
}

// A header is input: one that announces more than the file holds is refused as truncated,
// and one over the 2^31 values read is refused by size, before anything is allocated for it
// (4 billion images of 28 x 28 would be 12 TB of floats).
TEST_F(IdxTest, AHeaderAnnouncingMoreThanTheFileHoldsIsDataLossWithoutAllocatingIt) {
  std::vector<unsigned char> huge;
  PutBigEndian32(huge, 0x00000803);
  PutBigEndian32(huge, 0xffffffffu);
  PutBigEndian32(huge, 28);
  PutBigEndian32(huge, 28);
  WriteGz(Path("huge.gz"), huge);
  absl::Status s = ReadIdxImages(Path("huge.gz"), -1).status();
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("2^31"));

  std::vector<unsigned char> short_file = IdxImages(2, 10, 10);
  short_file[7] = 200;  // the count's low byte: 200 images announced, 2 held
  WriteGz(Path("short.gz"), short_file);
  s = ReadIdxImages(Path("short.gz"), -1).status();
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("holds 200"));

  std::vector<unsigned char> labels;
  PutBigEndian32(labels, 0x00000801);
  PutBigEndian32(labels, 0xffffffffu);
  WriteGz(Path("labels.gz"), labels);
  EXPECT_TRUE(absl::IsDataLoss(ReadIdxLabels(Path("labels.gz"), -1).status()));
}

TEST_F(IdxTest, LoadsASplitFromADirectory) {
  WriteGz(Path("train-images-idx3-ubyte.gz"), IdxImages(4, 2, 3));
  WriteGz(Path("train-labels-idx1-ubyte.gz"), IdxLabels({0, 9, 3, 3}));
  WriteGz(Path("t10k-images-idx3-ubyte.gz"), IdxImages(2, 2, 3));
  WriteGz(Path("t10k-labels-idx1-ubyte.gz"), IdxLabels({5, 6}));
  absl::StatusOr<DataSplit> split = LoadFashionMnist(dir_.string(), -1, -1);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->name, "fashion-mnist");
  EXPECT_EQ(split->train.num_examples(), 4);
  EXPECT_EQ(split->train.num_features(), 6);
  EXPECT_EQ(split->train.num_classes, 10);
  EXPECT_EQ(split->test.labels, (std::vector<int>{5, 6}));
}

TEST_F(IdxTest, ImagesAndLabelsOfDifferentCountsAreDataLoss) {
  WriteGz(Path("train-images-idx3-ubyte.gz"), IdxImages(4, 2, 3));
  WriteGz(Path("train-labels-idx1-ubyte.gz"), IdxLabels({0, 9, 3}));
  WriteGz(Path("t10k-images-idx3-ubyte.gz"), IdxImages(2, 2, 3));
  WriteGz(Path("t10k-labels-idx1-ubyte.gz"), IdxLabels({5, 6}));
  EXPECT_TRUE(absl::IsDataLoss(LoadFashionMnist(dir_.string(), -1, -1).status()));
}

TEST(GaussianClustersTest, HasTheRequestedShapeAndIsDeterministic) {
  const ClusterOptions o{.num_classes = 3, .num_features = 5, .num_train = 40, .num_test = 7};
  absl::StatusOr<DataSplit> a = MakeGaussianClusters(o);
  absl::StatusOr<DataSplit> b = MakeGaussianClusters(o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->train.num_examples(), 40);
  EXPECT_EQ(a->test.num_examples(), 7);
  EXPECT_EQ(a->train.num_features(), 5);
  EXPECT_EQ(a->train.num_classes, 3);
  EXPECT_EQ(a->train.features, b->train.features);
  EXPECT_EQ(a->train.labels, b->train.labels);
  for (int label : a->train.labels) {
    EXPECT_GE(label, 0);
    EXPECT_LT(label, 3);
  }
}

TEST(GaussianClustersTest, RejectsBadOptions) {
  EXPECT_TRUE(absl::IsInvalidArgument(MakeGaussianClusters({.num_classes = 1}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(MakeGaussianClusters({.num_train = 0}).status()));
}

TEST(FashionMnistTest, LoadsASubsetWhenInstalled) {
  if (!std::filesystem::exists(std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST is not installed in " << kFashionMnistDir;
  }
  absl::StatusOr<DataSplit> split = LoadFashionMnist(kFashionMnistDir, 100, 50);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->train.num_examples(), 100);
  EXPECT_EQ(split->test.num_examples(), 50);
  EXPECT_EQ(split->train.num_features(), 784);
  EXPECT_GE(split->train.features.minCoeff(), 0.0f);
  EXPECT_LE(split->train.features.maxCoeff(), 1.0f);
  EXPECT_GT(split->train.features.maxCoeff(), 0.5f);
}

}  // namespace
}  // namespace kairos::sim
