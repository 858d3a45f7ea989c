// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of Shard: what Create builds for one shard of a job, and Locate's checks of a
// request's table and range, each refusal with its canonical code and a message that says
// what is wrong.

#include "engine/shard.h"

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/updater.h"
#include "engine/initializer.h"

namespace kairos::internal {
namespace {

using ::testing::HasSubstr;

// "w": 100 elements in chunks of 10, so shard 0 of 2 owns [0, 50) as 5 chunks.
// "tiny": 1 element, so shard 1 of 2 owns nothing.
JobConfig TwoTables() {
  JobConfig job;
  job.policy = "asp";
  job.chunk_elements = 10;
  job.tables.push_back({"w", 100, Initializer::Uniform(-1, 1, 5), {"sgd", 0.5f}});
  job.tables.push_back({"tiny", 1, Initializer::Constant(3), {"sgd", 0.5f}});
  return job;
}

std::unique_ptr<Shard> MakeShard(int shard, const JobConfig& job = TwoTables(),
                                 int64_t inline_apply_bytes = 0) {
  absl::StatusOr<std::unique_ptr<Shard>> s =
      Shard::Create(job, shard, /*num_shards=*/2, /*num_workers=*/2, &MakeBuiltinUpdater,
                    inline_apply_bytes);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

void ExpectError(const absl::StatusOr<std::pair<ShardTable*, ShardChunk*>>& got,
                 absl::StatusCode code, const std::string& what) {
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), code) << got.status();
  EXPECT_THAT(got.status().message(), HasSubstr(what));
}

TEST(ShardTest, CreateBuildsTheOwnedRangeOfEveryTable) {
  std::unique_ptr<Shard> shard = MakeShard(1);
  ASSERT_NE(shard, nullptr);
  EXPECT_EQ(shard->index(), 1);
  ASSERT_EQ(shard->tables().size(), 2u);
  const ShardTable& w = shard->tables()[0];
  EXPECT_EQ(w.id, 0u);
  EXPECT_EQ(w.spec.name, "w");
  EXPECT_EQ(w.begin, 50u);
  EXPECT_EQ(w.end, 100u);
  ASSERT_EQ(w.chunks.size(), 5u);
  for (std::size_t i = 0; i < w.chunks.size(); ++i) {
    EXPECT_EQ(w.chunks[i].chunk.begin, 50 + 10 * i);
    EXPECT_EQ(w.chunks[i].chunk.end, 60 + 10 * i);
    EXPECT_EQ(w.chunks[i].values.size(), 10u);
    EXPECT_NE(w.chunks[i].aggregation, nullptr);
  }
  // Values start as the initializer's, in table coordinates.
  for (uint64_t e = 50; e < 100; ++e) {
    const ShardChunk& c = w.chunks[(e - 50) / 10];
    ASSERT_EQ(ShardTable::Read(c, e, 1)[0], InitialValue(w.spec.init, e)) << e;
  }
  const ShardTable& tiny = shard->tables()[1];
  EXPECT_EQ(tiny.begin, tiny.end);
  EXPECT_TRUE(tiny.chunks.empty());
  EXPECT_EQ(shard->bytes(), 50 * sizeof(float));  // sgd keeps no state
}

TEST(ShardTest, ChunkKeysAreDistinctAcrossTables) {
  std::unique_ptr<Shard> shard = MakeShard(0);
  ASSERT_NE(shard, nullptr);
  std::set<uint64_t> keys;
  std::size_t chunks = 0;
  for (const ShardTable& t : shard->tables()) {
    for (const ShardChunk& c : t.chunks) {
      keys.insert(c.key);
      ++chunks;
    }
  }
  EXPECT_EQ(chunks, 6u);  // 5 of "w" and 1 of "tiny"
  EXPECT_EQ(keys.size(), chunks);
}

TEST(ShardTest, SmallChunksAreAppliedInline) {
  // A chunk of "w" is 10 floats = 40 bytes.
  std::unique_ptr<Shard> above = MakeShard(0, TwoTables(), /*inline_apply_bytes=*/41);
  std::unique_ptr<Shard> at = MakeShard(0, TwoTables(), /*inline_apply_bytes=*/40);
  ASSERT_NE(above, nullptr);
  ASSERT_NE(at, nullptr);
  EXPECT_TRUE(above->tables()[0].chunks[0].apply_inline);
  EXPECT_FALSE(at->tables()[0].chunks[0].apply_inline);
}

TEST(ShardTest, LocateFindsTheOwnedChunk) {
  std::unique_ptr<Shard> shard = MakeShard(0);
  ASSERT_NE(shard, nullptr);
  auto whole = shard->Locate(0, 20, 10);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->first, &shard->tables()[0]);
  EXPECT_EQ(whole->second->chunk.begin, 20u);
  EXPECT_EQ(whole->second->chunk.end, 30u);
  auto inside = shard->Locate(0, 43, 5);
  ASSERT_TRUE(inside.ok()) << inside.status();
  EXPECT_EQ(inside->second->chunk.begin, 40u);
  auto tiny = shard->Locate(1, 0, 1);
  ASSERT_TRUE(tiny.ok()) << tiny.status();
  EXPECT_EQ(tiny->first->spec.name, "tiny");
}

