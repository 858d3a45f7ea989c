// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A policy per table (docs/policies.md, "A policy per table"): which policy each table
// runs under (policy::TablePolicies), and a shard whose tables run under different
// policies, driven directly on virtual time: each table's gate, aggregation and weighting
// its own, one clock per iteration for all of them.

#include "policy/table_policy.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "engine/shard_engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/job.h"
#include "policy/policy.h"
#include "tests/engine/engine_fixture.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Kind = EngineAnswer::Kind;

JobConfig Job(const std::string& policy, const std::string& dense_policy,
              const std::string& sparse_policy) {
  JobConfig job;
  job.policy = policy;
  job.tables.push_back({"dense", 4, Initializer::Zeros(), {"sgd", 1.0f}});
  job.tables.back().policy = dense_policy;
  job.tables.push_back(TableSpec::Sparse("emb", 2, Initializer::Constant(1.0f), {"sgd", 1.0f}));
  job.tables.back().policy = sparse_policy;
  return job;
}

absl::StatusOr<std::vector<policy::PolicySpec>> Policies(const JobConfig& job) {
  return policy::TablePolicies(job, *policy::ParsePolicySpec(job.policy));
}

TEST(TablePoliciesTest, ATableWithoutAPolicyRunsTheJobs) {
  auto specs = Policies(Job("ssp:s=2", "", ""));
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[0], *policy::ParsePolicySpec("ssp:s=2"));
  EXPECT_EQ((*specs)[1], *policy::ParsePolicySpec("ssp:s=2"));
}

TEST(TablePoliciesTest, ATablesOwnPolicyKeepsTheJobsPullAndStraggler) {
  auto specs = Policies(Job("ssp:s=3+pull=eager+straggler=saps", "bsp", "asp"));
  ASSERT_TRUE(specs.ok()) << specs.status();
  policy::PolicySpec bsp = *policy::ParsePolicySpec("bsp+pull=eager+straggler=saps");
  EXPECT_EQ((*specs)[0], bsp);
  EXPECT_EQ(policy::ToString((*specs)[1]),
            policy::ToString(*policy::ParsePolicySpec("asp+pull=eager+straggler=saps")));
}

TEST(TablePoliciesTest, RefusalsNameTheTableAndWhy) {
  EXPECT_THAT(Policies(Job("asp", "ssp:s=x", "")).status().message(),
              HasSubstr("table 'dense': policy 'ssp:s=x'"));
  EXPECT_THAT(Policies(Job("asp", "eager", "")).status().message(),
              HasSubstr("table 'dense': policy 'eager' names a pull schedule"));
  EXPECT_THAT(Policies(Job("asp", "saps", "")).status().message(),
              HasSubstr("table 'dense': policy 'saps' names a straggler policy"));
  EXPECT_THAT(Policies(Job("asp", "", "vsgd")).status().message(),
              HasSubstr("table 'emb' is sparse: value-staleness weighting (VSGD), which its "
                        "policy 'vsgd' names"));
  EXPECT_THAT(Policies(Job("vsgd", "", "")).status().message(),
              HasSubstr("which the job's policy 'vsgd' names"));
  EXPECT_THAT(Policies(Job("asp", "", "sa-asgd:n=2")).status().message(),
              HasSubstr("table 'emb' is sparse: only immediate and round-average"));
  // Positive controls: VSGD on the dense table, and a VSGD job whose sparse table has its own.
  EXPECT_TRUE(Policies(Job("asp", "vsgd", "")).ok());
  EXPECT_TRUE(Policies(Job("vsgd", "", "asp")).ok());
}

