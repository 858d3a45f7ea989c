// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The sparse_logreg example's data (examples/sparse_logreg/data.h) on small files the tests
// write: the libsvm reader's exact values and its errors naming the file and line for each
// kind of malformed line (label, id, value, repeated id, a line too long), the writer and the
// weights file read back exactly, and the generator: deterministic per seed, the promised
// shape of each example, power-law id frequencies, the centred bias.

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sparse_logreg/data.h"

namespace logreg {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class LogregLibsvmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kairos_logreg_data_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string &name, const std::string &text) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path, std::ios::binary);
    out << text;
    return path;
  }
  std::string Path(const std::string &name) const { return (dir_ / name).string(); }

  // The error of reading a file holding `text`.
  std::string ErrorOf(const std::string &text) {
    const std::string path = Write("bad.svm", text);
    absl::StatusOr<Dataset> d = ReadLibsvm(path);
    EXPECT_FALSE(d.ok()) << "read: " << text;
    if (d.ok()) return "";
    EXPECT_TRUE(absl::IsInvalidArgument(d.status())) << d.status();
    return std::string(d.status().message());
  }

  std::filesystem::path dir_;
};

TEST_F(LogregLibsvmTest, ReadsExactValues) {
  const std::string path = Write("a.svm",
                                 "1 3:1 7:0.5 18446744073709551615:-2.25\n"
                                 "0 2:1\n"
                                 "\n"
                                 "# a comment line\n"
                                 "-1\t5:1e-3 # trailing comment\r\n"
                                 "+1 0:4\n"
                                 "1.0 9:1");  // no final end of line
  absl::StatusOr<Dataset> d = ReadLibsvm(path);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->num_examples(), 5u);
  EXPECT_THAT(d->labels, ElementsAre(1.0f, 0.0f, 0.0f, 1.0f, 1.0f));
  EXPECT_THAT(d->offsets, ElementsAre(0u, 3u, 4u, 5u, 6u, 7u));
  EXPECT_THAT(d->example_ids(0), ElementsAre(3u, 7u, UINT64_MAX));
  EXPECT_THAT(d->example_values(0), ElementsAre(1.0f, 0.5f, -2.25f));
  EXPECT_THAT(d->example_ids(2), ElementsAre(5u));
  EXPECT_THAT(d->example_values(2), ElementsAre(1e-3f));
  EXPECT_THAT(d->example_ids(3), ElementsAre(0u));
  EXPECT_DOUBLE_EQ(d->PositiveRate(), 0.6);

  absl::StatusOr<Dataset> two = ReadLibsvm(path, 2);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->num_examples(), 2u);
  absl::StatusOr<Dataset> none = ReadLibsvm(path, 0);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->num_examples(), 0u);
}

TEST_F(LogregLibsvmTest, AnExampleWithoutFeatures) {
  absl::StatusOr<Dataset> d = ReadLibsvm(Write("a.svm", "1\n0 4:1\n"));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->num_examples(), 2u);
  EXPECT_EQ(d->num_features(0), 0u);
  EXPECT_EQ(d->num_features(1), 1u);
}

TEST_F(LogregLibsvmTest, MalformedLinesNameTheFileAndLine) {
  const std::string p = Path("bad.svm");
  EXPECT_EQ(ErrorOf("1 1:1\n2 3:1\n"), p + ":2: label '2' is not 0, 1, -1 or +1");
  EXPECT_EQ(ErrorOf("yes 3:1\n"), p + ":1: label 'yes' is not 0, 1, -1 or +1");
  EXPECT_EQ(ErrorOf("1 1:1\n0 1:1\n1 3\n"), p + ":3: feature 1 '3' is not <id>:<value>");
  EXPECT_EQ(ErrorOf("1 -3:1\n"),
            p + ":1: feature 1 '-3:1': the id '-3' is not an unsigned 64-bit integer");
  EXPECT_EQ(ErrorOf("1 +3:1\n"),
            p + ":1: feature 1 '+3:1': the id '+3' is not an unsigned 64-bit integer");
  EXPECT_EQ(ErrorOf("1 2:1 18446744073709551616:1\n"),
            p + ":1: feature 2 '18446744073709551616:1': the id '18446744073709551616' is not "
                "an unsigned 64-bit integer");
  EXPECT_EQ(ErrorOf("1 x:1\n"),
            p + ":1: feature 1 'x:1': the id 'x' is not an unsigned 64-bit integer");
  EXPECT_EQ(ErrorOf("1 :1\n"),
            p + ":1: feature 1 ':1': the id '' is not an unsigned 64-bit integer");
  EXPECT_EQ(ErrorOf("0 4:nan\n"),
            p + ":1: feature 1 '4:nan': the value 'nan' is not a finite number");
  EXPECT_EQ(ErrorOf("0 4:inf\n"),
            p + ":1: feature 1 '4:inf': the value 'inf' is not a finite number");
  EXPECT_EQ(ErrorOf("0 4:1e40\n"),
            p + ":1: feature 1 '4:1e40': the value '1e40' is not a finite number");
  EXPECT_EQ(ErrorOf("0 4:\n"), p + ":1: feature 1 '4:': the value '' is not a finite number");
  EXPECT_EQ(ErrorOf("0 4:1:2\n"),
            p + ":1: feature 1 '4:1:2': the value '1:2' is not a finite number");
  EXPECT_EQ(ErrorOf("\n\n0 4:1 9:1 4:2\n"), p + ":3: feature id 4 appears twice");
}

