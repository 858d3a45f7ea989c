// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The update log's file (src/engine/update_log.h): every record comes back as written, in
// order; a torn tail (a record cut short, a last record with a bad checksum, zeros) is
// reported and cut off, and appending goes on after the last good record; corruption
// before the end, a wrong magic or another job's header are refused by name.

#include "engine/update_log.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "tests/common/scratch_dir.h"

namespace kairos::internal {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class UpdateLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_);
    path_ = (dir_ / UpdateLogName(1)).string();
  }

  static LogRecord Push(uint64_t id, int rank, std::vector<float> values) {
    LogRecord r;
    r.type = LogRecord::Type::kRequest;
    r.time = absl::FromUnixNanos(1'000'000'000 + static_cast<int64_t>(id));
    r.rank = rank;
    r.header = Header(id);
    r.payloads.push_back(Buffer::CopyOf(values));
    return r;
  }

  // A request's header frame: the log keeps it as opaque bytes (of any length, not a
  // multiple of 4), here with a zero byte inside.
  static std::string Header(uint64_t id) {
    return std::string("push\0#", 6) + std::to_string(id);
  }

  // Writes records 1..n (each a push of 3 floats) and returns the file's size after each.
  std::vector<uint64_t> WriteLog(int n) {
    auto log = UpdateLog::Create(Env::Default(), path_, header_, LogSync::kProcess);
    EXPECT_TRUE(log.ok()) << log.status();
    std::vector<uint64_t> sizes{(*log)->bytes()};
    for (int i = 1; i <= n; ++i) {
      (*log)->Append(Push(i, i % 2, {1.0f * i, 2.0f * i, 3.0f * i}));
      EXPECT_TRUE((*log)->Commit().ok());
      sizes.push_back((*log)->bytes());
    }
    EXPECT_EQ(fs::file_size(path_), sizes.back());
    return sizes;
  }

  absl::StatusOr<LogReplay> Read(std::vector<LogRecord>* out) {
    return ReadUpdateLog(Env::Default(), path_, header_,
                         [out](LogRecord r) { out->push_back(std::move(r)); });
  }

  void Poke(uint64_t at, char byte) {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(at));
    f.put(byte);
  }

  kairos::testing::ScratchDir scratch_{"kairos_ulog_"};
  const fs::path dir_ = scratch_.path();
  std::string path_;
  LogHeader header_{0x1234abcd5678ef00ull, 1, 2, 3};
};

TEST_F(UpdateLogTest, EveryRecordComesBackAsWrittenInOrder) {
  auto log = UpdateLog::Create(Env::Default(), path_, header_, LogSync::kMachine);
  ASSERT_TRUE(log.ok()) << log.status();
  (*log)->Append(Push(5, 1, {0.5f, -1.25f}));
  LogRecord sparse;
  sparse.type = LogRecord::Type::kRequest;
  sparse.time = absl::FromUnixSeconds(77);
  sparse.header = "sparse push #6";
  Buffer keys = Buffer::Allocate(2);
  const uint64_t key = 0xdeadbeefcafef00dull;
  std::memcpy(keys.data(), &key, sizeof(key));
  sparse.payloads = {keys, Buffer::CopyOf(std::vector<float>{9.0f})};
  (*log)->Append(sparse);
  LogRecord clock;
  clock.type = LogRecord::Type::kRequest;
  clock.header = Header(12);
  clock.rank = 2;
  clock.time = absl::InfiniteFuture();
  (*log)->Append(clock);
  LogRecord leave;
  leave.type = LogRecord::Type::kLeave;
  leave.rank = 2;
  leave.why = 1;
  leave.time = absl::FromUnixMillis(5);
  (*log)->Append(leave);
  LogRecord rejoin;
  rejoin.type = LogRecord::Type::kRejoin;
  rejoin.rank = 2;
  rejoin.node_id = 41;
  (*log)->Append(rejoin);
  EXPECT_TRUE((*log)->pending());
  ASSERT_TRUE((*log)->Commit().ok());
  EXPECT_FALSE((*log)->pending());
  EXPECT_EQ((*log)->records(), 5u);
  EXPECT_EQ((*log)->commits(), 1u);
  EXPECT_EQ((*log)->syncs(), 1u);

  std::vector<LogRecord> got;
  absl::StatusOr<LogReplay> replay = Read(&got);
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_EQ(replay->records, 5u);
  EXPECT_EQ(replay->torn_bytes, 0u);
  EXPECT_EQ(replay->valid_bytes, (*log)->bytes());
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].type, LogRecord::Type::kRequest);
  EXPECT_EQ(got[0].header, Header(5));
  EXPECT_EQ(got[0].rank, 1);
  EXPECT_EQ(got[0].time, absl::FromUnixNanos(1'000'000'005));
  ASSERT_EQ(got[0].payloads.size(), 1u);
  EXPECT_EQ(std::vector<float>(got[0].payloads[0].span().begin(),
                               got[0].payloads[0].span().end()),
            (std::vector<float>{0.5f, -1.25f}));
  EXPECT_EQ(got[1].header, "sparse push #6");
  ASSERT_EQ(got[1].payloads.size(), 2u);
  uint64_t back = 0;
  std::memcpy(&back, got[1].payloads[0].data(), sizeof(back));
  EXPECT_EQ(back, key);
  EXPECT_EQ(got[1].payloads[1][0], 9.0f);
  EXPECT_EQ(got[2].header, Header(12));
  EXPECT_EQ(got[2].rank, 2);
  EXPECT_EQ(got[2].time, absl::InfiniteFuture());
  EXPECT_TRUE(got[2].payloads.empty());
  EXPECT_EQ(got[3].type, LogRecord::Type::kLeave);
  EXPECT_EQ(got[3].rank, 2);
  EXPECT_EQ(got[3].why, 1);
  EXPECT_EQ(got[3].time, absl::FromUnixMillis(5));
  EXPECT_EQ(got[4].type, LogRecord::Type::kRejoin);
  EXPECT_EQ(got[4].node_id, 41u);
}

TEST_F(UpdateLogTest, ARecordCutShortIsATornTailCutOffAndAppendingGoesOnAfterIt) {
  const std::vector<uint64_t> sizes = WriteLog(4);
  // The fourth record was being written when the process died: 5 of its bytes are there.
  fs::resize_file(path_, sizes[3] + 5);
  std::vector<LogRecord> got;
  absl::StatusOr<LogReplay> replay = Read(&got);
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_EQ(replay->records, 3u);
  EXPECT_EQ(replay->valid_bytes, sizes[3]);
  EXPECT_EQ(replay->torn_bytes, 5u);

  auto more = UpdateLog::Continue(Env::Default(), path_, replay->valid_bytes, LogSync::kProcess);
  ASSERT_TRUE(more.ok()) << more.status();
  (*more)->Append(Push(9, 0, {4.0f}));
  ASSERT_TRUE((*more)->Commit().ok());
  got.clear();
  replay = Read(&got);
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_EQ(replay->torn_bytes, 0u);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[2].header, Header(3));
  EXPECT_EQ(got[3].header, Header(9));
}

