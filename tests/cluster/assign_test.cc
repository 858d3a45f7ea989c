// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Worker::Assign and Worker::SetLearningRate through whole clusters (LocalCluster): the
// recommended pattern (rank 0 assigns, everyone meets at a barrier, then pulls) under BSP,
// ASP and SSP; ranges over several chunks and servers; an assign under a BSP round still
// open; learning-rate changes with exact results; bad arguments refused at the worker.
// Uses the public API only.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kSize = 1000;
constexpr float kLearningRate = 0.5f;
constexpr float kInitial = 2.0f;

// Small integers and halves: every sum, mean (W in {1, 2, 4}) and step is exact in float32.
float Pretrained(uint64_t i) { return static_cast<float>(i % 13) - 6.0f; }
float Gradient(int rank, uint64_t i) { return static_cast<float>((rank + 1) * 2 + i % 3); }

ClusterOptions Options(int servers, int workers, const std::string& policy) {
  ClusterOptions o;
  o.num_servers = servers;
  o.num_workers = workers;
  o.job.policy = policy;
  o.job.chunk_elements = 64;  // several chunks per shard
  o.job.tables.push_back({"w", kSize, Initializer::Constant(kInitial), {"sgd", kLearningRate}});
  o.job.tables.push_back({"b", 3, Initializer::Constant(kInitial), {"sgd", kLearningRate}});
  o.worker.request_timeout = absl::Seconds(30);
  return o;
}

absl::Status Expect(const std::vector<float>& got, const std::vector<float>& want,
                    const char* what) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      return absl::InternalError(
          absl::StrFormat("%s: element %d is %g, want %g", what, i, got[i], want[i]));
    }
  }
  return absl::OkStatus();
}

class AssignPolicyTest : public ::testing::TestWithParam<std::tuple<std::string, int, int>> {};

