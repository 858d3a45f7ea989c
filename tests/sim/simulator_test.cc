// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Behaviour tests of whole simulations: determinism, BSP against a sequential replay,
// ASP never waiting, failures and uneven iteration counts finishing, loss going down, the
// virtual-time limit, and option validation.

#include "sim/simulator.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/metrics.h"
#include "kairos/pace.h"
#include "policy/policy.h"
#include "sim/dataset.h"
#include "sim/model.h"
#include "sim/random.h"
#include "sim_test_util.h"

namespace kairos::sim {
namespace {

using policy::MemberState;

// Four workers of different speeds with jitter and transient stragglers.
SimOptions Heterogeneous(const char* policy) {
  SimOptions o;
  o.policy = policy;
  o.num_workers = 4;
  o.model = SmallQuadratic();
  o.iterations = 30;
  o.compute.slowdown = {1.0, 1.5, 3.0, 1.0};
  o.compute.jitter_mean = 0.3;
  o.compute.straggler_prob = 0.1;
  o.sample_interval = absl::Milliseconds(500);
  return o;
}

TEST(SimulatorTest, TwoRunsWithTheSameOptionsAreIdentical) {
  for (const char* policy : {"bsp", "asp", "ssp:s=2"}) {
    SCOPED_TRACE(policy);
    absl::StatusOr<SimResult> a = Simulate(Heterogeneous(policy));
    absl::StatusOr<SimResult> b = Simulate(Heterogeneous(policy));
    ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    ExpectIdenticalResults(*a, *b);
  }
}

TEST(SimulatorTest, ADifferentSeedGivesADifferentRun) {
  SimOptions o = Heterogeneous("asp");
  absl::StatusOr<SimResult> a = Simulate(o);
  o.seed = 2;
  absl::StatusOr<SimResult> b = Simulate(o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->end_time, b->end_time);
  EXPECT_NE(a->final_params, b->final_params);
}

// BSP replayed by hand: round r averages every worker's gradient at the parameters after
// rounds 0 .. r - 1, on the mini-batch SampleBatch(seed, w, r) (or `batch(w, r)`), and takes
// one SGD step, from the model's initial parameters (or o.initial_params).
Eigen::VectorXf SequentialBsp(const SimOptions& o,
                              std::function<std::vector<int>(int, int64_t)> batch = nullptr) {
  Eigen::VectorXf w = o.initial_params.size() > 0 ? o.initial_params : o.model->InitialParams();
  Eigen::VectorXf g;
  for (int64_t round = 0; round < o.iterations; ++round) {
    Eigen::VectorXf sum = Eigen::VectorXf::Zero(w.size());
    for (int worker = 0; worker < o.num_workers; ++worker) {
      o.model->Gradient(
          w,
          batch ? batch(worker, round)
                : SampleBatch(o.seed, worker, round, o.batch_size, o.model->num_examples()),
          &g);
      sum += 1.0f * g;
    }
    w -= (o.learning_rate * (1.0f / static_cast<float>(o.num_workers))) * sum;
  }
  return w;
}

TEST(SimulatorTest, BspWithEqualSpeedsIsExactlyTheSequentialAverageGradient) {
  // Equal speeds: each round's pushes arrive in worker order, the order the replay sums
  // them in, so every float operation is the same and the result is equal bit for bit.
  SimOptions o;
  o.policy = "bsp";
  o.num_workers = 4;
  o.model = SmallQuadratic();
  o.iterations = 25;
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->version, 25u);
  EXPECT_EQ(r->final_params, SequentialBsp(o));
}

// SimOptions::batches and initial_params replace the sampled batches and the model's
// weights: the run is the hand replay on the same batches from the same start, bit for bit,
// and each worker's batches are asked for once per iteration in increasing order.
TEST(SimulatorTest, BatchesAndInitialParamsAreTheRunsOwn) {
  SimOptions o;
  o.policy = "bsp";
  o.num_workers = 4;
  o.model = SmallQuadratic();
  o.iterations = 25;
  const int n = o.model->num_examples();
  const auto batch = [n](int w, int64_t k) {
    return std::vector<int>{static_cast<int>((7 * w + 3 * k) % n), static_cast<int>((w + k) % n)};
  };
  std::vector<std::vector<int64_t>> asked(4);
  std::vector<int> held;
  o.batches = [&](int w, int64_t k) {
    asked[static_cast<size_t>(w)].push_back(k);
    held = batch(w, k);
    return std::span<const int>(held);
  };
  o.initial_params = Eigen::VectorXf::Constant(o.model->num_params(), 0.5f);
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->final_params, SequentialBsp(o, batch));
  EXPECT_NE(r->final_params, SequentialBsp(o));  // the positive control: other batches
  for (const std::vector<int64_t>& a : asked) {
    ASSERT_EQ(a.size(), 25u);
    for (size_t k = 0; k < a.size(); ++k) EXPECT_EQ(a[k], static_cast<int64_t>(k));
  }
  // Under eager pull too (its first gradient on the initial pull, then one ahead).
  o.policy = "eager";
  for (std::vector<int64_t>& a : asked) a.clear();
  ASSERT_TRUE(Simulate(o).ok());
  for (const std::vector<int64_t>& a : asked) {
    ASSERT_EQ(a.size(), 25u);
    EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  }
  // No iteration: the run ends where it started.
  o.iterations = 0;
  absl::StatusOr<SimResult> none = Simulate(o);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->final_params, o.initial_params);
}