TEST(ShardTest, LocateRejectsUnknownTableAsNotFound) {
  std::unique_ptr<Shard> shard = MakeShard(0);
  ASSERT_NE(shard, nullptr);
  ExpectError(shard->Locate(2, 0, 1), absl::StatusCode::kNotFound,
              "unknown table id 2 (the job has 2 tables)");
}

TEST(ShardTest, UpdateCopiesAChunkThatAReadStillShares) {
  std::unique_ptr<Shard> shard = MakeShard(1);
  ASSERT_NE(shard, nullptr);
  ShardTable& w = shard->tables()[0];
  ShardChunk& c = w.chunks[0];
  const float before = ShardTable::Read(c, 50, 1)[0];
  Buffer in_flight = ShardTable::Read(c, 50, 10);  // a pull reply the transport still holds
  const std::vector<float> grad(10, 1.0f);
  w.Apply(c, 50, w.MakeUpdate(c, grad, 1.0f, 1.0f, 0, 1));
  EXPECT_EQ(in_flight[0], before) << "the reply must not see the later update";
  EXPECT_NE(ShardTable::Read(c, 50, 1)[0], before);
  in_flight = Buffer();
  float* storage = c.values.data();
  w.Apply(c, 50, w.MakeUpdate(c, grad, 1.0f, 1.0f, 0, 1));
  EXPECT_EQ(c.values.data(), storage) << "an unshared chunk is updated in place";
}

TEST(ShardTest, LocateRejectsRangeOutsideTableAsOutOfRange) {
  std::unique_ptr<Shard> shard = MakeShard(1);
  ASSERT_NE(shard, nullptr);
  ExpectError(shard->Locate(0, 95, 10), absl::StatusCode::kOutOfRange,
              "range of 10 values at offset 95 is outside table 'w' of 100 elements");
  ExpectError(shard->Locate(0, 100, 1), absl::StatusCode::kOutOfRange, "outside table 'w'");
  ExpectError(shard->Locate(0, 50, 0), absl::StatusCode::kOutOfRange, "outside table 'w'");
  // offset + length would wrap around 2^64.
  ExpectError(shard->Locate(0, 60, UINT64_MAX), absl::StatusCode::kOutOfRange,
              "outside table 'w'");
}

TEST(ShardTest, LocateRejectsRangeOfAnotherShardNamingOwnedRange) {
  std::unique_ptr<Shard> shard = MakeShard(0);
  ASSERT_NE(shard, nullptr);
  ExpectError(shard->Locate(0, 60, 5), absl::StatusCode::kInvalidArgument,
              "range [60, 65) of table 'w' is not on shard 0, which holds [0, 50)");
  // Straddles the boundary between the shards.
  ExpectError(shard->Locate(0, 45, 10), absl::StatusCode::kInvalidArgument,
              "is not on shard 0, which holds [0, 50)");
}

