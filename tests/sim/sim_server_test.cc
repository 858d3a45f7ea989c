// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of SimServer driven by hand: the gate holds and releases reads, BSP's round
// average is applied once per round, ASP applies every push, and the metrics (staleness,
// read lead, blocked time) are those a real server keeps.

#include "sim/sim_server.h"

#include <cmath>
#include <vector>

#include <Eigen/Core>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "policy/policy.h"

namespace kairos::sim {
namespace {

using policy::MemberState;

const absl::Time kT0 = absl::UnixEpoch();

policy::PolicySpec Spec(const char* text) {
  absl::StatusOr<policy::PolicySpec> spec = policy::ParsePolicySpec(text);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

Eigen::VectorXf Vec(float a, float b) {
  Eigen::VectorXf v(2);
  v << a, b;
  return v;
}

// ||v|| in double, as the server computes ||D_i|| of its float sums.
double Norm(const Eigen::VectorXf& v) {
  double sum = 0;
  for (float x : v) sum += static_cast<double>(x) * x;
  return std::sqrt(sum);
}

std::vector<int> Workers(const std::vector<ServedRead>& served) {
  std::vector<int> out;
  for (const ServedRead& r : served) out.push_back(r.worker);
  return out;
}

TEST(SimServerTest, BspHoldsAReadUntilEveryWorkerClocked) {
  SimServer server(Spec("bsp"), 2, Eigen::VectorXf::Zero(2), 1.0f);
  EXPECT_EQ(Workers(server.OnRead(0, 0, kT0)), (std::vector<int>{0}));
  EXPECT_EQ(Workers(server.OnRead(1, 0, kT0)), (std::vector<int>{1}));
  server.OnPush(0, 0, Vec(2, 0), kT0 + absl::Seconds(1));
  EXPECT_TRUE(server.OnClock(0, 1, kT0 + absl::Seconds(1)).empty());
  EXPECT_TRUE(server.OnRead(0, 1, kT0 + absl::Seconds(1)).empty());
  EXPECT_EQ(server.num_waiting(), 1);
  EXPECT_EQ(server.version(), 0u);
  server.OnPush(1, 0, Vec(0, 4), kT0 + absl::Seconds(3));
  EXPECT_EQ(Workers(server.OnClock(1, 1, kT0 + absl::Seconds(3))), (std::vector<int>{0}));
  // One update: the mean of the round's two gradients.
  EXPECT_EQ(server.version(), 1u);
  EXPECT_EQ(server.params(), Vec(-1, -2));
  EXPECT_EQ(server.metrics()[0].blocked_reads, 1u);
  EXPECT_EQ(server.metrics()[0].blocked_time, absl::Seconds(2));
  EXPECT_EQ(server.metrics()[0].staleness.max(), 0u);
}

TEST(SimServerTest, AspAppliesEveryPushAndCountsStaleness) {
  SimServer server(Spec("asp"), 2, Eigen::VectorXf::Zero(2), 0.5f);
  server.OnRead(0, 0, kT0);
  server.OnRead(1, 0, kT0);
  server.OnPush(0, 0, Vec(2, 2), kT0);
  server.OnPush(1, 0, Vec(2, 0), kT0);  // read at version 0, applied at version 1
  EXPECT_EQ(server.version(), 2u);
  EXPECT_EQ(server.params(), Vec(-2, -1));
  EXPECT_EQ(server.metrics()[0].staleness.max(), 0u);
  EXPECT_EQ(server.metrics()[1].staleness.max(), 1u);
  EXPECT_EQ(server.metrics()[1].pushes, 1u);
}

TEST(SimServerTest, RecordsTheReadLeadOverTheSlowestWorker) {
  SimServer server(Spec("ssp:s=2"), 2, Eigen::VectorXf::Zero(2), 1.0f);
  server.OnClock(0, 1, kT0);
  server.OnClock(0, 2, kT0);
  EXPECT_EQ(Workers(server.OnRead(0, 2, kT0)), (std::vector<int>{0}));
  server.OnClock(0, 3, kT0);
  EXPECT_TRUE(server.OnRead(0, 3, kT0).empty());
  EXPECT_EQ(server.metrics()[0].max_read_lead, 2);
  EXPECT_NE(server.DescribeWaiting().find("worker 0's read at clock 3 waits for workers [1"),
            std::string::npos)
      << server.DescribeWaiting();
}

TEST(SimServerTest, LeavingReleasesTheOthersAndDropsOwnReads) {
  SimServer server(Spec("bsp"), 3, Eigen::VectorXf::Zero(2), 1.0f);
  server.OnClock(0, 1, kT0);
  server.OnRead(0, 1, kT0);
  server.OnClock(1, 1, kT0);
  server.OnRead(1, 1, kT0);
  EXPECT_EQ(server.num_waiting(), 2);
  EXPECT_EQ(Workers(server.OnLeave(2, MemberState::kDead, kT0 + absl::Seconds(1))),
            (std::vector<int>{0, 1}));
  server.OnClock(0, 2, kT0);
  server.OnRead(0, 2, kT0 + absl::Seconds(1));
  server.OnLeave(0, MemberState::kFinished, kT0 + absl::Seconds(4));
  EXPECT_EQ(server.num_waiting(), 0);
  EXPECT_EQ(server.metrics()[0].blocked_time, absl::Seconds(1) + absl::Seconds(3));
  // A push or read of a worker that left is ignored, as a real server refuses it.
  server.OnPush(2, 0, Vec(1, 1), kT0);
  EXPECT_EQ(server.metrics()[2].pushes, 0u);
  EXPECT_TRUE(server.OnRead(2, 0, kT0).empty());
}

TEST(SimServerTest, FinishCountsTheWaitOfReadsLeftWaiting) {
  SimServer server(Spec("bsp"), 2, Eigen::VectorXf::Zero(2), 1.0f);
  server.OnClock(0, 1, kT0);
  server.OnRead(0, 1, kT0);
  server.Finish(kT0 + absl::Seconds(5));
  EXPECT_EQ(server.metrics()[0].blocked_time, absl::Seconds(5));
  EXPECT_EQ(server.num_waiting(), 0);
}

TEST(SimServerTest, ValueStalenessIsTheDistanceFromTheParametersRead) {
  SimServer server(Spec("asp+weight=value"), 3, Eigen::VectorXf::Zero(2), 0.5f);
  for (int w = 0; w < 3; ++w) server.OnRead(w, 0, kT0);
  const Eigen::VectorXf read = server.params();
  server.OnPush(1, 0, Vec(2, -4), kT0);  // nothing applied since its read: VS 0
  EXPECT_EQ(server.metrics()[1].value_staleness.count(), 1u);
  EXPECT_EQ(server.metrics()[1].value_staleness.max(), 0.0);
  const double after_one = Norm(server.params() - read);
  server.OnPush(2, 0, Vec(6, 8), kT0);
  EXPECT_DOUBLE_EQ(server.metrics()[2].value_staleness.max(), after_one);
  const Eigen::VectorXf at_push = server.params();
  server.OnPush(0, 0, Vec(1, 1), kT0);
  EXPECT_NEAR(server.metrics()[0].value_staleness.max(),
              Norm(at_push - read), 1e-6);
  // A read resets D: worker 1 reads now and pushes with nothing applied in between.
  server.OnRead(1, 1, kT0);
  server.OnPush(1, 1, Vec(1, 0), kT0);
  EXPECT_EQ(server.metrics()[1].value_staleness.count(), 2u);
  EXPECT_EQ(server.metrics()[1].value_staleness.max(), 0.0);
  // Worker 2 has not read since: its D is every change since its read at version 0.
  const Eigen::VectorXf now = server.params();
  server.OnPush(2, 1, Vec(0, 1), kT0);
  EXPECT_NEAR(server.metrics()[2].value_staleness.sum(),
              after_one + Norm(now - read), 1e-6);
}

TEST(SimServerTest, BoundModeSumsTheNormsOfTheChanges) {
  SimServer server(Spec("asp+weight=value:mode=bound"), 2, Eigen::VectorXf::Zero(2), 1.0f);
  server.OnRead(0, 0, kT0);
  server.OnRead(1, 0, kT0);
  Eigen::VectorXf before = server.params();
  server.OnPush(1, 0, Vec(3, 4), kT0);
  double bound = Norm(server.params() - before);
  before = server.params();
  server.OnRead(1, 1, kT0);
  server.OnPush(1, 1, Vec(-3, 4), kT0);
  bound += Norm(server.params() - before);
  server.OnPush(0, 0, Vec(1, 1), kT0);
  EXPECT_NEAR(server.metrics()[0].value_staleness.max(), bound, 1e-6);
  EXPECT_EQ(server.metrics()[1].value_staleness.max(), 0.0);
}

TEST(SimServerTest, PushScaleMultipliesTheUpdate) {
  SimServer server(Spec("asp"), 1, Eigen::VectorXf::Zero(2), 1.0f);
  server.OnRead(0, 0, kT0);
  server.OnPush(0, 0, Vec(2, 4), kT0, 0.5f);
  EXPECT_EQ(server.params(), Vec(-1, -2));
  EXPECT_EQ(server.metrics()[0].scale.sum(), 0.5);
}

// As a real server: a gradient holding NaN or Inf is refused, never applied, and counted.
TEST(SimServerTest, NonFiniteGradientsAreRefusedAndCounted) {
  SimServer server(Spec("asp"), 1, Eigen::VectorXf::Zero(2), 1.0f);
  server.OnRead(0, 0, kT0);
  server.OnPush(0, 0, Vec(std::nanf(""), 1), kT0);
  server.OnPush(0, 0, Vec(INFINITY, 1), kT0);
  EXPECT_EQ(server.params(), Vec(0, 0));
  EXPECT_EQ(server.version(), 0u);
  EXPECT_EQ(server.refused().nonfinite, 2u);
  server.OnPush(0, 0, Vec(1, 1), kT0);
  EXPECT_EQ(server.params(), Vec(-1, -1));
}

}  // namespace
}  // namespace kairos::sim