TEST(SimulatorTest, ABatchOutOfRangeOrParamsOfTheWrongSizeFailTheRun) {
  SimOptions o;
  o.policy = "asp";
  o.num_workers = 3;
  o.model = SmallQuadratic();
  o.iterations = 10;
  const int n = o.model->num_examples();
  std::vector<int> held;
  o.batches = [&](int w, int64_t k) {
    held = {w == 2 && k == 5 ? n : 0};
    return std::span<const int>(held);
  };
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_THAT(std::string(r.status().message()),
              testing::HasSubstr("batch of worker 2 at iteration 5 is not in [0, 256)"));
  o.batches = [&](int, int64_t) {
    held = {0};
    return std::span<const int>(held);
  };
  EXPECT_TRUE(Simulate(o).ok());  // the positive control
  o.initial_params = Eigen::VectorXf::Zero(o.model->num_params() + 1);
  r = Simulate(o);
  ASSERT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_THAT(std::string(r.status().message()), testing::HasSubstr("initial_params: 9 values"));
}

TEST(SimulatorTest, BspWithHeterogeneousSpeedsIsTheSequentialAverageGradient) {
  // Different speeds change the order in which a round's gradients are summed. Float
  // addition is not associative, so each round's mean may differ from the replay's in the
  // last bits; the quadratic is contractive at this learning rate, so the differences stay
  // at a few float ulps of the parameters instead of growing.
  SimOptions o = Heterogeneous("bsp");
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  const Eigen::VectorXf expected = SequentialBsp(o);
  ASSERT_EQ(r->final_params.size(), expected.size());
  for (Eigen::Index i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(r->final_params(i), expected(i), 1e-5 * (1.0 + std::abs(expected(i)))) << i;
  }
  EXPECT_EQ(r->staleness.max(), 0u);  // BSP's pushes are never stale (docs/references.md SA-ASGD-1)
  EXPECT_LE(r->max_read_lead, 0);
}

TEST(SimulatorTest, AspNeverBlocks) {
  absl::StatusOr<SimResult> r = Simulate(Heterogeneous("asp"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->total_blocked_time, absl::ZeroDuration());
  for (const SimWorkerResult& w : r->workers) {
    EXPECT_EQ(w.metrics.blocked_reads, 0u);
    EXPECT_EQ(w.iterations, 30);
  }
  EXPECT_GT(r->staleness.max(), 0u);  // but its pushes are stale
}

TEST(SimulatorTest, SlowWorkerMakesBspWaitButNotAsp) {
  absl::StatusOr<SimResult> bsp = Simulate(Heterogeneous("bsp"));
  absl::StatusOr<SimResult> asp = Simulate(Heterogeneous("asp"));
  ASSERT_TRUE(bsp.ok() && asp.ok());
  EXPECT_GT(bsp->workers[0].metrics.blocked_time, absl::ZeroDuration());
  // Each worker's k-th iteration takes the same time under both (the same draws), and
  // under ASP nobody waits, so the job ends sooner.
  EXPECT_LT(asp->end_time, bsp->end_time);
}

TEST(SimulatorTest, FailedWorkerDoesNotDeadlockTheOthers) {
  for (const char* policy : {"bsp", "ssp:s=2", "asp"}) {
    SCOPED_TRACE(policy);
    SimOptions o = Heterogeneous(policy);
    o.failures = {{.worker = 2, .at = absl::Milliseconds(1500)}};
    o.detection_delay = absl::Seconds(2);
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->workers[2].state, MemberState::kDead);
    EXPECT_LT(r->workers[2].iterations, 30);
    for (int w : {0, 1, 3}) {
      EXPECT_EQ(r->workers[static_cast<size_t>(w)].state, MemberState::kFinished) << w;
      EXPECT_EQ(r->workers[static_cast<size_t>(w)].iterations, 30) << w;
    }
  }
}

