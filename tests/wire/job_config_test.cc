// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of ValidateJobConfig and CompareJobConfig (src/policy/job_config.cc): the configuration every
// node sends at join. Every refusal is InvalidArgument and names the field at fault.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/job.h"

namespace kairos {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

JobConfig ValidJob() {
  JobConfig job;
  job.policy = "bsp";
  job.chunk_elements = 1024;
  job.tables.push_back({"w", 100, Initializer::Uniform(-1.0f, 1.0f, 7), {"sgd", 0.5f}});
  job.tables.push_back({"b", 3, Initializer::Constant(2.0f), {"sgd", 0.25f}});
  return job;
}

void ExpectInvalid(const absl::Status& s, std::string_view a, std::string_view b = "") {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), AllOf(HasSubstr(a), HasSubstr(b)));
}

TEST(ValidateJobConfigTest, AcceptsValidJob) {
  EXPECT_TRUE(ValidateJobConfig(ValidJob()).ok());
  JobConfig longest = ValidJob();
  longest.tables[0].name = std::string(128, 'n');
  EXPECT_TRUE(ValidateJobConfig(longest).ok());
}

TEST(ValidateJobConfigTest, RejectsJobWithoutTables) {
  JobConfig job = ValidJob();
  job.tables.clear();
  ExpectInvalid(ValidateJobConfig(job), "no table");
}

TEST(ValidateJobConfigTest, RejectsZeroChunkElements) {
  JobConfig job = ValidJob();
  job.chunk_elements = 0;
  ExpectInvalid(ValidateJobConfig(job), "chunk_elements");
}

TEST(ValidateJobConfigTest, RejectsEmptyOrOverlongName) {
  JobConfig job = ValidJob();
  job.tables[1].name = "";
  ExpectInvalid(ValidateJobConfig(job), "table 1", "name");
  job.tables[1].name = std::string(129, 'n');
  ExpectInvalid(ValidateJobConfig(job), "table 1", "name");
}

TEST(ValidateJobConfigTest, RejectsDuplicatedTableNames) {
  JobConfig job = ValidJob();
  job.tables[1].name = job.tables[0].name;  // "w" (a literal trips GCC 12 -Wrestrict)
  ExpectInvalid(ValidateJobConfig(job), "table 'w'", "declared twice");
}

TEST(ValidateJobConfigTest, RejectsZeroSize) {
  JobConfig job = ValidJob();
  job.tables[1].size = 0;
  ExpectInvalid(ValidateJobConfig(job), "table 'b'", "size");
}

TEST(ValidateJobConfigTest, RejectsUnknownPolicy) {
  JobConfig job = ValidJob();
  job.policy = "nope";
  ExpectInvalid(ValidateJobConfig(job), "policy", "'nope'");
}

// Each limit: accepted at the limit, refused one past it, naming the field and the limit.
TEST(ValidateJobConfigTest, TableSizeUpTo2To36) {
  JobConfig job = ValidJob();
  job.chunk_elements = kMaxChunkElements;
  job.tables[0].size = kMaxTableElements;
  EXPECT_TRUE(ValidateJobConfig(job).ok());
  job.tables[0].size = kMaxTableElements + 1;
  ExpectInvalid(ValidateJobConfig(job), "table 'w': size is 68719476737 elements",
                "[1, 68719476736]");
  job.tables[0].size = uint64_t{1} << 40;
  ExpectInvalid(ValidateJobConfig(job), "table 'w'", "2^36");
}

TEST(ValidateJobConfigTest, AllTablesTogetherUpTo2To40) {
  JobConfig job = ValidJob();
  job.chunk_elements = kMaxChunkElements;
  job.tables.clear();
  for (int i = 0; i < 16; ++i) {
    job.tables.push_back({absl::StrCat("t", i), kMaxTableElements, {}, {}});
  }
  EXPECT_TRUE(ValidateJobConfig(job).ok());  // exactly 2^40
  job.tables.push_back({"one more", 1, {}, {}});
  ExpectInvalid(ValidateJobConfig(job), "hold 1099511627777 elements together", "2^40");
}

TEST(ValidateJobConfigTest, ChunkElementsUpTo2To28) {
  JobConfig job = ValidJob();
  job.chunk_elements = kMaxChunkElements;
  EXPECT_TRUE(ValidateJobConfig(job).ok());
  job.chunk_elements = kMaxChunkElements + 1;
  ExpectInvalid(ValidateJobConfig(job), "chunk_elements is 268435457", "[1, 268435456]");
  job.chunk_elements = uint64_t{1} << 63;
  ExpectInvalid(ValidateJobConfig(job), "chunk_elements is 9223372036854775808");
}