TEST(ShardTest, LocateOnShardOwningNothingIsInvalidArgument) {
  std::unique_ptr<Shard> shard = MakeShard(1);
  ASSERT_NE(shard, nullptr);
  ExpectError(shard->Locate(1, 0, 1), absl::StatusCode::kInvalidArgument,
              "range [0, 1) of table 'tiny' is not on shard 1, which holds [1, 1)");
}

TEST(ShardTest, LocateRejectsRangeSpanningChunks) {
  std::unique_ptr<Shard> shard = MakeShard(0);
  ASSERT_NE(shard, nullptr);
  ExpectError(shard->Locate(0, 5, 10), absl::StatusCode::kInvalidArgument,
              "range [5, 15) of table 'w' spans chunks");
  ExpectError(shard->Locate(0, 5, 10), absl::StatusCode::kInvalidArgument, "([0, 10) here)");
  ExpectError(shard->Locate(0, 0, 50), absl::StatusCode::kInvalidArgument, "spans chunks");
}

TEST(ShardTest, CreateRejectsUnknownUpdaterNamingTheTable) {
  JobConfig job = TwoTables();
  job.tables[1].updater.name = "lion";
  absl::StatusOr<std::unique_ptr<Shard>> s =
      Shard::Create(job, 0, 2, 2, &MakeBuiltinUpdater, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("table 'tiny'"));
  EXPECT_THAT(s.status().message(), HasSubstr("unknown optimizer 'lion'"));
}

TEST(ShardTest, CreateRejectsInvalidPolicy) {
  JobConfig job = TwoTables();
  job.policy = "nope";
  absl::StatusOr<std::unique_ptr<Shard>> s =
      Shard::Create(job, 0, 2, 2, &MakeBuiltinUpdater, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("'nope'"));
}

// What a shard needs, per its documented formula: 4 bytes per owned element and per float
// of state, one more copy for round sums, num_workers more for exact VSGD drift, and
// kChunkOverheadBytes + 8 x num_workers per chunk. Never wraps.
TEST(ShardTest, EstimateBytesFollowsTheFormula) {
  const uint64_t per_chunk = Shard::kChunkOverheadBytes + 8 * 2;
  auto estimate = [](const JobConfig& job, int shard, std::vector<uint64_t>* tables = nullptr) {
    absl::StatusOr<uint64_t> b =
        Shard::EstimateBytes(job, shard, 2, 2, &MakeBuiltinUpdater, tables);
    EXPECT_TRUE(b.ok()) << b.status();
    return b.value_or(0);
  };
  JobConfig job = TwoTables();  // shard 1: 50 of "w" in 5 chunks, none of "tiny"
  std::vector<uint64_t> tables;
  EXPECT_EQ(estimate(job, 1, &tables), 50 * 4 + 5 * per_chunk);
  EXPECT_EQ(tables, (std::vector<uint64_t>{50 * 4 + 5 * per_chunk, 0}));
  // Shard 0: 50 of "w" in 5 chunks and the 1 element of "tiny" in 1 chunk.
  EXPECT_EQ(estimate(job, 0), 51 * 4 + 6 * per_chunk);
  job.policy = "bsp";
  EXPECT_EQ(estimate(job, 0), 51 * 8 + 6 * per_chunk);
  job.policy = "asp+weight=value";  // exact drift: one chunk-sized buffer per worker
  EXPECT_EQ(estimate(job, 0), 51 * 4 * 3 + 6 * per_chunk);
  JobConfig huge = TwoTables();
  huge.tables[0].size = ~uint64_t{0};
  huge.chunk_elements = ~uint64_t{0};
  EXPECT_EQ(estimate(huge, 0), ~uint64_t{0});  // saturates
}

