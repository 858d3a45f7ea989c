// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The Fashion-MNIST example's IDX reader on small files the test writes (gzip'd and plain): exact
// values, the cap on examples, and clear errors for a missing file, a wrong magic number, a
// truncated header, truncated values, a corrupt gzip stream, implausible sizes and labels out of
// range; the loader of a whole directory; standardization; the shards.

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "fashion_mnist/data.h"
#include "fashion_mnist/streams.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fmnist {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> BigEndian(uint32_t v) {
  return {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16),
          static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
}

// An IDX file's bytes: magic, sizes, values.
std::vector<uint8_t> Idx(uint32_t magic, const std::vector<uint32_t> &sizes,
                         const std::vector<uint8_t> &values) {
  std::vector<uint8_t> out = BigEndian(magic);
  for (uint32_t s : sizes) {
    const std::vector<uint8_t> b = BigEndian(s);
    out.insert(out.end(), b.begin(), b.end());
  }
  out.insert(out.end(), values.begin(), values.end());
  return out;
}

// 3 images of 2 x 2: image i has pixels 10 i + (0, 1, 2, 3).
std::vector<uint8_t> ThreeImages() {
  std::vector<uint8_t> v;
  for (int i = 0; i < 3; ++i) {
    for (int p = 0; p < 4; ++p) v.push_back(static_cast<uint8_t>(10 * i + p));
  }
  return Idx(0x803, {3, 2, 2}, v);
}

class IdxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kairos_fmnist_data_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string WritePlain(const std::string &name, const std::vector<uint8_t> &bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    return path;
  }
  std::string WriteGzip(const std::string &name, const std::vector<uint8_t> &bytes) {
    const std::string path = (dir_ / name).string();
    gzFile f = gzopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
              static_cast<int>(bytes.size()));
    gzclose(f);
    return path;
  }
  std::vector<uint8_t> ReadBytes(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
  }

  std::filesystem::path dir_;
};

TEST_F(IdxTest, ReadsImagesGzipAndPlain) {
  for (const std::string &path :
       {WriteGzip("images.gz", ThreeImages()), WritePlain("images", ThreeImages())}) {
    absl::StatusOr<PixelMatrix> x = ReadIdxImages(path, -1);
    ASSERT_TRUE(x.ok()) << x.status();
    ASSERT_EQ(x->rows(), 4);  // pixels
    ASSERT_EQ(x->cols(), 3);  // images
    for (int i = 0; i < 3; ++i) {
      for (int p = 0; p < 4; ++p) EXPECT_EQ((*x)(p, i), 10 * i + p) << path;
    }
  }
  absl::StatusOr<PixelMatrix> two = ReadIdxImages(WriteGzip("i2.gz", ThreeImages()), 2);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->cols(), 2);
  EXPECT_EQ((*two)(3, 1), 13);
}

TEST_F(IdxTest, ReadsLabels) {
  const std::string path = WriteGzip("labels.gz", Idx(0x801, {4}, {9, 0, 3, 3}));
  absl::StatusOr<std::vector<int>> y = ReadIdxLabels(path, -1);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, (std::vector<int>{9, 0, 3, 3}));
  EXPECT_EQ(*ReadIdxLabels(path, 1), std::vector<int>{9});
}