TEST(ValidateJobConfigTest, ChunksTogetherUpTo2To24) {
  JobConfig job = ValidJob();
  job.tables.resize(1);
  job.chunk_elements = 1;
  job.tables[0].size = kMaxJobChunks;
  EXPECT_TRUE(ValidateJobConfig(job).ok());
  job.tables[0].size = kMaxJobChunks + 1;
  ExpectInvalid(ValidateJobConfig(job), "make 16777217 chunks", "raise chunk_elements");
}

TEST(ValidateJobConfigTest, TablesUpTo1024) {
  JobConfig job = ValidJob();
  job.tables.clear();
  for (std::size_t i = 0; i < kMaxTables; ++i) {
    job.tables.push_back({absl::StrCat("t", i), 1, {}, {}});
  }
  EXPECT_TRUE(ValidateJobConfig(job).ok());
  job.tables.push_back({"one more", 1, {}, {}});
  ExpectInvalid(ValidateJobConfig(job), "1025 tables", "at most 1024");
}

TEST(ValidateJobConfigTest, NamesArePrintable) {
  JobConfig job = ValidJob();
  job.tables[0].name = "w\n\x1b[31m";
  ExpectInvalid(ValidateJobConfig(job), "table 0: the name must be printable", "\\n");
}

TEST(ValidateJobConfigTest, PolicyUpTo1024Characters) {
  JobConfig job = ValidJob();
  job.policy = absl::StrCat("bsp", std::string(kMaxPolicyLength - 3, ' '));
  EXPECT_THAT(ValidateJobConfig(job).message(), ::testing::Not(HasSubstr("characters")));
  job.policy += " ";
  ExpectInvalid(ValidateJobConfig(job), "the policy spec has 1025 characters", "at most 1024");
}

TEST(ValidateJobConfigTest, InitializerAndUpdaterParametersAreFinite) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  JobConfig job = ValidJob();
  job.tables[0].init = Initializer::Constant(nan);
  ExpectInvalid(ValidateJobConfig(job), "table 'w': initializer", "not finite");
  job.tables[0].init = Initializer::Uniform(1.0f, -1.0f, 0);
  ExpectInvalid(ValidateJobConfig(job), "low > high");
  job.tables[0].init = Initializer::Uniform(-inf, 1.0f, 0);
  ExpectInvalid(ValidateJobConfig(job), "not finite");
  job.tables[0].init = Initializer::Normal(0.0f, -1.0f, 0);
  ExpectInvalid(ValidateJobConfig(job), "standard deviation is negative");
  job.tables[0].init.kind = static_cast<Initializer::Kind>(77);
  ExpectInvalid(ValidateJobConfig(job), "initializer kind 77", "unknown kind");
  job.tables[0].init = Initializer::Zeros();
  job.tables[0].updater.learning_rate = inf;
  ExpectInvalid(ValidateJobConfig(job), "learning rate inf is not finite");
  job.tables[0].updater = {std::string(kMaxUpdaterNameLength + 1, 'u'), 0.1f};
  ExpectInvalid(ValidateJobConfig(job), "updater name must be 1 to 256");
  job.tables[0].updater = {"sgd", -0.1f};
  ExpectInvalid(ValidateJobConfig(job), "learning rate -0.1 is negative");
  job.tables[0].updater = {"sgd", 0.1f, std::string(kMaxScheduleLength + 1, 's')};
  ExpectInvalid(ValidateJobConfig(job), "schedule must be at most 256 printable");
  job.tables[0].updater = {"sgd", 0.1f, "cosine:steps=0"};
  ExpectInvalid(ValidateJobConfig(job), "table 'w': schedule 'cosine:steps=0'",
                "parameter 'steps' must be an integer in [1, 2^62]");
  job.tables[0].updater = {"sgd", 0.1f};
  job.tables[0].nonfinite = static_cast<NonFinitePolicy>(5);
  ExpectInvalid(ValidateJobConfig(job), "unknown non-finite policy 5");
}

TEST(ValidateJobConfigTest, RefusesACompressionThatNamesNothing) {
  JobConfig job = ValidJob();
  job.tables[0].compression = Compression::kInt8;
  EXPECT_TRUE(ValidateJobConfig(job).ok());
  job.tables[0].compression = static_cast<Compression>(4);
  ExpectInvalid(ValidateJobConfig(job), "unknown compression 4");
}

TEST(ValidateJobConfigTest, MergesPushesOfEveryKindOfTable) {
  JobConfig job = ValidJob();
  job.tables[0].merge_pushes = true;
  EXPECT_TRUE(ValidateJobConfig(job).ok());
  job.tables[0].compression = Compression::kBf16;
  EXPECT_TRUE(ValidateJobConfig(job).ok());
  job.tables[0] = TableSpec::Sparse("w", 8);
  job.tables[0].merge_pushes = true;
  EXPECT_TRUE(ValidateJobConfig(job).ok());
  job.tables[0].compression = Compression::kInt8;
  EXPECT_TRUE(ValidateJobConfig(job).ok());
}

