// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A server's update log through the server itself (FakeServerJob: no socket, no sleep):
// a server started again with the same state directory and the same job replays what it
// had taken, including a BSP round still open; a request its worker sends again after the
// restart is answered without being applied twice; another job's log is not replayed; a
// corrupt log fails the start by name.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/server.h"
#include "tests/server/fake_server_job.h"
#include "transport/fake_transport.h"

namespace kairos {
namespace {

namespace fs = std::filesystem;
using internal::FakeTransport;
using internal::Message;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::FakeJobOptions;
using testing::FakeServerJob;

constexpr uint64_t kJobId = 0x5eed5eed00001234ull;

FakeJobOptions Job(const std::string& policy) {
  FakeJobOptions o;
  o.job.policy = policy;
  o.job.chunk_elements = 4;
  o.job.tables.push_back({"w", 8, Initializer::Zeros(), {"sgd", 1.0f}});
  o.num_workers = 2;
  return o;
}

std::vector<float> Values(const Buffer& b) { return {b.span().begin(), b.span().end()}; }

class UpdateLogServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("kairos_ulog_server_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ServerOptions Options() const {
    ServerOptions so;
    so.apply_threads = 1;
    so.inline_apply_bytes = int64_t{1} << 30;
    so.state_dir = dir_.string();
    return so;
  }

  static absl::Status StartAs(FakeServerJob& job, uint64_t job_id) {
    return job.Start([job_id](wire::Start& s) { s.set_job_id(job_id); });
  }

  // Worker `rank`'s pull of [0, 4) at `clock`: the values it got.
  static std::vector<float> Pull(FakeServerJob& job, int rank, int64_t clock) {
    Message pull = job.Request(wire::PULL, rank, 0, 0, 4, clock);
    static uint64_t next_id = 1000;  // above every id the test's pushes take
    pull.header.set_request_id(next_id++);
    EXPECT_TRUE(job.FromWorker(rank, std::move(pull)).ok());
    std::vector<FakeTransport::Sent> sent = job.transport().TakeSent();
    if (sent.size() != 1 || sent[0].message.header.kind() != wire::PULL_REPLY) {
      ADD_FAILURE() << "no pull reply (" << sent.size() << " messages)";
      return {};
    }
    return Values(sent[0].message.payloads[0]);
  }

  fs::path dir_;
};

TEST_F(UpdateLogServerTest, ARetriedPushIsAnsweredAndAppliedOnce) {
  Message second;
  {
    FakeServerJob job(Job("asp"), Options());
    ASSERT_TRUE(StartAs(job, kJobId).ok());
    ASSERT_TRUE(job.FromWorker(0, job.Push(0, 0, 0, {1, 2, 3, 4}, 0)).ok());
    second = job.Push(0, 0, 0, {10, 20, 30, 40}, 0);
    ASSERT_TRUE(job.FromWorker(0, second).ok());
    ASSERT_TRUE(job.FromWorker(0, job.Request(wire::CLOCK, 0, 0, 0, 0, 1)).ok());
    EXPECT_EQ(job.transport().TakeSent().size(), 2u);  // the two PUSH_REPLYs
    EXPECT_EQ(job.server().stats().log_records, 3u);
  }  // the server is gone; its worker did not see the second push's answer

  FakeServerJob again(Job("asp"), Options());
  ASSERT_TRUE(StartAs(again, kJobId).ok());
  EXPECT_EQ(again.server().stats().log_replayed, 3u);
  ASSERT_TRUE(again.FromWorker(0, second).ok());  // sent again, same request id
  std::vector<FakeTransport::Sent> sent = again.transport().TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].message.header.kind(), wire::PUSH_REPLY);
  EXPECT_EQ(sent[0].message.header.request_id(), second.header.request_id());
  EXPECT_TRUE(sent[0].message.header.status().message().empty());
  EXPECT_EQ(again.server().stats().retries_answered, 1u);
  EXPECT_THAT(Pull(again, 1, 0), ElementsAre(-11, -22, -33, -44));  // each push once
  // A third delivery is a plain duplicate: dropped, counted, not applied.
  ASSERT_TRUE(again.FromWorker(0, second).ok());
  EXPECT_EQ(again.transport().TakeSent().size(), 0u);
  EXPECT_EQ(again.server().stats().refused.duplicates, 1u);
  EXPECT_THAT(Pull(again, 1, 0), ElementsAre(-11, -22, -33, -44));
}

TEST_F(UpdateLogServerTest, AnOpenBspRoundSurvivesTheRestart) {
  {
    FakeServerJob job(Job("bsp"), Options());
    ASSERT_TRUE(StartAs(job, kJobId).ok());
    ASSERT_TRUE(job.FromWorker(0, job.Push(0, 0, 0, {2, 2, 2, 2}, 0)).ok());
    ASSERT_TRUE(job.FromWorker(0, job.Request(wire::CLOCK, 0, 0, 0, 0, 1)).ok());
  }
  FakeServerJob again(Job("bsp"), Options());
  ASSERT_TRUE(StartAs(again, kJobId).ok());
  Message push = again.Push(1, 0, 0, {4, 4, 4, 4}, 0);
  push.header.set_request_id(77);
  ASSERT_TRUE(again.FromWorker(1, std::move(push)).ok());
  ASSERT_TRUE(again.FromWorker(1, again.Request(wire::CLOCK, 1, 0, 0, 0, 1)).ok());
  again.transport().ClearSent();
  // Worker 0's push of round 0 came back with the replay: the round is the average of both.
  EXPECT_THAT(Pull(again, 0, 1), ElementsAre(-3, -3, -3, -3));
}

TEST_F(UpdateLogServerTest, AnotherJobsLogIsNotReplayed) {
  {
    FakeServerJob job(Job("asp"), Options());
    ASSERT_TRUE(StartAs(job, kJobId).ok());
    ASSERT_TRUE(job.FromWorker(0, job.Push(0, 0, 0, {1, 1, 1, 1}, 0)).ok());
  }
  FakeServerJob other(Job("asp"), Options());
  ASSERT_TRUE(StartAs(other, kJobId + 1).ok());
  EXPECT_EQ(other.server().stats().log_replayed, 0u);
  other.transport().ClearSent();
  EXPECT_THAT(Pull(other, 0, 0), ElementsAre(0, 0, 0, 0));
}

TEST_F(UpdateLogServerTest, ACorruptLogFailsTheStartByName) {
  {
    FakeServerJob job(Job("asp"), Options());
    ASSERT_TRUE(StartAs(job, kJobId).ok());
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(job.FromWorker(0, job.Push(0, 0, 0, {1, 1, 1, 1}, 0)).ok());
    }
  }
  const fs::path log = dir_ / "shard-00000.kul";
  ASSERT_TRUE(fs::exists(log));
  {
    std::fstream f(log, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(80);  // inside the first push's record; two more follow it
    f.put('\x7f');
  }
  FakeServerJob again(Job("asp"), Options());
  const absl::Status started = StartAs(again, kJobId);
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(started.message(), HasSubstr("shard-00000.kul"));
  EXPECT_THAT(started.message(), HasSubstr("checksum"));
}

}  // namespace
}  // namespace kairos