TEST_F(UpdateLogTest, ALastRecordWithABadChecksumOrATailOfZerosIsTorn) {
  const std::vector<uint64_t> sizes = WriteLog(3);
  Poke(sizes[3] - 2, 0x55);  // a byte of the last record's values
  std::vector<LogRecord> got;
  absl::StatusOr<LogReplay> replay = Read(&got);
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_EQ(replay->records, 2u);
  EXPECT_EQ(replay->torn_bytes, sizes[3] - sizes[2]);

  const std::vector<uint64_t> again = WriteLog(2);
  fs::resize_file(path_, again.back() + 4096);  // zeros where records were to go
  got.clear();
  replay = Read(&got);
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_EQ(replay->records, 2u);
  EXPECT_EQ(replay->torn_bytes, 4096u);
}

TEST_F(UpdateLogTest, CorruptionBeforeTheEndIsRefusedWithItsOffset) {
  const std::vector<uint64_t> sizes = WriteLog(3);
  Poke(sizes[1] + 30, 0x7f);  // inside the second record, with a third after it
  std::vector<LogRecord> got;
  absl::StatusOr<LogReplay> replay = Read(&got);
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(replay.status().message(), HasSubstr(path_));
  EXPECT_THAT(replay.status().message(), HasSubstr(absl::StrCat("byte ", sizes[1])));
  EXPECT_THAT(replay.status().message(), HasSubstr("checksum"));
}

TEST_F(UpdateLogTest, AnOversizedLengthIsRefusedBeforeAnythingIsAllocated) {
  const std::vector<uint64_t> sizes = WriteLog(2);
  std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(sizes[0] + 8));
  const uint64_t huge = uint64_t{1} << 60;
  f.write(reinterpret_cast<const char*>(&huge), sizeof(huge));
  f.close();
  std::vector<LogRecord> got;
  absl::StatusOr<LogReplay> replay = Read(&got);
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(replay.status().message(), HasSubstr("at most"));
  EXPECT_TRUE(got.empty());
}

TEST_F(UpdateLogTest, ALogOfTheEarlierFormatIsRefusedByName) {
  WriteLog(1);
  Poke(7, '1');  // "KULOG002" -> "KULOG001"; nothing else of it is read
  std::vector<LogRecord> got;
  absl::StatusOr<LogReplay> replay = Read(&got);
  EXPECT_EQ(replay.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(replay.status().message(), HasSubstr(path_));
  EXPECT_THAT(replay.status().message(), HasSubstr("format KULOG001"));
  EXPECT_EQ(ReadUpdateLogHeader(Env::Default(), path_).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(got.empty());
  Poke(7, '2');  // positive control: the same file in this format reads
  EXPECT_TRUE(Read(&got).ok());
  EXPECT_EQ(got.size(), 1u);
}

TEST_F(UpdateLogTest, AnotherJobsLogOrNoLogIsToldApart) {
  WriteLog(1);
  LogHeader other = header_;
  other.job_id = 99;
  absl::StatusOr<LogReplay> replay = ReadUpdateLog(Env::Default(), path_, other, [](LogRecord) {});
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(replay.status().message(), HasSubstr("belongs to job 1234abcd5678ef00"));
  absl::StatusOr<LogHeader> header = ReadUpdateLogHeader(Env::Default(), path_);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(*header, header_);

  EXPECT_EQ(ReadUpdateLogHeader(Env::Default(), (dir_ / "none.kul").string()).status().code(),
            absl::StatusCode::kNotFound);
  std::ofstream((dir_ / "junk.kul").string()) << "not a log at all";
  const absl::Status junk =
      ReadUpdateLogHeader(Env::Default(), (dir_ / "junk.kul").string()).status();
  EXPECT_EQ(junk.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(junk.message(), HasSubstr("magic"));
}

}  // namespace
}  // namespace kairos::internal