TEST(ValidateJobConfigTest, CachesReadsWithinItsLimits) {
  JobConfig job = ValidJob();
  job.tables[0].cache_clocks = kMaxCacheClocks;
  EXPECT_TRUE(ValidateJobConfig(job).ok());
  job.tables[0].cache_clocks = kMaxCacheClocks + 1;
  ExpectInvalid(ValidateJobConfig(job), "table 'w': cache_clocks 1048577 is more than 1048576");
  job.tables[0].cache_clocks = 1;
  job.tables[0].cache_rows = 5;
  ExpectInvalid(ValidateJobConfig(job), "table 'w': cache_rows applies to a sparse table");
  job.tables[0] = TableSpec::Sparse("w", 8);
  job.tables[0].cache_clocks = 1;
  ExpectInvalid(ValidateJobConfig(job),
                "table 'w': a sparse table's cache_clocks needs cache_rows");
  job.tables[0].cache_rows = kMaxCacheRows;
  EXPECT_TRUE(ValidateJobConfig(job).ok());
  job.tables[0].cache_rows = kMaxCacheRows + 1;
  ExpectInvalid(ValidateJobConfig(job), "table 'w': cache_rows 67108865 is more than 67108864");
  job.tables[0].cache_clocks = 0;
  job.tables[0].cache_rows = 5;
  ExpectInvalid(ValidateJobConfig(job),
                "table 'w': cache_rows applies to a sparse table with "
                "cache_clocks");
}

TEST(ValidateJobConfigTest, WriteBackWithinWhatTheGatesAllow) {
  JobConfig job = ValidJob();
  job.policy = "ssp:s=2";
  job.tables[0].write_back_clocks = 3;
  EXPECT_TRUE(ValidateJobConfig(job).ok());
  job.tables[0].write_back_clocks = 4;
  ExpectInvalid(ValidateJobConfig(job),
                "table 'w': write_back_clocks 4 lags the worker's "
                "reported clock by up to 3, but table 'w' is gated with "
                "staleness 2: at most 3 there");
  job.policy = "asp";
  job.tables[0].write_back_clocks = kMaxWriteBackClocks + 1;
  ExpectInvalid(ValidateJobConfig(job), "table 'w': write_back_clocks 1025 is more than 1024");
}

TEST(CompareJobConfigTest, NamesDifferentCacheClocks) {
  JobConfig theirs = ValidJob();
  theirs.tables[1].cache_clocks = 3;
  ExpectInvalid(CompareJobConfig(ValidJob(), theirs),
                "table 1 ('b') cache_clocks is 3 here but 0 in the job");
}

TEST(CompareJobConfigTest, NamesDifferentWriteBackAndCacheRows) {
  JobConfig theirs = ValidJob();
  theirs.tables[1].write_back_clocks = 2;
  ExpectInvalid(CompareJobConfig(ValidJob(), theirs),
                "table 1 ('b') write_back_clocks is 2 here but 0 in the job");
  theirs = ValidJob();
  theirs.tables[1].cache_rows = 9;
  ExpectInvalid(CompareJobConfig(ValidJob(), theirs),
                "table 1 ('b') cache_rows is 9 here but 0 in the job");
}

TEST(CompareJobConfigTest, NamesDifferentMergePushes) {
  JobConfig theirs = ValidJob();
  theirs.tables[1].merge_pushes = true;
  ExpectInvalid(CompareJobConfig(ValidJob(), theirs),
                "table 1 ('b') merge_pushes is on here but off in the job");
}

TEST(CompareJobConfigTest, NamesDifferentCompression) {
  JobConfig theirs = ValidJob();
  theirs.tables[1].compression = Compression::kFp16;
  ExpectInvalid(CompareJobConfig(ValidJob(), theirs),
                "table 1 ('b') compression is fp16 here but none in the job");
}

TEST(CompareJobConfigTest, NamesDifferentNonFinitePolicy) {
  JobConfig theirs = ValidJob();
  theirs.tables[1].nonfinite = NonFinitePolicy::kSkip;
  ExpectInvalid(CompareJobConfig(ValidJob(), theirs),
                "table 1 ('b') nonfinite policy is skip here but refuse in the job");
}

TEST(CompareJobConfigTest, AcceptsEqualJobs) {
  EXPECT_TRUE(CompareJobConfig(ValidJob(), ValidJob()).ok());
}