TEST_F(LogregLibsvmTest, LineLengthIsBounded) {
  // A line of exactly kMaxLineBytes is read (the padding is a comment); one byte more is not.
  std::string line = "1 5:1 #";
  line.resize(kMaxLineBytes, 'x');
  absl::StatusOr<Dataset> ok = ReadLibsvm(Write("long.svm", "0 1:1\n" + line + "\n"));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->num_examples(), 2u);
  EXPECT_EQ(ErrorOf("0 1:1\n" + line + "x\n0 2:1\n"),
            Path("bad.svm") + ":2: the line is longer than 1048576 bytes");
  EXPECT_EQ(ErrorOf("0 1:1\n" + line + "x"),  // the last line, without an end of line
            Path("bad.svm") + ":2: the line is longer than 1048576 bytes");
}

TEST_F(LogregLibsvmTest, MissingFileIsNotFound) {
  absl::StatusOr<Dataset> d = ReadLibsvm(Path("absent.svm"));
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(absl::IsNotFound(d.status())) << d.status();
  EXPECT_THAT(std::string(d.status().message()), HasSubstr("absent.svm"));
}

TEST_F(LogregLibsvmTest, WriteThenReadIsExact) {
  Dataset d;
  const std::vector<uint64_t> a = {1, 99, UINT64_MAX};
  const std::vector<float> av = {1.0f, 0.1f, -3.0e-7f};
  d.Add(1.0f, a, av);
  d.Add(0.0f, std::vector<uint64_t>{}, std::vector<float>{});
  const std::vector<uint64_t> b = {42};
  const std::vector<float> bv = {123456.789f};
  d.Add(0.0f, b, bv);
  const std::string path = Path("out.svm");
  ASSERT_TRUE(WriteLibsvm(path, d).ok());
  absl::StatusOr<Dataset> back = ReadLibsvm(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->labels, d.labels);
  EXPECT_EQ(back->offsets, d.offsets);
  EXPECT_EQ(back->ids, d.ids);
  EXPECT_EQ(back->values, d.values);  // bit for bit
}

TEST_F(LogregLibsvmTest, TrueModelRoundTripAndErrors) {
  TrueModel m;
  m.bias = -1.25;
  m.weights = {0.5f, -0.125f, 3.0e-5f};
  const std::string path = Path("w.txt");
  ASSERT_TRUE(WriteTrueModel(path, m).ok());
  absl::StatusOr<TrueModel> back = ReadTrueModel(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->bias, m.bias);
  EXPECT_EQ(back->weights, m.weights);

  const auto error = [&](const std::string &text) {
    absl::StatusOr<TrueModel> t = ReadTrueModel(Write("bad.txt", text));
    EXPECT_FALSE(t.ok()) << text;
    return t.ok() ? std::string() : std::string(t.status().message());
  };
  const std::string p = Path("bad.txt");
  EXPECT_EQ(error("1 0.5\n"), p + ":1: the first line must be 'bias <value>'");
  EXPECT_EQ(error("bias 1\n1 0.5\n3 0.5\n"), p + ":3: want id 2, found '3'");
  EXPECT_EQ(error("bias 1\n1 nan\n"), p + ":2: the value 'nan' is not a finite number");
  EXPECT_EQ(error("bias 1\n1 2 3\n"), p + ":2: want two fields, found 3");
  EXPECT_EQ(error(""), p + ":1: the file is empty");
}

TEST(LogregTrueModelTest, ScoreIgnoresUnknownIds) {
  TrueModel m;
  m.bias = 0.5;
  m.weights = {1.0f, 2.0f};
  Dataset d;
  d.Add(1.0f, std::vector<uint64_t>{0, 1, 2, 3}, std::vector<float>{7.0f, 1.0f, 0.5f, 9.0f});
  EXPECT_DOUBLE_EQ(m.Score(d, 0), 0.5 + 1.0 + 1.0);
}

