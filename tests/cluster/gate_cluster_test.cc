// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Each gate through the real transport: 2 servers, 4 workers, one of them slow. The
// invariants are checked from the servers' own counters (WorkerMetrics): no read is ever
// served further ahead of the slowest active worker than the gate allows.
//
// The job runs on virtual time (virtual_time.h): the slow worker's 3 ms of "compute" per
// iteration pass on the cluster's clock, which moves only when nothing is in flight, so
// the fast workers always get as far as their gate lets them before it ends, and DSSP's
// timing (its push timestamps) is that of the virtual clock.

#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "tests/cluster/virtual_time.h"
#include "tests/common/param_name.h"

namespace kairos {
namespace {

constexpr uint64_t kSize = 256;
constexpr int kIterations = 24;
constexpr int kSlowRank = 3;
constexpr int64_t kNoBound = std::numeric_limits<int64_t>::max();

struct GateCase {
  std::string spec;
  int64_t max_lead;    // the bound on a served read's lead over the slowest active worker
  bool fast_must_wait;  // the fast workers must have been held back at least once
};

class GateClusterTest : public ::testing::TestWithParam<GateCase> {};

TEST_P(GateClusterTest, ServedReadsNeverExceedTheGatesBound) {
  const GateCase& c = GetParam();
  ClusterOptions o;
  o.num_servers = 2;
  o.num_workers = 4;
  o.transport = TransportKind::kTcp;
  o.job.policy = c.spec;
  o.job.chunk_elements = 64;
  o.job.tables.push_back({"w", kSize, Initializer::Zeros(), {"sgd", 0.01f}});
  test_support::VirtualTime time(absl::Milliseconds(1));
  time.Apply(o);
  auto cluster = LocalCluster::Create(o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  time.Start();
  absl::Status s = (*cluster)->Run([&](Worker& w) -> absl::Status {
    absl::Cleanup leave = [&time] { time.Leave(); };  // the slow worker sleeps no more
    std::vector<float> params(kSize), grad(kSize, 1.0f);
    for (int t = 0; t < kIterations; ++t) {
      KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
      // The slow worker's "compute" takes 3 ms of virtual time; every assertion below is a
      // bound that holds whatever the timing.
      if (w.rank() == kSlowRank && !time.SleepFor(absl::Milliseconds(3))) {
        return absl::DeadlineExceededError("virtual time stood still");
      }
      KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
      KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
    }
    return absl::OkStatus();
  });
  ASSERT_TRUE(s.ok()) << s;
  uint64_t fast_blocked = 0;
  for (int shard = 0; shard < 2; ++shard) {
    const ServerStats stats = (*cluster)->server_stats(shard);
    ASSERT_EQ(stats.workers.size(), 4u);
    for (const WorkerMetrics& m : stats.workers) {
      EXPECT_EQ(m.pulls, kIterations * 2u) << "rank " << m.rank;  // 4 chunks, 2 per shard
      EXPECT_EQ(m.pushes, kIterations * 2u) << "rank " << m.rank;
      if (c.max_lead != kNoBound) {
        EXPECT_LE(m.max_read_lead, c.max_lead) << c.spec << " rank " << m.rank;
      }
      if (m.rank != kSlowRank) fast_blocked += m.blocked_reads;
    }
  }
  if (c.fast_must_wait) {
    EXPECT_GT(fast_blocked, 0u) << "the slow worker never held the others back";
  } else if (c.max_lead == kNoBound) {
    EXPECT_EQ(fast_blocked, 0u) << c.spec << " must never block";
  }
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

INSTANTIATE_TEST_SUITE_P(
    Gates, GateClusterTest,
    ::testing::Values(GateCase{"bsp", 0, true}, GateCase{"ssp:s=2", 2, true},
                      GateCase{"ssp:s=0", 0, true}, GateCase{"asp", kNoBound, false},
                      // DSSP with the default strict bound: never beyond s_L + r_max.
                      GateCase{"dssp:s=1,r=3", 4, true},
                      // PSP sampling every other worker decides exactly like SSP(s).
                      GateCase{"psp:beta=3,s=1", 1, true},
                      // A smaller sample is never stricter than SSP(s) and gives no bound.
                      GateCase{"psp:beta=1,s=1,seed=7", kNoBound, true}),
    [](const auto& info) { return testing::ParamName(info.param.spec); });

}  // namespace
}  // namespace kairos
