// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The sparse_logreg example's metrics and training loop (examples/sparse_logreg/train.h): the
// exact AUC (ties at their midrank, against a count of all pairs) and log-loss, the shards, and
// training through real LocalClusters on small generated data under several policies, each
// reaching a fraction of the true weights' AUC after running its planned iterations.

#include <cmath>
#include <cstdint>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "sparse_logreg/data.h"
#include "sparse_logreg/train.h"
#include "tests/common/param_name.h"
#include "tests/examples/training_harness.h"

namespace logreg {
namespace {

// The AUC by its definition: over all (positive, negative) pairs, 1 when the positive scores
// higher, 1/2 for a tie.
double PairAuc(const std::vector<double> &s, const std::vector<float> &y) {
  double wins = 0.0;
  double pairs = 0.0;
  for (size_t i = 0; i < s.size(); ++i) {
    for (size_t j = 0; j < s.size(); ++j) {
      if (y[i] != 1.0f || y[j] != 0.0f) continue;
      pairs += 1.0;
      wins += s[i] > s[j] ? 1.0 : (s[i] == s[j] ? 0.5 : 0.0);
    }
  }
  return wins / pairs;
}

TEST(LogregAucTest, ExactValues) {
  EXPECT_DOUBLE_EQ(Auc(std::vector<double>{0.1, 0.4, 0.35, 0.8}, std::vector<float>{0, 0, 1, 1}),
                   0.75);
  EXPECT_DOUBLE_EQ(Auc(std::vector<double>{1, 2, 3}, std::vector<float>{0, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(Auc(std::vector<double>{1, 2, 3}, std::vector<float>{1, 1, 0}), 0.0);
  // Ties count one half.
  EXPECT_DOUBLE_EQ(Auc(std::vector<double>{5, 5, 5, 5}, std::vector<float>{0, 1, 0, 1}), 0.5);
  EXPECT_DOUBLE_EQ(Auc(std::vector<double>{1, 1, 2, 2}, std::vector<float>{0, 1, 0, 1}), 0.5);
  EXPECT_DOUBLE_EQ(Auc(std::vector<double>{0.5, 0.5, 0.5, 0.9}, std::vector<float>{1, 0, 0, 1}),
                   0.75);
  // One class only: undefined.
  EXPECT_TRUE(std::isnan(Auc(std::vector<double>{1, 2}, std::vector<float>{1, 1})));
  EXPECT_TRUE(std::isnan(Auc(std::vector<double>{}, std::vector<float>{})));
}

TEST(LogregAucTest, MatchesAllPairsWithManyTies) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 20; ++round) {
    std::vector<double> s(300);
    std::vector<float> y(300);
    for (size_t i = 0; i < s.size(); ++i) {
      s[i] = static_cast<double>(rng() % 20);  // many ties
      y[i] = rng() % 3 == 0 ? 1.0f : 0.0f;
    }
    EXPECT_NEAR(Auc(s, y), PairAuc(s, y), 1e-12) << "round " << round;
  }
}

TEST(LogregLogLossTest, ExactValuesAndNoOverflow) {
  EXPECT_DOUBLE_EQ(LogLoss(std::vector<double>{0.0, 0.0}, std::vector<float>{0, 1}), std::log(2.0));
  EXPECT_NEAR(LogLoss(std::vector<double>{2.0}, std::vector<float>{1}),
              -std::log(1.0 / (1.0 + std::exp(-2.0))), 1e-14);
  EXPECT_NEAR(LogLoss(std::vector<double>{2.0}, std::vector<float>{0}),
              -std::log(1.0 - 1.0 / (1.0 + std::exp(-2.0))), 1e-14);
  // Confident and wrong: the loss is the score, not infinity.
  EXPECT_DOUBLE_EQ(LogLoss(std::vector<double>{1000.0}, std::vector<float>{0}), 1000.0);
  EXPECT_DOUBLE_EQ(LogLoss(std::vector<double>{-1000.0}, std::vector<float>{1}), 1000.0);
  EXPECT_DOUBLE_EQ(LogLoss(std::vector<double>{1000.0}, std::vector<float>{1}), 0.0);
  EXPECT_TRUE(std::isnan(LogLoss(std::vector<double>{}, std::vector<float>{})));
}

TEST(LogregShardTest, DisjointCoveringBalanced) {
  for (const int workers : {1, 3, 4}) {
    std::set<uint32_t> all;
    size_t smallest = 1 << 30;
    size_t largest = 0;
    for (int r = 0; r < workers; ++r) {
      const std::vector<uint32_t> s = Shard(1003, r, workers, 5);
      EXPECT_EQ(s, Shard(1003, r, workers, 5));  // the same in every process
      smallest = std::min(smallest, s.size());
      largest = std::max(largest, s.size());
      for (uint32_t e : s) EXPECT_TRUE(all.insert(e).second) << "example " << e << " twice";
    }
    EXPECT_EQ(all.size(), 1003u);
    EXPECT_LE(largest - smallest, 1u);
  }
  EXPECT_NE(Shard(1003, 0, 2, 5), Shard(1003, 0, 2, 6));
}

// In order (a stream): worker r of W takes r, r + W, ..., whatever the seed.
TEST(LogregShardTest, InOrderTakesEveryWthExampleInTheStreamsOrder) {
  EXPECT_EQ(Shard(10, 1, 3, 5, /*in_order=*/true), (std::vector<uint32_t>{1, 4, 7}));
  EXPECT_EQ(Shard(10, 0, 3, 9, /*in_order=*/true), (std::vector<uint32_t>{0, 3, 6, 9}));
  EXPECT_EQ(Shard(2, 0, 1, 5, /*in_order=*/true), (std::vector<uint32_t>{0, 1}));
}

TEST(LogregTrainTest, JobTablesAndConfigChecks) {
  TrainConfig c;
  c.optimizer = "adagrad";
  c.learning_rate = 0.25f;
  const std::vector<kairos::TableSpec> t = JobTables(c);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].name, kWeightsTable);
  EXPECT_TRUE(t[0].sparse());
  EXPECT_EQ(t[0].row_width, 1u);
  EXPECT_EQ(t[0].updater.name, "adagrad");
  EXPECT_EQ(t[0].updater.learning_rate, 0.25f);
  EXPECT_EQ(t[1].name, kBiasTable);
  EXPECT_FALSE(t[1].sparse());
  EXPECT_EQ(t[1].size, 1u);
  EXPECT_EQ(t[1].updater, t[0].updater);
  EXPECT_EQ(t[0].admission, kairos::RowAdmission{}) << "every id kept by default";
  EXPECT_EQ(t[0].eviction, kairos::RowEviction{});
  c.admission.min_count = 2;
  c.eviction.max_bytes = 8 << 20;
  const std::vector<kairos::TableSpec> bounded = JobTables(c);
  EXPECT_EQ(bounded[0].admission.min_count, 2u) << "--admit";
  EXPECT_EQ(bounded[0].eviction.max_bytes, 8u << 20) << "--evict-mb";
  EXPECT_EQ(bounded[1].eviction, kairos::RowEviction{}) << "the dense bias keeps the defaults";
  c.batch = 0;
  EXPECT_FALSE(CheckConfig(c).ok());
  c = TrainConfig();
  c.learning_rate = std::nanf("");
  EXPECT_FALSE(CheckConfig(c).ok());
  c = TrainConfig();
  c.epochs = 0;
  EXPECT_FALSE(CheckConfig(c).ok());
}

struct RunResult {
  absl::Status status;
  std::vector<EvalRecord> evals;
  std::vector<WorkerSummary> workers;
  Evaluation reference;
  int iterations_per_epoch = 0;
};

RunResult Train(const Generated &data, const TrainConfig &config, int workers,
                const std::string &policy) {
  kairos::ClusterOptions options = kairos::testing::TrainingCluster(workers, policy);
  options.job.tables = JobTables(config);
  RunResult result;
  result.reference = EvaluateTruth(data.truth, data.test);
  std::mutex mu;
  Trainer::Hooks hooks;
  hooks.on_eval = kairos::testing::AppendTo(mu, result.evals);
  hooks.on_worker_done = kairos::testing::AppendTo(mu, result.workers);
  Trainer trainer(&data.train, &data.test, result.reference, config, workers, hooks);
  result.iterations_per_epoch = trainer.IterationsPerEpoch();
  trainer.Start();
  result.status = kairos::RunWorkers(options, [&](kairos::Worker &w) { return trainer.Run(w); });
  return result;
}

const Generated &SmallData() {
  static const Generated *data = [] {
    GeneratorConfig c;
    c.num_ids = 20000;
    c.train_examples = 40000;
    c.test_examples = 4000;
    c.seed = 11;
    absl::StatusOr<Generated> g = Generate(c);
    if (!g.ok()) std::abort();
    return new Generated(*std::move(g));
  }();
  return *data;
}

class LogregPolicyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LogregPolicyTest, LearnsTheSyntheticClicks) {
  const Generated &data = SmallData();
  TrainConfig config;
  config.epochs = 2;
  config.batch = 128;
  const RunResult r = Train(data, config, 3, GetParam());
  ASSERT_TRUE(r.status.ok()) << r.status;
  // 13333 examples per worker, batch 128: 104 iterations per epoch.
  EXPECT_EQ(r.iterations_per_epoch, 104);
  ASSERT_EQ(r.workers.size(), 3u);
  for (const WorkerSummary &w : r.workers) EXPECT_EQ(w.iterations, 208) << "worker " << w.rank;
  // One evaluation after epoch 1, then the final one.
  ASSERT_EQ(r.evals.size(), 2u);
  EXPECT_FALSE(r.evals[0].final);
  EXPECT_EQ(r.evals[0].epoch, 1);
  EXPECT_EQ(r.evals[0].iterations, 104);
  EXPECT_TRUE(r.evals[1].final);
  EXPECT_EQ(r.evals[1].iterations, 208);
  EXPECT_GT(r.evals[1].train_loss, 0.0);
  EXPECT_EQ(r.evals[1].reference.auc, r.reference.auc);
  EXPECT_GT(r.evals[1].keys, 1000);
  // The true weights reach about 0.85 here; the model about 0.81 (0.95 of it).
  EXPECT_GT(r.reference.auc, 0.8);
  EXPECT_GT(r.evals[1].test.auc, 0.9 * r.reference.auc) << "reference " << r.reference.auc;
  EXPECT_LT(r.evals[1].test.loss, 0.9 * std::log(2.0));
}

INSTANTIATE_TEST_SUITE_P(Policies, LogregPolicyTest, ::testing::Values("asp", "ssp:s=2", "bsp"),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return kairos::testing::ParamName(info.param);
                         });

TEST(LogregTrainTest, AdagradLearnsToo) {
  TrainConfig config;
  config.epochs = 1;
  config.batch = 128;
  config.optimizer = "adagrad";
  config.learning_rate = 0.05f;
  const RunResult r = Train(SmallData(), config, 2, "asp");
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_FALSE(r.evals.empty());
  EXPECT_GT(r.evals.back().test.auc, 0.85 * r.reference.auc);
}

TEST(LogregTrainTest, UnknownOptimizerFailsTheJob) {
  TrainConfig config;
  config.optimizer = "lion";
  const RunResult r = Train(SmallData(), config, 1, "asp");
  EXPECT_FALSE(r.status.ok());
  EXPECT_NE(std::string(r.status.message()).find("lion"), std::string::npos) << r.status;
}

}  // namespace
}  // namespace logreg