TEST(ShardTest, OptimizerStateIsAllocatedAndEstimatedPerElement) {
  JobConfig job = TwoTables();
  job.tables[0].updater.name = "adam";
  job.tables[1].updater.name = "momentum:mu=0.5";
  absl::StatusOr<std::unique_ptr<Shard>> s = Shard::Create(job, 0, 2, 2, &MakeBuiltinUpdater, 0);
  ASSERT_TRUE(s.ok()) << s.status();
  for (const ShardChunk& c : (*s)->tables()[0].chunks)
    EXPECT_EQ(c.state.size(), 2 * c.chunk.size());
  EXPECT_EQ((*s)->tables()[1].chunks[0].state.size(), 1u);
  const uint64_t per_chunk = Shard::kChunkOverheadBytes + 8 * 2;
  std::vector<uint64_t> tables;
  absl::StatusOr<uint64_t> b = Shard::EstimateBytes(job, 0, 2, 2, &MakeBuiltinUpdater, &tables);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(tables, (std::vector<uint64_t>{50 * 4 * 3 + 5 * per_chunk, 1 * 4 * 2 + per_chunk}));
}

// A sparse table counts its bookkeeping, and its admission filter when it has one.
TEST(ShardTest, EstimateBytesCountsASparseTablesAdmissionFilter) {
  JobConfig job;
  job.tables.push_back(TableSpec::Sparse("emb", 4));
  job.tables.push_back(TableSpec::Sparse("filtered", 4));
  job.tables.back().admission.min_count = 2;
  job.tables.back().admission.filter_slots = 4096;
  std::vector<uint64_t> tables;
  ASSERT_TRUE(Shard::EstimateBytes(job, 0, 2, 2, &MakeBuiltinUpdater, &tables).ok());
  const uint64_t per_table = Shard::kChunkOverheadBytes + 8 * 2;
  EXPECT_EQ(tables, (std::vector<uint64_t>{per_table, per_table + 4096}));
}

TEST(ShardTest, CreateRejectsABadScheduleNamingTheTable) {
  JobConfig job = TwoTables();
  job.tables[0].updater.schedule = "cosine";
  absl::StatusOr<std::unique_ptr<Shard>> s = Shard::Create(job, 0, 2, 2, &MakeBuiltinUpdater, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("table 'w'"));
  EXPECT_THAT(s.status().message(), HasSubstr("needs parameter 'steps'"));
}

// An update's learning rate is the chunk's base learning rate (which the job may change)
// times the schedule's factor at t; its step is the one given.
TEST(ShardTest, MakeUpdateAppliesTheScheduleToTheChunksLearningRate) {
  JobConfig job = TwoTables();
  job.tables[0].updater.schedule = "step:every=10,gamma=0.5";
  absl::StatusOr<std::unique_ptr<Shard>> s = Shard::Create(job, 0, 2, 2, &MakeBuiltinUpdater, 0);
  ASSERT_TRUE(s.ok()) << s.status();
  ShardTable& t = (*s)->tables()[0];
  ShardChunk& c = t.chunks[0];
  EXPECT_EQ(c.learning_rate, 0.5f);
  const std::vector<float> g(c.chunk.size(), 1.0f);
  EXPECT_EQ(t.MakeUpdate(c, g, 1.0f, 1.0f, 9, 3).learning_rate, 0.5f);
  EXPECT_EQ(t.MakeUpdate(c, g, 1.0f, 1.0f, 10, 3).learning_rate, 0.25f);
  EXPECT_EQ(t.MakeUpdate(c, g, 1.0f, 1.0f, 25, 3).learning_rate, 0.125f);
  c.learning_rate = 2.0f;
  const Updater::Update u = t.MakeUpdate(c, g, 0.5f, 0.25f, 10, 7);
  EXPECT_EQ(u.learning_rate, 1.0f);
  EXPECT_EQ(u.gradient_scale, 0.5f);
  EXPECT_EQ(u.step_scale, 0.25f);
  EXPECT_EQ(u.step, 7u);
  // The constant schedule hands the base learning rate through untouched.
  EXPECT_EQ(
      (*s)->tables()[1].MakeUpdate((*s)->tables()[1].chunks[0], g, 1, 1, 1000, 1).learning_rate,
      0.5f);
}

}  // namespace
}  // namespace kairos::internal
