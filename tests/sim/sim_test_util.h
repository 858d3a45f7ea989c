// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Helpers shared by the simulator's tests: small models and a comparison of two results
// field by field (bit for bit).

#ifndef KAIROS_TESTS_SIM_SIM_TEST_UTIL_H_
#define KAIROS_TESTS_SIM_SIM_TEST_UTIL_H_

#include <memory>

#include "gtest/gtest.h"
#include "sim/model.h"
#include "sim/simulator.h"

namespace kairos::sim {

inline std::shared_ptr<const Model> SmallQuadratic(int dim = 8, int n = 256, uint64_t seed = 1) {
  absl::StatusOr<std::shared_ptr<const Model>> model =
      MakeQuadraticModel({.dim = dim, .num_examples = n, .seed = seed});
  EXPECT_TRUE(model.ok()) << model.status();
  return *model;
}

inline void ExpectSameHistogram(const Histogram& a, const Histogram& b) {
  EXPECT_EQ(a.count(), b.count());
  EXPECT_EQ(a.sum(), b.sum());
  EXPECT_EQ(a.max(), b.max());
  for (int i = 0; i < Histogram::kBuckets; ++i) EXPECT_EQ(a.bucket(i), b.bucket(i)) << i;
}

// Every observable of two runs, compared exactly.
inline void ExpectIdenticalResults(const SimResult& a, const SimResult& b) {
  EXPECT_EQ(a.policy, b.policy);
  EXPECT_EQ(a.end_time, b.end_time);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.version, b.version);
  ASSERT_EQ(a.samples.size(), b.samples.size());
  for (size_t i = 0; i < a.samples.size(); ++i) {
    EXPECT_EQ(a.samples[i].time, b.samples[i].time);
    EXPECT_EQ(a.samples[i].version, b.samples[i].version);
    EXPECT_EQ(a.samples[i].iterations, b.samples[i].iterations);
    EXPECT_EQ(a.samples[i].loss, b.samples[i].loss);  // exact: same operations, same order
    EXPECT_EQ(a.samples[i].accuracy, b.samples[i].accuracy);
  }
  ASSERT_EQ(a.workers.size(), b.workers.size());
  for (size_t w = 0; w < a.workers.size(); ++w) {
    const SimWorkerResult& x = a.workers[w];
    const SimWorkerResult& y = b.workers[w];
    EXPECT_EQ(x.iterations, y.iterations);
    EXPECT_EQ(x.state, y.state);
    EXPECT_EQ(x.compute_time, y.compute_time);
    EXPECT_EQ(x.metrics.pushes, y.metrics.pushes);
    EXPECT_EQ(x.metrics.pulls, y.metrics.pulls);
    EXPECT_EQ(x.metrics.blocked_reads, y.metrics.blocked_reads);
    EXPECT_EQ(x.metrics.blocked_time, y.metrics.blocked_time);
    EXPECT_EQ(x.metrics.max_read_lead, y.metrics.max_read_lead);
    EXPECT_EQ(x.reads_cached, y.reads_cached);
    ExpectSameHistogram(x.metrics.staleness, y.metrics.staleness);
  }
  ExpectSameHistogram(a.staleness, b.staleness);
  EXPECT_EQ(a.final_params, b.final_params);  // Eigen ==: every coefficient equal
}

}  // namespace kairos::sim

#endif  // KAIROS_TESTS_SIM_SIM_TEST_UTIL_H_