TEST(LogregPowerLawTest, ProbabilitiesSumToOneAndFall) {
  for (const double exponent : {0.8, 1.0, 1.3}) {
    const PowerLaw law(1000, exponent);
    double sum = 0.0;
    for (uint64_t id = 1; id <= 1000; ++id) {
      sum += law.Probability(id);
      if (id > 1) {
        EXPECT_LT(law.Probability(id), law.Probability(id - 1));
      }
    }
    EXPECT_NEAR(sum, 1.0, 1e-12) << exponent;
  }
}

TEST(LogregPowerLawTest, IdInvertsTheDistributionFunction) {
  // Every id up to 40000: in the table (kTableIds) and beyond it; and both ends.
  for (const uint64_t n : {uint64_t{100}, uint64_t{1'000'000}}) {
    const PowerLaw law(n, 1.3);
    EXPECT_EQ(law.Id(0.0), 1u);
    EXPECT_EQ(law.Id(std::nextafter(1.0, 0.0)), n);
    double below = 0.0;  // P(id < r)
    for (uint64_t r = 1; r <= std::min<uint64_t>(n, 40000); ++r) {
      const double p = law.Probability(r);
      ASSERT_EQ(law.Id(below + 0.5 * p), r) << "n " << n;  // the middle of r's interval
      below += p;
    }
  }
}

TEST(LogregPowerLawTest, EmpiricalFrequenciesFollowTheLaw) {
  const PowerLaw law(1'000'000, 1.3);
  std::vector<int> counts(21, 0);
  uint64_t tail = 0;
  const int draws = 1'000'000;
  for (int i = 0; i < draws; ++i) {
    const double u = (static_cast<double>(i) + 0.5) / draws;  // a uniform grid
    const uint64_t id = law.Id(u);
    if (id <= 20) ++counts[id];
    if (id > PowerLaw::kTableIds) ++tail;
  }
  for (uint64_t id = 1; id <= 20; ++id) {
    EXPECT_NEAR(counts[id], law.Probability(id) * draws, 1.0) << "id " << id;
  }
  double tail_p = 1.0;
  for (uint64_t id = 1; id <= PowerLaw::kTableIds; ++id) tail_p -= law.Probability(id);
  EXPECT_NEAR(static_cast<double>(tail), tail_p * draws, 2.0);
}

GeneratorConfig Small() {
  GeneratorConfig c;
  c.num_ids = 5000;
  c.train_examples = 9000;  // three blocks, the last partial
  c.test_examples = 1000;
  c.seed = 7;
  return c;
}

TEST(LogregGeneratorTest, DeterministicPerSeed) {
  absl::StatusOr<Generated> a = Generate(Small());
  absl::StatusOr<Generated> b = Generate(Small());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->train.ids, b->train.ids);
  EXPECT_EQ(a->train.labels, b->train.labels);
  EXPECT_EQ(a->test.ids, b->test.ids);
  EXPECT_EQ(a->truth.weights, b->truth.weights);
  EXPECT_EQ(a->truth.bias, b->truth.bias);
  GeneratorConfig other = Small();
  other.seed = 8;
  absl::StatusOr<Generated> c = Generate(other);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->train.ids, c->train.ids);
  EXPECT_NE(a->truth.weights, c->truth.weights);
  EXPECT_NE(a->train.ids, a->test.ids);  // the sets are drawn from different streams
}

TEST(LogregGeneratorTest, TheSameDataWithAnyNumberOfThreads) {
  GeneratorConfig one = Small();
  one.threads = 1;
  GeneratorConfig three = Small();
  three.threads = 3;
  absl::StatusOr<Generated> a = Generate(one);
  absl::StatusOr<Generated> b = Generate(three);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->train.ids, b->train.ids);
  EXPECT_EQ(a->train.offsets, b->train.offsets);
  EXPECT_EQ(a->train.labels, b->train.labels);
  EXPECT_EQ(a->test.ids, b->test.ids);
  EXPECT_EQ(a->test.labels, b->test.labels);
  EXPECT_EQ(a->truth.bias, b->truth.bias);
}

