// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The record files under checkpoints and the update log (src/common/record_file.h): records
// come back as written, gathered payloads included (shared, not copied, until written);
// each record carries the CRC-32C of its type, length and body; with torn tails allowed a
// record cut short, a last record with a bad checksum and a tail of zeros are torn and cut,
// without they are corruption; corruption before the end is DataLoss naming the file and
// the byte offset; a length past the caller's limit is refused before anything is read or
// allocated; and the system helpers (ErrnoError, FileDescriptor, WriteAll, ReadAllAt).

#include "common/record_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/crc32c.h"
#include "common/posix_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/testing/faulty_env.h"
#include "tests/common/scratch_dir.h"

namespace kairos::internal {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr RecordFormat kFormats[] = {{"TESTREC2"}};

// The checksum of the previous format of the test files: any other function will do.
uint32_t Sum32(uint32_t crc, const void* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) crc = crc * 31 + static_cast<const uint8_t*>(p)[i];
  return crc;
}
constexpr RecordFormat kBothFormats[] = {{"TESTREC2"}, {"TESTREC1", &Sum32}};

std::string Bytes(const Buffer& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size_bytes());
}

class RecordFileTest : public ::testing::Test {
 protected:
  RecordFileName Name() const { return {path_, "test file"}; }

  // Writes records of types 1..n, record i holding `Body(i)`; returns each record's offset
  // and, last, the file's length.
  std::vector<uint64_t> WriteRecords(int n) {
    auto w = RecordWriter::Create(Env::Default(), Name(), "TESTREC2");
    EXPECT_TRUE(w.ok()) << w.status();
    std::vector<uint64_t> offsets;
    for (int i = 1; i <= n; ++i) {
      offsets.push_back(i == 1 ? kRecordMagicBytes : w->bytes());
      w->Add(static_cast<uint32_t>(i), Body(i));
      EXPECT_TRUE(w->Flush().ok());
    }
    offsets.push_back(w->bytes());
    EXPECT_TRUE(w->Close().ok());
    EXPECT_EQ(fs::file_size(path_), offsets.back());
    return offsets;
  }
  static std::string Body(int i) { return std::string(10 + i, static_cast<char>('a' + i)); }

  absl::StatusOr<RecordReader> Open(bool torn_tail, uint64_t max_body = 1 << 20) {
    return RecordReader::Open(Env::Default(), Name(), {kFormats, max_body, torn_tail});
  }

  // Reads every record's body (checking its checksum) until the end or an error.
  absl::StatusOr<std::vector<std::string>> ReadAll(RecordReader& r) {
    std::vector<std::string> bodies;
    for (;;) {
      absl::StatusOr<std::optional<RecordHead>> h = r.Next();
      if (!h.ok()) return h.status();
      if (!h->has_value()) return bodies;
      std::string body;
      if (absl::Status s = r.ReadRest(&body); !s.ok()) return s;
      if (!r.ChecksumMatches()) {
        if (absl::Status s = r.Reject("the checksum does not match"); !s.ok()) return s;
        continue;
      }
      bodies.push_back(body);
    }
  }

  void Poke(uint64_t at, const void* p, std::size_t n) {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(at));
    f.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
  }
  void Poke(uint64_t at, char byte) { Poke(at, &byte, 1); }

  kairos::testing::ScratchDir scratch_{"kairos_records_"};
  const std::string path_ = [this] {
    fs::create_directories(scratch_.path());
    return (scratch_.path() / "file.rec").string();
  }();
};

