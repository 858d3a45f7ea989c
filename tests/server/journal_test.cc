// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Journal alone, over a host of the test's own (no engine, no transport): what it logs
// comes back at a restart in order with its payloads; the ids the replay took are answered
// once; a rejoin forgets them; group commit runs the engine's parts after one shared sync;
// another job's log is not replayed; a base starts a new segment, drops the old one, and a
// restart loads it. Files are real, in a scratch directory; the I/O thread is a PostQueue.

#include "server/journal.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/scratch_dir.h"
#include "tests/server/post_queue.h"

namespace kairos::internal {
namespace {

using testing::PostQueue;
using testing::ScratchDir;

constexpr int kWorkers = 2;
const LogHeader kHeader{0xabcdef, /*shard=*/0, /*num_shards=*/1, kWorkers};

class FakeHost : public JournalHost {
 public:
  explicit FakeHost(PostQueue* queue) : queue_(queue) {}

  void PostToNode(std::function<void()> task) override { queue_->Post(std::move(task)); }
  void JournalFailed(absl::Status status) override { failed.push_back(status); }
  // Takes every request id as new.
  uint64_t Replay(LogRecord record) override {
    wire::Header h;
    const bool request = record.type == LogRecord::Type::kRequest;
    if (request) {
      EXPECT_TRUE(h.ParseFromString(record.header));
    }
    replayed.push_back(std::move(record));
    return request ? h.request_id() : 0;
  }
  bool CanRebase() override { return can_rebase; }
  JournalBase BaseState() override { return base; }
  int64_t SnapshotClock() override { return 5; }
  void Snapshot(std::function<void(std::shared_ptr<ShardSnapshot>)> done) override {
    auto s = std::make_shared<ShardSnapshot>();
    s->clock = 5;
    done(std::move(s));
  }
  absl::Status LoadBase(const std::string& path, const JournalBase& b) override {
    loaded_path = path;
    loaded = b;
    return absl::OkStatus();
  }

  PostQueue* queue_;
  std::vector<absl::Status> failed;
  std::vector<LogRecord> replayed;
  bool can_rebase = false;
  JournalBase base;
  std::string loaded_path;
  std::optional<JournalBase> loaded;
};

wire::Header Push(uint64_t id, uint64_t offset) {
  wire::Header h;
  h.set_kind(wire::PUSH);
  h.set_request_id(id);
  h.set_offset(offset);
  h.set_length(2);
  h.set_clock(3);
  h.set_payload_frames(1);
  return h;
}

class JournalTest : public ::testing::Test {
 protected:
  Journal::Options Options(LogSync sync = LogSync::kProcess) const {
    return Journal::Options{dir_.path().string(), sync, /*rebase_bytes=*/0};
  }
  std::unique_ptr<Journal> Open(Journal::Options o, FakeHost& host,
                                const LogHeader& header = kHeader) {
    auto j =
        std::make_unique<Journal>(Env::Default(), std::move(o), &host, MakeLogger(NodeOptions()));
    EXPECT_TRUE(j->Open(header, kWorkers).ok());
    return j;
  }
  // Logs a push of {a, b} and runs the engine's part (counted in `acted_`).
  void LogPush(Journal& j, int rank, uint64_t id, float a, float b) {
    j.AppendRequest(rank, Push(id, 10 * id), {Buffer::CopyOf(std::vector<float>{a, b})},
                    absl::UnixEpoch() + absl::Seconds(id));
    j.AfterLog([this] { ++acted_; });
  }

