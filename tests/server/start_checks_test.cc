// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The checks a server makes of a START before it allocates anything.

#include "server/start_checks.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/job.h"
#include "kairos/options.h"

namespace kairos::internal {
namespace {

using ::testing::HasSubstr;

wire::Start StartOf(int servers, int workers) {
  wire::Start s;
  s.set_num_servers(servers);
  s.set_num_workers(workers);
  for (int r = 0; r < workers; ++r) {
    wire::Node* n = s.add_nodes();
    n->set_role(wire::WORKER);
    n->set_node_id(servers + 1 + r);
    n->set_rank(r);
  }
  return s;
}

TEST(CheckStartTest, AcceptsAConsistentStart) {
  EXPECT_TRUE(CheckStart(StartOf(2, 3), 1).ok());
}

TEST(CheckStartTest, RefusesAShardOutsideTheServers) {
  const absl::Status s = CheckStart(StartOf(2, 3), 2);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("this server is shard 2"));
}

TEST(CheckStartTest, RefusesARankGivenTwiceOrOutOfRange) {
  wire::Start twice = StartOf(1, 2);
  twice.mutable_nodes(1)->set_rank(0);
  EXPECT_THAT(CheckStart(twice, 0).message(), HasSubstr("worker rank 0"));
  wire::Start out = StartOf(1, 2);
  out.mutable_nodes(1)->set_rank(2);
  EXPECT_THAT(CheckStart(out, 0).message(), HasSubstr("worker rank 2"));
  EXPECT_FALSE(CheckStart(StartOf(0, 2), 0).ok());
  EXPECT_FALSE(CheckStart(StartOf(1, 0), 0).ok());
}

JobConfig Job(uint64_t size) {
  JobConfig job;
  job.policy = "asp";
  job.chunk_elements = 1024;
  job.tables.push_back({"w", size, Initializer::Zeros(), {"sgd", 0.1f}});
  return job;
}

TEST(CheckJobTest, TheMemoryBudgetIsCheckedPerShard) {
  ServerOptions options;
  options.memory_budget_bytes = 6 << 20;
  // 2M floats in chunks of 1024: a shard of 2 needs 4 MiB of values and 1 MiB of chunk
  // bookkeeping, within 6 MiB; a single shard needs twice that.
  EXPECT_TRUE(CheckJob(Job(uint64_t{1} << 21), 0, 2, 1, options).ok());
  const absl::Status s = CheckJob(Job(uint64_t{1} << 21), 0, 1, 1, options);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("table 'w'"));
  EXPECT_THAT(s.message(), HasSubstr("memory_budget_bytes"));
}

TEST(CheckJobTest, AChunkLargerThanTheLargestMessageIsRefused) {
  ServerOptions options;
  options.max_message_bytes = 1024;
  const absl::Status s = CheckJob(Job(4096), 0, 1, 1, options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("max_message_bytes 1024"));
}

TEST(StartChecksTest, HumanBytesAndAdvertise) {
  EXPECT_EQ(HumanBytes(512), "512 bytes");
  EXPECT_EQ(HumanBytes(uint64_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(Advertise("tcp://0.0.0.0:7001", "10.1.2.3"), "tcp://10.1.2.3:7001");
  EXPECT_EQ(Advertise("tcp://0.0.0.0:7001", ""), "tcp://0.0.0.0:7001");
  EXPECT_EQ(Advertise("ipc:///tmp/x", "h"), "ipc:///tmp/x");
}

}  // namespace
}  // namespace kairos::internal