TEST(CompareJobConfigTest, NamesDifferentPolicy) {
  JobConfig theirs = ValidJob();
  theirs.policy = "asp";
  ExpectInvalid(CompareJobConfig(ValidJob(), theirs), "policy", "'asp' here but 'bsp'");
}

TEST(CompareJobConfigTest, TwoSpellingsOfOnePolicyAgree) {
  JobConfig ours = ValidJob();
  ours.policy = "vsgd";
  JobConfig theirs = ours;
  theirs.policy = "ssp:s=3+weight=value";
  EXPECT_TRUE(CompareJobConfig(ours, theirs).ok());
  theirs.policy = "ssp:s=4+weight=value";
  ExpectInvalid(CompareJobConfig(ours, theirs), "policy");
}

TEST(CompareJobConfigTest, NamesDifferentChunkElements) {
  JobConfig theirs = ValidJob();
  theirs.chunk_elements = 2048;
  ExpectInvalid(CompareJobConfig(ValidJob(), theirs), "chunk_elements", "2048 here but 1024");
}

TEST(CompareJobConfigTest, NamesDifferentNumberOfTables) {
  JobConfig theirs = ValidJob();
  theirs.tables.pop_back();
  ExpectInvalid(CompareJobConfig(ValidJob(), theirs), "number of tables", "1 here but 2");
}

TEST(CompareJobConfigTest, NamesDifferentTableName) {
  JobConfig theirs = ValidJob();
  theirs.tables[1].name = "bias";
  ExpectInvalid(CompareJobConfig(ValidJob(), theirs), "table 1's name", "bias here but b");
}

TEST(CompareJobConfigTest, NamesDifferentSize) {
  JobConfig theirs = ValidJob();
  theirs.tables[0].size = 200;
  ExpectInvalid(CompareJobConfig(ValidJob(), theirs), "table 0 ('w') size",
                "200 here but 100");
}

TEST(CompareJobConfigTest, NamesDifferentInitializer) {
  JobConfig theirs = ValidJob();
  theirs.tables[0].init.seed = 8;
  ExpectInvalid(CompareJobConfig(ValidJob(), theirs), "table 0 ('w') initializer",
                "uniform(-1, 1, seed 8) here but uniform(-1, 1, seed 7)");
  theirs = ValidJob();
  theirs.tables[1].init = Initializer::Zeros();
  ExpectInvalid(CompareJobConfig(ValidJob(), theirs), "table 1 ('b') initializer",
                "zeros here but constant(2)");
}

TEST(CompareJobConfigTest, NamesDifferentUpdater) {
  JobConfig theirs = ValidJob();
  theirs.tables[1].updater.name = "adam";
  ExpectInvalid(CompareJobConfig(ValidJob(), theirs), "table 1 ('b') updater",
                "'adam' here but 'sgd'");
}

// The servers decide which updaters exist (a plugin may add names): a name no built-in
// knows passes the job checks.
TEST(ValidateJobConfigTest, AnyPrintableUpdaterNameIsAccepted) {
  JobConfig job = ValidJob();
  job.tables[0].updater.name = "my-plugin:alpha=3";
  EXPECT_TRUE(ValidateJobConfig(job).ok());
}

TEST(CompareJobConfigTest, TwoSpellingsOfOneOptimizerOrScheduleAgree) {
  JobConfig ours = ValidJob();
  ours.tables[0].updater = {"adam:beta1=0.8", 0.5f, "step:every=10"};
  JobConfig theirs = ours;
  theirs.tables[0].updater = {"adam: eps=1e-8, beta1=0.8", 0.5f, "step:gamma=0.1,every=10"};
  EXPECT_TRUE(CompareJobConfig(ours, theirs).ok());
  theirs.tables[0].updater.schedule = "step:every=20";
  ExpectInvalid(CompareJobConfig(ours, theirs), "table 0 ('w') schedule",
                "'step:every=20' here but 'step:every=10'");
  theirs.tables[0].updater = {"adam:beta1=0.7", 0.5f, "step:every=10"};
  ExpectInvalid(CompareJobConfig(ours, theirs), "table 0 ('w') updater");
}

TEST(CompareJobConfigTest, NamesDifferentLearningRate) {
  JobConfig theirs = ValidJob();
  theirs.tables[0].updater.learning_rate = 0.125f;
  ExpectInvalid(CompareJobConfig(ValidJob(), theirs), "table 0 ('w') learning_rate",
                "0.125 here but 0.5");
}

TEST(CompareJobConfigTest, ReportsTheFirstDifference) {
  JobConfig theirs = ValidJob();
  theirs.policy = "asp";
  theirs.tables[0].size = 1;
  ExpectInvalid(CompareJobConfig(ValidJob(), theirs), "policy");
}

}  // namespace
}  // namespace kairos