TEST(SimulatorTest, AFailureAfterFinishingChangesNothing) {
  SimOptions o = Heterogeneous("bsp");
  absl::StatusOr<SimResult> plain = Simulate(o);
  o.failures = {{.worker = 1, .at = absl::Hours(1)}};
  absl::StatusOr<SimResult> late = Simulate(o);
  ASSERT_TRUE(plain.ok() && late.ok());
  ExpectIdenticalResults(*plain, *late);
}

TEST(SimulatorTest, UnevenIterationCountsFinish) {
  for (const char* policy : {"bsp", "ssp:s=1", "asp"}) {
    SCOPED_TRACE(policy);
    SimOptions o = Heterogeneous(policy);
    o.iterations_per_worker = {5, 20, 0, 12};
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    for (size_t w = 0; w < 4; ++w) {
      EXPECT_EQ(r->workers[w].iterations, o.iterations_per_worker[w]) << w;
      EXPECT_EQ(r->workers[w].state, MemberState::kFinished) << w;
    }
    EXPECT_EQ(r->total_iterations(), 37);
  }
}

TEST(SimulatorTest, LossDecreasesOnTheQuadratic) {
  for (const char* policy : {"bsp", "ssp:s=3", "asp"}) {
    SCOPED_TRACE(policy);
    absl::StatusOr<SimResult> r = Simulate(Heterogeneous(policy));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_GE(r->samples.size(), 2u);
    const double first_gap = r->samples.front().loss - r->optimal_loss;
    const double last_gap = r->samples.back().loss - r->optimal_loss;
    EXPECT_GE(last_gap, 0.0);
    EXPECT_LT(last_gap, 0.1 * first_gap);
  }
}

TEST(SimulatorTest, SoftmaxOnClustersGainsAccuracy) {
  absl::StatusOr<DataSplit> data = MakeGaussianClusters(
      {.num_classes = 4, .num_features = 8, .num_train = 512, .num_test = 256,
       .separation = 1.0});
  ASSERT_TRUE(data.ok());
  absl::StatusOr<std::shared_ptr<const Model>> model = MakeSoftmaxModel(*std::move(data), {});
  ASSERT_TRUE(model.ok());
  SimOptions o = Heterogeneous("ssp:s=2");
  o.model = *model;
  o.iterations = 50;
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->has_accuracy);
  EXPECT_LT(r->samples.back().loss, r->samples.front().loss);
  EXPECT_GT(r->samples.back().accuracy, 0.8);
}

TEST(SimulatorTest, SamplesCoverTheRunAtTheInterval) {
  absl::StatusOr<SimResult> r = Simulate(Heterogeneous("ssp:s=1"));
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->samples.size(), 3u);
  EXPECT_EQ(r->samples.front().time, absl::ZeroDuration());
  EXPECT_EQ(r->samples.front().version, 0u);
  EXPECT_EQ(r->samples.back().time, r->end_time);
  EXPECT_EQ(r->samples.back().version, r->version);
  EXPECT_EQ(r->samples.back().iterations, r->total_iterations());
  for (size_t i = 1; i + 1 < r->samples.size(); ++i) {
    EXPECT_EQ(r->samples[i].time, absl::Milliseconds(500) * static_cast<int64_t>(i));
    EXPECT_GE(r->samples[i].version, r->samples[i - 1].version);
  }
}