TEST_F(RecordFileTest, RecordsComeBackAsWrittenWithGatheredPartsInPlace) {
  const Buffer a = Buffer::CopyOf(std::vector<float>{1.5f, -2.0f, 3.25f});
  const Buffer b = Buffer::CopyOf(std::vector<float>{7.0f});
  {
    auto w = RecordWriter::Create(Env::Default(), Name(), "TESTREC2");
    ASSERT_TRUE(w.ok()) << w.status();
    w->Add(7, "fixed");
    w->Add(8, "");
    w->Add(9, "head:", {a, Buffer(), b});
    // The parts are shared with the writer, not copied, until they are written.
    EXPECT_EQ(a.use_count(), 2);
    EXPECT_TRUE(w->pending());
    EXPECT_EQ(w->bytes(), 0u);
    ASSERT_TRUE(w->Flush().ok());
    EXPECT_EQ(a.use_count(), 1);
    EXPECT_FALSE(w->pending());
    EXPECT_EQ(w->bytes(), 8 + 3 * kRecordHeadBytes + 5 + 0 + 5 + 16);
    ASSERT_TRUE(w->Sync().ok());
    ASSERT_TRUE(w->Sync(/*data_only=*/true).ok());
    ASSERT_TRUE(w->Close().ok());
    EXPECT_EQ(fs::file_size(path_), w->bytes());
  }
  auto r = Open(/*torn_tail=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->format().magic, "TESTREC2");
  auto h = r->Next();
  ASSERT_TRUE(h.ok() && h->has_value());
  EXPECT_EQ((*h)->type, 7u);
  EXPECT_EQ((*h)->offset, 8u);
  EXPECT_EQ((*h)->length, 5u);
  EXPECT_EQ((*h)->end, 8 + kRecordHeadBytes + 5);
  std::string body;
  ASSERT_TRUE(r->ReadRest(&body).ok());
  EXPECT_EQ(body, "fixed");
  EXPECT_TRUE(r->ChecksumMatches());
  h = r->Next();
  ASSERT_TRUE(h.ok() && h->has_value());
  EXPECT_EQ((*h)->type, 8u);
  EXPECT_EQ((*h)->length, 0u);
  EXPECT_TRUE(r->ChecksumMatches());  // nothing to read
  h = r->Next();
  ASSERT_TRUE(h.ok() && h->has_value());
  EXPECT_EQ((*h)->type, 9u);
  // Read in pieces: the fixed part, then each part into a buffer of its own.
  char head[5];
  ASSERT_TRUE(r->Read(head, sizeof(head)).ok());
  EXPECT_FALSE(r->ChecksumMatches());  // not all of it read yet
  Buffer a2 = Buffer::Allocate(3), b2 = Buffer::Allocate(1);
  ASSERT_TRUE(r->Read(a2.data(), a2.size_bytes()).ok());
  ASSERT_TRUE(r->Read(b2.data(), b2.size_bytes()).ok());
  EXPECT_EQ(std::string(head, 5), "head:");
  EXPECT_EQ(Bytes(a2), Bytes(a));
  EXPECT_EQ(Bytes(b2), Bytes(b));
  EXPECT_TRUE(r->ChecksumMatches());
  EXPECT_EQ(r->Read(head, 1).code(), absl::StatusCode::kInternal);  // past its body
  h = r->Next();
  ASSERT_TRUE(h.ok());
  EXPECT_FALSE(h->has_value());
  EXPECT_EQ(r->torn_bytes(), 0u);
}

TEST_F(RecordFileTest, EachRecordCarriesTheCrc32cOfItsTypeLengthAndBody) {
  WriteRecords(1);
  std::ifstream in(path_, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  ASSERT_EQ(bytes.size(), 8 + kRecordHeadBytes + Body(1).size());
  EXPECT_EQ(bytes.substr(0, 8), "TESTREC2");
  uint32_t type = 0, crc = 0;
  uint64_t length = 0;
  std::memcpy(&type, bytes.data() + 8, 4);
  std::memcpy(&crc, bytes.data() + 12, 4);
  std::memcpy(&length, bytes.data() + 16, 8);
  EXPECT_EQ(type, 1u);
  EXPECT_EQ(length, Body(1).size());
  EXPECT_EQ(bytes.substr(24), Body(1));
  std::string covered = bytes.substr(8, 4) + bytes.substr(16);  // all but the checksum
  EXPECT_EQ(crc, Crc32c(covered.data(), covered.size()));
}

TEST_F(RecordFileTest, MoreThanIovMaxPiecesAreWrittenWhole) {
  auto w = RecordWriter::Create(Env::Default(), Name(), "TESTREC2");
  ASSERT_TRUE(w.ok());
  std::vector<float> values(1000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  const Buffer v = Buffer::CopyOf(values);
  constexpr int kRecords = 700;  // head, fixed and two parts each: 2800 pieces
  for (int i = 0; i < kRecords; ++i) w->Add(1, absl::StrCat(i), {v.Slice(0, 1 + i), v});
  ASSERT_TRUE(w->Flush().ok());
  ASSERT_TRUE(w->Close().ok());
  auto r = Open(false, 1 << 20);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::vector<std::string>> bodies = ReadAll(*r);
  ASSERT_TRUE(bodies.ok()) << bodies.status();
  ASSERT_EQ(bodies->size(), static_cast<std::size_t>(kRecords));
  for (int i = 0; i < kRecords; i += 99) {
    EXPECT_EQ((*bodies)[i], absl::StrCat(i) + Bytes(v.Slice(0, 1 + i)) + Bytes(v));
  }
}

TEST_F(RecordFileTest, ARecordCutShortIsATornTailOrWithoutTornTailsCorruption) {
  const std::vector<uint64_t> at = WriteRecords(3);
  for (uint64_t keep : {at[2] + 5, at[2] + kRecordHeadBytes + 2}) {  // in its head, its body
    SCOPED_TRACE(keep);
    WriteRecords(3);
    fs::resize_file(path_, keep);
    auto r = Open(true);
    ASSERT_TRUE(r.ok());
    absl::StatusOr<std::vector<std::string>> bodies = ReadAll(*r);
    ASSERT_TRUE(bodies.ok()) << bodies.status();
    EXPECT_EQ(*bodies, (std::vector<std::string>{Body(1), Body(2)}));
    EXPECT_EQ(r->torn_bytes(), keep - at[2]);

    auto strict = Open(false);
    ASSERT_TRUE(strict.ok());
    bodies = ReadAll(*strict);
    EXPECT_EQ(bodies.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(
        bodies.status().message(),
        HasSubstr(absl::StrCat("test file ", path_, " is torn or corrupt at byte ", at[2])));
  }
}

TEST_F(RecordFileTest, ALastRecordWithABadChecksumIsTornAnEarlierOneIsCorruption) {
  const std::vector<uint64_t> at = WriteRecords(3);
  Poke(at[3] - 1, 'X');  // the last byte of the last record
  auto r = Open(true);
  ASSERT_TRUE(r.ok());
  absl::StatusOr<std::vector<std::string>> bodies = ReadAll(*r);
  ASSERT_TRUE(bodies.ok()) << bodies.status();
  EXPECT_EQ(bodies->size(), 2u);
  EXPECT_EQ(r->torn_bytes(), at[3] - at[2]);

  WriteRecords(3);
  Poke(at[1] + kRecordHeadBytes + 3, 'X');  // inside the second record: a third follows
  r = Open(true);
  ASSERT_TRUE(r.ok());
  bodies = ReadAll(*r);
  ASSERT_FALSE(bodies.ok());
  EXPECT_EQ(bodies.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(bodies.status().message(),
            absl::StrCat("test file ", path_, ": byte ", at[1], ": the checksum does not match"));
}

TEST_F(RecordFileTest, ATailOfZerosIsTornOnlyWhereTornTailsAreAllowed) {
  const std::vector<uint64_t> at = WriteRecords(2);
  fs::resize_file(path_, at[2] + 4096);  // zeros where records were to go
  auto r = Open(true);
  ASSERT_TRUE(r.ok());
  absl::StatusOr<std::vector<std::string>> bodies = ReadAll(*r);
  ASSERT_TRUE(bodies.ok()) << bodies.status();
  EXPECT_EQ(bodies->size(), 2u);
  EXPECT_EQ(r->torn_bytes(), 4096u);

  auto strict = Open(false);
  ASSERT_TRUE(strict.ok());
  EXPECT_EQ(ReadAll(*strict).status().code(), absl::StatusCode::kDataLoss);

  // Zeros followed by anything else are not a tail of zeros.
  Poke(at[2] + 4000, 'X');
  r = Open(true);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ReadAll(*r).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(RecordFileTest, AnOversizedLengthIsRefusedBeforeAnythingIsRead) {
  const std::vector<uint64_t> at = WriteRecords(2);
  const uint64_t huge = uint64_t{1} << 60;
  for (bool torn_tail : {true, false}) {
    Poke(at[1] + 8, &huge, sizeof(huge));  // the last record's length
    auto r = Open(torn_tail);
    ASSERT_TRUE(r.ok());
    auto first = r->Next();
    ASSERT_TRUE(first.ok() && first->has_value());
    // The second record's head is read, its length refused: nothing was allocated for it.
    auto second = r->Next();
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(second.status().message(), HasSubstr(absl::StrCat("byte ", at[1])));
    EXPECT_THAT(second.status().message(), HasSubstr("at most 1048576"));
  }
  // Within the limit, the limit is the caller's: here 11 bytes.
  WriteRecords(2);
  auto r = Open(true, /*max_body=*/11);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->Next().ok());                                        // 11 bytes
  EXPECT_EQ(r->Next().status().code(), absl::StatusCode::kDataLoss);  // 12 bytes
}