TEST(TablePoliciesTest, JobValidationAndComparisonSeeTheTablesPolicies) {
  EXPECT_TRUE(ValidateJobConfig(Job("asp", "bsp", "ssp:s=8")).ok());
  EXPECT_THAT(ValidateJobConfig(Job("asp", "eager", "")).message(),
              HasSubstr("names a pull schedule"));
  JobConfig bad = Job("asp", "", "");
  bad.tables[0].policy = std::string(kMaxPolicyLength + 1, 'a');
  EXPECT_THAT(ValidateJobConfig(bad).message(), HasSubstr("at most 1024 printable"));
  bad.tables[0].policy = "bsp\n";
  EXPECT_THAT(ValidateJobConfig(bad).message(), HasSubstr("printable"));

  const JobConfig ours = Job("asp", "bsp", "");
  EXPECT_TRUE(CompareJobConfig(ours, Job("asp", "gate=bsp+agg=round", "")).ok())
      << "two spellings of one policy agree";
  EXPECT_THAT(CompareJobConfig(ours, Job("asp", "ssp:s=1", "")).message(),
              HasSubstr("table 0 ('dense') policy is 'ssp:s=1' here but 'bsp' in the job"));
  EXPECT_THAT(CompareJobConfig(ours, Job("asp", "", "")).message(),
              HasSubstr("policy is the job's here but 'bsp' in the job"));
  EXPECT_THAT(CompareJobConfig(Job("asp", "", ""), Job("asp", "", "asp")).message(),
              HasSubstr("table 1 ('emb') policy is 'asp' here but the job's in the job"));
}

// One shard, two workers: the dense table under BSP, the sparse table under `emb_policy`,
// the job's policy `policy`.
struct MixedFixture {
  MixedFixture(const std::string& policy, const std::string& dense_policy,
               const std::string& emb_policy) {
    const JobConfig job = Job(policy, dense_policy, emb_policy);
    auto e = ShardEngine::Create(job, *policy::ParsePolicySpec(policy), 0, 1, 2, {}, &host);
    EXPECT_TRUE(e.ok()) << e.status();
    engine = *std::move(e);
  }
  EngineRequest Req(EngineRequest::Kind kind, int rank, int64_t clock, uint32_t table) {
    EngineRequest r;
    r.kind = kind;
    r.request_id = next_id++;
    r.rank = rank;
    r.table = table;
    r.clock = clock;
    r.length = 4;
    return r;
  }
  void PushDense(int rank, int64_t clock, std::vector<float> g) {
    engine->OnPush(Req(EngineRequest::Kind::kPush, rank, clock, 0), Buffer::CopyOf(g), now);
  }
  void PullDense(int rank, int64_t clock) {
    engine->OnPull(Req(EngineRequest::Kind::kPull, rank, clock, 0), now);
  }
  void PushRow(int rank, int64_t clock, uint64_t key, std::vector<float> g) {
    engine->OnPushSparse(
        SparseRequest(EngineRequest::Kind::kPushSparse, next_id++, rank, clock, {key}, 1),
        Buffer::CopyOf(g), now);
  }
  void PullRow(int rank, int64_t clock, uint64_t key) {
    engine->OnPullSparse(
        SparseRequest(EngineRequest::Kind::kPullSparse, next_id++, rank, clock, {key}, 1), now);
  }
  void Clock(int rank, int64_t clock) {
    engine->OnClock(Req(EngineRequest::Kind::kClock, rank, clock, 0), now);
  }
  std::vector<float> Dense() {
    const Buffer& v = engine->shard().tables()[0].chunks[0].values;
    return std::vector<float>(v.data(), v.data() + v.size());
  }
  static std::vector<float> Of(const EngineAnswer& a) {
    return std::vector<float>(a.values.data(), a.values.data() + a.values.size());
  }

  RecordingHost host;
  std::unique_ptr<ShardEngine> engine;
  absl::Time now = kT0;
  uint64_t next_id = 1;
};