TEST(SimulatorTest, StopsAtMaxTime) {
  SimOptions o = Heterogeneous("asp");
  o.iterations = 1000000;
  o.max_time = absl::Seconds(3);
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->time_limited);
  EXPECT_EQ(r->end_time, absl::Seconds(3));
  EXPECT_EQ(r->samples.back().time, absl::Seconds(3));
  // About 3 s / 100 ms iterations for the fastest worker, fewer for the slow one.
  EXPECT_GT(r->workers[0].iterations, 10);
  EXPECT_LT(r->workers[2].iterations, r->workers[0].iterations);
}

TEST(SimulatorTest, NetworkTimeAddsToEveryIteration) {
  SimOptions o;
  o.policy = "asp";
  o.num_workers = 1;
  o.model = SmallQuadratic(8, 256);
  o.iterations = 10;
  o.network.latency = absl::Milliseconds(5);
  o.network.bandwidth_bytes_per_s = 32.0 * 1000;  // 32 bytes of parameters: 1 ms
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok());
  // First read 5 ms; each iteration 6 ms back, 100 ms compute, 6 ms push; the next read
  // rides behind the push.
  EXPECT_NEAR(absl::ToDoubleSeconds(r->end_time), 0.005 + 10 * 0.112, 1e-9);
  EXPECT_EQ(r->workers[0].compute_time, absl::Seconds(1));
}

TEST(SimulatorTest, ModelsEagerPullAndValueWeighting) {
  for (const char* spec : {"eager", "vsgd", "ssp:s=1+pull=eager", "ssp:s=1+weight=value",
                           "vsgd+pull=eager", "asp+weight=value:mode=bound"}) {
    SCOPED_TRACE(spec);
    ASSERT_TRUE(policy::ParsePolicySpec(spec).ok());
    SimOptions o = Heterogeneous(spec);
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->total_iterations(), 4 * o.iterations);
    EXPECT_LT(r->samples.back().loss, r->samples.front().loss);
  }
}

void ExpectSameRealHistogram(const RealHistogram& a, const RealHistogram& b) {
  EXPECT_EQ(a.count(), b.count());
  EXPECT_EQ(a.sum(), b.sum());
  EXPECT_EQ(a.max(), b.max());
  for (int i = 0; i < RealHistogram::kBuckets; ++i) EXPECT_EQ(a.bucket(i), b.bucket(i)) << i;
}

TEST(SimulatorTest, VsgdIsDeterministicAndRecordsValueStaleness) {
  absl::StatusOr<SimResult> a = Simulate(Heterogeneous("vsgd"));
  absl::StatusOr<SimResult> b = Simulate(Heterogeneous("vsgd"));
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  ExpectIdenticalResults(*a, *b);
  double largest = 0;
  for (size_t w = 0; w < a->workers.size(); ++w) {
    const WorkerMetrics& m = a->workers[w].metrics;
    ExpectSameRealHistogram(m.value_staleness, b->workers[w].metrics.value_staleness);
    ExpectSameRealHistogram(m.scale, b->workers[w].metrics.scale);
    EXPECT_EQ(m.value_staleness.count(), m.pushes);  // one per accepted push
    largest = std::max(largest, m.value_staleness.max());
  }
  EXPECT_GT(largest, 0.0);  // the others' updates move the parameters under a reader
  // Other weightings record none.
  absl::StatusOr<SimResult> ssp = Simulate(Heterogeneous("ssp:s=3"));
  ASSERT_TRUE(ssp.ok());
  EXPECT_EQ(ssp->workers[0].metrics.value_staleness.count(), 0u);
}

TEST(SimulatorTest, ALoneVsgdWorkerHasNoValueStaleness) {
  // Nothing is applied between a lone worker's read and its push: ||D|| = 0 every time,
  // so the value weighting never scales it down and it follows plain SGD exactly.
  SimOptions o;
  o.num_workers = 1;
  o.model = SmallQuadratic(8, 256);
  o.iterations = 20;
  for (const char* spec : {"asp+weight=value", "asp+weight=value:mode=bound"}) {
    o.policy = spec;
    absl::StatusOr<SimResult> vsgd = Simulate(o);
    o.policy = "asp";
    absl::StatusOr<SimResult> asp = Simulate(o);
    ASSERT_TRUE(vsgd.ok() && asp.ok()) << vsgd.status();
    const WorkerMetrics& m = vsgd->workers[0].metrics;
    EXPECT_EQ(m.value_staleness.count(), 20u) << spec;
    EXPECT_EQ(m.value_staleness.max(), 0.0) << spec;
    EXPECT_EQ(vsgd->final_params, asp->final_params) << spec;
  }
}

