// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The simulator's calibration (bench/calibration.h): the fit on hand-made measurements
// (exact values), ranks and Spearman's correlation with ties, the comparison's winner and
// regret, the calibration file's round trip, and its parser on hostile input (every error
// names the file and the line).

#include "bench/calibration.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kairos::bench {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(CalibrationTest, QuantileInterpolatesBetweenOrderStatistics) {
  const std::vector<double> v = {1, 2, 4, 8};
  EXPECT_EQ(Quantile(v, 0.0), 1);
  EXPECT_EQ(Quantile(v, 1.0), 8);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.5), 3);         // position 1.5
  EXPECT_DOUBLE_EQ(Quantile(v, 1.0 / 3.0), 2);   // position 1
  EXPECT_DOUBLE_EQ(Quantile(v, 5.0 / 6.0), 6);   // position 2.5
  EXPECT_EQ(Quantile({7}, 0.3), 7);
}

// Two runs of two workers, made by hand.
std::vector<RunMeasurement> HandMadeRuns() {
  RunMeasurement a;
  a.workers = 2;
  // rank 0: local 0.010, 0.020, 0.030; pull + push 0.004 each; gate held 0.003 in all.
  a.iterations = {{0, 0, 0.5, 0.002, 0.010, 0.002}, {0, 1, 0.6, 0.002, 0.020, 0.002},
                  {0, 2, 0.7, 0.002, 0.030, 0.002}, {1, 0, 0.7, 0.003, 0.050, 0.003}};
  a.gate_blocked_s = {0.003, 0.0};
  a.evaluation_s = {1.0, 1.5, 1.75};  // gaps 0.5, 0.25
  RunMeasurement b;
  b.workers = 2;
  b.iterations = {{1, 0, 0.3, 0.001, 0.070, 0.001}, {0, 0, 0.1, 0.001, 0.040, 0.001}};
  b.evaluation_s = {2.0, 2.75};  // gap 0.75
  return {a, b};
}

TEST(CalibrationTest, FitsProfilesLatencyStartupAndSamplingExactly) {
  CalibrationSetting setting;
  setting.scenario = "hand";
  absl::StatusOr<Calibration> c = Fit(setting, HandMadeRuns());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->runs, 2);
  EXPECT_EQ(c->iterations, 6);
  ASSERT_EQ(c->profiles.size(), 2u);
  // Rank 0: samples 0.010, 0.020, 0.030, 0.040 (4 < kProfilePoints points: each one).
  EXPECT_EQ(c->profiles[0], (std::vector<double>{0.010, 0.020, 0.030, 0.040}));
  EXPECT_EQ(c->profiles[1], (std::vector<double>{0.050, 0.070}));
  // Messages per iteration: rank 0 (3 x 0.004 + 0.002 - 0.003) / 4 = 0.00275;
  // rank 1 (0.006 + 0.002) / 2 = 0.004. Mean 0.003375 = 2 L.
  EXPECT_DOUBLE_EQ(c->mean_message_s, 0.003375);
  EXPECT_DOUBLE_EQ(c->latency_s, 0.0016875);
  // Startup: run a (0.5 + 0.7) / 2 = 0.6, run b (0.1 + 0.3) / 2 = 0.2: mean 0.4.
  EXPECT_DOUBLE_EQ(c->startup_s, 0.4);
  // Evaluation gaps 0.25, 0.5, 0.75: median 0.5.
  EXPECT_DOUBLE_EQ(c->sample_interval_s, 0.5);
  EXPECT_DOUBLE_EQ(c->mean_local_s, (0.01 + 0.02 + 0.03 + 0.05 + 0.07 + 0.04) / 6);
}

TEST(CalibrationTest, AProfileKeepsSliceMeansOfManySamples) {
  RunMeasurement run;
  run.workers = 1;
  // 640 samples: 0, 1, ..., 638 ms and one outlier of 10 s.
  for (int i = 0; i < 639; ++i) run.iterations.push_back({0, i, 0, 0, 0.001 * i, 0});
  run.iterations.push_back({0, 639, 0, 0, 10.0, 0});
  absl::StatusOr<Calibration> c = Fit({}, {run});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->profiles[0].size(), static_cast<size_t>(kProfilePoints));
  // 64 slices of 10: slice j holds 10 j .. 10 j + 9 ms, mean 10 j + 4.5 ms.
  EXPECT_DOUBLE_EQ(c->profiles[0][0], 0.0045);
  EXPECT_DOUBLE_EQ(c->profiles[0][31], 0.3145);
  // The outlier weighs in its slice only: (630 + ... + 638 ms + 10 s) / 10.
  EXPECT_DOUBLE_EQ(c->profiles[0][63], (0.001 * (630 + 638) * 9 / 2 + 10.0) / 10);
  // The profile's mean (each value equally likely) is the samples' mean.
  double sum = 0;
  for (double v : c->profiles[0]) sum += v;
  EXPECT_NEAR(sum / kProfilePoints, c->mean_local_s, 1e-12);
}

