// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Sparse tables in the engine (docs/sparse.md): a shard's rows (SparseRows), the initial
// row values, and the shard engine's sparse push and pull driven directly: checks (table
// kind, key owner, sizes, non-finite values), per-row updates, BSP's per-row divisor, a
// pull that creates nothing, and the lane (all of a table's rows worked on one lane).

#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/partition.h"
#include "engine/initializer.h"
#include "engine/shard_engine.h"
#include "engine/sparse_rows.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/job.h"
#include "policy/policy.h"
#include "tests/engine/engine_fixture.h"

namespace kairos::internal {
namespace {

using ::testing::HasSubstr;
using Kind = EngineAnswer::Kind;

TEST(SparseRowsTest, RowsAreCreatedOnFirstTouchWithTheirInitialValues) {
  const Initializer init = Initializer::Normal(0.0f, 1.0f, 7);
  SparseRows rows(/*width=*/4, /*state_per_element=*/2);
  EXPECT_EQ(rows.rows(), 0u);
  EXPECT_EQ(rows.Find(123), -1);
  const uint64_t empty_bytes = rows.bytes();
  const uint32_t slot = rows.FindOrCreate(123, init);
  EXPECT_EQ(rows.Find(123), slot);
  EXPECT_EQ(rows.FindOrCreate(123, init), slot);
  EXPECT_EQ(rows.rows(), 1u);
  EXPECT_GT(rows.bytes(), empty_bytes);
  for (uint32_t c = 0; c < 4; ++c) {
    EXPECT_EQ(rows.values(slot)[c], InitialValue(init, Mix64(123) + c));
  }
  for (float s : rows.state(slot)) EXPECT_EQ(s, 0.0f);
  EXPECT_EQ(rows.state(slot).size(), 8u);
  EXPECT_EQ(rows.step(slot), 0u);
  std::vector<float> row(4);
  FillSparseRow(init, 123, row);
  EXPECT_EQ(std::vector<float>(rows.values(slot).begin(), rows.values(slot).end()), row);
}

TEST(SparseRowsTest, MemoryGrowsWithTheRowsHeldNotWithTheKeys) {
  SparseRows rows(16, 0);
  const uint64_t per_block = rows.rows_per_block();
  // Keys spread over all of 2^64.
  for (uint64_t i = 0; i < 10 * per_block; ++i) {
    rows.FindOrCreate(Mix64(i) | (uint64_t{1} << 63), {});
  }
  EXPECT_EQ(rows.rows(), 10 * per_block);
  const uint64_t raw = rows.rows() * 16 * sizeof(float);
  EXPECT_LT(rows.bytes(), 3 * raw);
  EXPECT_GE(rows.bytes(), raw);
}

// Records answers; runs lane jobs at once (checking they come on one lane per table).
class Host final : public EngineHost {
 public:
  void RunOnLane(uint64_t key, std::function<void()> job) override {
    lanes.insert(key);
    job();
  }
  void Answer(EngineAnswer a) override { answers.push_back(std::move(a)); }
  std::vector<EngineAnswer> Take() { return std::exchange(answers, {}); }
  std::vector<EngineAnswer> answers;
  std::set<uint64_t> lanes;
};

// Shard 0 of `shards`: table 0 "emb" sparse (rows of 2, constant 1 initial values, SGD lr
// 1), table 1 "dense" of 4.
struct Fixture {
  Fixture(const std::string& policy, int workers, int shards = 2) {
    JobConfig job;
    job.policy = policy;
    job.tables.push_back(TableSpec::Sparse("emb", 2, Initializer::Constant(1.0f), {"sgd", 1.0f}));
    job.tables.push_back({"dense", 4, Initializer::Zeros(), {"sgd", 1.0f}});
    auto spec = policy::ParsePolicySpec(policy);
    EXPECT_TRUE(spec.ok());
    EngineOptions options;
    options.inline_apply_bytes = 0;
    auto e = ShardEngine::Create(job, *spec, 0, shards, workers, options, &host);
    EXPECT_TRUE(e.ok()) << e.status();
    engine = *std::move(e);
    // Keys this shard owns, and one it does not.
    for (uint64_t k = 0; mine.size() < 4 || other == 0; ++k) {
      if (ShardOfKey(k, shards) == 0) {
        if (mine.size() < 4) mine.push_back(k);
      } else if (other == 0) {
        other = k;
      }
    }
  }
  EngineRequest Req(EngineRequest::Kind kind, int rank, int64_t clock,
                    const std::vector<uint64_t>& keys, uint32_t table = 0) {
    return SparseRequest(kind, next_id++, rank, clock, keys, table);
  }
  void Push(int rank, int64_t clock, const std::vector<uint64_t>& keys, std::vector<float> g,
            uint32_t table = 0) {
    engine->OnPushSparse(Req(EngineRequest::Kind::kPushSparse, rank, clock, keys, table),
                         Buffer::CopyOf(g), kT0);
  }
  std::vector<float> Pull(int rank, int64_t clock, const std::vector<uint64_t>& keys) {
    engine->OnPullSparse(Req(EngineRequest::Kind::kPullSparse, rank, clock, keys), kT0);
    std::vector<EngineAnswer> a = host.Take();
    EXPECT_EQ(a.size(), 1u);
    if (a.size() != 1 || a[0].kind != Kind::kRead) return {};
    return std::vector<float>(a[0].values.span().begin(), a[0].values.span().end());
  }
  absl::Status LastError() {
    std::vector<EngineAnswer> a = host.Take();
    if (a.size() != 1) return absl::InternalError("no single answer");
    return a[0].status;
  }