// One worker, compute C = 100 ms, latency L = 10 ms, infinite bandwidth, no jitter. On
// demand each iteration is a read reply, a gradient and a push: L + n (2L + C). Eager, the
// request travels while the next gradient is computed (2L < C), so only the first reply and
// the last push add to n gradients: 2L + n C + L.
TEST(SimulatorTest, EagerIterationNeverWaitsForItsOwnPush) {
  SimOptions o;
  o.num_workers = 1;
  o.model = SmallQuadratic(8, 256);
  o.iterations = 10;
  o.network.latency = absl::Milliseconds(10);
  o.network.bandwidth_bytes_per_s = 0;
  o.policy = "asp";
  absl::StatusOr<SimResult> on_demand = Simulate(o);
  o.policy = "eager";
  absl::StatusOr<SimResult> eager = Simulate(o);
  ASSERT_TRUE(on_demand.ok() && eager.ok()) << eager.status();
  EXPECT_EQ(on_demand->end_time, absl::Milliseconds(10 + 10 * 120));
  EXPECT_EQ(eager->end_time, absl::Milliseconds(20 + 10 * 100 + 10));
  EXPECT_EQ(eager->workers[0].iterations, 10);
  EXPECT_EQ(eager->workers[0].metrics.pushes, 10u);
  // The initial pull and 10 eager reads: every push asks for one, the last one included (its
  // reply is what EagerSchedule::Finish returns).
  EXPECT_EQ(eager->workers[0].metrics.pulls, 11u);
  EXPECT_EQ(eager->workers[0].compute_time, absl::Seconds(1));
  EXPECT_LT(eager->samples.back().loss, eager->samples.front().loss);
}

// The simulated eager worker sends its push with the read after it in one request, as
// EagerSchedule does, so the engine measures its staleness from the read its gradient was
// computed on: in lock-step, 2N - 1 versions (two rounds of the others and its own update)
// against ASP's N - 1.
TEST(SimulatorTest, EagerPushesAreMeasuredFromTheReadTheyWereComputedOn) {
  SimOptions o;
  o.num_workers = 4;
  o.model = SmallQuadratic(8, 256);
  o.iterations = 40;
  o.learning_rate = 0.01f;
  o.push_log_size = 20;
  for (const auto& [policy, expected] : {std::pair{"asp", 3.0}, std::pair{"eager", 7.0}}) {
    SCOPED_TRACE(policy);
    o.policy = policy;
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    for (const SimWorkerResult& w : r->workers) {
      double sum = 0;
      for (const PushRecord& p : w.metrics.push_log) sum += static_cast<double>(p.staleness);
      ASSERT_EQ(w.metrics.push_log.size(), 20u);
      EXPECT_NEAR(sum / 20.0, expected, 0.5);
    }
  }
}

TEST(SimulatorTest, EagerUnderBspKeepsTheBoundAndOverlapsTheWait) {
  SimOptions o = Heterogeneous("bsp");
  o.network.latency = absl::Milliseconds(20);
  absl::StatusOr<SimResult> on_demand = Simulate(o);
  o.policy = "bsp+pull=eager";
  absl::StatusOr<SimResult> a = Simulate(o);
  absl::StatusOr<SimResult> b = Simulate(o);
  ASSERT_TRUE(on_demand.ok() && a.ok() && b.ok()) << a.status();
  ExpectIdenticalResults(*a, *b);
  for (size_t w = 0; w < a->workers.size(); ++w) {
    const WorkerMetrics& m = a->workers[w].metrics;
    EXPECT_EQ(a->workers[w].iterations, o.iterations);
    ExpectSameRealHistogram(m.scale, b->workers[w].metrics.scale);
    // In lock-step every reply shows one update by each other worker: scale 1.
    EXPECT_EQ(m.scale.sum(), static_cast<double>(m.scale.count()));
  }
  EXPECT_EQ(a->max_read_lead, 0);  // the eager read at clock t + 1 is gated like any read
  // The fast workers compute their next gradient while their request waits in the gate.
  EXPECT_LT(a->end_time, on_demand->end_time);
  EXPECT_LT(a->samples.back().loss, a->samples.front().loss);
}

