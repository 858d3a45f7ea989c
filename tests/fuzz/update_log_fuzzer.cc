// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target: ReadUpdateLog (src/engine/update_log.h) of arbitrary files. A server
// reads its update log at a restart; a log damaged on disk must be refused or cut, never
// crash the server or make it allocate what the file does not hold.
//
// Input: the whole file. It is read under the header the seeds were written with.
//
// Besides "no crash, no sanitizer report", it checks what the reader promises: success,
// DataLoss, or FailedPrecondition (another job's header, or a log of the earlier format);
// on success the good records and the torn tail add up to the file, and every record handed
// over is well formed (a known type, at most two frames, a request's header within its
// bound); the good records, written again by UpdateLog, read back as the same records with
// no torn tail.
//
// `update_log_fuzzer --write-seeds=DIR` writes the seed corpus (tests/fuzz/corpus/update_log).

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/update_log.h"
#include "tests/fuzz/fuzz_input.h"

namespace kairos::fuzz {
namespace {

using internal::LogHeader;
using internal::LogRecord;
using internal::LogReplay;
using internal::LogSync;
using internal::UpdateLog;

const LogHeader kHeader{0x0123456789abcdefull, 1, 2, 4};

bool SameRecord(const LogRecord& a, const LogRecord& b) {
  if (a.type != b.type || a.time != b.time || a.payloads.size() != b.payloads.size()) {
    return false;
  }
  if (a.type != LogRecord::Type::kRequest) {
    return a.rank == b.rank && a.why == b.why && a.node_id == b.node_id;
  }
  if (a.rank != b.rank || a.header != b.header) return false;
  for (std::size_t i = 0; i < a.payloads.size(); ++i) {
    if (a.payloads[i].size() != b.payloads[i].size() ||
        (a.payloads[i].size() > 0 &&
         std::memcmp(a.payloads[i].data(), b.payloads[i].data(),
                     a.payloads[i].size_bytes()) != 0)) {
      return false;
    }
  }
  return true;
}

void Run(const uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  MemFile file(bytes);
  std::vector<LogRecord> records;
  absl::StatusOr<LogReplay> replay =
      internal::ReadUpdateLog(Env::Default(), file.path(), kHeader, [&](LogRecord r) {
        Require(r.type == LogRecord::Type::kRequest || r.type == LogRecord::Type::kLeave ||
                    r.type == LogRecord::Type::kRejoin,
                "a record of a known type");
        Require(r.payloads.size() <= internal::kMaxLogFrames, "at most two frames");
        Require(r.header.size() <= internal::kMaxLogHeaderBytes, "a header within its bound");
        records.push_back(std::move(r));
      });
  if (!replay.ok()) {
    const absl::StatusCode code = replay.status().code();
    Require(code == absl::StatusCode::kDataLoss ||
                code == absl::StatusCode::kFailedPrecondition,
            "a bad log is DataLoss, another job's or format's FailedPrecondition");
    return;
  }
  Require(replay->records == records.size(), "every good record is handed over");
  Require(replay->valid_bytes + replay->torn_bytes == size, "good bytes + torn tail = file");
  // Written again, the good records read back the same.
  const std::string again = "/tmp/update_log_fuzzer." + std::to_string(::getpid());
  {
    auto log = UpdateLog::Create(Env::Default(), again, kHeader, LogSync::kProcess);
    Require(log.ok(), "a new log can be written");
    for (const LogRecord& r : records) (*log)->Append(r);
    Require((*log)->Commit().ok(), "the records can be written again");
  }
  std::vector<LogRecord> back;
  absl::StatusOr<LogReplay> reread =
      internal::ReadUpdateLog(Env::Default(), again, kHeader, [&](LogRecord r) { back.push_back(std::move(r)); });
  std::filesystem::remove(again);
  Require(reread.ok() && reread->torn_bytes == 0, "the rewritten log reads back whole");
  Require(back.size() == records.size(), "as many records back");
  for (std::size_t i = 0; i < back.size(); ++i) {
    Require(SameRecord(back[i], records[i]), "the same records back");
  }
}

std::string LogBytes(const std::vector<LogRecord>& records) {
  const std::string path = "/tmp/update_log_fuzzer_seed." + std::to_string(::getpid());
  {
    auto log = UpdateLog::Create(Env::Default(), path, kHeader, LogSync::kProcess);
    Require(log.ok(), "a seed log can be written");
    for (const LogRecord& r : records) (*log)->Append(r);
    Require((*log)->Commit().ok(), "a seed log can be written");
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  return bytes;
}

// A request record; its header frame is opaque to the log (here a name and the id).
LogRecord Request(const std::string& kind, uint64_t id, std::vector<std::vector<float>> frames) {
  LogRecord r;
  r.type = LogRecord::Type::kRequest;
  r.time = absl::FromUnixMillis(1000 + static_cast<int64_t>(id));
  r.rank = static_cast<int>(id % 4);
  r.header = kind + " #" + std::to_string(id);
  for (const auto& f : frames) r.payloads.push_back(Buffer::CopyOf(f));
  return r;
}

Seeds MakeSeeds() {
  Seeds s;
  std::vector<LogRecord> records;
  records.push_back(Request("PUSH", 1, {{1, 2, 3, 4}}));
  records.push_back(Request("PULL", 2, {}));
  records.push_back(Request("CLOCK", 3, {}));
  records.push_back(Request("PUSH_SPARSE", 4, {{0, 0, 0, 0}, {5, 6}}));
  records.push_back(Request("PULL_SPARSE", 5, {{0, 0}}));
  LogRecord leave;
  leave.type = LogRecord::Type::kLeave;
  leave.rank = 2;
  leave.why = 1;
  records.push_back(leave);
  LogRecord rejoin;
  rejoin.type = LogRecord::Type::kRejoin;
  rejoin.rank = 2;
  rejoin.node_id = 9;
  records.push_back(rejoin);
  const std::string whole = LogBytes(records);
  s.push_back({"whole", whole});
  s.push_back({"header-only", LogBytes({})});
  s.push_back({"torn", whole.substr(0, whole.size() - 5)});
  std::string flipped = whole;
  flipped[60] ^= 0x10;
  s.push_back({"flipped", flipped});
  s.push_back({"not-a-log", "this is not an update log"});
  return s;
}

}  // namespace
}  // namespace kairos::fuzz

KAIROS_FUZZ_TARGET(kairos::fuzz::Run, kairos::fuzz::MakeSeeds)