TEST_F(RecordFileTest, TheMagicChoosesTheFormatAndItsChecksum) {
  {
    std::ofstream out(path_, std::ios::binary);
    const uint32_t type = 5;
    const uint64_t length = 3;
    uint32_t sum = Sum32(Sum32(Sum32(0, &type, 4), &length, 8), "old", 3);
    out.write("TESTREC1", 8).write(reinterpret_cast<const char*>(&type), 4);
    out.write(reinterpret_cast<const char*>(&sum), 4);
    out.write(reinterpret_cast<const char*>(&length), 8).write("old", 3);
  }
  auto r = RecordReader::Open(Env::Default(), Name(), {kBothFormats, 64, false});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->format().magic, "TESTREC1");
  absl::StatusOr<std::vector<std::string>> bodies = ReadAll(*r);
  ASSERT_TRUE(bodies.ok()) << bodies.status();
  EXPECT_EQ(*bodies, std::vector<std::string>{"old"});
  // A reader of the new format alone does not know the old magic.
  const absl::Status old = Open(false).status();
  EXPECT_EQ(old.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(old.message(), HasSubstr("not a kairos test file (no TESTREC2 magic)"));
  // Under the new magic, the old checksum does not match.
  Poke(7, '2');
  r = RecordReader::Open(Env::Default(), Name(), {kBothFormats, 64, false});
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(ReadAll(*r).status().message(), HasSubstr("checksum"));

  std::ofstream(path_, std::ios::trunc) << "short";
  EXPECT_THAT(
      RecordReader::Open(Env::Default(), Name(), {kBothFormats, 64, true}).status().message(),
      HasSubstr("no TESTREC2 or TESTREC1 magic"));
  fs::remove(path_);
  const absl::Status none = Open(true).status();
  EXPECT_EQ(none.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(none.message(), absl::StrCat("no test file at ", path_));
}

TEST_F(RecordFileTest, ContinueCutsATornTailAndAppendsAfterTheLastGoodRecord) {
  const std::vector<uint64_t> at = WriteRecords(3);
  fs::resize_file(path_, at[3] - 4);
  auto r = Open(true);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(ReadAll(*r).ok());
  const uint64_t good = r->size() - r->torn_bytes();
  EXPECT_EQ(good, at[2]);
  auto w = RecordWriter::Continue(Env::Default(), Name(), good);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->bytes(), at[2]);
  w->Add(3, "again");
  ASSERT_TRUE(w->Flush().ok());
  ASSERT_TRUE(w->Close().ok());
  r = Open(true);
  ASSERT_TRUE(r.ok());
  absl::StatusOr<std::vector<std::string>> bodies = ReadAll(*r);
  ASSERT_TRUE(bodies.ok()) << bodies.status();
  EXPECT_EQ(*bodies, (std::vector<std::string>{Body(1), Body(2), "again"}));
  EXPECT_EQ(r->torn_bytes(), 0u);
}

