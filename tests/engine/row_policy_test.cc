// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Admission and eviction of sparse rows (docs/sparse.md, "Admission and eviction"): the
// decisions alone (RowAdmitter, SweepKeys, OverBudgetKeys, SparseRows::Erase), then through
// the shard engine on virtual time: rows created only when admitted, unadmitted pushes
// counted and not applied, rows removed at sweeps and past the byte bound, reported and
// counted, in order with the table's updates.

#include "engine/row_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "engine/shard_engine.h"
#include "engine/sparse_rows.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/job.h"
#include "policy/policy.h"
#include "tests/engine/engine_fixture.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAre;

TEST(RowAdmitterTest, AKeyGetsItsRowAtItsMinCountthPush) {
  RowAdmission spec;
  spec.min_count = 3;
  spec.filter_slots = 1 << 16;
  RowAdmitter admit(spec, 1);
  EXPECT_FALSE(admit.Admit(42, 1));
  EXPECT_FALSE(admit.Admit(42, 1));
  EXPECT_TRUE(admit.Admit(42, 1));
  EXPECT_FALSE(admit.Admit(43, 2)) << "another key counts on its own";
  EXPECT_TRUE(admit.Admit(43, 1));
  EXPECT_TRUE(admit.Admit(44, 3)) << "a round's three workers count three times";
  EXPECT_EQ(admit.bytes(), uint64_t{1} << 16);
}

TEST(RowAdmitterTest, ProbabilityAdmitsAboutThatShareReproducibly) {
  RowAdmission spec;
  spec.probability = 0.25f;
  RowAdmitter a(spec, 7), b(spec, 7), c(spec, 8);
  int admitted = 0, same = 0, same_other_seed = 0;
  for (uint64_t k = 0; k < 20000; ++k) {
    const bool x = a.Admit(k, 1);
    admitted += x ? 1 : 0;
    same += x == b.Admit(k, 1) ? 1 : 0;
    same_other_seed += x == c.Admit(k, 1) ? 1 : 0;
  }
  // Binomial(20000, 0.25): mean 5000, sd 61; 6 sd either side.
  EXPECT_GT(admitted, 5000 - 370);
  EXPECT_LT(admitted, 5000 + 370);
  EXPECT_EQ(same, 20000) << "the same seed draws the same sequence";
  EXPECT_LT(same_other_seed, 20000 - 1000) << "another seed draws another";
  EXPECT_EQ(a.bytes(), 0u) << "no filter without min_count";
}

TEST(RowAdmitterTest, MayAdmitChangesNothing) {
  RowAdmission spec;
  spec.min_count = 3;
  RowAdmitter admit(spec, 1);
  EXPECT_FALSE(admit.MayAdmit(9, 2));
  EXPECT_TRUE(admit.MayAdmit(9, 3));
  EXPECT_FALSE(admit.Admit(9, 1));
  EXPECT_FALSE(admit.MayAdmit(9, 1));
  EXPECT_TRUE(admit.MayAdmit(9, 2));
  EXPECT_FALSE(admit.MayAdmit(9, 1)) << "asking twice counted nothing";
  EXPECT_TRUE(admit.Admit(9, 2));
}

TEST(RowAdmitterTest, OnlyNonDefaultSpecsNeedAnAdmitter) {
  EXPECT_FALSE(RowAdmitter::Needed(RowAdmission{}));
  RowAdmission one;
  one.min_count = 1;
  EXPECT_FALSE(RowAdmitter::Needed(one));
  one.min_count = 2;
  EXPECT_TRUE(RowAdmitter::Needed(one));
  RowAdmission p;
  p.probability = 0.5f;
  EXPECT_TRUE(RowAdmitter::Needed(p));
}

