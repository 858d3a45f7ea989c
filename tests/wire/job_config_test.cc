// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of ValidateJobConfig and CompareJobConfig (src/api/job.cc): the configuration every
// node sends at join. Every refusal is InvalidArgument and names the field at fault.

#include <string>
#include <string_view>

#include "absl/status/status.h"
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
                "adam here but sgd");
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
