// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The Fashion-MNIST example's training loop through real LocalClusters: it learns (synthetic data
// that needs no file; a Fashion-MNIST subset when the data set is installed), every worker runs its
// planned iterations, and a target accuracy stops every worker under each kind of policy, with a
// slow worker, without any read left waiting for a worker that stopped.

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fashion_mnist/data.h"
#include "fashion_mnist/models.h"
#include "fashion_mnist/train.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "kairos/pace.h"
#include "tests/common/param_name.h"
#include "tests/examples/training_harness.h"

namespace fmnist {
namespace {

// 10 classes of 20-pixel images: noise in [0, 100], and class c's pixels 2c and 2c + 1 at 255.
// Separable: a linear model reaches ~100 %.
Dataset Synthetic(int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> noise(0, 100);
  Dataset d;
  d.pixels.resize(20, count);
  for (int i = 0; i < count; ++i) {
    const int label = static_cast<int>(rng() % kNumClasses);
    for (int p = 0; p < 20; ++p) d.pixels(p, i) = static_cast<uint8_t>(noise(rng));
    d.pixels(2 * label, i) = 255;
    d.pixels(2 * label + 1, i) = 255;
    d.labels.push_back(label);
  }
  return d;
}

FashionMnist SyntheticSplit() {
  FashionMnist data;
  data.train = Synthetic(2400, 1);
  data.test = Synthetic(600, 2);
  data.train.Standardize();
  data.test.scale = data.train.scale;
  data.test.offset = data.train.offset;
  return data;
}

struct RunResult {
  absl::Status status;
  std::vector<EvalRecord> evals;
  std::vector<WorkerSummary> workers;
  std::vector<IterationRecord> iterations;  // Hooks::on_iteration, every worker's
  std::vector<PolicyCounts> counts;         // the servers', per rank, after the run
  double final_accuracy = kUnknown;
  double time_to_target_s = kUnknown;
};

RunResult Train(const FashionMnist &data, const TrainConfig &config, int workers,
                const std::string &policy) {
  kairos::ClusterOptions options = kairos::testing::TrainingCluster(workers, policy);
  absl::StatusOr<std::vector<kairos::TableSpec>> tables =
      JobTables(config, data.train.num_features(),
                PlannedIterations(config, data.train.num_examples(), workers));
  RunResult result;
  if (!tables.ok()) {
    result.status = tables.status();
    return result;
  }
  options.job.tables = *tables;
  std::mutex mu;
  Trainer::Hooks hooks;
  hooks.on_eval = kairos::testing::AppendTo(mu, result.evals);
  hooks.on_worker_done = kairos::testing::AppendTo(mu, result.workers);
  hooks.on_iteration = kairos::testing::AppendTo(mu, result.iterations);
  absl::StatusOr<std::unique_ptr<kairos::LocalCluster>> cluster =
      kairos::LocalCluster::Create(options);
  if (!cluster.ok()) {
    result.status = cluster.status();
    return result;
  }
  hooks.policy_counts = [&cluster] { return ServerPolicyCounts(**cluster); };
  Trainer trainer(&data, config, workers, hooks);
  trainer.Start();
  result.status = (*cluster)->Run([&](kairos::Worker &w) { return trainer.Run(w); });
  result.counts = ServerPolicyCounts(**cluster);
  if (absl::Status s = (*cluster)->Shutdown(); result.status.ok()) result.status = s;
  result.final_accuracy = trainer.final_accuracy();
  result.time_to_target_s = trainer.time_to_target_s();
  return result;
}

TEST(TrainTest, LearnsSyntheticDataAndRunsThePlannedIterations) {
  const FashionMnist data = SyntheticSplit();
  TrainConfig config;
  config.model = "softmax";
  config.epochs = 3;
  config.batch = 40;  // 1200 examples per worker: 30 iterations per epoch
  config.learning_rate = 0.1f;
  const RunResult r = Train(data, config, 2, "bsp");
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_GE(r.final_accuracy, 0.95);
  ASSERT_EQ(r.workers.size(), 2u);
  for (const WorkerSummary &w : r.workers) {
    EXPECT_EQ(w.iterations, 90) << "worker " << w.rank;
    EXPECT_FALSE(w.stopped);
    EXPECT_GE(w.blocked_s, 0.0);
  }
  // An evaluation after each of rank 0's epochs but the last, then the final one.
  ASSERT_EQ(r.evals.size(), 3u);
  EXPECT_EQ(r.evals[0].iterations, 30);
  EXPECT_DOUBLE_EQ(r.evals[0].epoch, 1.0);
  EXPECT_EQ(r.evals[1].iterations, 60);
  EXPECT_TRUE(r.evals[2].final);
  EXPECT_EQ(r.evals[2].iterations, 90);
  EXPECT_DOUBLE_EQ(r.evals[2].test.accuracy, r.final_accuracy);
  EXPECT_GT(r.evals[0].train_loss, 0.0);
  for (const EvalRecord &e : r.evals) {
    ASSERT_EQ(e.blocked_s.size(), 2u);
    EXPECT_FALSE(std::isnan(e.blocked_s[1]));  // both workers run in this process
    EXPECT_GE(e.wall_s, 0.0);
  }
  EXPECT_TRUE(std::isnan(r.time_to_target_s));
}

TEST(TrainTest, MlpLearnsSyntheticData) {
  const FashionMnist data = SyntheticSplit();
  TrainConfig config;
  config.model = "mlp";
  config.hidden = 16;
  config.epochs = 3;
  config.batch = 20;
  config.learning_rate = 0.1f;
  const RunResult r = Train(data, config, 2, "asp");
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_GE(r.final_accuracy, 0.95);
}

// Under eager pull (PS+) every worker runs the eager schedule over the MLP's three tables and
// the control table, one iteration per step, runs its planned iterations and learns; the
// final record is the global parameters' accuracy.
TEST(TrainTest, EagerPullRunsTheEagerScheduleAndLearns) {
  const FashionMnist data = SyntheticSplit();
  TrainConfig config;
  config.model = "mlp";
  config.hidden = 16;
  config.epochs = 3;
  config.batch = 20;  // 60 iterations per epoch
  config.learning_rate = 0.05f;
  const RunResult r = Train(data, config, 2, "eager");
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_GE(r.final_accuracy, 0.95);
  ASSERT_EQ(r.workers.size(), 2u);
  for (const WorkerSummary &w : r.workers) {
    EXPECT_TRUE(w.eager) << "worker " << w.rank;
    EXPECT_EQ(w.iterations, 180) << "worker " << w.rank;
    EXPECT_GE(w.eager_waits, 0);
    EXPECT_LE(w.eager_waits, w.iterations);
  }
  ASSERT_FALSE(r.evals.empty());
  EXPECT_TRUE(r.evals.back().final);
  EXPECT_DOUBLE_EQ(r.evals.back().test.accuracy, r.final_accuracy);
}

// Softmax, one epoch of 20 iterations per worker on 3 workers paced at 2 ms, the third one
// five times slower, at a constant learning rate.
TrainConfig PacedWithASlowThirdWorker() {
  TrainConfig config;
  config.model = "softmax";
  config.epochs = 1;
  config.batch = 40;  // 20 iterations per worker
  config.schedule = "constant";
  config.pace_ms = 2.0;
  config.slowdown = {1.0, 1.0, 5.0};
  return config;
}

// Eager pull behind a gate: a fast worker's step waits for its previous reply while the gate
// holds that read for the slow worker, and the overlap counters say so; the servers count
// no grant, drop or down-weight (SSP has no controller, no straggler policy).
TEST(TrainTest, EagerStepsWaitForARepliesTheGateHolds) {
  const FashionMnist data = SyntheticSplit();
  const TrainConfig config = PacedWithASlowThirdWorker();
  const RunResult r = Train(data, config, 3, "ssp:s=1+pull=eager");
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.workers.size(), 3u);
  double fast_wait_s = 0.0;
  for (const WorkerSummary &w : r.workers) {
    EXPECT_TRUE(w.eager);
    EXPECT_EQ(w.iterations, 20) << "worker " << w.rank;
    EXPECT_GE(w.blocked_s, w.eager_wait_s - 1e-9) << "worker " << w.rank;
    if (w.rank != 2) {
      // At most s + 1 steps ahead of the slow worker, which is five times slower.
      EXPECT_GT(w.eager_waits, 0) << "worker " << w.rank;
      EXPECT_GT(w.eager_wait_s, 0.0) << "worker " << w.rank;
      fast_wait_s += w.eager_wait_s;
    }
  }
  ASSERT_FALSE(r.evals.empty());
  EXPECT_GE(r.evals.back().eager_wait_s, fast_wait_s - 1e-9);
  EXPECT_EQ(r.evals.back().grants, 0.0);
  EXPECT_EQ(r.evals.back().dropped, 0.0);
  ASSERT_EQ(r.counts.size(), 3u);
  for (const PolicyCounts &c : r.counts) {
    EXPECT_EQ(c.grants + c.zero_answers + c.dropped + c.downweighted, 0u);
  }
}

// The servers' policy counters in a run with a slow worker: zero under BSP (and no eager
// wait), DSSP's controller grants the fast workers extra clocks, SaPS drops (or with
// action=downweight down-weights) the slow worker's stale pushes.
struct CounterCase {
  std::string policy;
  bool grants = false;
  bool drops = false;
  bool downweights = false;
};

class CounterTest : public ::testing::TestWithParam<CounterCase> {};

TEST_P(CounterTest, ServersCountWhatThePolicyDid) {
  const CounterCase &c = GetParam();
  const FashionMnist data = SyntheticSplit();
  const TrainConfig config = PacedWithASlowThirdWorker();
  const RunResult r = Train(data, config, 3, c.policy);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.counts.size(), 3u);
  uint64_t grants = 0;
  uint64_t zero_answers = 0;
  for (const PolicyCounts &p : r.counts) {
    grants += p.grants;
    zero_answers += p.zero_answers;
  }
  EXPECT_EQ(grants > 0, c.grants) << grants;
  // Only DSSP's controller answers at all; its grants go to the fast workers only.
  if (!c.grants) {
    EXPECT_EQ(zero_answers, 0u);
  }
  EXPECT_EQ(r.counts[2].grants, 0u);
  // The slow worker's pushes: 2 x 5 fast pushes per chunk between its read and its push,
  // above SaPS's default S_max = 2 (N - 1) = 4.
  EXPECT_EQ(r.counts[2].dropped > 0, c.drops) << r.counts[2].dropped;
  EXPECT_EQ(r.counts[2].downweighted > 0, c.downweights) << r.counts[2].downweighted;
  if (!c.drops) {
    for (const PolicyCounts &p : r.counts) EXPECT_EQ(p.dropped, 0u);
  }
  if (!c.downweights) {
    for (const PolicyCounts &p : r.counts) EXPECT_EQ(p.downweighted, 0u);
  }
  // The final record carries the totals so far (a clock the shards took after it may add).
  ASSERT_FALSE(r.evals.empty());
  EXPECT_LE(r.evals.back().grants, static_cast<double>(grants));
  EXPECT_FALSE(std::isnan(r.evals.back().dropped));
  for (const WorkerSummary &w : r.workers) {
    EXPECT_FALSE(w.eager);
    EXPECT_EQ(w.eager_waits, 0);
    EXPECT_EQ(w.eager_wait_s, 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Policies, CounterTest,
    ::testing::Values(CounterCase{"bsp"}, CounterCase{"dssp:s=1,r=8", true},
                      CounterCase{"dssp:s=1,r=8,grant=literal,bound=none", true},
                      CounterCase{"saps", false, true},
                      CounterCase{"asp+straggler=saps:action=downweight", false, false, true}),
    [](const ::testing::TestParamInfo<CounterCase> &info) {
      return kairos::testing::ParamName(info.param.policy);
    });

// Transient stragglers (TrainConfig::straggler_prob): every iteration with probability 1, none
// with 0, and with 0.5 the same iterations of each rank in two runs of one seed (a generator
// per rank, seeded by the seed and the rank). A factor of 1 makes them cost no time.
TEST(TrainTest, TransientStragglersAreDrawnPerRankFromTheSeed) {
  const FashionMnist data = SyntheticSplit();
  TrainConfig config;
  config.model = "softmax";
  config.epochs = 2;
  config.batch = 40;  // 30 iterations per epoch and worker
  config.straggler_factor = 1.0;
  const auto straggled = [&](double prob) {
    config.straggler_prob = prob;
    const RunResult r = Train(data, config, 2, "asp");
    EXPECT_TRUE(r.status.ok()) << r.status;
    std::vector<int64_t> per_rank(2, -1);
    for (const WorkerSummary &w : r.workers) {
      EXPECT_EQ(w.iterations, 60);
      per_rank[static_cast<size_t>(w.rank)] = w.straggled;
    }
    return per_rank;
  };
  EXPECT_EQ(straggled(0.0), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(straggled(1.0), (std::vector<int64_t>{60, 60}));
  const std::vector<int64_t> half = straggled(0.5);
  EXPECT_EQ(straggled(0.5), half);
  for (int64_t n : half) {
    EXPECT_GT(n, 10);
    EXPECT_LT(n, 50);
  }
  EXPECT_NE(half[0], half[1]);  // each rank its own draws
}

// Hooks::on_iteration: one record per iteration of each worker, in order, whose times add
// up to the worker's summary (the slowdown's wait is part of the local time).
TEST(TrainTest, OnIterationTimesEveryIteration) {
  const FashionMnist data = SyntheticSplit();
  TrainConfig config;
  config.model = "softmax";
  config.epochs = 1;
  config.batch = 40;  // 30 iterations per worker
  config.slowdown = {1.0, 2.0};
  const RunResult r = Train(data, config, 2, "ssp:s=1");
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.iterations.size(), 60u);
  for (const WorkerSummary &w : r.workers) {
    double pull = 0, push = 0, compute = 0, slowed = 0;
    int64_t next = 0;
    double last_start = -1;
    for (const IterationRecord &it : r.iterations) {
      if (it.rank != w.rank) continue;
      EXPECT_EQ(it.iteration, next++);
      EXPECT_GT(it.start_s, last_start);
      last_start = it.start_s;
      EXPECT_GE(it.pull_s, 0.0);
      EXPECT_GE(it.push_s, 0.0);
      EXPECT_GE(it.local_s, it.compute_s + it.slowed_s);
      pull += it.pull_s;
      push += it.push_s;
      compute += it.compute_s;
      slowed += it.slowed_s;
    }
    EXPECT_EQ(next, w.iterations);
    // The summary sums the same values; the last pull (the one that finds the job over)
    // has no iteration.
    EXPECT_LE(pull, w.blocked_s + 1e-9);
    EXPECT_NEAR(compute, w.compute_s, 1e-9);
    EXPECT_NEAR(slowed, w.slowed_s, 1e-9);
    EXPECT_NEAR(push, w.push_s, 1e-9);
    EXPECT_GT(w.push_s, 0.0);
    if (w.rank == 1) {
      EXPECT_GE(slowed, compute);  // twice as slow: at least one extra compute time
    } else {
      EXPECT_EQ(slowed, 0.0);
    }
  }
}

// Paced workers (TrainConfig::pace_ms): each iteration's compute phase lasts what the pace
// model says, whatever the gradient took, so a run's compute and pacing add up to the
// model's times; no iteration of a tiny model overruns a 5 ms pace.
TEST(TrainTest, PacedIterationsLastWhatThePaceModelSays) {
  const FashionMnist data = SyntheticSplit();
  TrainConfig config;
  config.model = "softmax";
  config.epochs = 1;
  config.batch = 80;  // 15 iterations per worker
  config.pace_ms = 5.0;
  config.slowdown = {1.0, 3.0};
  config.jitter_mean = 0.2;
  const RunResult r = Train(data, config, 2, "asp");
  ASSERT_TRUE(r.status.ok()) << r.status;
  absl::StatusOr<kairos::PaceModel> pace = MakePaceModel(config);
  ASSERT_TRUE(pace.ok()) << pace.status();
  ASSERT_EQ(r.iterations.size(), 30u);
  std::vector<double> overshoot;
  for (const IterationRecord &it : r.iterations) {
    const double target = absl::ToDoubleSeconds(pace->IterationTime(it.rank, it.iteration));
    // The wait ends at the target, measured from the gradient's start: never before it.
    EXPECT_GE(it.compute_s + it.slowed_s, target - 1e-6) << it.rank << "/" << it.iteration;
    overshoot.push_back(it.compute_s + it.slowed_s - target);
  }
  // Sleeping overshoots by the scheduler's wake-up, which a loaded machine stretches for a
  // few iterations; the median stays far below a pace (a wait of twice the pace would not).
  std::nth_element(overshoot.begin(), overshoot.begin() + 15, overshoot.end());
  EXPECT_LT(overshoot[15], 0.003);
  for (const WorkerSummary &w : r.workers) EXPECT_EQ(w.overruns, 0) << "worker " << w.rank;
}

// A pace shorter than the gradient is an overrun: counted, never waited for.
TEST(TrainTest, APaceShorterThanTheGradientIsCountedAsAnOverrun) {
  const FashionMnist data = SyntheticSplit();
  TrainConfig config;
  config.model = "mlp";
  config.hidden = 256;
  config.epochs = 1;
  config.batch = 600;  // 2 iterations per worker, each far longer than a nanosecond
  config.pace_ms = 1e-6;
  const RunResult r = Train(data, config, 2, "asp");
  ASSERT_TRUE(r.status.ok()) << r.status;
  for (const WorkerSummary &w : r.workers) {
    EXPECT_EQ(w.overruns, w.iterations) << "worker " << w.rank;
    EXPECT_EQ(w.slowed_s, 0.0) << "worker " << w.rank;
  }
}

// Snapshots every snapshot_s of wall time, evaluated by the evaluator's thread: at most one
// per interval, in order, and the last one is the final evaluation.
TEST(TrainTest, SnapshotsAreTakenByWallTime) {
  const FashionMnist data = SyntheticSplit();
  TrainConfig config;
  config.model = "softmax";
  config.epochs = 100000;
  config.batch = 10;
  config.schedule = "constant";
  config.pace_ms = 2.0;
  config.snapshot_s = 0.05;
  config.max_wall_s = 0.5;
  const RunResult r = Train(data, config, 2, "asp");
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_GE(r.evals.size(), 5u);
  EXPECT_TRUE(r.evals.back().final);
  EXPECT_EQ(r.evals.front().iterations, 0);  // the first at the start
  // At most one snapshot per interval of 0.05 s, each at rank 0's first pull in its
  // interval (however late a loaded machine makes that pull).
  for (size_t i = 1; i + 1 < r.evals.size(); ++i) {
    EXPECT_FALSE(r.evals[i].final);
    EXPECT_GT(std::floor(r.evals[i].wall_s / 0.05), std::floor(r.evals[i - 1].wall_s / 0.05))
        << i;
    EXPECT_GT(r.evals[i].iterations, r.evals[i - 1].iterations) << i;
  }
  EXPECT_DOUBLE_EQ(r.final_accuracy, r.evals.back().test.accuracy);
}

// Time to target: a centred moving average of three snapshots, interpolated between the two
// smoothed points that straddle the target.
TEST(TargetCrossingTest, InterpolatesTheSmoothedAccuracy) {
  // Accuracies in steps of 1/8, so that every mean below is exact.
  TargetCrossing c(0.75);
  EXPECT_FALSE(c.Add(0.0, 0.5));
  EXPECT_FALSE(c.Add(1.0, 0.625));
  EXPECT_FALSE(c.Add(2.0, 0.75));  // t=1 smoothed: (0.5 + 0.625 + 0.75) / 3 = 0.625
  EXPECT_TRUE(std::isnan(c.time_s()));
  EXPECT_TRUE(c.Add(3.0, 0.875));  // t=2 smoothed: 0.75, the target
  EXPECT_DOUBLE_EQ(c.time_s(), 2.0);
  EXPECT_FALSE(c.Add(4.0, 1.0));  // known once
  EXPECT_DOUBLE_EQ(c.time_s(), 2.0);

  TargetCrossing half(0.6875);  // halfway between the smoothed 0.625 at t=1 and 0.75 at t=2
  for (double t : {0.0, 1.0, 2.0, 3.0}) half.Add(t, 0.5 + 0.125 * t);
  EXPECT_DOUBLE_EQ(half.time_s(), 1.5);
}

TEST(TargetCrossingTest, OneLuckySnapshotDoesNotReachTheTarget) {
  TargetCrossing c(0.84);
  // A single snapshot above 0.84 between two below it: the smoothed curve stays below.
  for (auto [t, a] : {std::pair{0.0, 0.80}, {0.25, 0.82}, {0.5, 0.845}, {0.75, 0.82},
                      {1.0, 0.83}, {1.25, 0.83}}) {
    EXPECT_FALSE(c.Add(t, a)) << t;
  }
  EXPECT_TRUE(std::isnan(c.time_s()));
  // Already at the target at the first smoothed point: that point's time.
  TargetCrossing early(0.5);
  early.Add(0.0, 0.6);
  early.Add(0.25, 0.6);
  EXPECT_TRUE(early.Add(0.5, 0.6));
  EXPECT_DOUBLE_EQ(early.time_s(), 0.25);
  // No target: never crossed.
  TargetCrossing none(0.0);
  for (double t : {0.0, 1.0, 2.0, 3.0}) EXPECT_FALSE(none.Add(t, 1.0));
}

// The mean of the reads summed by the snapshots of the last window seconds; values chosen so
// that every mean but the last is exact in float.
TEST(SnapshotWindowTest, AveragesTheSnapshotsOfTheLastWindow) {
  const auto snapshot = [](float a, float b, int64_t reads = 1) {
    return ParameterSum{.sum = {Eigen::MatrixXf::Constant(2, 3, a * static_cast<float>(reads)),
                                Eigen::MatrixXf::Constant(1, 1, b * static_cast<float>(reads))},
                        .reads = reads};
  };
  Eigen::MatrixXf m0(2, 3);
  Eigen::MatrixXf m1(1, 1);
  const std::vector<Eigen::Ref<Eigen::MatrixXf>> out{m0, m1};
  SnapshotWindow window(1.0);
  window.MeanInto(out);  // none yet: nothing written
  window.Add(0.0, snapshot(1, 10));
  window.MeanInto(out);
  EXPECT_EQ(window.size(), 1u);
  EXPECT_TRUE(m0.isConstant(1.0f));
  EXPECT_EQ(m1(0, 0), 10.0f);
  window.Add(0.5, snapshot(3, 20));
  window.MeanInto(out);
  EXPECT_EQ(window.size(), 2u);
  EXPECT_TRUE(m0.isConstant(2.0f));
  EXPECT_EQ(m1(0, 0), 15.0f);
  // The snapshot at 0 is a whole window before 1.0: dropped; 0.5 stays.
  window.Add(1.0, snapshot(5, 40));
  window.MeanInto(out);
  EXPECT_EQ(window.size(), 2u);
  EXPECT_TRUE(m0.isConstant(4.0f));
  EXPECT_EQ(m1(0, 0), 30.0f);

  // A snapshot that sums several reads weighs as many: (3 x 5 + 1 x 9) / 4 = 6, then the
  // first falls out of the window and the second's sum is divided by its own reads.
  SnapshotWindow reads(1.0);
  reads.Add(0.0, snapshot(5, 50, 3));
  reads.Add(0.5, snapshot(9, 90, 1));
  reads.MeanInto(out);
  EXPECT_EQ(reads.reads(), 4);
  EXPECT_TRUE(m0.isConstant(6.0f));
  EXPECT_EQ(m1(0, 0), 60.0f);
  reads.Add(1.25, snapshot(2, 20, 2));  // (9 + 2 x 2) / 3, and (90 + 2 x 20) / 3
  reads.MeanInto(out);
  EXPECT_EQ(reads.size(), 2u);
  EXPECT_EQ(reads.reads(), 3);
  EXPECT_TRUE(m0.isApproxToConstant(13.0f / 3.0f));
  EXPECT_FLOAT_EQ(m1(0, 0), 130.0f / 3.0f);

  // No window: the latest snapshot alone.
  SnapshotWindow none(0.0);
  none.Add(0.0, snapshot(1, 10));
  none.Add(0.0, snapshot(7, 70));
  none.MeanInto(out);
  EXPECT_EQ(none.size(), 1u);
  EXPECT_TRUE(m0.isConstant(7.0f));
  EXPECT_EQ(m1(0, 0), 70.0f);
}

// The evaluator evaluates the window's mean: its accuracies are those of a model holding the
// mean, which differ from those of the snapshots alone (the positive control).
TEST(SnapshotEvaluatorTest, EvaluatesTheMeanOfTheWindow) {
  const FashionMnist data = SyntheticSplit();
  const int features = data.train.num_features();
  const auto model = [&] {
    absl::StatusOr<std::unique_ptr<Model>> m = MakeModel("softmax", features, 0);
    EXPECT_TRUE(m.ok()) << m.status();
    return *std::move(m);
  };
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<std::vector<Eigen::MatrixXf>> snapshots;
  for (int s = 0; s < 3; ++s) {
    std::unique_ptr<Model> m = model();
    std::vector<Eigen::MatrixXf> p;
    for (const Eigen::Ref<Eigen::MatrixXf>& t : m->parameters()) {
      p.push_back(Eigen::MatrixXf::NullaryExpr(t.rows(), t.cols(), [&] { return normal(rng); }));
    }
    snapshots.push_back(std::move(p));
  }
  // What a model holding `params` scores.
  const auto accuracy_of = [&](const std::vector<Eigen::MatrixXf>& params) {
    std::unique_ptr<Model> m = model();
    std::vector<Eigen::Ref<Eigen::MatrixXf>> target = m->parameters();
    for (size_t i = 0; i < target.size(); ++i) target[i] = params[i];
    return m->Evaluate(data.test).accuracy;
  };
  std::vector<Eigen::MatrixXf> mean01 = snapshots[0];
  std::vector<Eigen::MatrixXf> mean12 = snapshots[1];
  for (size_t i = 0; i < mean01.size(); ++i) {
    mean01[i] = (snapshots[0][i] + snapshots[1][i]) / 2.0f;
    mean12[i] = (snapshots[1][i] + snapshots[2][i]) / 2.0f;
  }
  for (const double average_s : {0.0, 1.5}) {
    std::vector<double> accuracies;
    std::mutex mu;
    {
      SnapshotEvaluator evaluator(&data.test, model(), 0.0, average_s,
                                  [&](const EvalRecord& r) {
                                    std::lock_guard<std::mutex> lock(mu);
                                    accuracies.push_back(r.test.accuracy);
                                  });
      for (int s = 0; s < 3; ++s) {
        EvalRecord record;
        record.wall_s = s;
        evaluator.Add(record, {.sum = snapshots[static_cast<size_t>(s)]});
      }
      evaluator.Drain();
    }
    ASSERT_EQ(accuracies.size(), 3u);
    EXPECT_EQ(accuracies[0], accuracy_of(snapshots[0])) << average_s;
    if (average_s == 0.0) {
      EXPECT_EQ(accuracies[1], accuracy_of(snapshots[1]));
      EXPECT_EQ(accuracies[2], accuracy_of(snapshots[2]));
    } else {  // a window of 1.5 s holds the snapshot before each
      EXPECT_EQ(accuracies[1], accuracy_of(mean01));
      EXPECT_EQ(accuracies[2], accuracy_of(mean12));
    }
  }
  // The control: the means score differently from the snapshots (random parameters).
  EXPECT_NE(accuracy_of(mean01), accuracy_of(snapshots[1]));
  EXPECT_NE(accuracy_of(mean12), accuracy_of(snapshots[2]));
}

// The evaluator's thread is in the idle scheduling class, so it runs only on CPU time the
// workers leave (evaluator.cc); the thread that made it keeps its own class (the control:
// the class is the evaluator thread's, not the process's).
TEST(SnapshotEvaluatorTest, EvaluatesInTheIdleSchedulingClass) {
  const FashionMnist data = SyntheticSplit();
  absl::StatusOr<std::unique_ptr<Model>> m = MakeModel("softmax", data.train.num_features(), 0);
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<Eigen::MatrixXf> parameters;
  for (const Eigen::Ref<Eigen::MatrixXf>& t : (*m)->parameters()) parameters.push_back(t);
  std::atomic<int> policy{-1};
  {
    SnapshotEvaluator evaluator(&data.test, *std::move(m), 0.0, 0.0,
                                [&](const EvalRecord&) { policy = sched_getscheduler(0); });
    evaluator.Add(EvalRecord{}, {.sum = parameters});
    evaluator.Drain();
  }
  EXPECT_EQ(policy.load(), SCHED_IDLE);
  EXPECT_EQ(sched_getscheduler(0), SCHED_OTHER);
}

// TrainConfig::max_wall_s: rank 0 raises the stop flag after the budget, every worker stops
// (a gated policy too, with a slow worker), and the final evaluation comes after the budget.
TEST(TrainTest, TimeBudgetStopsEveryWorker) {
  const FashionMnist data = SyntheticSplit();
  for (const std::string policy : {"bsp", "asp", "ssp:s=1"}) {
    TrainConfig config;
    config.model = "softmax";
    config.epochs = 100000;  // far more than the budget allows
    config.batch = 10;
    config.schedule = "constant";
    config.slowdown = {1.0, 2.0};
    config.max_wall_s = 0.3;
    const RunResult r = Train(data, config, 2, policy);
    ASSERT_TRUE(r.status.ok()) << policy << ": " << r.status;
    ASSERT_EQ(r.workers.size(), 2u) << policy;
    for (const WorkerSummary &w : r.workers) {
      EXPECT_TRUE(w.stopped) << policy << ", worker " << w.rank;
      EXPECT_GT(w.iterations, 0) << policy << ", worker " << w.rank;
    }
    ASSERT_FALSE(r.evals.empty()) << policy;
    EXPECT_TRUE(r.evals.back().final) << policy;
    EXPECT_GE(r.evals.back().wall_s, 0.3) << policy;
    EXPECT_EQ(r.evals.back().total_iterations, r.workers[0].iterations + r.workers[1].iterations)
        << policy;
  }
}

// SaPS drops a push whose worker read the chunk more than S_max versions before. Rank 0
// (slow, so the others push many times between its pull and its flag) must still get its
// stop flag applied: every worker stops at the budget instead of training until its epochs
// run out.
TEST(TrainTest, TheStopFlagIsNotDroppedAsStale) {
  FashionMnist data = SyntheticSplit();
  TrainConfig config;
  config.model = "softmax";
  // 16000 iterations per worker: far more than the budget allows, even on a loaded machine.
  config.epochs = 200;
  config.batch = 10;
  config.schedule = "constant";
  config.slowdown = {3.0};
  config.max_wall_s = 0.2;
  const RunResult r = Train(data, config, 3, "saps");
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.workers.size(), 3u);
  for (const WorkerSummary &w : r.workers) {
    EXPECT_TRUE(w.stopped) << "worker " << w.rank;
    EXPECT_LT(w.iterations, 16000) << "worker " << w.rank;
  }
}

TEST(TrainTest, CheckConfigNamesTheStragglerBudgetAndAverageFlags) {
  TrainConfig config;
  config.straggler_prob = 1.5;
  EXPECT_EQ(CheckConfig(config).message(), "--straggler-prob must be in [0, 1], got 1.5");
  config.straggler_prob = 0.1;
  config.straggler_factor = 0.5;
  EXPECT_EQ(CheckConfig(config).message(), "--straggler-factor must be at least 1, got 0.5");
  config.straggler_factor = 5;
  config.max_wall_s = -1;
  EXPECT_EQ(CheckConfig(config).message(),
            "--budget-s must be 0 (none) or a positive number of seconds, got -1");
  config.max_wall_s = 2;
  config.average_s = -0.5;
  EXPECT_EQ(CheckConfig(config).message(),
            "--average-s must be 0 (each snapshot alone) or a positive number of seconds, got "
            "-0.5");
  config.average_s = 2;
  EXPECT_TRUE(CheckConfig(config).ok());
}

// Every policy kind: the target stops every worker early, with one worker three times slower; the
// job ends (no read waits forever for a worker that stopped).
class StopTest : public ::testing::TestWithParam<std::string> {};

TEST_P(StopTest, TargetStopsEveryWorker) {
  const FashionMnist data = SyntheticSplit();
  TrainConfig config;
  config.model = "softmax";
  config.epochs = 200;  // far more than the target needs
  config.batch = 10;
  config.learning_rate = 0.05f;
  config.schedule = "constant";
  config.target_accuracy = 0.9;
  config.eval_every = 10;
  config.slowdown = {1.0, 1.0, 3.0};
  const RunResult r = Train(data, config, 3, GetParam());
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_FALSE(std::isnan(r.time_to_target_s));
  EXPECT_GE(r.final_accuracy, 0.85);
  ASSERT_EQ(r.workers.size(), 3u);
  for (const WorkerSummary &w : r.workers) {
    EXPECT_TRUE(w.stopped) << "worker " << w.rank;
    EXPECT_LT(w.iterations, 200 * 80 / 4) << "worker " << w.rank;
    // The slow worker waited after each batch it computed; the target may stop it before its
    // first one (sa-asgd:n=1 applies the fast workers' pushes at once).
    EXPECT_GE(w.slowed_s, 0.0) << "worker " << w.rank;
    if (w.rank == 2 && w.iterations > 0) {
      EXPECT_GT(w.slowed_s, 0.0);
    }
  }
  ASSERT_FALSE(r.evals.empty());
  EXPECT_TRUE(r.evals.back().final);
  // The snapshots that stopped it came before the final one: one of them reached the target
  // (a smoothed accuracy at the target needs a snapshot at it), and the time to target lies
  // within them.
  const auto first = std::find_if(r.evals.begin(), r.evals.end(), [](const EvalRecord &e) {
    return !e.final && e.test.accuracy >= 0.9;
  });
  ASSERT_NE(first, r.evals.end());
  ASSERT_GE(r.evals.size(), 4u);
  EXPECT_GE(r.time_to_target_s, r.evals.front().wall_s);
  EXPECT_LE(r.time_to_target_s, r.evals[r.evals.size() - 2].wall_s);
}

INSTANTIATE_TEST_SUITE_P(Policies, StopTest,
                         ::testing::Values("bsp", "asp", "ssp:s=1", "dssp:s=1,r=4", "sa-asgd:n=1",
                                           "eager", "ssp:s=1+pull=eager"),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return kairos::testing::ParamName(info.param);
                         });

TEST(TrainTest, FashionMnistSubset) {
  if (!std::filesystem::exists(std::string(kDefaultDataDir) + "/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST is not installed (apt-get install "
                    "dataset-fashion-mnist)";
  }
  absl::StatusOr<FashionMnist> data = LoadFashionMnist(kDefaultDataDir, 4000, 1000);
  ASSERT_TRUE(data.ok()) << data.status();
  TrainConfig config;
  config.model = "softmax";
  config.epochs = 5;
  config.batch = 32;
  config.learning_rate = 0.03f;
  const RunResult r = Train(*data, config, 2, "ssp:s=2");
  ASSERT_TRUE(r.status.ok()) << r.status;
  // 4000 examples, 2 workers, 5 epochs: about 0.80 (0.78 to 0.81 seen).
  EXPECT_GE(r.final_accuracy, 0.75);
}

}  // namespace
}  // namespace fmnist