TEST(SparseRowsEraseTest, AnErasedRowIsGoneAndItsSlotIsReusedFresh) {
  SparseRows rows(2, 1, /*track=*/true);
  const uint32_t a = rows.FindOrCreate(1, Initializer::Constant(5.0f));
  rows.FindOrCreate(2, Initializer::Constant(5.0f));
  rows.values(a)[0] = 9;
  rows.state(a)[0] = 3;
  rows.step(a) = 4;
  rows.Touch(a, 7);
  const uint64_t bytes = rows.bytes();
  EXPECT_TRUE(rows.Erase(1));
  EXPECT_FALSE(rows.Erase(1));
  EXPECT_EQ(rows.rows(), 1u);
  EXPECT_EQ(rows.Find(1), -1);
  const uint32_t c = rows.FindOrCreate(3, Initializer::Constant(5.0f));
  EXPECT_EQ(c, a) << "the freed slot";
  EXPECT_THAT(rows.values(c), ElementsAre(5.0f, 5.0f));
  EXPECT_THAT(rows.state(c), ElementsAre(0.0f, 0.0f));
  EXPECT_EQ(rows.step(c), 0u);
  EXPECT_EQ(rows.touched(c), 0);
  EXPECT_LE(rows.bytes(), bytes + 64) << "no new block for a reused slot";
}

// Rows 1..5: row k last updated at clock k, k updates, values (k, 0).
void FillFive(SparseRows& rows) {
  for (uint64_t k = 1; k <= 5; ++k) {
    const uint32_t s = rows.FindOrCreate(k, Initializer::Zeros());
    rows.Touch(s, static_cast<int64_t>(k));
    rows.step(s) = 6 - k;  // row 5 the least often updated
    rows.values(s)[0] = static_cast<float>(k);
  }
}

TEST(SweepKeysTest, IdleAndSmallRowsAreFound) {
  SparseRows rows(2, 0, /*track=*/true);
  FillFive(rows);
  RowEviction spec;
  spec.max_idle_clocks = 2;
  EXPECT_THAT(SweepKeys(rows, spec, EvictionReason::kIdle, 5), UnorderedElementsAre(1, 2));
  EXPECT_THAT(SweepKeys(rows, spec, EvictionReason::kIdle, 4), UnorderedElementsAre(1));
  EXPECT_THAT(SweepKeys(rows, spec, EvictionReason::kNorm, 5), IsEmpty()) << "no min_norm";
  spec.min_norm = 3.0f;
  EXPECT_THAT(SweepKeys(rows, spec, EvictionReason::kNorm, 5), UnorderedElementsAre(1, 2));
  spec.max_idle_clocks = 0;
  EXPECT_THAT(SweepKeys(rows, spec, EvictionReason::kIdle, 100), IsEmpty());
}