// The classic hybrid: dense layers under BSP, an embedding under SSP(8). The dense table's
// pushes wait for the round and its reads for the slowest worker; the embedding's pushes
// apply at once and its reads run up to 8 clocks ahead; one Clock per iteration moves both.
TEST(TablePolicyEngineTest, DenseUnderBspAndAnEmbeddingUnderSspEachFollowTheirOwnPolicy) {
  MixedFixture f("asp", "bsp", "ssp:s=8");
  f.PushDense(0, 0, {2, 0, 0, 0});
  f.PushRow(0, 0, 7, {1, 2});
  EXPECT_EQ(f.Dense(), (std::vector<float>{0, 0, 0, 0})) << "the BSP round is still open";
  ASSERT_THAT(Kinds(f.host.Take()), ElementsAre(Kind::kPushed, Kind::kPushed));
  f.Clock(0, 1);
  f.PullRow(0, 1, 7);
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kRead)) << "SSP(8): worker 1 is only 1 behind";
  EXPECT_EQ(MixedFixture::Of(a[0]), (std::vector<float>{0, -1})) << "applied at once";
  f.PullDense(0, 1);
  EXPECT_TRUE(f.host.Take().empty()) << "BSP: the read waits for worker 1's clock 1";
  EXPECT_EQ(f.engine->num_waiting(), 1);

  // Worker 0 runs ahead: its embedding reads are served up to 8 clocks past worker 1.
  for (int64_t c = 2; c <= 5; ++c) f.Clock(0, c);
  f.PullRow(0, 5, 7);
  ASSERT_THAT(Kinds(f.host.Take()), ElementsAre(Kind::kRead));

  // Worker 1 closes round 0: its average is applied and the waiting dense read served.
  f.PushDense(1, 0, {0, 4, 0, 0});
  f.PushRow(1, 0, 7, {1, 1});
  f.host.Take();
  f.Clock(1, 1);
  a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kRead));
  EXPECT_EQ(MixedFixture::Of(a[0]), (std::vector<float>{-1, -2, 0, 0}));
  f.PullRow(1, 1, 7);
  a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kRead));
  EXPECT_EQ(MixedFixture::Of(a[0]), (std::vector<float>{-1, -2})) << "both pushes, in full";
}

// The job's gate applies to a table without a policy; a table's own gate only to it.
TEST(TablePolicyEngineTest, ATableWithoutAPolicyIsGatedByTheJobs) {
  MixedFixture f("bsp", "", "asp");
  f.Clock(0, 1);
  f.Clock(0, 2);
  f.PullRow(0, 2, 3);
  ASSERT_THAT(Kinds(f.host.Take()), ElementsAre(Kind::kRead)) << "ASP never waits";
  f.PullDense(0, 2);
  EXPECT_TRUE(f.host.Take().empty());
  f.Clock(1, 1);
  EXPECT_TRUE(f.host.Take().empty()) << "worker 1 is at 1: round 2 is not complete";
  f.Clock(1, 2);
  ASSERT_THAT(Kinds(f.host.Take()), ElementsAre(Kind::kRead));
}

// A worker that leaves leaves every gate: the dense read waiting for it is served.
TEST(TablePolicyEngineTest, AWorkerLeavingReleasesTheReadsOfEveryGate) {
  MixedFixture f("asp", "bsp", "ssp:s=1");
  for (int64_t c = 1; c <= 3; ++c) f.Clock(0, c);
  f.PullDense(0, 3);
  f.PullRow(0, 3, 5);
  EXPECT_EQ(f.engine->num_waiting(), 2) << "BSP and SSP(1) both wait for worker 1";
  f.engine->OnLeave(1, policy::MemberState::kDead, f.now);
  EXPECT_THAT(Kinds(f.host.Take()), ElementsAre(Kind::kRead, Kind::kRead));
}

TEST(TablePolicyEngineTest, ABadTablePolicyFailsTheShardsCreation) {
  RecordingHost host;
  auto e = ShardEngine::Create(Job("asp", "", "vsgd"), *policy::ParsePolicySpec("asp"), 0, 1, 2, {},
                               &host);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("table 'emb' is sparse"));
}

}  // namespace
}  // namespace kairos::internal