TEST(SimulatorTest, EagerScalesDownAWorkerThatSawManyForeignUpdates) {
  SimOptions o = Heterogeneous("eager");
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  // Worker 2 is three times slower: between its reads the others push about 7 updates, more
  // than N - 1 = 3, so its learning rate is scaled below 1.
  const RealHistogram& slow = r->workers[2].metrics.scale;
  EXPECT_LT(slow.sum(), static_cast<double>(slow.count()));
  o.policy = "eager+pull=eager:lr=constant";
  absl::StatusOr<SimResult> constant = Simulate(o);
  ASSERT_TRUE(constant.ok()) << constant.status();
  const RealHistogram& flat = constant->workers[2].metrics.scale;
  EXPECT_EQ(flat.sum(), static_cast<double>(flat.count()));
}

// A lone eager worker's local step is the server's step: x_{t+1} = W_t - lr * g_t with W_t
// = x_t (its own previous push is the only update), so it follows sequential SGD exactly,
// as a lone on-demand worker does. A local step of another size or sign than the server's,
// or none, would break the equality (checked: a doubled local step fails it).
TEST(SimulatorTest, ALoneEagerWorkerFollowsSequentialSgdExactly) {
  SimOptions o;
  o.num_workers = 1;
  o.model = SmallQuadratic(8, 256);
  o.iterations = 50;
  o.learning_rate = 0.3f;
  o.policy = "asp";
  absl::StatusOr<SimResult> on_demand = Simulate(o);
  o.policy = "eager";
  absl::StatusOr<SimResult> eager = Simulate(o);
  ASSERT_TRUE(on_demand.ok() && eager.ok()) << eager.status();
  // The replay: 50 steps of w -= lr * g(w, batch t).
  Eigen::VectorXf w = o.model->InitialParams();
  Eigen::VectorXf g;
  for (int64_t t = 0; t < o.iterations; ++t) {
    o.model->Gradient(w, SampleBatch(o.seed, 0, t, o.batch_size, o.model->num_examples()), &g);
    w -= o.learning_rate * g;
  }
  EXPECT_EQ(on_demand->final_params, w);
  EXPECT_EQ(eager->final_params, w);
  // tau = 0 foreign updates: the multiplier is 1 for every push.
  EXPECT_EQ(eager->workers[0].metrics.scale.sum(), 50.0);
}

// Why eager pull diverges where ASP converges (docs/policy_results.md): with N workers
// of equal speed, an ASP gradient is applied N - 1 updates after the read it was computed
// on, an eager one about 2N - 1 (it is computed on the reply of the previous request,
// plus the worker's own update), and delayed gradient descent is stable only for
// lr * lambda_max < 2 sin(pi / (2 (2D + 1))) with delay D. On this model (lambda_max 1.05)
// with 8 workers that is lr < 0.20 for ASP (measured 0.201) and lr < 0.10 for eager
// (measured 0.112): between the two, ASP converges and eager diverges; below both, both
// converge. Eager's learning-rate modulation is 1 in lock-step, so it changes nothing here.
TEST(SimulatorTest, EagerPullHalvesTheStableLearningRate) {
  const auto final_over_initial = [](const char* policy, float lr) {
    SimOptions o;
    o.policy = policy;
    o.num_workers = 8;
    o.learning_rate = lr;
    o.iterations = 400;
    absl::StatusOr<SimResult> r = Simulate(o);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->samples.back().loss / r->samples.front().loss : 0.0;
  };
  EXPECT_LT(final_over_initial("asp", 0.15f), 0.01);
  EXPECT_GT(final_over_initial("eager", 0.15f), 1000.0);
  EXPECT_GT(final_over_initial("eager+pull=eager:lr=constant", 0.15f), 1000.0);
  EXPECT_LT(final_over_initial("asp", 0.08f), 0.01);
  EXPECT_LT(final_over_initial("eager", 0.08f), 0.01);
}