  ScratchDir dir_{"journal_"};
  PostQueue queue_;
  int acted_ = 0;
};

TEST_F(JournalTest, WithoutAStateDirectoryEveryEventIsActedOnAtOnce) {
  FakeHost host(&queue_);
  Journal::Options o = Options();
  o.state_dir.clear();
  auto j = Open(o, host);
  EXPECT_FALSE(j->enabled());
  LogPush(*j, 0, 1, 1, 2);
  EXPECT_EQ(acted_, 1);
  EXPECT_EQ(j->counters().records, 0u);
  EXPECT_FALSE(std::filesystem::exists(dir_.path()));
}

TEST_F(JournalTest, ARestartReplaysTheEventsInOrderWithTheirPayloads) {
  {
    FakeHost host(&queue_);
    auto j = Open(Options(), host);
    ASSERT_TRUE(j->enabled());
    LogPush(*j, 0, 1, 1.5f, 2.5f);
    LogPush(*j, 1, 2, 3.5f, 4.5f);
    j->AppendMembership(LogRecord::Type::kLeave, 1, /*why=*/2, 0, absl::UnixEpoch());
    j->AfterLog([this] { ++acted_; });
    EXPECT_EQ(acted_, 3);
    EXPECT_EQ(j->counters().records, 3u);
    EXPECT_TRUE(host.replayed.empty());
  }
  FakeHost host(&queue_);
  auto j = Open(Options(), host);
  ASSERT_EQ(host.replayed.size(), 3u);
  EXPECT_EQ(j->counters().replayed, 3u);
  for (int i = 0; i < 2; ++i) {
    const LogRecord& r = host.replayed[i];
    EXPECT_EQ(r.type, LogRecord::Type::kRequest);
    EXPECT_EQ(r.rank, i);
    wire::Header h;
    ASSERT_TRUE(h.ParseFromString(r.header));
    EXPECT_EQ(h.SerializeAsString(), Push(i + 1, 10 * (i + 1)).SerializeAsString());
    EXPECT_EQ(r.time, absl::UnixEpoch() + absl::Seconds(i + 1));
    ASSERT_EQ(r.payloads.size(), 1u);
    EXPECT_EQ(std::vector<float>(r.payloads[0].span().begin(), r.payloads[0].span().end()),
              (std::vector<float>{1.5f + 2 * i, 2.5f + 2 * i}));
  }
  EXPECT_EQ(host.replayed[2].type, LogRecord::Type::kLeave);
  EXPECT_EQ(host.replayed[2].why, 2);
  // The replayed ids are answered again once; others are not the replay's.
  EXPECT_TRUE(j->TakenBeforeRestart(0, 1));
  EXPECT_FALSE(j->TakenBeforeRestart(0, 1));
  EXPECT_FALSE(j->TakenBeforeRestart(0, 2));
  EXPECT_TRUE(j->TakenBeforeRestart(1, 2));
  // What is logged after the restart follows what was replayed.
  LogPush(*j, 0, 3, 0, 0);
  FakeHost again(&queue_);
  Open(Options(), again);
  EXPECT_EQ(again.replayed.size(), 4u);
}

TEST_F(JournalTest, ARejoinForgetsTheIdsTheReplayTook) {
  {
    FakeHost host(&queue_);
    auto j = Open(Options(), host);
    LogPush(*j, 1, 1, 0, 0);
    j->AppendMembership(LogRecord::Type::kRejoin, 1, 0, /*node_id=*/9, absl::UnixEpoch());
    j->AfterLog([] {});
  }
  FakeHost host(&queue_);
  auto j = Open(Options(), host);
  ASSERT_EQ(host.replayed.size(), 2u);
  EXPECT_EQ(host.replayed[1].node_id, 9u);
  EXPECT_FALSE(j->TakenBeforeRestart(1, 1));
}

TEST_F(JournalTest, GroupCommitActsAfterOneSharedSync) {
  FakeHost host(&queue_);
  auto j = Open(Options(LogSync::kMachine), host);
  const uint64_t syncs_at_open = j->counters().syncs;
  LogPush(*j, 0, 1, 0, 0);
  LogPush(*j, 1, 2, 0, 0);
  EXPECT_EQ(acted_, 0);
  ASSERT_EQ(queue_.size(), 1u);  // one flush posted for both
  ASSERT_TRUE(queue_.RunNext());
  EXPECT_EQ(acted_, 2);
  EXPECT_EQ(j->counters().commits, 1u);
  EXPECT_EQ(j->counters().syncs, syncs_at_open + 1);
  EXPECT_EQ(j->counters().records, 2u);
}

TEST_F(JournalTest, AnotherJobsLogIsNotReplayed) {
  {
    FakeHost host(&queue_);
    auto j = Open(Options(), host);
    LogPush(*j, 0, 1, 0, 0);
  }
  FakeHost host(&queue_);
  LogHeader other = kHeader;
  other.job_id += 1;
  auto j = Open(Options(), host, other);
  EXPECT_TRUE(host.replayed.empty());
  EXPECT_EQ(j->counters().replayed, 0u);
  EXPECT_FALSE(j->TakenBeforeRestart(0, 1));
}

TEST_F(JournalTest, ABaseStartsASegmentDropsTheOldAndARestartLoadsIt) {
  {
    FakeHost host(&queue_);
    host.can_rebase = true;
    host.base.clocks.clocks = {4, 5};
    host.base.clocks.states = {policy::MemberState::kActive, policy::MemberState::kActive};
    host.base.windows.resize(kWorkers);
    ASSERT_EQ(host.base.windows[1].Take(7), RequestWindow::Verdict::kNew);
    Journal::Options o = Options();
    o.rebase_bytes = 1;
    auto j = Open(o, host);
    LogPush(*j, 0, 1, 0, 0);        // commits, then starts segment 1 and its snapshot
    ASSERT_TRUE(queue_.RunNext());  // the snapshot reaches the I/O thread: the writer starts
    ASSERT_TRUE(queue_.RunNext());  // written: segment 0 goes
    EXPECT_EQ(j->counters().rebases, 1u);
    EXPECT_EQ(UpdateLogSegments(Env::Default(), dir_.path().string(), 0).size(), 1u);
    host.can_rebase = false;
    LogPush(*j, 1, 8, 0, 0);  // in segment 1, after its base
  }
  FakeHost host(&queue_);
  auto j = Open(Options(), host);
  ASSERT_TRUE(host.loaded.has_value());
  EXPECT_TRUE(std::filesystem::exists(host.loaded_path));
  EXPECT_EQ(host.loaded->clocks.clocks, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(host.loaded->windows[1].highest(), 7u);
  ASSERT_EQ(host.replayed.size(), 1u);  // only what follows the base
  wire::Header after_base;
  ASSERT_TRUE(after_base.ParseFromString(host.replayed[0].header));
  EXPECT_EQ(after_base.request_id(), 8u);
  // Ids up to the base's highest were taken before it.
  EXPECT_TRUE(j->TakenBeforeRestart(1, 7));
  EXPECT_TRUE(j->TakenBeforeRestart(1, 3));
  EXPECT_FALSE(j->TakenBeforeRestart(0, 3));
}

TEST_F(JournalTest, ALogThatCannotBeReadFailsTheOpenByName) {
  std::filesystem::create_directories(dir_.path());
  const std::string path = (dir_.path() / UpdateLogName(0)).string();
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("not a log at all, long enough to hold a header record", f);
    std::fclose(f);
  }
  FakeHost host(&queue_);
  Journal j(Env::Default(), Options(), &host, MakeLogger(NodeOptions()));
  const absl::Status s = j.Open(kHeader, kWorkers);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), ::testing::HasSubstr(path));
}

}  // namespace
}  // namespace kairos::internal
