// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Checkpointer alone: its schedule (every N clocks, every interval, the last one), one
// checkpoint at a time with its waiters, skipped periodic ones, the end that waits for
// the one being written, and which checkpoints are deltas of which. The snapshots are empty shards
// of the test's own; the files are real (engine/checkpoint.h), in a scratch directory; the I/O
// thread is a PostQueue.

#include "server/checkpointer.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/testing/faulty_env.h"
#include "tests/common/scratch_dir.h"
#include "tests/server/post_queue.h"

namespace kairos::internal {
namespace {

using ::testing::HasSubstr;
using testing::PostQueue;
using testing::ScratchDir;

class CheckpointerTest : public ::testing::Test {
 protected:
  Checkpointer::Options Options(int64_t every_clocks = 0) const {
    Checkpointer::Options o;
    o.dir = dir_.path().string();
    o.sync = false;
    o.every_clocks = every_clocks;
    return o;
  }

  std::unique_ptr<Checkpointer> Make(Checkpointer::Options o, const Env& env = Env::Default()) {
    return std::make_unique<Checkpointer>(env, std::move(o), queue_.poster(),
                                          MakeLogger(NodeOptions()));
  }

  // Begins `c` with snapshots of the clock in `clock_` at the time each is taken.
  void Begin(Checkpointer& c, int64_t clock = 0, absl::Time now = absl::UnixEpoch()) {
    c.Begin(
        0,
        [this](int64_t delta_of, std::function<void(std::shared_ptr<ShardSnapshot>)> done) {
          ++snapshots_;
          asked_.push_back(delta_of);
          auto s = std::make_shared<ShardSnapshot>();
          s->clock = clock_;
          // As the engine does: a delta only of an earlier clock.
          s->delta_of = delta_of < clock_ ? delta_of : -1;
          done(std::move(s));
        },
        clock, now);
  }

  // Runs the posted tasks of one checkpoint: the start of its writer, then its result.
  void FinishOne() {
    ASSERT_TRUE(queue_.RunNext());  // Write: starts the writer thread
    ASSERT_TRUE(queue_.RunNext());  // Written: posted by the writer when the file is there
  }

  ScratchDir dir_{"checkpointer_"};
  PostQueue queue_;
  int snapshots_ = 0;
  int64_t clock_ = 0;
  std::vector<int64_t> asked_;  // each snapshot's delta_of
};

TEST_F(CheckpointerTest, WithoutADirectoryOrBeforeTheJobARequestSaysWhy) {
  Checkpointer::Options none = Options();
  none.dir.clear();
  auto c = Make(none);
  Begin(*c);
  absl::StatusOr<std::string> got = "unset";
  c->Request([&got](absl::StatusOr<std::string> p) { got = std::move(p); });
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(got.status().message(), HasSubstr("no checkpoint directory"));

  auto early = Make(Options());
  got = "unset";
  early->Request([&got](absl::StatusOr<std::string> p) { got = std::move(p); });
  EXPECT_THAT(got.status().message(), HasSubstr("the job has not started"));
  EXPECT_EQ(snapshots_, 0);
}

TEST_F(CheckpointerTest, ARequestWritesTheSnapshotAndTellsItsPath) {
  auto c = Make(Options());
  Begin(*c);
  clock_ = 7;
  absl::StatusOr<std::string> got;
  c->Request([&got](absl::StatusOr<std::string> p) { got = std::move(p); });
  EXPECT_TRUE(c->busy());
  FinishOne();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(std::filesystem::exists(*got));
  EXPECT_THAT(*got, HasSubstr(CheckpointDirName(7)));
  EXPECT_FALSE(c->busy());
  EXPECT_EQ(c->counters().written, 1u);
  EXPECT_EQ(c->counters().last_clock, 7);
}

// The files go through the server's Env: a rename that fails leaves no checkpoint under
// the final name, is the waiter's error naming the file, and is counted; the next one,
// once the fault is gone, is written (the positive control).
TEST_F(CheckpointerTest, AFailedRenameIsTheRequestsErrorAndLeavesNoCheckpoint) {
  testing::FaultyEnv env;
  env.Add({.op = testing::FileOp::kRename, .path_contains = ".kcp", .times = 1});
  auto c = Make(Options(), env);
  Begin(*c);
  clock_ = 3;
  absl::StatusOr<std::string> got;
  c->Request([&got](absl::StatusOr<std::string> p) { got = std::move(p); });
  FinishOne();
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr(CheckpointDirName(3)));
  EXPECT_THAT(got.status().message(), HasSubstr("injected fault"));
  for (const auto& e : std::filesystem::directory_iterator(dir_.path() / CheckpointDirName(3))) {
    EXPECT_NE(e.path().extension(), ".kcp") << e.path();  // only the .tmp file
  }
  EXPECT_EQ(c->counters().failed, 1u);
  EXPECT_EQ(c->counters().written, 0u);

  clock_ = 4;
  c->Request([&got](absl::StatusOr<std::string> p) { got = std::move(p); });
  FinishOne();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(std::filesystem::exists(*got));
  EXPECT_EQ(c->counters().written, 1u);
  EXPECT_EQ(env.failures(testing::FileOp::kRename), 1);
  EXPECT_EQ(env.calls(testing::FileOp::kRename), 2);
}

TEST_F(CheckpointerTest, OneAtATimeWaitersShareItAndPeriodicOnesAreSkipped) {
  auto c = Make(Options());
  Begin(*c);
  std::vector<std::string> paths;
  auto keep = [&paths](absl::StatusOr<std::string> p) { paths.push_back(p.value()); };
  c->Request(keep);
  c->Request(keep);  // waits for the first
  c->Request({});    // periodic: skipped
  EXPECT_EQ(snapshots_, 1);
  FinishOne();
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0], paths[1]);
  EXPECT_EQ(c->counters().skipped, 1u);
  EXPECT_EQ(c->counters().written, 1u);
  EXPECT_EQ(queue_.size(), 0u);
}