// The documented pattern: rank 0 loads the weights, the barrier orders every worker after
// it, and each worker's first pull sees them. Then one step of training starts from them:
// BSP applies the mean gradient, ASP and SSP every gradient.
TEST_P(AssignPolicyTest, RankZeroAssignsBarrierThenEveryWorkerPullsTheAssignedValues) {
  const std::string policy = std::get<0>(GetParam());
  const int servers = std::get<1>(GetParam());
  const int workers = std::get<2>(GetParam());
  auto cluster = LocalCluster::Create(Options(servers, workers, policy));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::vector<float> pretrained(kSize), after(kSize);
  for (uint64_t i = 0; i < kSize; ++i) {
    pretrained[i] = Pretrained(i);
    float sum = 0;
    for (int r = 0; r < workers; ++r) sum += Gradient(r, i);
    const float step = policy == "bsp" ? sum / static_cast<float>(workers) : sum;
    after[i] = pretrained[i] - kLearningRate * step;
  }
  absl::Status s = (*cluster)->Run([&](Worker& w) -> absl::Status {
    if (w.rank() == 0) KAIROS_RETURN_IF_ERROR(w.Assign("w", 0, pretrained));
    KAIROS_RETURN_IF_ERROR(w.Barrier());
    std::vector<float> params(kSize), grad(kSize);
    KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
    KAIROS_RETURN_IF_ERROR(Expect(params, pretrained, "first pull"));
    // Under ASP and SSP nothing stops another worker's push from landing before this
    // worker's first pull; the second barrier makes the check above exact (BSP alone
    // would not need it: a round is applied only once every worker clocked).
    KAIROS_RETURN_IF_ERROR(w.Barrier());
    for (uint64_t i = 0; i < kSize; ++i) grad[i] = Gradient(w.rank(), i);
    KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
    KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
    KAIROS_RETURN_IF_ERROR(w.Barrier());  // every push is in (BSP: the read waits the round)
    KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
    return Expect(params, after, "after one step");
  });
  EXPECT_TRUE(s.ok()) << s;
  // The assign counts as one update of every chunk it covered. Every push message is one
  // chunk, so each worker sent one per chunk of the table.
  uint64_t version = 0, push_messages = 0;
  for (int shard = 0; shard < servers; ++shard) {
    version += (*cluster)->server_stats(shard).version;
    push_messages += (*cluster)->server_stats(shard).pushes;
  }
  const uint64_t chunks = push_messages / static_cast<uint64_t>(workers);
  EXPECT_GE(chunks, (kSize + 63) / 64);
  EXPECT_EQ(version, chunks + (policy == "bsp" ? chunks : chunks * workers));
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

INSTANTIATE_TEST_SUITE_P(Policies, AssignPolicyTest,
                         ::testing::Values(std::make_tuple("bsp", 2, 3),
                                           std::make_tuple("asp", 2, 3),
                                           std::make_tuple("ssp:s=1", 3, 2),
                                           std::make_tuple("bsp", 1, 1)));

// A range over several chunks and both servers, in the async forms: only that range
// changes.
TEST(AssignTest, ARangeAcrossChunksAndServersChangesOnlyThatRange) {
  auto cluster = LocalCluster::Create(Options(2, 1, "asp"));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  const uint64_t offset = 450, length = 120;  // over the servers' boundary at 500
  Buffer values = Buffer::Allocate(length);
  for (uint64_t i = 0; i < length; ++i) values[i] = Pretrained(i);
  std::vector<float> tail = {7, 8, 9};
  Request a = w.AssignAsync("w", offset, values);
  Request b = w.AssignAsync("w", kSize - 3, std::span<const float>(tail));
  ASSERT_TRUE(a.Wait().ok());
  ASSERT_TRUE(b.Wait().ok());
  std::vector<float> params(kSize);
  ASSERT_TRUE(w.Pull("w", params).ok());
  for (uint64_t i = 0; i < kSize; ++i) {
    float want = kInitial;
    if (i >= offset && i < offset + length) want = Pretrained(i - offset);
    if (i >= kSize - 3) want = tail[i - (kSize - 3)];
    ASSERT_EQ(params[i], want) << i;
  }
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

// BSP: an assign does not wait for the round, and the round's sum still pending on the
// servers is applied on top of the assigned values when the round completes.
TEST(AssignTest, UnderBspARoundStillOpenIsAppliedOnTopOfTheAssignedValues) {
  auto cluster = LocalCluster::Create(Options(2, 1, "bsp"));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  std::vector<float> grad(kSize), pretrained(kSize), params(kSize);
  for (uint64_t i = 0; i < kSize; ++i) {
    grad[i] = Gradient(0, i);
    pretrained[i] = Pretrained(i);
  }
  ASSERT_TRUE(w.Push("w", grad).ok());  // round 0, pending
  ASSERT_TRUE(w.Assign("w", 0, pretrained).ok());
  ASSERT_TRUE(w.Pull("w", params).ok());  // clock 0: the round is not applied yet
  EXPECT_EQ(params, pretrained);
  ASSERT_TRUE(w.AdvanceClock().ok());
  ASSERT_TRUE(w.Pull("w", params).ok());  // clock 1: after the round
  for (uint64_t i = 0; i < kSize; ++i) {
    ASSERT_EQ(params[i], pretrained[i] - kLearningRate * grad[i]) << i;
  }
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

// The exact value SGD reaches from `w` after pushes of `g` at each learning rate, in float
// (the server computes w += (-lr * 1) * g per push).
float Sgd(float w, float g, std::initializer_list<float> rates) {
  for (float lr : rates) w += (-lr * 1.0f) * g;
  return w;
}

TEST(SetLearningRateTest, LaterPushesUseTheNewRateOnEveryServer) {
  ClusterOptions o = Options(3, 2, "asp");
  o.job.tables[0].updater.learning_rate = 0.1f;
  auto cluster = LocalCluster::Create(o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w0 = (*cluster)->worker(0);
  Worker& w1 = (*cluster)->worker(1);
  const std::vector<float> grad(kSize, 3.0f);
  std::vector<float> params(kSize);
  ASSERT_TRUE(w0.Push("w", grad).ok());
  ASSERT_TRUE(w0.SetLearningRate("w", 0.01f).ok());
  ASSERT_TRUE(w0.Push("w", grad).ok());
  ASSERT_TRUE(w1.Pull("w", params).ok());
  EXPECT_EQ(params, std::vector<float>(kSize, Sgd(kInitial, 3.0f, {0.1f, 0.01f})));
  // Any worker may change it; the latest change wins.
  ASSERT_TRUE(w1.SetLearningRate("w", 0.25f).ok());
  ASSERT_TRUE(w0.Push("w", grad).ok());
  ASSERT_TRUE(w1.Pull("w", params).ok());
  EXPECT_EQ(params, std::vector<float>(kSize, Sgd(kInitial, 3.0f, {0.1f, 0.01f, 0.25f})));
  // TableInfo keeps the job's configured rate; the other table is untouched.
  EXPECT_EQ(w0.table("w")->learning_rate, 0.1f);
  std::vector<float> b(3);
  ASSERT_TRUE(w0.Push("b", std::vector<float>{1, 1, 1}).ok());
  ASSERT_TRUE(w0.Pull("b", b).ok());
  EXPECT_EQ(b, std::vector<float>(3, kInitial - kLearningRate));
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

// A table smaller than the number of servers: the change goes to the servers that own
// part of it, and the call still returns once they acknowledged.
TEST(SetLearningRateTest, ATableOnFewerServersThanTheJobHas) {
  auto cluster = LocalCluster::Create(Options(4, 1, "asp"));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  ASSERT_TRUE(w.SetLearningRate("b", 2.0f).ok());
  ASSERT_TRUE(w.Push("b", std::vector<float>{1, 2, 3}).ok());
  std::vector<float> b(3);
  ASSERT_TRUE(w.Pull("b", b).ok());
  EXPECT_EQ(b, (std::vector<float>{kInitial - 2, kInitial - 4, kInitial - 6}));
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

// BSP: a round uses the rate in force when it is applied (once every worker clocked), so
// a change meant for iteration t goes after a pull at clock t (which waits for round
// t - 1 to be applied) and before the barrier that lets anyone push for round t.
TEST(SetLearningRateTest, UnderBspTheChangeAppliesFromTheNextRoundApplied) {
  auto cluster = LocalCluster::Create(Options(2, 2, "bsp"));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  absl::Status s = (*cluster)->Run([&](Worker& w) -> absl::Status {
    std::vector<float> params(kSize);
    const std::vector<float> grad(kSize, 1.0f);
    for (int t = 0; t < 2; ++t) {
      KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
      if (t == 1 && w.rank() == 0) KAIROS_RETURN_IF_ERROR(w.SetLearningRate("w", 2.0f));
      KAIROS_RETURN_IF_ERROR(w.Barrier());
      KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
      KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
    }
    KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
    return Expect(params, std::vector<float>(kSize, kInitial - kLearningRate - 2.0f), "end");
  });
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

TEST(AssignTest, BadArgumentsAreRefusedAtTheWorkerAndSendNothing) {
  auto cluster = LocalCluster::Create(Options(2, 1, "asp"));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  const std::vector<float> ok(10, 1.0f);
  absl::Status s = w.Assign("nope", 0, ok);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("assign: unknown table 'nope'"));
  s = w.Assign("w", kSize - 5, ok);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("assign of table 'w': range [995, 1005)"));
  s = w.Assign("w", 0, std::vector<float>());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  std::vector<float> nan = ok;
  nan[4] = std::numeric_limits<float>::quiet_NaN();
  s = w.Assign("w", 600, nan);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("at element 604; nothing was sent"));
  s = w.AssignAsync("w", 600, Buffer::CopyOf(nan)).Wait();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);

  s = w.SetLearningRate("nope", 0.1f);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("set learning rate: unknown table 'nope'"));
  for (float bad : {-0.5f, std::numeric_limits<float>::quiet_NaN(),
                    std::numeric_limits<float>::infinity()}) {
    s = w.SetLearningRate("w", bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.message()), HasSubstr("is not a finite number >= 0"));
  }
  for (int shard = 0; shard < 2; ++shard) {
    const ServerStats stats = (*cluster)->server_stats(shard);
    EXPECT_EQ(stats.version, 0u);
    EXPECT_EQ(stats.errors_replied, 0u);  // nothing reached a server
  }
  std::vector<float> params(kSize);
  ASSERT_TRUE(w.Pull("w", params).ok());
  EXPECT_EQ(params, std::vector<float>(kSize, kInitial));

  // After Finish, both are refused like every other request.
  // (FailedPrecondition, or Cancelled once the job, whose only worker finished, ended.)
  ASSERT_TRUE(w.Shutdown().ok());
  EXPECT_FALSE(w.Assign("w", 0, ok).ok());
  EXPECT_FALSE(w.SetLearningRate("w", 0.1f).ok());
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

}  // namespace
}  // namespace kairos
