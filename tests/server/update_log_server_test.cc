// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A server's update log through the server itself (FakeServerJob: no socket, no sleep):
// a server started again with the same state directory and the same job replays what it
// had taken, including a BSP round still open; a request its worker sends again after the
// restart is answered without being applied twice; another job's log is not replayed; a
// corrupt log fails the start by name.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/server.h"
#include "tests/common/scratch_dir.h"
#include "tests/server/fake_server_job.h"
#include "fakes/fake_transport.h"

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

FakeJobOptions Job(const std::string& policy) { return testing::SmallSgdJob(policy); }

std::vector<float> Values(const Buffer& b) { return {b.span().begin(), b.span().end()}; }

class UpdateLogServerTest : public ::testing::Test {
 protected:

  ServerOptions Options() const {
    ServerOptions so = testing::InlineApply();
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

  kairos::testing::ScratchDir scratch_{"kairos_ulog_server_"};
  const fs::path dir_ = scratch_.path();
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

TEST_F(UpdateLogServerTest, RequestsBeforeTheStartAreLeftForTheWorkersToSendAgain) {
  // A restarted server at its predecessor's address gets what the workers had queued for
  // it before it has its shard: no answer (the workers send it all again once the
  // coordinator says the server is back), where a server without a state directory
  // answers "not started".
  FakeServerJob job(Job("asp"), Options());
  uint64_t early_id = 0;
  ASSERT_TRUE(job.Start([&](wire::Start& s) {
                   s.set_job_id(kJobId);
                   Message early = job.Push(0, 0, 0, {1, 1, 1, 1}, 0);
                   early_id = early.header.request_id();
                   EXPECT_TRUE(job.FromWorker(0, std::move(early)).ok());
                   for (const FakeTransport::Sent& sent : job.transport().TakeSent()) {
                     EXPECT_NE(sent.message.header.request_id(), early_id);
                   }
                 })
                  .ok());
  EXPECT_EQ(job.server().stats().refused.not_started, 1u);
  job.transport().ClearSent();
  EXPECT_THAT(Pull(job, 0, 0), ElementsAre(0, 0, 0, 0));  // nothing of it was applied
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
    // The magic and the header record take 48 bytes; three push records of one size follow.
    // A byte of the first one's values (its last bytes) changes; two more records follow it.
    const auto record = static_cast<std::streamoff>((fs::file_size(log) - 48) / 3);
    std::fstream f(log, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(48 + record - 2);
    f.put('\x7f');
  }
  FakeServerJob again(Job("asp"), Options());
  const absl::Status started = StartAs(again, kJobId);
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(started.message(), HasSubstr("shard-00000.kul"));
  EXPECT_THAT(started.message(), HasSubstr("checksum"));
}

// Runs the server's posted work until its update log has written `n` bases: the snapshot
// is written on a thread of its own, which posts its end, so this waits for each post (at
// most 30 s in all) and runs it. False when no post came in time.
bool WaitForRebases(FakeServerJob& job, uint64_t n) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (job.server().stats().log_rebases < n) {
    if (!job.transport().AwaitPosted(deadline - absl::Now())) return false;
    job.transport().RunPosted();
  }
  return true;
}

std::vector<std::string> Files(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_F(UpdateLogServerTest, BasesKeepTheLogShortAndARestartStartsFromTheNewest) {
  ServerOptions o = Options();
  o.log_rebase_bytes = 1;  // a new base at every chance
  Message first;
  {
    FakeServerJob job(Job("asp"), o);
    ASSERT_TRUE(StartAs(job, kJobId).ok());
    first = job.Push(0, 0, 0, {1, 2, 3, 4}, 0);
    ASSERT_TRUE(job.FromWorker(0, first).ok());
    ASSERT_TRUE(WaitForRebases(job, 1));
    EXPECT_EQ(Files(dir_), (std::vector<std::string>{"base-00000.000001",
                                                     "shard-00000.000001.kul"}));
    ASSERT_TRUE(job.FromWorker(1, job.Push(1, 0, 0, {10, 20, 30, 40}, 0)).ok());
    ASSERT_TRUE(WaitForRebases(job, 2));
    EXPECT_EQ(Files(dir_), (std::vector<std::string>{"base-00000.000002",
                                                     "shard-00000.000002.kul"}));
  }
  FakeServerJob again(Job("asp"), o);
  ASSERT_TRUE(StartAs(again, kJobId).ok());
  EXPECT_EQ(again.server().stats().log_replayed, 0u);  // all of it is in the base
  // Sent again by its worker: taken before the base, answered, not applied again.
  ASSERT_TRUE(again.FromWorker(0, first).ok());
  std::vector<FakeTransport::Sent> sent = again.transport().TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].message.header.kind(), wire::PUSH_REPLY);
  EXPECT_EQ(again.server().stats().retries_answered, 1u);
  EXPECT_THAT(Pull(again, 0, 0), ElementsAre(-11, -22, -33, -44));
}