TEST(LogregGeneratorTest, ExamplesHaveThePromisedShape) {
  const GeneratorConfig config = Small();
  absl::StatusOr<Generated> g = Generate(config);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->train.num_examples(), 9000u);
  EXPECT_EQ(g->test.num_examples(), 1000u);
  EXPECT_EQ(g->truth.weights.size(), 5000u);
  std::vector<int64_t> seen(config.num_ids + 1, 0);
  int min_active = 1 << 30;
  int max_active = 0;
  for (size_t i = 0; i < g->train.num_examples(); ++i) {
    const auto ids = g->train.example_ids(i);
    const int n = static_cast<int>(ids.size());
    min_active = std::min(min_active, n);
    max_active = std::max(max_active, n);
    EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
    EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << "example " << i;
    for (uint64_t id : ids) {
      ASSERT_GE(id, 1u);
      ASSERT_LE(id, config.num_ids);
      ++seen[id];
    }
    for (float v : g->train.example_values(i)) EXPECT_EQ(v, 1.0f);
    const float y = g->train.labels[i];
    EXPECT_TRUE(y == 0.0f || y == 1.0f);
  }
  EXPECT_EQ(min_active, config.min_active);
  EXPECT_EQ(max_active, config.max_active);
  // Power law: the most frequent ids are the smallest, and id 1 is in almost every example.
  EXPECT_GT(seen[1], seen[10]);
  EXPECT_GT(seen[10], seen[100]);
  EXPECT_GT(seen[100], seen[1000]);
  EXPECT_GT(seen[1], 8500);
  // The bias centres the training scores at config.bias.
  double mean = 0.0;
  for (size_t i = 0; i < g->train.num_examples(); ++i) mean += g->truth.Score(g->train, i);
  EXPECT_NEAR(mean / 9000.0, config.bias, 1e-9);
  // Labels follow the truth: the positive rate is the mean probability, within noise.
  double expected = 0.0;
  for (size_t i = 0; i < g->train.num_examples(); ++i) {
    expected += 1.0 / (1.0 + std::exp(-g->truth.Score(g->train, i)));
  }
  EXPECT_NEAR(g->train.PositiveRate(), expected / 9000.0, 0.02);
}

TEST(LogregGeneratorTest, GeneratedFilesReadBack) {
  absl::StatusOr<Generated> g = Generate(Small());
  ASSERT_TRUE(g.ok());
  const std::string dir =
      std::filesystem::temp_directory_path() / ("kairos_logreg_gen_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteLibsvm(dir + "/train.svm", g->train).ok());
  ASSERT_TRUE(WriteTrueModel(dir + "/w.txt", g->truth).ok());
  absl::StatusOr<Dataset> train = ReadLibsvm(dir + "/train.svm");
  absl::StatusOr<TrueModel> truth = ReadTrueModel(dir + "/w.txt");
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_TRUE(truth.ok()) << truth.status();
  EXPECT_EQ(train->ids, g->train.ids);
  EXPECT_EQ(train->labels, g->train.labels);
  EXPECT_EQ(truth->weights, g->truth.weights);
  EXPECT_EQ(truth->bias, g->truth.bias);
}

TEST(LogregGeneratorTest, RefusesBadConfigs) {
  GeneratorConfig c = Small();
  c.num_ids = 100;  // fewer than 4 x max_active
  EXPECT_THAT(std::string(Generate(c).status().message()), HasSubstr("--ids must be at least"));
  c = Small();
  c.min_active = 30;
  c.max_active = 20;
  EXPECT_FALSE(Generate(c).ok());
  c = Small();
  c.train_examples = 0;
  EXPECT_THAT(std::string(Generate(c).status().message()), HasSubstr("--train-examples"));
  c = Small();
  c.exponent = 0.0;
  EXPECT_FALSE(Generate(c).ok());
  c = Small();
  c.drift = -0.5;
  EXPECT_THAT(std::string(Generate(c).status().message()), HasSubstr("--drift"));
}

// With drift D every id of example i of the training set is its rank plus
// floor(i / n x D x num_ids), and of every test example plus floor(D x num_ids): so the
// drifted data are the undrifted ones shifted, the same draws, and the true weights cover
// every id that can occur. No drift leaves the data as they were.
TEST(LogregGeneratorTest, DriftShiftsTheIdsAlongTheStream) {
  GeneratorConfig still = Small();
  GeneratorConfig moving = Small();
  moving.drift = 2.0;
  absl::StatusOr<Generated> a = Generate(still);
  absl::StatusOr<Generated> b = Generate(moving);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->train.offsets, b->train.offsets);
  const auto n = static_cast<double>(still.train_examples);
  for (size_t i = 0; i < a->train.num_examples(); ++i) {
    const auto shift = static_cast<uint64_t>(std::floor(static_cast<double>(i) / n * 2.0 * 5000));
    for (uint64_t f = a->train.offsets[i]; f < a->train.offsets[i + 1]; ++f) {
      ASSERT_EQ(b->train.ids[f], a->train.ids[f] + shift) << "example " << i;
    }
  }
  for (size_t f = 0; f < a->test.ids.size(); ++f) {
    ASSERT_EQ(b->test.ids[f], a->test.ids[f] + 10000);
  }
  EXPECT_EQ(b->truth.weights.size(), 15000u);
  EXPECT_EQ(a->truth.weights.size(), 5000u);
  // The first 5000 true weights are the same draws.
  EXPECT_TRUE(
      std::equal(a->truth.weights.begin(), a->truth.weights.end(), b->truth.weights.begin()));
}

}  // namespace
}  // namespace logreg