TEST_F(CheckpointerTest, EveryNClocksOfTheSlowestWorker) {
  auto c = Make(Options(/*every_clocks=*/3));
  Begin(*c, /*clock=*/1);
  std::vector<int> taken_at;
  for (int64_t clock = 1; clock <= 10; ++clock) {
    const int before = snapshots_;
    c->AfterProgress(clock, /*all_left=*/false);
    if (snapshots_ > before) {
      taken_at.push_back(static_cast<int>(clock));
      FinishOne();
    }
  }
  EXPECT_EQ(taken_at, (std::vector<int>{3, 6, 9}));
}

TEST_F(CheckpointerTest, EveryIntervalAtTheTicks) {
  Checkpointer::Options o = Options();
  o.every = absl::Seconds(10);
  auto c = Make(o);
  const absl::Time t0 = absl::UnixEpoch() + absl::Hours(1);
  c->OnTick(t0 + absl::Seconds(30));  // before Begin: nothing
  EXPECT_EQ(snapshots_, 0);
  Begin(*c, 0, t0);
  c->OnTick(t0 + absl::Seconds(9));
  EXPECT_EQ(snapshots_, 0);
  c->OnTick(t0 + absl::Seconds(10));
  EXPECT_EQ(snapshots_, 1);
  FinishOne();
  c->OnTick(t0 + absl::Seconds(19));
  EXPECT_EQ(snapshots_, 1);
  c->OnTick(t0 + absl::Seconds(20));
  EXPECT_EQ(snapshots_, 2);
  FinishOne();
}

TEST_F(CheckpointerTest, TheLastOneWhenNoWorkerIsLeftIsTakenOnce) {
  auto c = Make(Options());
  Begin(*c);
  c->AfterProgress(4, /*all_left=*/true);
  EXPECT_EQ(snapshots_, 1);
  FinishOne();
  c->AfterProgress(4, /*all_left=*/true);
  bool ended = false;
  c->Finish([&ended] { ended = true; });  // the last one was taken: ends at once
  EXPECT_TRUE(ended);
  EXPECT_EQ(snapshots_, 1);
}

TEST_F(CheckpointerTest, TheEndWaitsForTheOneBeingWrittenAndTheLastOneAfterIt) {
  auto c = Make(Options());
  Begin(*c);
  c->Request({});
  bool ended = false;
  c->Finish([&ended] { ended = true; });
  EXPECT_FALSE(ended);
  FinishOne();  // the one being written; the last one starts
  EXPECT_FALSE(ended);
  EXPECT_EQ(snapshots_, 2);
  FinishOne();
  EXPECT_TRUE(ended);
  EXPECT_EQ(c->counters().written, 2u);
}

TEST_F(CheckpointerTest, WithoutTheLastOneTheEndIsAtOnce) {
  Checkpointer::Options o = Options();
  o.at_end = false;
  auto c = Make(o);
  Begin(*c);
  bool ended = false;
  c->Finish([&ended] { ended = true; });
  EXPECT_TRUE(ended);
  EXPECT_EQ(snapshots_, 0);
}

TEST_F(CheckpointerTest, AFailedWriteIsCountedAndTold) {
  Checkpointer::Options o = Options();
  o.dir = (dir_.path() / "file").string();
  std::filesystem::create_directories(dir_.path());
  {
    std::FILE* f = std::fopen(o.dir.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  auto c = Make(o);
  Begin(*c);
  absl::StatusOr<std::string> got;
  c->Request([&got](absl::StatusOr<std::string> p) { got = std::move(p); });
  FinishOne();
  EXPECT_FALSE(got.ok());
  EXPECT_EQ(c->counters().failed, 1u);
  EXPECT_EQ(c->counters().written, 0u);
  EXPECT_EQ(c->counters().last_clock, -1);
}

}  // namespace
}  // namespace kairos::internal

namespace kairos::internal {
namespace {

// With deltas = 2: whole, delta, delta, whole, ...; each delta of the one written just
// before; a failed write makes the next whole; a delta the snapshot took whole (no clock
// since its parent) starts the count again.
TEST_F(CheckpointerTest, DeltasChainToTheOneBeforeUntilTheNextWholeOne) {
  Checkpointer::Options o = Options();
  o.deltas = 2;
  auto c = Make(o);
  Begin(*c);
  // clock-5's directory cannot be made: a file has its name.
  std::filesystem::create_directories(dir_.path());
  std::FILE* f = std::fopen((dir_.path() / CheckpointDirName(5)).c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  for (int64_t clock : {1, 2, 3, 4, 5, 6, 7, 7, 8}) {
    clock_ = clock;
    c->Request({});
    FinishOne();
  }
  // At clocks                         1   2  3   4  5   6   7  7  8; the second 7 is taken
  // whole (no clock since its parent) and 5 fails.
  EXPECT_THAT(asked_, ::testing::ElementsAre(-1, 1, 2, -1, 4, -1, 6, 7, 7));
  EXPECT_EQ(c->counters().written, 8u);
  EXPECT_EQ(c->counters().failed, 1u);
  EXPECT_EQ(c->counters().deltas_written, 4u);  // 2, 3, the first 7, 8
}

}  // namespace
}  // namespace kairos::internal