  Host host;
  std::unique_ptr<ShardEngine> engine;
  std::vector<uint64_t> mine;
  uint64_t other = 0;
  uint64_t next_id = 1;
};

TEST(SparseEngineTest, PushUpdatesEachRowAndAPullCreatesNothing) {
  Fixture f("asp", 1);
  const uint64_t a = f.mine[0], b = f.mine[1], c = f.mine[2];
  EXPECT_EQ(f.Pull(0, 0, {a, c}), (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(f.engine->counters().sparse_rows, 0u);
  f.Push(0, 0, {a, b}, {1, 2, 3, 4});
  ASSERT_EQ(f.host.Take().at(0).kind, Kind::kPushed);
  f.Push(0, 0, {a}, {10, 20});
  ASSERT_EQ(f.host.Take().at(0).kind, Kind::kPushed);
  EXPECT_EQ(f.Pull(0, 0, {a, b, c}), (std::vector<float>{-10, -21, -2, -3, 1, 1}));
  EXPECT_EQ(f.engine->counters().sparse_rows, 2u);
  EXPECT_GT(f.engine->counters().sparse_bytes, 0u);
  EXPECT_EQ(f.host.lanes.size(), 1u) << "one lane for the table's rows";
}

TEST(SparseEngineTest, BadRequestsAreRefusedAndApplyNothing) {
  Fixture f("asp", 1);
  const uint64_t a = f.mine[0];
  f.Push(0, 0, {a, f.other}, {1, 1, 1, 1});
  EXPECT_THAT(f.LastError().message(), HasSubstr("belongs to shard 1, not shard 0"));
  f.Push(0, 0, {a}, {1, 1, 1});
  EXPECT_THAT(f.LastError().message(), HasSubstr("3 values for 1 keys of table 'emb'"));
  f.Push(0, 0, {a}, {1, std::nanf("")});
  EXPECT_THAT(f.LastError().message(), HasSubstr("nothing was applied"));
  f.Push(0, 0, {a}, {1, 1}, /*table=*/1);
  EXPECT_THAT(f.LastError().message(), HasSubstr("table 'dense' is dense"));
  f.Push(0, 0, {a}, {1, 1}, /*table=*/7);
  EXPECT_EQ(f.LastError().code(), absl::StatusCode::kNotFound);
  // A header that counts other keys than the frame holds.
  EngineRequest r = f.Req(EngineRequest::Kind::kPushSparse, 0, 0, {a});
  r.length = 2;
  f.engine->OnPushSparse(r, Buffer::CopyOf(std::vector<float>(4, 1.0f)), kT0);
  EXPECT_THAT(f.LastError().message(), HasSubstr("1 keys (header: 2)"));
  // A dense request on the sparse table.
  EngineRequest d;
  d.kind = EngineRequest::Kind::kPush;
  d.table = 0;
  d.length = 2;
  f.engine->OnPush(d, Buffer::CopyOf(std::vector<float>(2, 1.0f)), kT0);
  EXPECT_THAT(f.LastError().message(), HasSubstr("table 'emb' is sparse"));
  EXPECT_EQ(f.engine->counters().sparse_rows, 0u);
  EXPECT_EQ(f.Pull(0, 0, {a}), (std::vector<float>{1, 1}));
}

// BSP: each row's round sum is divided by the distinct workers that pushed that row.
TEST(SparseEngineTest, BspDividesEachRowByItsDistinctWorkers) {
  Fixture f("bsp", 3);
  const uint64_t a = f.mine[0], b = f.mine[1];
  f.Push(0, 0, {a, b}, {3, 3, 6, 6});
  f.Push(0, 0, {b}, {6, 6});   // worker 0 again: still one worker for b
  f.Push(1, 0, {b}, {3, 3});
  EXPECT_EQ(f.host.Take().size(), 3u);
  for (int w = 0; w < 3; ++w) f.engine->OnClock(f.Req(EngineRequest::Kind::kClock, w, 1, {}), kT0);
  // a: 1 - 3/1; b: 1 - (6 + 6 + 3)/2.
  EXPECT_EQ(f.Pull(0, 1, {a, b}), (std::vector<float>{-2, -2, -6.5f, -6.5f}));
}

// lr / tau: the staleness of a sparse push is counted in updates of the table's rows on
// this shard since the worker last read any of them (the table's lane version).
TEST(SparseEngineTest, StalenessWeightingCountsTheTablesUpdatesOnTheShard) {
  Fixture f("asp+weight=staleness", 2);
  const uint64_t a = f.mine[0], b = f.mine[1];
  EXPECT_EQ(f.Pull(1, 0, {b}), (std::vector<float>{1, 1}));  // worker 1 reads at version 0
  f.Push(0, 0, {a}, {1, 1});                                   // sigma 0: scale 1
  f.Push(0, 0, {b}, {1, 1});                                   // sigma 1: scale 1
  f.Push(1, 0, {a}, {2, 2});                                   // sigma 2: scale 1/2
  EXPECT_EQ(f.host.Take().size(), 3u);
  EXPECT_EQ(f.Pull(0, 0, {a, b}), (std::vector<float>{-1, -1, 0, 0}));
  const std::vector<WorkerMetrics> m = f.engine->metrics();
  EXPECT_EQ(m[1].pushes, 1u);
}

// SaPS: a sparse push whose lag (updates of the table's rows on this shard since the
// worker's last read there) exceeds smax is dropped, with a refresh, and applies nothing.
TEST(SparseEngineTest, SapsDropsAStaleSparsePush) {
  Fixture f("asp+straggler=saps:smax=1", 2);
  const uint64_t a = f.mine[0], b = f.mine[1];
  EXPECT_EQ(f.Pull(1, 0, {b}), (std::vector<float>{1, 1}));  // worker 1 reads at version 0
  f.Push(0, 0, {a}, {1, 1});
  f.Push(0, 0, {a}, {1, 1});
  f.host.Take();
  f.Push(1, 0, {b}, {5, 5});  // lag 2 > smax 1
  std::vector<EngineAnswer> answers = f.host.Take();
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].kind, Kind::kPushed);
  EXPECT_TRUE(answers[0].dropped);
  EXPECT_TRUE(answers[0].refresh);
  EXPECT_EQ(f.Pull(1, 0, {a, b}), (std::vector<float>{-1, -1, 1, 1}));
  // After that read worker 1 is fresh again: its push applies.
  f.Push(1, 0, {b}, {5, 5});
  answers = f.host.Take();
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_FALSE(answers[0].dropped);
  EXPECT_EQ(f.Pull(1, 0, {b}), (std::vector<float>{-4, -4}));
}

TEST(SparseEngineTest, UnsupportedPoliciesAreRefused) {
  JobConfig job;
  job.policy = "vsgd";
  job.tables.push_back(TableSpec::Sparse("emb", 2));
  Host host;
  auto e = ShardEngine::Create(job, *policy::ParsePolicySpec("vsgd"), 0, 1, 2, {}, &host);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("VSGD"));
}

}  // namespace
}  // namespace kairos::internal