TEST_F(UpdateLogServerTest, ARestartReplaysWhatFollowsTheBaseOnTopOfIt) {
  ServerOptions o = Options();
  o.log_rebase_bytes = 1;
  {
    FakeServerJob job(Job("bsp"), o);
    ASSERT_TRUE(StartAs(job, kJobId).ok());
    for (int rank = 0; rank < 2; ++rank) {
      ASSERT_TRUE(job.FromWorker(rank, job.Push(rank, 0, 0, {2.0f + 2 * rank, 2.0f + 2 * rank,
                                                              2.0f + 2 * rank, 2.0f + 2 * rank},
                                                0))
                      .ok());
    }
    for (int rank = 0; rank < 2; ++rank) {
      ASSERT_TRUE(job.FromWorker(rank, job.Request(wire::CLOCK, rank, 0, 0, 0, 1)).ok());
    }
    ASSERT_TRUE(WaitForRebases(job, 1));  // after round 0, at clock 1
    // Round 1 opens: no base while it is open, so the restart replays this push.
    Message push = job.Push(0, 0, 0, {6, 6, 6, 6}, 1);
    ASSERT_TRUE(job.FromWorker(0, std::move(push)).ok());
    job.transport().RunPosted();
    EXPECT_EQ(job.server().stats().log_rebases, 1u);
  }
  FakeServerJob again(Job("bsp"), o);
  ASSERT_TRUE(StartAs(again, kJobId).ok());
  EXPECT_EQ(again.server().stats().log_replayed, 1u);
  Message push = again.Push(1, 0, 0, {2, 2, 2, 2}, 1);
  push.header.set_request_id(900);
  ASSERT_TRUE(again.FromWorker(1, std::move(push)).ok());
  for (int rank = 0; rank < 2; ++rank) {
    Message clock = again.Request(wire::CLOCK, rank, 0, 0, 0, 2);
    clock.header.set_request_id(910 + static_cast<uint64_t>(rank));
    ASSERT_TRUE(again.FromWorker(rank, std::move(clock)).ok());
  }
  again.transport().ClearSent();
  // Round 0's average (3) from the base, round 1's (4) from the replay and the new push.
  EXPECT_THAT(Pull(again, 0, 2), ElementsAre(-7, -7, -7, -7));
}

TEST_F(UpdateLogServerTest, ABaseNotWrittenBeforeTheCrashFallsBackToTheOneBefore) {
  ServerOptions o = Options();
  o.log_rebase_bytes = 1;
  {
    FakeServerJob job(Job("asp"), o);
    ASSERT_TRUE(StartAs(job, kJobId).ok());
    ASSERT_TRUE(job.FromWorker(0, job.Push(0, 0, 0, {1, 2, 3, 4}, 0)).ok());
    ASSERT_TRUE(WaitForRebases(job, 1));
    // The second base is started but the server ends before it learns it was written:
    // the segments before it stay.
    ASSERT_TRUE(job.FromWorker(0, job.Push(0, 0, 0, {10, 20, 30, 40}, 0)).ok());
  }
  EXPECT_EQ(Files(dir_), (std::vector<std::string>{"base-00000.000001", "base-00000.000002",
                                                   "shard-00000.000001.kul",
                                                   "shard-00000.000002.kul"}));
  fs::remove_all(dir_ / "base-00000.000002");  // as if the crash came before it was written
  FakeServerJob again(Job("asp"), o);
  ASSERT_TRUE(StartAs(again, kJobId).ok());
  EXPECT_EQ(again.server().stats().log_replayed, 1u);  // the second push, after base 1
  again.transport().ClearSent();
  EXPECT_THAT(Pull(again, 1, 0), ElementsAre(-11, -22, -33, -44));
}

TEST_F(UpdateLogServerTest, NoBaseIsTakenWhileABspRoundIsOpen) {
  ServerOptions o = Options();
  o.log_rebase_bytes = 1;
  FakeServerJob job(Job("bsp"), o);
  ASSERT_TRUE(StartAs(job, kJobId).ok());
  ASSERT_TRUE(job.FromWorker(0, job.Push(0, 0, 0, {2, 2, 2, 2}, 0)).ok());
  ASSERT_TRUE(job.FromWorker(0, job.Request(wire::CLOCK, 0, 0, 0, 0, 1)).ok());
  ASSERT_TRUE(job.FromWorker(1, job.Push(1, 0, 0, {4, 4, 4, 4}, 0)).ok());
  job.transport().RunPosted();
  EXPECT_EQ(job.server().stats().log_rebases, 0u);  // round 0 holds worker 0's push
  EXPECT_EQ(Files(dir_), std::vector<std::string>{"shard-00000.kul"});
  ASSERT_TRUE(job.FromWorker(1, job.Request(wire::CLOCK, 1, 0, 0, 0, 1)).ok());
  ASSERT_TRUE(WaitForRebases(job, 1));  // the round is applied: nothing open
}

TEST_F(UpdateLogServerTest, APolicyWithStateOfItsOwnNeverRebases) {
  ServerOptions o = Options();
  o.log_rebase_bytes = 1;
  FakeServerJob job(Job("vsgd"), o);
  ASSERT_TRUE(StartAs(job, kJobId).ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(job.FromWorker(0, job.Push(0, 0, 0, {1, 1, 1, 1}, 0)).ok());
  }
  job.transport().RunPosted();
  EXPECT_EQ(job.server().stats().log_rebases, 0u);
  EXPECT_EQ(Files(dir_), std::vector<std::string>{"shard-00000.kul"});
}

}  // namespace
}  // namespace kairos