TEST_F(RecordFileTest, SystemErrorsNameTheFileAndTheCall) {
  RecordFileName missing{(scratch_.path() / "no-dir" / "file.rec").string(), "checkpoint",
                         absl::StatusCode::kUnavailable};
  const absl::Status s = RecordWriter::Create(Env::Default(), missing, "TESTREC2").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(s.message(),
            absl::StrCat("checkpoint ", missing.path, ": create: ", std::strerror(ENOENT)));
  EXPECT_EQ(RecordWriter::Continue(Env::Default(), missing, 0).status().code(),
            absl::StatusCode::kUnavailable);
}

// Every file operation goes through the Env: a fault injected there is the writer's error,
// named after the file, and the writer stays broken; the reader reports one as well.
TEST_F(RecordFileTest, TheEnvironmentsFailuresAreTheFilesErrors) {
  kairos::testing::FaultyEnv env;
  env.Add({.op = kairos::testing::FileOp::kAppend,
           .error = kairos::testing::FaultyEnv::DiskFull(),
           .skip = 1});
  RecordFileName name{path_, "update log", absl::StatusCode::kInternal};
  absl::StatusOr<RecordWriter> w = RecordWriter::Create(env, name, "TESTREC2");
  ASSERT_TRUE(w.ok()) << w.status();
  w->Add(1, Body(1));
  ASSERT_TRUE(w->Flush().ok());  // the magic and record 1: the first append, let through
  w->Add(2, Body(2));
  const absl::Status full = w->Flush();
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(full.message(),
            absl::StrCat("update log ", path_, ": injected fault: No space left on device"));
  env.Clear();
  EXPECT_EQ(w->Flush(), full);  // broken: nothing more is written
  EXPECT_EQ(w->Sync(), full);
  ASSERT_TRUE(w->Close().ok());

  env.Add({.op = kairos::testing::FileOp::kRead});
  const absl::Status read =
      RecordReader::Open(env, name, {kFormats, 1 << 20, /*torn_tail=*/true}).status();
  EXPECT_EQ(read.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(read.message(), HasSubstr("injected fault"));
  env.Clear();
  absl::StatusOr<RecordReader> r = RecordReader::Open(env, name, {kFormats, 1 << 20, true});
  ASSERT_TRUE(r.ok()) << r.status();  // the positive control: record 1 is there
  absl::StatusOr<std::optional<RecordHead>> h = r->Next();
  ASSERT_TRUE(h.ok() && h->has_value());
  EXPECT_EQ((*h)->type, 1u);
}

TEST(ErrnoErrorTest, AFullDiskIsResourceExhaustedAnythingElseTheCallersCode) {
  const absl::Status full = ErrnoError(absl::StatusCode::kInternal, "update log /x: write", ENOSPC);
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(full.message(), absl::StrCat("update log /x: write: ", std::strerror(ENOSPC)));
  EXPECT_EQ(ErrnoError(absl::StatusCode::kUnavailable, "x", EDQUOT).code(),
            absl::StatusCode::kResourceExhausted);
  errno = EACCES;
  EXPECT_EQ(ErrnoError(absl::StatusCode::kUnavailable, "x").code(), absl::StatusCode::kUnavailable);
}

TEST(FileDescriptorTest, ClosesWhatItOwnsOnceAndKeepsErrno) {
  int raw = -1;
  {
    FileDescriptor fd = FileDescriptor::Open("/dev/null", O_RDONLY);
    ASSERT_TRUE(fd.valid());
    raw = fd.get();
    EXPECT_NE(::fcntl(raw, F_GETFD) & FD_CLOEXEC, 0);
    FileDescriptor moved = std::move(fd);
    EXPECT_FALSE(fd.valid());  // NOLINT(bugprone-use-after-move): a moved-from one is empty
    EXPECT_EQ(moved.get(), raw);
    errno = ENOSPC;
  }
  EXPECT_EQ(errno, ENOSPC);  // the destructor's close left the caller's errno alone
  EXPECT_EQ(::fcntl(raw, F_GETFD), -1);
  FileDescriptor none = FileDescriptor::Open("/no/such/file", O_RDONLY);
  const int err = errno;
  EXPECT_FALSE(none.valid());
  EXPECT_EQ(err, ENOENT);
  EXPECT_TRUE(none.Close());  // nothing to close
}

// A pipe takes 64 KiB at a time: writev returns after part of the pieces, often in the
// middle of one, and WriteAll goes on from there.
TEST(WriteAllTest, ShortWritesGoOnWhereTheyStopped) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  FileDescriptor in(ends[0]), out(ends[1]);
  std::string data(1 << 20, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 % 251);
  std::vector<iovec> iov;
  for (std::size_t at = 0; at < data.size(); at += 3001) {
    iov.push_back({data.data() + at, std::min<std::size_t>(3001, data.size() - at)});
  }
  std::string got;
  std::thread reader([&] {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(in.get(), buf, sizeof(buf))) > 0) got.append(buf, n);
  });
  EXPECT_TRUE(WriteAll(out.get(), iov));
  EXPECT_TRUE(WriteAll(out.get(), "tail", 4));
  EXPECT_TRUE(out.Close());
  reader.join();
  EXPECT_EQ(got, data + "tail");

  errno = 0;
  EXPECT_FALSE(WriteAll(in.get(), "x", 1));  // the read end
  EXPECT_EQ(errno, EBADF);
}

TEST(ReadAllAtTest, TheEndOfTheFileLeavesErrnoZero) {
  FileDescriptor fd = FileDescriptor::Open("/dev/null", O_RDONLY);
  char c;
  errno = EINVAL;
  EXPECT_FALSE(ReadAllAt(fd.get(), 0, &c, 1));
  EXPECT_EQ(errno, 0);
  EXPECT_TRUE(ReadAllAt(fd.get(), 0, &c, 0));
}

}  // namespace
}  // namespace kairos::internal