TEST_F(IdxTest, MissingFileIsNotFound) {
  absl::StatusOr<PixelMatrix> x = ReadIdxImages((dir_ / "nope.gz").string(), -1);
  EXPECT_EQ(x.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(x.status().message(), HasSubstr("nope.gz: no such file"));
}

TEST_F(IdxTest, WrongMagicNumberNamesBoth) {
  // A label file given as images, and the reverse.
  const std::string labels = WriteGzip("labels.gz", Idx(0x801, {2}, {1, 2}));
  absl::StatusOr<PixelMatrix> x = ReadIdxImages(labels, -1);
  EXPECT_EQ(x.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(x.status().message(),
              HasSubstr("labels.gz: not an IDX image file (magic number 0x00000801, expected "
                        "0x00000803)"));
  absl::StatusOr<std::vector<int>> y = ReadIdxLabels(WritePlain("images", ThreeImages()), -1);
  EXPECT_EQ(y.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(y.status().message(), HasSubstr("not an IDX label file"));
  // Not an IDX file at all.
  x = ReadIdxImages(WritePlain("text", {'h', 'e', 'l', 'l', 'o', '!', '!', '!'}), -1);
  EXPECT_THAT(x.status().message(), HasSubstr("magic number 0x68656c6c"));
}

TEST_F(IdxTest, TruncatedFilesSayHowFarTheyGot) {
  std::vector<uint8_t> bytes = ThreeImages();
  bytes.resize(bytes.size() - 5);  // 7 of the 12 pixel bytes are left
  for (const std::string &path : {WritePlain("cut", bytes), WriteGzip("cut.gz", bytes)}) {
    absl::StatusOr<PixelMatrix> x = ReadIdxImages(path, -1);
    EXPECT_EQ(x.status().code(), absl::StatusCode::kDataLoss) << path;
    EXPECT_THAT(x.status().message(),
                HasSubstr("truncated: the header announces 3 images of 2 x 2 but the file "
                          "ends after 7 of the 12 bytes of values read"));
  }
  // Cut inside the header.
  absl::StatusOr<PixelMatrix> x = ReadIdxImages(WritePlain("head", {0, 0, 8, 3, 0, 0}), -1);
  EXPECT_EQ(x.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(x.status().message(), HasSubstr("truncated in its header (6 of 16 bytes)"));
  // Labels: fewer than announced, even when the caller asks for fewer than announced.
  const std::string labels = WriteGzip("l.gz", Idx(0x801, {10}, {1, 2, 3}));
  EXPECT_THAT(ReadIdxLabels(labels, -1).status().message(),
              HasSubstr("the header announces 10 labels but the file ends after 3"));
  EXPECT_TRUE(ReadIdxLabels(labels, 3).ok());
  EXPECT_FALSE(ReadIdxLabels(labels, 4).ok());
}

TEST_F(IdxTest, CorruptGzipStreamIsDataLoss) {
  // A gzip file whose compressed stream is cut in the middle.
  std::vector<uint8_t> values(4000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint8_t>(i * 7919 % 251);
  std::vector<uint8_t> gz = ReadBytes(WriteGzip("whole.gz", Idx(0x803, {1000, 2, 2}, values)));
  gz.resize(gz.size() / 2);
  absl::StatusOr<PixelMatrix> x = ReadIdxImages(WritePlain("half.gz", gz), -1);
  EXPECT_EQ(x.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(x.status().message(), HasSubstr("half.gz"));
}

TEST_F(IdxTest, ImplausibleSizesAreRefusedBeforeAllocating) {
  // 4 billion images of 1 pixel (more than the reader ever reads), an empty image, no image.
  for (const auto &sizes : std::vector<std::vector<uint32_t>>{
           {0xffffffffu, 1, 1}, {5, 0, 28}, {0, 28, 28}, {5, 65536, 65536}}) {
    absl::StatusOr<PixelMatrix> x = ReadIdxImages(WritePlain("big", Idx(0x803, sizes, {})), -1);
    EXPECT_EQ(x.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(x.status().message(), HasSubstr("implausible sizes"));
  }
  // A large count that the caller caps is fine when the file holds that many.
  EXPECT_TRUE(ReadIdxImages(WritePlain("capped", Idx(0x803, {0xffffffffu, 1, 1}, {1, 2})), 2).ok());
}

TEST_F(IdxTest, LabelsOutOfRangeAreRefused) {
  absl::StatusOr<std::vector<int>> y =
      ReadIdxLabels(WritePlain("l", Idx(0x801, {3}, {1, 10, 2})), -1);
  EXPECT_EQ(y.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(y.status().message(), HasSubstr("label 10 of example 1 is not a class"));
}

TEST_F(IdxTest, LoadsADirectoryAndStandardizes) {
  WriteGzip("train-images-idx3-ubyte.gz", ThreeImages());
  WriteGzip("train-labels-idx1-ubyte.gz", Idx(0x801, {3}, {0, 1, 2}));
  WriteGzip("t10k-images-idx3-ubyte.gz", Idx(0x803, {1, 2, 2}, {0, 0, 0, 0}));
  WriteGzip("t10k-labels-idx1-ubyte.gz", Idx(0x801, {1}, {5}));
  absl::StatusOr<FashionMnist> data = LoadFashionMnist(dir_.string());
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->train.num_examples(), 3);
  EXPECT_EQ(data->train.num_features(), 4);
  EXPECT_EQ(data->test.labels, std::vector<int>{5});
  // The training features have mean 0 and variance 1; the test set uses the same transform.
  const Eigen::MatrixXf x = data->train.Features(0, 3);
  EXPECT_NEAR(x.mean(), 0.0f, 1e-5f);
  EXPECT_NEAR((x.array() * x.array()).mean(), 1.0f, 1e-5f);
  EXPECT_EQ(data->test.scale, data->train.scale);
  EXPECT_EQ(data->test.offset, data->train.offset);
  Eigen::MatrixXf gathered;
  std::vector<int> labels;
  const std::vector<int> pick = {2, 0};
  data->train.Gather(pick, &gathered, &labels);
  EXPECT_EQ(labels, (std::vector<int>{2, 0}));
  EXPECT_EQ(gathered.col(0), x.col(2));
  EXPECT_EQ(gathered.col(1), x.col(0));

  // Images and labels that disagree in count.
  WriteGzip("t10k-labels-idx1-ubyte.gz", Idx(0x801, {2}, {5, 6}));
  data = LoadFashionMnist(dir_.string());
  EXPECT_EQ(data.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(data.status().message(), HasSubstr("holds 1 images but"));
  // A missing file.
  std::filesystem::remove(dir_ / "train-labels-idx1-ubyte.gz");
  EXPECT_EQ(LoadFashionMnist(dir_.string()).status().code(), absl::StatusCode::kNotFound);
}

TEST(ShardTest, ShardsAreDisjointCoverAndBalanced) {
  constexpr int kExamples = 1003;
  constexpr int kWorkers = 4;
  std::set<int> seen;
  for (int r = 0; r < kWorkers; ++r) {
    const std::vector<int> s = Shard(kExamples, r, kWorkers, 7);
    EXPECT_GE(s.size(), static_cast<size_t>(kExamples / kWorkers));
    EXPECT_LE(s.size(), static_cast<size_t>(kExamples / kWorkers + 1));
    for (int e : s) EXPECT_TRUE(seen.insert(e).second) << "example " << e << " twice";
    EXPECT_EQ(s, Shard(kExamples, r, kWorkers, 7));  // the same in every process
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kExamples));
  EXPECT_NE(Shard(kExamples, 0, kWorkers, 7), Shard(kExamples, 0, kWorkers, 8));
}

// Non-IID shards: disjoint, covering and balanced as Shard's, and with labels 0..9 in equal
// numbers over 5 workers, each worker holds exactly two classes.
TEST(ShardTest, ShardsByClassHoldFewClassesEach) {
  constexpr int kWorkers = 5;
  std::vector<int> labels;
  for (int i = 0; i < 1000; ++i) labels.push_back(i % 10);
  std::set<int> seen;
  for (int r = 0; r < kWorkers; ++r) {
    const std::vector<int> s = ShardByClass(labels, r, kWorkers, 7);
    ASSERT_EQ(s.size(), 200u);
    std::set<int> classes;
    for (int e : s) {
      EXPECT_TRUE(seen.insert(e).second) << "example " << e << " twice";
      classes.insert(labels[static_cast<size_t>(e)]);
    }
    EXPECT_EQ(classes, (std::set<int>{2 * r, 2 * r + 1})) << r;
    EXPECT_EQ(s, ShardByClass(labels, r, kWorkers, 7));
  }
  EXPECT_EQ(seen.size(), labels.size());
  // The control: random shards hold every class.
  std::set<int> classes;
  for (int e : Shard(1000, 0, kWorkers, 7)) classes.insert(labels[static_cast<size_t>(e)]);
  EXPECT_EQ(classes.size(), 10u);
}

}  // namespace
// A worker's walk: each epoch a permutation of the examples of its shard it uses, a new one
// every epoch; RunBatches by iteration is that walk, asked in order or from the start again.
TEST(EpochOrderTest, RunBatchesIsTheTrainersWalkEpochByEpoch) {
  constexpr int kExamples = 103;
  constexpr int kWorkers = 3;
  const EpochShape shape = ShapeOfEpochs(kExamples, kWorkers, 8);
  EXPECT_EQ(shape.batch, 8);
  EXPECT_EQ(shape.iterations, 4);               // 34 examples in the smallest shard
  EXPECT_EQ(ShapeOfEpochs(10, 4, 8).batch, 2);  // capped at the smallest shard
  RunBatches run(kExamples, kWorkers, 8, 5);
  for (int w = 0; w < kWorkers; ++w) {
    const std::vector<int> shard = Shard(kExamples, w, kWorkers, 5);
    EpochOrder walk(shard, 5, w);
    std::vector<int> first;
    for (int epoch = 0; epoch < 3; ++epoch) {
      walk.Shuffle();
      std::vector<int> used;
      for (int it = 0; it < shape.iterations; ++it) {
        const std::span<const int> expected = walk.Batch(it, shape.batch);
        const std::span<const int> got = run.Batch(w, int64_t{epoch} * shape.iterations + it);
        ASSERT_TRUE(std::equal(got.begin(), got.end(), expected.begin(), expected.end()))
            << "worker " << w << " epoch " << epoch << " batch " << it;
        used.insert(used.end(), got.begin(), got.end());
      }
      std::set<int> distinct(used.begin(), used.end());
      EXPECT_EQ(distinct.size(), used.size());  // no example twice in an epoch
      for (int e : used) {
        EXPECT_EQ(std::count(shard.begin(), shard.end(), e), 1) << e;
      }
      if (epoch == 0) {
        first = used;
      } else {
        EXPECT_NE(used, first);  // reshuffled
      }
    }
    // From the start again: the first batch of the first epoch.
    const std::span<const int> again = run.Batch(w, 0);
    EXPECT_EQ(std::vector<int>(again.begin(), again.end()),
              std::vector<int>(first.begin(), first.begin() + shape.batch));
  }
  // Another seed, another walk.
  RunBatches other(kExamples, kWorkers, 8, 6);
  const std::span<const int> a = run.Batch(0, 0);
  const std::vector<int> copy(a.begin(), a.end());
  const std::span<const int> b = other.Batch(0, 0);
  EXPECT_NE(copy, std::vector<int>(b.begin(), b.end()));
}

}  // namespace fmnist
