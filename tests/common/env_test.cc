// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the environment seam (kairos/env.h): the default environment's time, files and
// threads, ManualEnv's virtual time, and FaultyEnv's file faults (kairos/testing/).

#include "common/env.h"

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/testing/faulty_env.h"
#include "kairos/testing/manual_env.h"
#include "tests/common/scratch_dir.h"

namespace kairos::internal {
namespace {

using ::kairos::testing::FaultyEnv;
using ::kairos::testing::FileFault;
using ::kairos::testing::FileOp;
using ::kairos::testing::ManualEnv;
using ::kairos::testing::UniqueTempDir;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

absl::Status WriteFile(const Env& env, const std::string& path, absl::string_view text) {
  absl::StatusOr<std::unique_ptr<WritableFile>> f = env.NewWritableFile(path, {});
  if (!f.ok()) return f.status();
  const absl::string_view pieces[] = {text};
  if (absl::Status s = (*f)->Append(pieces); !s.ok()) return s;
  return (*f)->Close();
}

// ---- ManualEnv ---------------------------------------------------------------------------

TEST(ManualEnvTest, StartsAtUnixEpochByDefault) {
  ManualEnv env;
  EXPECT_EQ(env.Now(), absl::UnixEpoch());
  EXPECT_TRUE(env.IsVirtual());
}

TEST(ManualEnvTest, StandsStillUntilAdvanced) {
  const absl::Time start = absl::FromUnixSeconds(1000);
  ManualEnv env(start);
  EXPECT_EQ(env.Now(), start);
  env.Advance(absl::Milliseconds(250));
  EXPECT_EQ(env.Now(), start + absl::Milliseconds(250));
  env.Advance(absl::Seconds(2));
  EXPECT_EQ(env.Now(), start + absl::Milliseconds(2250));
}

TEST(ManualEnvTest, SetJumpsToAnyTimeIncludingBackwards) {
  ManualEnv env(absl::FromUnixSeconds(50));
  env.Set(absl::FromUnixSeconds(10));
  EXPECT_EQ(env.Now(), absl::FromUnixSeconds(10));
  env.Set(absl::FromUnixSeconds(99));
  EXPECT_EQ(env.Now(), absl::FromUnixSeconds(99));
}

TEST(ManualEnvTest, AdvancesFromManyThreadsAddUp) {
  ManualEnv env;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&env] {
      for (int i = 0; i < 1000; ++i) env.Advance(absl::Microseconds(1));
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(env.Now(), absl::UnixEpoch() + absl::Microseconds(4000));
}

TEST(ManualEnvTest, WatchersRunAfterEachMoveUntilUnwatched) {
  ManualEnv env(absl::FromUnixSeconds(10));
  std::vector<absl::Time> seen;
  const uint64_t id = env.Watch([&] { seen.push_back(env.Now()); });
  EXPECT_NE(id, 0u);
  env.Advance(absl::Seconds(1));
  env.Set(absl::FromUnixSeconds(5));
  env.Unwatch(id);
  env.Advance(absl::Seconds(1));
  EXPECT_EQ(seen, (std::vector<absl::Time>{absl::FromUnixSeconds(11), absl::FromUnixSeconds(5)}));
}

TEST(ManualEnvTest, FilesAreThoseOfTheEnvironmentItWraps) {
  UniqueTempDir dir("kairos-env-");
  ASSERT_TRUE(dir.ok());
  FaultyEnv faulty;
  faulty.Add({.op = FileOp::kCreate, .error = FaultyEnv::DiskFull()});
  ManualEnv env(absl::UnixEpoch(), faulty);
  EXPECT_EQ(WriteFile(env, dir / "a", "x").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(faulty.calls(FileOp::kCreate), 1);
  faulty.Clear();
  EXPECT_TRUE(WriteFile(env, dir / "a", "x").ok());  // the positive control
}

// ---- The default environment ----------------------------------------------------------------

TEST(DefaultEnvTest, ReadsTheSystemClockAndNeverCallsWatchers) {
  const Env& env = Env::Default();
  EXPECT_EQ(&env, &Env::Default());
  EXPECT_FALSE(env.IsVirtual());
  EXPECT_EQ(env.Watch([] { FAIL() << "the default environment called a watcher"; }), 0u);
  env.Unwatch(0);
  const absl::Time before = absl::Now();
  const absl::Time now = env.Now();
  EXPECT_LE(before, now);
  EXPECT_LE(now, absl::Now());
}

TEST(DefaultEnvTest, WritesAppendsAndReadsAtAnyOffset) {
  UniqueTempDir dir("kairos-env-");
  ASSERT_TRUE(dir.ok());
  const Env& env = Env::Default();
  absl::StatusOr<std::unique_ptr<WritableFile>> f = env.NewWritableFile(dir / "f", {});
  ASSERT_TRUE(f.ok()) << f.status();
  const absl::string_view pieces[] = {"hello", "", " ", "world"};
  ASSERT_TRUE((*f)->Append(pieces).ok());
  ASSERT_TRUE((*f)->Sync(/*data_only=*/true).ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(Slurp(dir / "f"), "hello world");

  absl::StatusOr<std::unique_ptr<RandomAccessFile>> r = env.NewRandomAccessFile(dir / "f");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->size(), 11u);
  char out[5];
  ASSERT_TRUE((*r)->ReadAt(6, 5, out).ok());
  EXPECT_EQ(std::string(out, 5), "world");
  EXPECT_EQ((*r)->ReadAt(8, 5, out).code(), absl::StatusCode::kOutOfRange);
}

TEST(DefaultEnvTest, ContinueCutsTheFileAndAppendsAfterTheCut) {
  UniqueTempDir dir("kairos-env-");
  ASSERT_TRUE(dir.ok());
  const Env& env = Env::Default();
  ASSERT_TRUE(WriteFile(env, dir / "f", "keep-torn").ok());
  absl::StatusOr<std::unique_ptr<WritableFile>> f =
      env.NewWritableFile(dir / "f", {.continue_at = 4});
  ASSERT_TRUE(f.ok()) << f.status();
  const absl::string_view more[] = {"+more"};
  ASSERT_TRUE((*f)->Append(more).ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(Slurp(dir / "f"), "keep+more");
  // Continuing needs the file.
  EXPECT_EQ(env.NewWritableFile(dir / "none", {.continue_at = 0}).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(DefaultEnvTest, CreateReplacesAndKeepsTheAskedPermissions) {
  UniqueTempDir dir("kairos-env-");
  ASSERT_TRUE(dir.ok());
  const Env& env = Env::Default();
  ASSERT_TRUE(WriteFile(env, dir / "f", "old and long").ok());
  absl::StatusOr<std::unique_ptr<WritableFile>> f =
      env.NewWritableFile(dir / "secret", {.permissions = 0600});
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(std::filesystem::status(dir / "secret").permissions(),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  ASSERT_TRUE(WriteFile(env, dir / "f", "new").ok());
  EXPECT_EQ(Slurp(dir / "f"), "new");
}

TEST(DefaultEnvTest, DirectoriesRenamesRemovalsAndListings) {
  UniqueTempDir dir("kairos-env-");
  ASSERT_TRUE(dir.ok());
  const Env& env = Env::Default();
  ASSERT_TRUE(env.CreateDirs(dir / "a/b/c").ok());
  ASSERT_TRUE(env.CreateDirs(dir / "a/b/c").ok());  // exists: fine
  EXPECT_TRUE(env.IsDirectory(dir / "a/b"));
  ASSERT_TRUE(WriteFile(env, dir / "a/x.tmp", "1").ok());
  ASSERT_TRUE(env.RenameFile(dir / "a/x.tmp", dir / "a/x").ok());
  EXPECT_FALSE(env.FileExists(dir / "a/x.tmp"));
  EXPECT_TRUE(env.FileExists(dir / "a/x"));
  EXPECT_FALSE(env.IsDirectory(dir / "a/x"));
  absl::StatusOr<std::vector<std::string>> names = env.GetChildren(dir / "a");
  ASSERT_TRUE(names.ok());
  EXPECT_THAT(*names, UnorderedElementsAre("b", "x"));
  EXPECT_TRUE(env.SyncDir(dir / "a").ok());

  EXPECT_TRUE(env.RemoveFile(dir / "a/x").ok());
  const absl::Status again = env.RemoveFile(dir / "a/x");
  EXPECT_EQ(again.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(again.message(), HasSubstr("remove: No such file or directory"));
  EXPECT_TRUE(env.RemoveAll(dir / "a").ok());
  EXPECT_FALSE(env.FileExists(dir / "a"));
  EXPECT_TRUE(env.RemoveAll(dir / "a").ok());  // nothing there: fine
  EXPECT_EQ(env.GetChildren(dir / "a").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(env.RenameFile(dir / "a", dir / "b").code(), absl::StatusCode::kNotFound);
}

TEST(DefaultEnvTest, SyncDirNamesWhatFailed) {
  UniqueTempDir dir("kairos-env-");
  ASSERT_TRUE(dir.ok());
  const Env& env = Env::Default();
  const absl::Status missing = env.SyncDir(dir / "none");
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("sync directory: open: No such file"));
  ASSERT_TRUE(WriteFile(env, dir / "f", "x").ok());
  const absl::Status file = env.SyncDir(dir / "f");
  EXPECT_EQ(file.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(file.message(), HasSubstr("Not a directory"));
}

TEST(DefaultEnvTest, AFullDiskIsResourceExhausted) {
  EXPECT_EQ(EnvError("write", ENOSPC).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(EnvError("write", EDQUOT).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(EnvError("open", ENOENT).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(EnvError("fsync", EIO).code(), absl::StatusCode::kInternal);
  EXPECT_EQ(EnvError("fsync", EIO).message(), "fsync: Input/output error");
}

TEST(DefaultEnvTest, StartThreadRunsTheFunctionOnANamedThread) {
  std::string name;
  std::thread t = Env::Default().StartThread("kairos-test-thread-name", [&name] {
    char buf[32] = {};
    pthread_getname_np(pthread_self(), buf, sizeof(buf));
    name = buf;
  });
  t.join();
  EXPECT_EQ(name, "kairos-test-thr");  // the kernel keeps 15 characters
}

// ---- FaultyEnv ---------------------------------------------------------------------------

TEST(FaultyEnvTest, FailsTheNamedCallsAfterSkippingAndOnlyAsManyTimes) {
  UniqueTempDir dir("kairos-env-");
  ASSERT_TRUE(dir.ok());
  FaultyEnv env;
  env.Add({.op = FileOp::kAppend,
           .path_contains = ".kul",
           .error = FaultyEnv::DiskFull(),
           .skip = 1,
           .times = 2});
  absl::StatusOr<std::unique_ptr<WritableFile>> f = env.NewWritableFile(dir / "a.kul", {});
  ASSERT_TRUE(f.ok());
  const absl::string_view x[] = {"x"};
  EXPECT_TRUE((*f)->Append(x).ok());  // skipped
  EXPECT_EQ((*f)->Append(x).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ((*f)->Append(x).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE((*f)->Append(x).ok());  // the two times are spent
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(Slurp(dir / "a.kul"), "xx");
  EXPECT_EQ(env.calls(FileOp::kAppend), 4);
  EXPECT_EQ(env.failures(FileOp::kAppend), 2);
  // Another path is not hit.
  EXPECT_TRUE(WriteFile(env, dir / "b.kcp", "y").ok());
  EXPECT_EQ(env.failures(FileOp::kAppend), 2);
}

TEST(FaultyEnvTest, ARenameIsMatchedOnEitherPathAndLeavesTheFilesAsTheyWere) {
  UniqueTempDir dir("kairos-env-");
  ASSERT_TRUE(dir.ok());
  FaultyEnv env;
  env.Add({.op = FileOp::kRename, .path_contains = "final"});
  ASSERT_TRUE(WriteFile(env, dir / "tmp", "1").ok());
  const absl::Status s = env.RenameFile(dir / "tmp", dir / "final");
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("injected fault"));
  EXPECT_TRUE(env.FileExists(dir / "tmp"));
  EXPECT_FALSE(env.FileExists(dir / "final"));
  EXPECT_TRUE(env.RenameFile(dir / "tmp", dir / "other").ok());  // the positive control
}

TEST(FaultyEnvTest, EveryOperationCanBeFailed) {
  UniqueTempDir dir("kairos-env-");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(WriteFile(Env::Default(), dir / "f", "abc").ok());
  FaultyEnv env;
  for (int op = 0; op < kairos::testing::kNumFileOps; ++op)
    env.Add({.op = static_cast<FileOp>(op)});
  EXPECT_FALSE(env.NewWritableFile(dir / "g", {}).ok());
  EXPECT_FALSE(env.NewWritableFile(dir / "f", {.continue_at = 1}).ok());
  EXPECT_FALSE(env.NewRandomAccessFile(dir / "f").ok());
  EXPECT_FALSE(env.RemoveFile(dir / "f").ok());
  EXPECT_FALSE(env.RemoveAll(dir / "f").ok());
  EXPECT_FALSE(env.CreateDirs(dir / "d").ok());
  EXPECT_FALSE(env.GetChildren(dir.path()).ok());
  EXPECT_FALSE(env.SyncDir(dir.path()).ok());
  EXPECT_EQ(Slurp(dir / "f"), "abc");  // nothing was done
  env.Clear();
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> r = env.NewRandomAccessFile(dir / "f");
  ASSERT_TRUE(r.ok());
  env.Add({.op = FileOp::kRead});
  char c;
  EXPECT_FALSE((*r)->ReadAt(0, 1, &c).ok());
  absl::StatusOr<std::unique_ptr<WritableFile>> w = env.NewWritableFile(dir / "g", {});
  ASSERT_TRUE(w.ok());
  env.Add({.op = FileOp::kSync});
  env.Add({.op = FileOp::kClose});
  EXPECT_FALSE((*w)->Sync(false).ok());
  EXPECT_FALSE((*w)->Close().ok());
  for (FileOp op : {FileOp::kCreate, FileOp::kContinue, FileOp::kOpen, FileOp::kRead, FileOp::kSync,
                    FileOp::kClose, FileOp::kCreateDirs, FileOp::kList, FileOp::kSyncDir}) {
    EXPECT_EQ(env.failures(op), 1) << static_cast<int>(op);
  }
  EXPECT_EQ(env.failures(FileOp::kRemove), 2);
}

}  // namespace
}  // namespace kairos::internal