// By seconds the stamps are nanoseconds: rows 1..5 stamped k seconds; at 6.5 s with 3 s of
// idleness allowed, rows 1, 2, 3 (idle 5.5, 4.5, 3.5 s) go. A row stamped before `since`
// counts as stamped then.
TEST(SweepKeysTest, IdleBySecondsComparesTheStampsWithTheSweepsTime) {
  SparseRows rows(2, 0, /*track=*/true);
  FillFive(rows);
  for (uint64_t k = 1; k <= 5; ++k) {
    rows.Touch(static_cast<uint32_t>(rows.Find(k)), static_cast<int64_t>(k) * 1'000'000'000);
  }
  RowEviction spec;
  spec.max_idle_seconds = 3.0;
  constexpr int64_t kNow = 6'500'000'000;
  EXPECT_THAT(SweepKeys(rows, spec, EvictionReason::kIdle, /*min_clock=*/0, kNow),
              UnorderedElementsAre(1, 2, 3));
  EXPECT_THAT(SweepKeys(rows, spec, EvictionReason::kIdle, 0, kNow, /*since_ns=*/4'000'000'000),
              IsEmpty())
      << "everything counts as updated at 4 s at least: idle 2.5 s";
  spec.max_idle_seconds = 0.5;
  EXPECT_THAT(SweepKeys(rows, spec, EvictionReason::kIdle, 0, kNow), SizeIs(5));
}

TEST(OverBudgetKeysTest, RemovesDownToNinetyPercentInTheChosenOrder) {
  SparseRows rows(2, 0, /*track=*/true);
  FillFive(rows);
  RowEviction spec;
  const uint64_t per = rows.bytes_per_row();
  spec.max_bytes = 5 * per;
  EXPECT_THAT(OverBudgetKeys(rows, spec), IsEmpty()) << "at the bound, not past it";
  spec.max_bytes = 4 * per;  // keep 90 %: 3 rows
  EXPECT_THAT(OverBudgetKeys(rows, spec), UnorderedElementsAre(1, 2));
  spec.order = RowEviction::Order::kLeastFrequent;
  EXPECT_THAT(OverBudgetKeys(rows, spec), UnorderedElementsAre(5, 4));
  spec.max_bytes = 0;
  EXPECT_THAT(OverBudgetKeys(rows, spec), IsEmpty()) << "no bound";
}

TEST(RowPolicySpecTest, OutOfRangeSettingsAreRefusedNamingTheTable) {
  JobConfig job;
  job.tables.push_back(TableSpec::Sparse("emb", 2));
  job.tables.push_back({"dense", 4, Initializer::Zeros(), {}});
  ASSERT_TRUE(ValidateJobConfig(job).ok());
  auto refused = [&](auto change, const std::string& why) {
    JobConfig bad = job;
    change(bad.tables[0]);
    EXPECT_THAT(ValidateJobConfig(bad).message(), ::testing::HasSubstr(why)) << why;
  };
  refused([](TableSpec& t) { t.admission.min_count = 256; }, "table 'emb': admission min_count");
  refused([](TableSpec& t) { t.admission.probability = 0; }, "probability 0 is not in (0, 1]");
  refused([](TableSpec& t) { t.admission.probability = 1.5f; }, "probability 1.5");
  refused([](TableSpec& t) { t.admission.filter_slots = 0; }, "filter_slots is 0");
  refused([](TableSpec& t) { t.eviction.max_idle_clocks = -1; }, "max_idle_clocks is -1");
  refused([](TableSpec& t) { t.eviction.max_idle_seconds = -1; }, "max_idle_seconds -1 is not");
  refused([](TableSpec& t) { t.eviction.max_idle_seconds = std::nan(""); }, "max_idle_seconds nan");
  refused(
      [](TableSpec& t) {
        t.eviction.max_idle_clocks = 5;
        t.eviction.max_idle_seconds = 5;
      },
      "both set; choose one");
  refused([](TableSpec& t) { t.eviction.min_norm = -1; }, "min_norm -1");
  refused([](TableSpec& t) { t.eviction.sweep_every = 0; }, "sweep_every is 0");
  refused([](TableSpec& t) { t.eviction.order = static_cast<RowEviction::Order>(7); },
          "unknown eviction order 7");
  JobConfig dense = job;
  dense.tables[1].eviction.max_bytes = 100;
  EXPECT_THAT(ValidateJobConfig(dense).message(),
              ::testing::HasSubstr("table 'dense': admission and eviction are for sparse"));
  JobConfig other = job;
  other.tables[0].admission.min_count = 2;
  EXPECT_THAT(CompareJobConfig(job, other).message(),
              ::testing::HasSubstr("table 0 ('emb') admission is (min_count 2"));
}

// One shard, two workers, table 0 "emb" (rows of 2, constant 1, SGD lr 1) with `admission`
// and `eviction`, the evicted keys recorded.
struct RowFixture {
  RowFixture(RowAdmission admission, RowEviction eviction, const std::string& policy = "asp",
             uint64_t sparse_budget_bytes = 0) {
    JobConfig job;
    job.policy = policy;
    job.tables.push_back(TableSpec::Sparse("emb", 2, Initializer::Constant(1.0f), {"sgd", 1.0f}));
    job.tables[0].admission = admission;
    job.tables[0].eviction = eviction;
    EXPECT_TRUE(ValidateJobConfig(job).ok()) << ValidateJobConfig(job);
    EngineOptions options;
    options.sparse_budget_bytes = sparse_budget_bytes;
    options.on_evicted = [this](const EvictedRows& e) {
      EXPECT_EQ(e.table, "emb");
      EXPECT_EQ(e.shard, 0);
      evicted.push_back({e.reason, std::vector<uint64_t>(e.keys.begin(), e.keys.end())});
      std::sort(evicted.back().second.begin(), evicted.back().second.end());
    };
    auto e = ShardEngine::Create(job, *policy::ParsePolicySpec(policy), 0, 1, 2, options, &host);
    EXPECT_TRUE(e.ok()) << e.status();
    engine = *std::move(e);
  }
  EngineRequest Req(EngineRequest::Kind kind, int rank, int64_t clock,
                    const std::vector<uint64_t>& keys) {
    return SparseRequest(kind, next_id++, rank, clock, keys);
  }
  void Push(int rank, int64_t clock, const std::vector<uint64_t>& keys, std::vector<float> g,
            absl::Time now = kT0) {
    engine->OnPushSparse(Req(EngineRequest::Kind::kPushSparse, rank, clock, keys),
                         Buffer::CopyOf(g), now);
    for (const EngineAnswer& a : host.Take()) EXPECT_EQ(a.kind, EngineAnswer::Kind::kPushed);
  }
  std::vector<float> Pull(int rank, int64_t clock, const std::vector<uint64_t>& keys) {
    engine->OnPullSparse(Req(EngineRequest::Kind::kPullSparse, rank, clock, keys), kT0);
    std::vector<EngineAnswer> a = host.Take();
    if (a.size() != 1 || a[0].kind != EngineAnswer::Kind::kRead) return {};
    return std::vector<float>(a[0].values.data(), a[0].values.data() + a[0].values.size());
  }
  void Clock(int rank, int64_t clock, absl::Time now = kT0) {
    engine->OnClock(Req(EngineRequest::Kind::kClock, rank, clock, {}), now);
  }
  void ClockBoth(int64_t clock, absl::Time now = kT0) {
    Clock(0, clock, now);
    Clock(1, clock, now);
  }
  SparseTableStats Stats() { return engine->counters().sparse_tables.at(0); }

  RecordingHost host;
  std::unique_ptr<ShardEngine> engine;
  std::vector<std::pair<EvictionReason, std::vector<uint64_t>>> evicted;
  uint64_t next_id = 1;
};

TEST(RowAdmissionEngineTest, UnadmittedPushesAreCountedNotAppliedAndPullsCreateNothing) {
  RowAdmission admission;
  admission.min_count = 3;
  RowFixture f(admission, {});
  f.Push(0, 0, {7}, {1, 1});
  f.Push(1, 0, {7, 8}, {2, 2, 5, 5});
  EXPECT_EQ(f.Pull(0, 0, {7, 8}), (std::vector<float>{1, 1, 1, 1})) << "initial values";
  EXPECT_EQ(f.Stats().rows, 0u);
  EXPECT_EQ(f.Stats().pushes_unadmitted, 3u);
  f.Push(0, 0, {7}, {4, 8});  // the third: admitted, and this push applied
  EXPECT_EQ(f.Pull(0, 0, {7, 8}), (std::vector<float>{-3, -7, 1, 1}));
  const SparseTableStats s = f.Stats();
  EXPECT_EQ(s.rows, 1u);
  EXPECT_EQ(s.rows_created, 1u);
  EXPECT_EQ(s.pushes_unadmitted, 3u);
  EXPECT_EQ(s.bytes, s.bytes_per_row);
}

// The shard's memory budget is checked on the rows admission may create before admission
// counts anything: a push it refuses changes nothing, its keys' counts included.
TEST(RowAdmissionEngineTest, APushTheBudgetRefusesCountsNothingTowardAdmission) {
  RowAdmission admission;
  admission.min_count = 2;
  RowFixture f(admission, {}, "asp", /*sparse_budget_bytes=*/1);
  const auto push = [&f](const std::vector<uint64_t>& keys) {
    f.engine->OnPushSparse(f.Req(EngineRequest::Kind::kPushSparse, 0, 0, keys),
                           Buffer::CopyOf(std::vector<float>(2 * keys.size(), 1.0f)), kT0);
    std::vector<EngineAnswer> a = f.host.Take();
    return a.size() == 1 ? a[0].status : absl::InternalError("no single answer");
  };
  EXPECT_TRUE(push({8}).ok()) << "the first push of 8 creates no row: within any budget";
  EXPECT_EQ(f.Stats().pushes_unadmitted, 1u);
  // 8 would get its row now, which the budget refuses; 9 would be counted, and is not.
  EXPECT_EQ(push({8, 9}).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(push({8, 9}).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(f.Stats().pushes_unadmitted, 1u) << "the refused pushes counted nothing";
  EXPECT_EQ(f.Stats().rows, 0u);
  // Positive control: without the budget, the second push admits the key.
  RowFixture g(admission, {});
  g.Push(0, 0, {7}, {1, 1});
  g.Push(0, 0, {7}, {1, 1});
  EXPECT_EQ(g.Stats().rows, 1u);
}

TEST(RowAdmissionEngineTest, AKeyWithoutARowMayReadZeros) {
  RowAdmission admission;
  admission.min_count = 2;
  admission.read_initial = false;
  RowFixture f(admission, {});
  EXPECT_EQ(f.Pull(0, 0, {7}), (std::vector<float>{0, 0}));
}

// BSP: a round's row counts once per worker that pushed it.
TEST(RowAdmissionEngineTest, ARoundCountsEachWorkerThatPushedTheRow) {
  RowAdmission admission;
  admission.min_count = 2;
  RowFixture f(admission, {}, "bsp");
  f.Push(0, 0, {7, 9}, {2, 2, 1, 1});
  f.Push(1, 0, {7}, {4, 4});
  f.ClockBoth(1);
  EXPECT_EQ(f.Pull(0, 1, {7, 9}), (std::vector<float>{-2, -2, 1, 1}))
      << "row 7: two workers, admitted, their average applied; row 9: one, refused";
  EXPECT_EQ(f.Stats().pushes_unadmitted, 1u);
}

TEST(RowEvictionEngineTest, IdleRowsAreRemovedAtTheSweepReportedAndCounted) {
  RowEviction eviction;
  eviction.max_idle_clocks = 2;
  RowFixture f({}, eviction);
  f.Push(0, 0, {1, 2}, {1, 1, 1, 1});
  f.ClockBoth(1);
  f.Push(0, 1, {2}, {1, 1});
  f.ClockBoth(2);
  f.ClockBoth(3);
  EXPECT_THAT(f.evicted, ElementsAre(std::pair(EvictionReason::kIdle, std::vector<uint64_t>{1})))
      << "row 1 last updated at 0, idle 3 > 2 clocks; row 2 at 1";
  f.ClockBoth(4);
  ASSERT_EQ(f.evicted.size(), 2u);
  EXPECT_EQ(f.evicted[1].second, (std::vector<uint64_t>{2}));
  EXPECT_EQ(f.Pull(0, 4, {1, 2}), (std::vector<float>{1, 1, 1, 1})) << "gone: initial values";
  const SparseTableStats s = f.Stats();
  EXPECT_EQ(s.rows, 0u);
  EXPECT_EQ(s.evicted_idle, 2u);
  EXPECT_EQ(s.rows_created, 2u);
  // A removed row comes back fresh: its optimizer state and step went with it.
  f.Push(0, 4, {1}, {1, 1});
  EXPECT_EQ(f.Pull(0, 4, {1}), (std::vector<float>{0, 0}));
}

// By seconds: the time each request was handed with. Rows 1 and 2 pushed at 0 s, row 2
// again at 6 s; the sweep at 11 s (idle > 10 s) removes row 1 alone, the one at 17 s row 2.
// Clocks do not count: many clocks within 10 s remove nothing.
TEST(RowEvictionEngineTest, IdleBySecondsUsesTheTimesOfTheRequests) {
  RowEviction eviction;
  eviction.max_idle_seconds = 10;
  RowFixture f({}, eviction);
  const auto at = [](double s) { return kT0 + absl::Seconds(100) + absl::Seconds(s); };
  f.Push(0, 0, {1, 2}, {1, 1, 1, 1}, at(0));
  f.ClockBoth(1, at(0));  // the first sweep: rows before it count from here (100 s)
  for (int c = 2; c < 8; ++c) f.ClockBoth(c, at(5));
  EXPECT_TRUE(f.evicted.empty()) << "six clocks in 5 s: nothing is idle for 10 s";
  f.Push(0, 8, {2}, {1, 1}, at(6));
  f.ClockBoth(8, at(11));
  EXPECT_THAT(f.evicted, ElementsAre(std::pair(EvictionReason::kIdle, std::vector<uint64_t>{1})));
  f.ClockBoth(9, at(16));
  EXPECT_EQ(f.evicted.size(), 1u) << "row 2: idle 10 s, not more";
  f.ClockBoth(10, at(17));
  ASSERT_EQ(f.evicted.size(), 2u);
  EXPECT_EQ(f.evicted[1].second, (std::vector<uint64_t>{2}));
  EXPECT_EQ(f.Stats().evicted_idle, 2u);
}

TEST(RowEvictionEngineTest, SweepsRunEverySweepEveryClocksOfTheSlowestWorker) {
  RowEviction eviction;
  eviction.min_norm = 0.5f;
  eviction.sweep_every = 3;
  RowFixture f({}, eviction);
  f.Push(0, 0, {1, 2}, {1, 1, 0.5f, 0.5f});  // row 1 -> (0, 0), row 2 -> (0.5, 0.5)
  f.Clock(0, 1);
  f.Clock(0, 2);
  f.Clock(0, 3);
  EXPECT_THAT(f.evicted, IsEmpty()) << "worker 1 is still at clock 0";
  f.Clock(1, 1);
  f.Clock(1, 2);
  EXPECT_THAT(f.evicted, IsEmpty());
  f.Clock(1, 3);
  EXPECT_THAT(f.evicted, ElementsAre(std::pair(EvictionReason::kNorm, std::vector<uint64_t>{1})));
  EXPECT_EQ(f.Stats().evicted_norm, 1u);
}

TEST(RowEvictionEngineTest, PastTheByteBoundTheLeastRecentlyUpdatedRowsGo) {
  RowEviction eviction;
  eviction.max_bytes = uint64_t{1} << 40;  // tracked rows, as below: their bytes per row
  RowFixture probe({}, eviction);
  probe.Push(0, 0, {1}, {0, 0});
  const uint64_t per = probe.Stats().bytes_per_row;
  eviction.max_bytes = 10 * per;  // 90 %: 9 rows
  RowFixture f({}, eviction);
  for (uint64_t k = 0; k < 10; ++k) {
    f.Push(0, static_cast<int64_t>(k / 4), {k}, {1, 1});
    if (k % 4 == 3) f.ClockBoth(static_cast<int64_t>(k / 4) + 1);
  }
  EXPECT_THAT(f.evicted, IsEmpty()) << "10 rows fit";
  f.Push(1, 2, {10, 3}, {1, 1, 1, 1});  // row 3 updated again: now among the newest
  ASSERT_EQ(f.evicted.size(), 1u);
  EXPECT_EQ(f.evicted[0].first, EvictionReason::kBudget);
  EXPECT_EQ(f.evicted[0].second, (std::vector<uint64_t>{0, 1})) << "11 rows, keep 9";
  EXPECT_EQ(f.Stats().rows, 9u);
  EXPECT_EQ(f.Stats().evicted_budget, 2u);
  EXPECT_LE(f.Stats().bytes, eviction.max_bytes);
  EXPECT_EQ(f.Stats().bytes_bound, eviction.max_bytes);
}

}  // namespace
}  // namespace kairos::internal