TEST(CalibrationTest, FitRejectsARankWithoutIterations) {
  RunMeasurement run;
  run.workers = 3;
  run.iterations = {{0, 0, 0, 0, 0.1, 0}, {2, 0, 0, 0, 0.1, 0}};
  const absl::Status s = Fit({}, {run}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("rank 1"), std::string::npos) << s;
  EXPECT_TRUE(absl::IsInvalidArgument(Fit({}, {}).status()));
}

TEST(CalibrationTest, SimOptionsRepeatTheProfilesAndTakeTheLatency) {
  absl::StatusOr<Calibration> c = Fit({.scenario = "hand", .batch = 8, .learning_rate = 0.25},
                                      HandMadeRuns());
  ASSERT_TRUE(c.ok());
  const sim::SimOptions o = ToSimOptions(*c, 64);
  EXPECT_EQ(o.num_workers, 64);
  EXPECT_EQ(o.batch_size, 8);
  EXPECT_EQ(o.learning_rate, 0.25f);
  ASSERT_EQ(o.compute.measured.size(), 2u);
  EXPECT_EQ(o.compute.measured[1][1], absl::Milliseconds(70));
  EXPECT_EQ(o.network.latency, absl::Seconds(c->latency_s));
  EXPECT_EQ(o.network.bandwidth_bytes_per_s, 0.0);
  EXPECT_EQ(o.sample_interval, absl::Milliseconds(500));
  EXPECT_TRUE(sim::ValidateSimOptions(o).ok());
}

TEST(CalibrationTest, RanksShareTiesAndPutInfinityLast) {
  EXPECT_EQ(Ranks({30, 10, 20}), (std::vector<double>{3, 1, 2}));
  EXPECT_EQ(Ranks({5, 1, 5, 2}), (std::vector<double>{3.5, 1, 3.5, 2}));
  EXPECT_EQ(Ranks({kInf, 1, kInf}), (std::vector<double>{2.5, 1, 2.5}));
}

