// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The coordinator's state file (src/coordinator/state_file.h): what is written reads back,
// a write replaces the file whole, and a damaged file is refused naming it.

#include "coordinator/state_file.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/scratch_dir.h"

namespace kairos::internal {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

wire::CoordinatorState State(int workers) {
  wire::CoordinatorState s;
  s.set_job_id(0x1234567890abcdefULL);
  s.set_num_servers(1);
  s.set_num_workers(workers);
  s.set_endpoint("tcp://127.0.0.1:7000");
  s.set_phase(2);
  s.set_next_node_id(static_cast<uint32_t>(workers) + 2);
  wire::StateNode* server = s.add_nodes();
  server->set_node_id(1);
  server->set_role(wire::SERVER);
  server->set_endpoint("tcp://127.0.0.1:7001");
  server->set_current(true);
  for (int r = 0; r < workers; ++r) {
    wire::StateNode* w = s.add_nodes();
    w->set_node_id(static_cast<uint32_t>(r) + 2);
    w->set_role(wire::WORKER);
    w->set_rank(r);
    w->set_token_hi(7);
    w->set_token_lo(static_cast<uint64_t>(r));
    w->set_incarnation(99);
    w->set_released_barrier(41);
    w->set_current(true);
  }
  return s;
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(CoordinatorStateFileTest, NoFileIsNoState) {
  testing::UniqueTempDir dir("kairos-coordinator-state-");
  absl::StatusOr<std::optional<wire::CoordinatorState>> read =
      ReadCoordinatorState(Env::Default(), dir.path());
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_FALSE(read->has_value());
}

TEST(CoordinatorStateFileTest, WhatIsWrittenReadsBackAndAWriteReplacesItWhole) {
  testing::UniqueTempDir dir("kairos-coordinator-state-");
  ASSERT_TRUE(WriteCoordinatorState(Env::Default(), dir.path(), State(3)).ok());
  ASSERT_TRUE(WriteCoordinatorState(Env::Default(), dir.path(), State(2)).ok());
  absl::StatusOr<std::optional<wire::CoordinatorState>> read =
      ReadCoordinatorState(Env::Default(), dir.path());
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((*read)->SerializeAsString(), State(2).SerializeAsString());
  EXPECT_FALSE(fs::exists(dir.path() + "/coordinator.state.tmp"));
  // It holds the workers' credentials: its owner's alone.
  EXPECT_EQ(fs::status(dir.path() + "/coordinator.state").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
}

TEST(CoordinatorStateFileTest, ADamagedFileIsRefusedNamingIt) {
  testing::UniqueTempDir dir("kairos-coordinator-state-");
  ASSERT_TRUE(WriteCoordinatorState(Env::Default(), dir.path(), State(3)).ok());
  const std::string path = dir.path() + "/coordinator.state";
  std::string bytes = Read(path);
  // Positive control: the file as written reads.
  ASSERT_TRUE(ReadCoordinatorState(Env::Default(), dir.path()).ok());
  bytes[bytes.size() - 5] ^= 0x20;  // inside the body: the checksum no longer matches
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  absl::StatusOr<std::optional<wire::CoordinatorState>> read =
      ReadCoordinatorState(Env::Default(), dir.path());
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read.status().message(), HasSubstr(path));
  EXPECT_THAT(read.status().message(), HasSubstr("checksum"));
}

TEST(CoordinatorStateFileTest, AFileOfAnotherKindIsRefused) {
  testing::UniqueTempDir dir("kairos-coordinator-state-");
  std::ofstream(dir.path() + "/coordinator.state", std::ios::binary) << "KULOG002 and the rest";
  absl::StatusOr<std::optional<wire::CoordinatorState>> read =
      ReadCoordinatorState(Env::Default(), dir.path());
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read.status().message(), HasSubstr("coordinator state"));
}

}  // namespace
}  // namespace kairos::internal