// Measured profiles (ComputeOptions::measured): one point is an exact time per iteration,
// worker w uses profile w mod their number, and the parametric model is ignored.
// The simulator draws its compute times from the pace model a paced real worker uses
// (kairos/pace.h): under BSP every worker computes every iteration, so its compute time is
// the sum of the model's times for its iterations 0..n-1, to the nanosecond.
TEST(SimulatorTest, ComputeTimesAreThePaceModels) {
  SimOptions o = Heterogeneous("bsp");
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<PaceModel> pace = PaceModel::Create(PaceOptionsOf(o));
  ASSERT_TRUE(pace.ok()) << pace.status();
  for (int w = 0; w < o.num_workers; ++w) {
    absl::Duration sum;
    for (int64_t k = 0; k < o.iterations; ++k) sum += pace->IterationTime(w, k);
    EXPECT_EQ(r->workers[static_cast<size_t>(w)].compute_time, sum) << "worker " << w;
  }
}

TEST(SimulatorTest, AOnePointProfileIsAnExactComputeTime) {
  SimOptions o;
  o.policy = "bsp";
  o.num_workers = 3;
  o.model = SmallQuadratic(8, 256);
  o.iterations = 4;
  o.network.latency = absl::Milliseconds(1);
  o.network.bandwidth_bytes_per_s = 0;  // infinite: a message takes the latency
  o.compute.slowdown = {100.0};         // ignored under a profile
  o.compute.jitter_mean = 1.0;
  o.compute.measured = {{absl::Milliseconds(10)}, {absl::Milliseconds(30)}};
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  // Workers 0 and 2 take 10 ms, worker 1 30 ms: BSP's rounds last 1 + 30 + 1 ms, after the
  // first read's 1 ms.
  EXPECT_EQ(r->end_time, absl::Milliseconds(1 + 4 * 32));
  EXPECT_EQ(r->workers[0].compute_time, absl::Milliseconds(40));
  EXPECT_EQ(r->workers[1].compute_time, absl::Milliseconds(120));
  EXPECT_EQ(r->workers[2].compute_time, absl::Milliseconds(40));
}

TEST(SimulatorTest, AProfileIsSampledUniformly) {
  SimOptions o;
  o.policy = "asp";
  o.num_workers = 1;
  o.model = SmallQuadratic(8, 256);
  o.iterations = 4000;
  o.network.latency = absl::ZeroDuration();
  o.network.bandwidth_bytes_per_s = 0;  // infinite
  // 10, 20 or 60 ms, each a third of the draws: mean 30 ms, every draw one of the three.
  o.compute.measured = {{absl::Milliseconds(10), absl::Milliseconds(20), absl::Milliseconds(60)}};
  o.push_log_size = 0;
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  const double mean_ms = absl::ToDoubleMilliseconds(r->workers[0].compute_time) / 4000;
  EXPECT_NEAR(mean_ms, 30.0, 1.0);  // the standard error is about 0.35 ms
  // The total is a sum of whole draws: 10 a + 20 b + 60 c ms with a + b + c = 4000.
  const int64_t total_ms = absl::ToInt64Milliseconds(r->workers[0].compute_time);
  EXPECT_EQ(r->workers[0].compute_time, absl::Milliseconds(total_ms));
  EXPECT_EQ(total_ms % 10, 0);
  EXPECT_EQ(r->end_time, r->workers[0].compute_time);  // no network time
}

TEST(SimulatorTest, StopsAtTheFirstSampleThatReachesTheAccuracy) {
  absl::StatusOr<DataSplit> data = MakeGaussianClusters(
      {.num_classes = 3, .num_features = 4, .num_train = 256, .num_test = 128,
       .separation = 3.0});
  ASSERT_TRUE(data.ok());
  SimOptions o;
  o.policy = "ssp:s=1";
  o.num_workers = 4;
  o.model = *MakeSoftmaxModel(*std::move(data), {});
  o.iterations = 1000;
  o.sample_interval = absl::Milliseconds(200);
  absl::StatusOr<SimResult> full = Simulate(o);
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_GT(full->samples.back().accuracy, 0.8);
  o.stop_at_accuracy = 0.8;
  absl::StatusOr<SimResult> stopped = Simulate(o);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_TRUE(stopped->stopped_at_target);
  EXPECT_FALSE(full->stopped_at_target);
  // The same run up to the first sample at 0.8, which ends it.
  size_t first = 0;
  while (full->samples[first].accuracy < 0.8) ++first;
  ASSERT_EQ(stopped->samples.size(), first + 1);
  for (size_t i = 0; i <= first; ++i) {
    EXPECT_EQ(stopped->samples[i].time, full->samples[i].time);
    EXPECT_EQ(stopped->samples[i].accuracy, full->samples[i].accuracy);
  }
  EXPECT_EQ(stopped->end_time, full->samples[first].time);
  EXPECT_LT(stopped->total_iterations(), full->total_iterations());
  o.stop_at_accuracy = 1.5;
  EXPECT_TRUE(absl::IsInvalidArgument(Simulate(o).status()));
}