TEST(CalibrationTest, SpearmanOnHandMadeOrders) {
  EXPECT_DOUBLE_EQ(Spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(Spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Ranks (1, 2, 3) against (1, 3, 2): 1 - 6 * 2 / (3 * 8) = 0.5.
  EXPECT_DOUBLE_EQ(Spearman({1, 2, 3}, {1, 3, 2}), 0.5);
  // Ties: ranks (1, 2.5, 2.5, 4) against (1, 2, 3, 4): Pearson = 4.5 / sqrt(4.5 * 5).
  EXPECT_DOUBLE_EQ(Spearman({1, 2, 2, 3}, {1, 2, 3, 4}), 4.5 / std::sqrt(4.5 * 5.0));
  // Unreached (infinite) times tie last.
  // Ranks (1, 2.5, 2.5) against (1, 2, 3): 1.5 / sqrt(1.5 * 2).
  EXPECT_DOUBLE_EQ(Spearman({1, kInf, kInf}, {1, 5, kInf}), 1.5 / std::sqrt(1.5 * 2.0));
  EXPECT_TRUE(std::isnan(Spearman({1, 1, 1}, {1, 2, 3})));  // no order on one side
  EXPECT_TRUE(std::isnan(Spearman({1}, {1})));
  EXPECT_TRUE(std::isnan(Spearman({1, 2}, {1, 2, 3})));
}

TEST(CalibrationTest, CompareFindsErrorsWinnersAndRegret) {
  std::vector<PolicyComparison> p = {{"bsp", 2.0, 3.0}, {"asp", 1.0, 1.5}, {"ssp", 4.0, 1.0},
                                     {"saps", kInf, kInf}};
  const ComparisonSummary s = Compare(p);
  EXPECT_DOUBLE_EQ(p[0].relative_error, 0.5);
  EXPECT_DOUBLE_EQ(p[1].relative_error, 0.5);
  EXPECT_DOUBLE_EQ(p[2].relative_error, -0.75);
  EXPECT_TRUE(std::isnan(p[3].relative_error));
  EXPECT_EQ(s.compared, 3);
  EXPECT_DOUBLE_EQ(s.mean_abs_error, (0.5 + 0.5 + 0.75) / 3);
  EXPECT_EQ(s.real_winner, "asp");
  EXPECT_EQ(s.predicted_winner, "ssp");
  EXPECT_FALSE(s.winner_agrees);
  EXPECT_DOUBLE_EQ(s.regret, 3.0);  // ssp takes 4 s on the real cluster, the best 1 s
  // Real ranks (2, 1, 3, 4), predicted (3, 2, 1, 4): 1 - 6 * (1 + 1 + 4) / (4 * 15) = 0.4.
  EXPECT_DOUBLE_EQ(s.spearman, 0.4);

  std::vector<PolicyComparison> tie = {{"bsp", 1.0, 2.0}, {"asp", 1.0, 1.0}};
  const ComparisonSummary t = Compare(tie);
  EXPECT_EQ(t.real_winner, "bsp");
  EXPECT_EQ(t.predicted_winner, "asp");
  EXPECT_TRUE(t.winner_agrees);  // asp ties the real best
  EXPECT_DOUBLE_EQ(t.regret, 0.0);
}

TEST(CalibrationTest, SeedToSeedAgreement) {
  // Seeds 1 and 2 order three policies alike, seed 3 reverses them.
  const std::vector<std::vector<double>> by_seed = {{1, 2, 4}, {2, 3, 8}, {4, 2, 1}};
  EXPECT_DOUBLE_EQ(MeanPairwiseSpearman(by_seed), (1.0 - 1.0 - 1.0) / 3);
  // |1-2|/1, |2-3|/2, |4-8|/4; |1-4|/1, 0, |4-1|/1; |2-4|/2, |3-2|/2, |8-1|/1: sum 17.
  EXPECT_DOUBLE_EQ(MeanPairwiseRelativeDifference(by_seed), 17.0 / 9);
  // Unreached times take part in the ranks only.
  EXPECT_DOUBLE_EQ(MeanPairwiseRelativeDifference({{1, kInf}, {2, 5}}), 1.0);
  EXPECT_DOUBLE_EQ(MeanPairwiseSpearman({{1, kInf}, {2, 5}}), 1.0);
  EXPECT_TRUE(std::isnan(MeanPairwiseSpearman({{1, 2, 3}})));
  EXPECT_TRUE(std::isnan(MeanPairwiseRelativeDifference({{kInf}, {1}})));
}

TEST(CalibrationFileTest, RoundTrips) {
  absl::StatusOr<Calibration> c =
      Fit({.scenario = "straggler", .hidden = 32, .batch = 16, .learning_rate = 0.05,
           .train_examples = 2000, .test_examples = 500, .target_accuracy = 0.6},
          HandMadeRuns());
  ASSERT_TRUE(c.ok());
  const std::string text = Write(*c);
  absl::StatusOr<Calibration> back = Parse(text, "cal.txt");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
  EXPECT_EQ(back->setting.scenario, "straggler");
  EXPECT_EQ(back->setting.hidden, 32);
  EXPECT_EQ(back->setting.batch, 16);
  EXPECT_EQ(back->setting.learning_rate, 0.05);
  EXPECT_EQ(back->setting.train_examples, 2000);
  EXPECT_EQ(back->setting.test_examples, 500);
  EXPECT_EQ(back->setting.target_accuracy, 0.6);
  EXPECT_EQ(back->runs, 2);
  EXPECT_EQ(back->iterations, 6);
  EXPECT_EQ(back->latency_s, c->latency_s);
  EXPECT_EQ(back->startup_s, c->startup_s);
  EXPECT_EQ(back->sample_interval_s, c->sample_interval_s);
  EXPECT_EQ(back->profiles, c->profiles);  // %.6g holds these values exactly
}

// The text of a valid file with `from` replaced by `to`.
std::string Edited(const std::string& from, const std::string& to) {
  absl::StatusOr<Calibration> c = Fit({.scenario = "s"}, HandMadeRuns());
  std::string text = Write(*c);
  EXPECT_NE(text.find(from), std::string::npos) << from;
  return absl::StrReplaceAll(text, {{from, to}});
}

// The line of `text` that holds `needle`, 1-based.
int LineOf(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  int line = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i) line += text[i] == '\n' ? 1 : 0;
  return line;
}

TEST(CalibrationFileTest, BadLinesAreNamedByFileAndLine) {
  struct Case {
    std::string from, to, error;
    int lines_below = 0;  // the error is this many lines below the start of `to`
  };
  const std::vector<Case> cases = {
      {"batch 32", "batch 0", "batch: '0' is not an integer in [1, 4096]"},
      {"batch 32", "batch 32 33", "batch: expected 1 value, got 2"},
      {"latency_s", "latency_s nan #", "latency_s: expected 1 value"},
      {"learning_rate 0.1", "learning_rate inf", "learning_rate: 'inf' is not a number"},
      {"learning_rate 0.1", "learning_rate -1", "learning_rate: '-1' is not a number in (0, 100]"},
      {"model mlp 64", "model cnn 64", "model: only 'mlp' is known"},
      {"scenario s", "scenario a/b", "scenario: need 1..64 of [A-Za-z0-9._-]"},
      {"target_accuracy 0.84", "colour blue", "unknown key 'colour'"},
      {"profile 1 0.05 0.07", "profile 1 0.07 0.05", "profile 1: point 1 (0.05) is below"},
      {"profile 1 0.05 0.07", "profile 1 0.05 0", "profile 1 point 1: '0' is not a number"},
      {"profile 1 0.05 0.07", "profile 0 0.05 0.07", "profile 0 repeated"},
      {"profile 1 0.05 0.07", "profile 1", "profile: need a rank and at least one time"},
      {"profile 1 0.05 0.07", "profile 99999 1", "profile rank: '99999' is not an integer"},
      {"workers 2", "workers 2\nworkers 3", "workers repeated", 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.to);
    const std::string text = Edited(c.from, c.to);
    const absl::Status s = Parse(text, "my.cal").status();
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    const std::string where = absl::StrCat("my.cal:", LineOf(text, c.to) + c.lines_below, ": ");
    EXPECT_EQ(s.message().substr(0, where.size()), where) << s;
    EXPECT_NE(s.message().find(c.error), std::string::npos) << s;
  }
}

TEST(CalibrationFileTest, MissingAndMisplacedPartsAreErrors) {
  const auto error = [](const std::string& text) {
    return std::string(Parse(text, "f").status().message());
  };
  EXPECT_EQ(error(""), "f:1: not a calibration file: no 'kairos-calibration' line");
  EXPECT_EQ(error("# only\nscenario s\n"),
            "f:2: not a calibration file: the first line must be 'kairos-calibration 1'");
  EXPECT_EQ(error("kairos-calibration 2\n"),
            "f:1: not a calibration file: the first line must be 'kairos-calibration 1'");
  EXPECT_NE(error(Edited("startup_s", "# startup_s")).find("missing 'startup_s'"),
            std::string::npos);
  EXPECT_NE(error(Edited("profile 1 0.05 0.07\n", "")).find("missing 'profile 1' (workers 2)"),
            std::string::npos);
  EXPECT_NE(error(Edited("workers 2", "workers 1")).find("profile 1 beyond workers 1"),
            std::string::npos);
}

TEST(CalibrationFileTest, SizesAreBounded) {
  const std::string long_line =
      Edited("scenario s", absl::StrCat("scenario s", std::string(kMaxCalibrationLine, ' ')));
  EXPECT_NE(Parse(long_line, "f").status().message().find("f:3: line of"), std::string::npos)
      << Parse(long_line, "f").status();
  const std::string huge(static_cast<size_t>(kMaxCalibrationBytes) + 1, '#');
  EXPECT_TRUE(absl::IsInvalidArgument(Parse(huge, "f").status()));
  std::string many = "profile 1 0.05";
  for (int i = 0; i < kMaxFileProfilePoints; ++i) many += " 0.07";
  EXPECT_NE(Parse(Edited("profile 1 0.05 0.07", many), "f").status().message().find(
                "more than 257"),
            std::string::npos);
  // Bytes that are not text end in a clear error, never a crash.
  EXPECT_TRUE(absl::IsInvalidArgument(
      Parse(std::string("kairos-calibration 1\n\x01\xff\0zz", 26), "f").status()));
  EXPECT_TRUE(absl::IsNotFound(ReadCalibration("/nonexistent/kairos.cal").status()));
}

}  // namespace
}  // namespace kairos::bench