TEST(SimulatorTest, RejectsBadProfiles) {
  const auto status_of = [](std::vector<std::vector<absl::Duration>> measured) {
    SimOptions o;
    o.compute.measured = std::move(measured);
    return Simulate(o).status();
  };
  EXPECT_TRUE(status_of({{absl::Milliseconds(1), absl::Milliseconds(2)}}).ok());
  EXPECT_TRUE(absl::IsInvalidArgument(status_of({{}})));
  EXPECT_TRUE(absl::IsInvalidArgument(status_of({{absl::ZeroDuration()}})));
  EXPECT_TRUE(absl::IsInvalidArgument(status_of({{absl::InfiniteDuration()}})));
  const absl::Status unsorted = status_of(
      {{absl::Milliseconds(1)}, {absl::Milliseconds(2), absl::Milliseconds(1)}});
  EXPECT_TRUE(absl::IsInvalidArgument(unsorted));
  EXPECT_NE(unsorted.message().find("compute.measured[1]"), absl::string_view::npos)
      << unsorted;
  EXPECT_TRUE(absl::IsInvalidArgument(status_of(
      {std::vector<absl::Duration>(kMaxProfilePoints + 1, absl::Milliseconds(1))})));
}

TEST(SimulatorTest, RejectsBadOptions) {
  const auto status_of = [](void (*change)(SimOptions&)) {
    SimOptions o;
    change(o);
    return Simulate(o).status();
  };
  EXPECT_TRUE(absl::IsInvalidArgument(status_of([](SimOptions& o) { o.policy = "nope"; })));
  EXPECT_TRUE(absl::IsInvalidArgument(status_of([](SimOptions& o) { o.num_workers = 0; })));
  EXPECT_TRUE(absl::IsInvalidArgument(status_of([](SimOptions& o) { o.learning_rate = 0; })));
  EXPECT_TRUE(absl::IsInvalidArgument(status_of([](SimOptions& o) { o.batch_size = 0; })));
  EXPECT_TRUE(absl::IsInvalidArgument(status_of([](SimOptions& o) { o.iterations = -1; })));
  EXPECT_TRUE(absl::IsInvalidArgument(
      status_of([](SimOptions& o) { o.iterations_per_worker = {1, 2}; })));
  EXPECT_TRUE(absl::IsInvalidArgument(
      status_of([](SimOptions& o) { o.compute.slowdown = {1, 0}; })));
  EXPECT_TRUE(absl::IsInvalidArgument(
      status_of([](SimOptions& o) { o.compute.straggler_prob = 1.5; })));
  EXPECT_TRUE(absl::IsInvalidArgument(
      status_of([](SimOptions& o) { o.network.latency = -absl::Seconds(1); })));
  EXPECT_TRUE(absl::IsInvalidArgument(status_of([](SimOptions& o) {
    o.network.server_bandwidth_bytes_per_s = std::numeric_limits<double>::infinity();
  })));
  EXPECT_TRUE(absl::IsInvalidArgument(
      status_of([](SimOptions& o) { o.failures = {{.worker = 9}}; })));
  EXPECT_TRUE(absl::IsInvalidArgument(
      status_of([](SimOptions& o) { o.failures = {{.worker = 1}, {.worker = 1}}; })));
  EXPECT_TRUE(absl::IsInvalidArgument(
      status_of([](SimOptions& o) { o.sample_interval = absl::ZeroDuration(); })));
  EXPECT_TRUE(status_of([](SimOptions& o) {}).ok());
}

}  // namespace
}  // namespace kairos::sim
