// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "engine/update_log.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/byte_io.h"
#include "kairos/status.h"

namespace kairos::internal {
namespace {

constexpr absl::string_view kMagic("KULOG002", kRecordMagicBytes);
// The earlier format, read only to be refused by name.
constexpr absl::string_view kOldMagic("KULOG001", kRecordMagicBytes);
constexpr RecordFormat kFormats[] = {{kMagic}, {kOldMagic}};  // CRC-32C
constexpr uint32_t kFormatVersion = 2;
// The fixed fields of a request record (frames, padding, rank, time, header bytes), before
// the frames' sizes, the header and the frames.
constexpr std::size_t kRequestFixed = 1 + 3 + 4 + 8 + 4;
// The header record's body: format version, job id, shard, shards, workers.
constexpr uint64_t kHeaderBody = 4 + 8 + 4 + 4 + 4;

RecordFileName LogName(const std::string& path) {
  return {path, "update log", absl::StatusCode::kInternal};
}

absl::StatusOr<RecordReader> OpenLog(const Env& env, const std::string& path) {
  KAIROS_ASSIGN_OR_RETURN(
      RecordReader in,
      RecordReader::Open(env, LogName(path), {kFormats, kMaxLogRecordBytes, /*torn_tail=*/true}));
  if (in.format().magic == kOldMagic) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "update log %s is of an earlier kairos (format KULOG001; this build reads KULOG002): "
        "finish its job with the release that started it, or start the job again from a "
        "checkpoint (docs/durability.md)",
        path));
  }
  return in;
}

int64_t TimeNanos(absl::Time t) {
  if (t == absl::InfiniteFuture()) return INT64_MAX;
  if (t == absl::InfinitePast()) return INT64_MIN;
  return absl::ToUnixNanos(t);
}

absl::Time FromNanos(int64_t ns) {
  if (ns == INT64_MAX) return absl::InfiniteFuture();
  if (ns == INT64_MIN) return absl::InfinitePast();
  return absl::FromUnixNanos(ns);
}

// The fixed part of a record's body (everything but the request's frames).
std::string Body(const LogRecord& r, const std::vector<Buffer>& frames) {
  ByteWriter w;
  switch (r.type) {
    case LogRecord::Type::kHeader:
      break;  // written by Create
    case LogRecord::Type::kRequest: {
      w.Put<uint8_t>(static_cast<uint8_t>(frames.size()));
      w.Put<uint8_t>(0);
      w.Put<uint16_t>(0);
      w.Put<int32_t>(r.rank);
      w.Put<int64_t>(TimeNanos(r.time));
      w.Put<uint32_t>(static_cast<uint32_t>(r.header.size()));
      for (const Buffer& f : frames) w.Put<uint64_t>(f.size_bytes());
      w.bytes() += r.header;
      break;
    }
    case LogRecord::Type::kLeave:
      w.Put<int32_t>(r.rank);
      w.Put<int32_t>(r.why);
      w.Put<int64_t>(TimeNanos(r.time));
      break;
    case LogRecord::Type::kRejoin:
      w.Put<int32_t>(r.rank);
      w.Put<uint32_t>(r.node_id);
      w.Put<int64_t>(TimeNanos(r.time));
      break;
    case LogRecord::Type::kBase:
      return r.data;
  }
  return std::move(w.bytes());
}

// The frames a request record carries.
std::vector<Buffer> FramesOf(const LogRecord& r) {
  if (r.type != LogRecord::Type::kRequest) return {};
  return r.payloads;
}

// The first record of the log: its header.
absl::StatusOr<LogHeader> ReadHeader(RecordReader& in) {
  constexpr uint64_t at = kRecordMagicBytes;
  KAIROS_ASSIGN_OR_RETURN(std::optional<RecordHead> h, in.Next());
  if (!h.has_value()) {
    return in.Corrupt(at,
                      in.torn_bytes() > 0 ? "the header record is cut short" : "no header record");
  }
  if (h->type != static_cast<uint32_t>(LogRecord::Type::kHeader) || h->length != kHeaderBody) {
    return in.Corrupt(at, "the first record is not a header");
  }
  std::string body;
  KAIROS_RETURN_IF_ERROR(in.ReadRest(&body));
  if (!in.ChecksumMatches()) {
    return in.Corrupt(at, "the header record's checksum does not match");
  }
  ByteReader r(body);
  uint32_t version = 0;
  LogHeader header;
  r.Get(&version);
  r.Get(&header.job_id);
  r.Get(&header.shard);
  r.Get(&header.num_shards);
  r.Get(&header.num_workers);
  if (version != kFormatVersion) {
    return in.Corrupt(
        at, absl::StrFormat("format version %d (this build reads %d)", version, kFormatVersion));
  }
  return header;
}

// What the readers of records return: the record, or nullopt when it was the torn tail
// (RecordReader::Reject: the reader has stopped before it).
using MaybeRecord = absl::StatusOr<std::optional<LogRecord>>;

MaybeRecord Rejected(RecordReader& in, const std::string& what) {
  KAIROS_RETURN_IF_ERROR(in.Reject(what));
  return std::nullopt;
}

// A request record: its fixed fields, its frames' sizes and its header's (checked to fill
// the record before anything is allocated), the header, then each frame, read into a buffer
// of its own.
MaybeRecord ReadRequest(RecordReader& in, const RecordHead& h) {
  if (h.length < kRequestFixed) return Rejected(in, "a request record too short");
  std::string fixed(kRequestFixed, '\0');
  KAIROS_RETURN_IF_ERROR(in.Read(fixed.data(), fixed.size()));
  ByteReader r(fixed);
  uint8_t nframes = 0, pad8 = 0;
  uint16_t pad16 = 0;
  int64_t ns = 0;
  uint32_t header_bytes = 0;
  LogRecord record;
  r.Get(&nframes);
  r.Get(&pad8);
  r.Get(&pad16);
  r.Get(&record.rank);
  r.Get(&ns);
  r.Get(&header_bytes);
  if (nframes > kMaxLogFrames || h.length < kRequestFixed + 8 * nframes) {
    return Rejected(in, absl::StrFormat("a request record with %d frames", nframes));
  }
  uint64_t frame_bytes[kMaxLogFrames] = {};
  KAIROS_RETURN_IF_ERROR(in.Read(frame_bytes, 8 * nframes));
  uint64_t total = kRequestFixed + 8 * nframes;
  if (header_bytes > kMaxLogHeaderBytes || header_bytes > h.length - total) {
    return Rejected(in, absl::StrFormat("a request header of %d bytes", header_bytes));
  }
  total += header_bytes;
  for (int i = 0; i < nframes; ++i) {
    if (frame_bytes[i] % sizeof(float) != 0 || frame_bytes[i] > h.length - total) {
      return Rejected(
          in, absl::StrFormat("frame %d of %d bytes does not fit the record", i, frame_bytes[i]));
    }
    total += frame_bytes[i];
  }
  if (total != h.length) return Rejected(in, "the frames do not fill the record");
  record.header.resize(header_bytes);
  KAIROS_RETURN_IF_ERROR(in.Read(record.header.data(), header_bytes));
  for (int i = 0; i < nframes; ++i) {
    Buffer f = Buffer::Allocate(frame_bytes[i] / sizeof(float));
    KAIROS_RETURN_IF_ERROR(in.Read(f.data(), frame_bytes[i]));
    record.payloads.push_back(std::move(f));
  }
  if (!in.ChecksumMatches()) {
    return Rejected(in, absl::StrFormat("the record's checksum does not match (type %d, %d bytes)",
                                        h.type, h.length));
  }
  record.type = LogRecord::Type::kRequest;
  record.time = FromNanos(ns);
  return record;
}

absl::StatusOr<LogRecord> ParseBody(uint32_t type, const std::string& fixed) {
  LogRecord r;
  ByteReader in(fixed);
  int64_t ns = 0;
  switch (type) {
    case static_cast<uint32_t>(LogRecord::Type::kLeave):
      r.type = LogRecord::Type::kLeave;
      if (!in.Get(&r.rank) || !in.Get(&r.why) || !in.Get(&ns)) break;
      r.time = FromNanos(ns);
      return r;
    case static_cast<uint32_t>(LogRecord::Type::kRejoin):
      r.type = LogRecord::Type::kRejoin;
      if (!in.Get(&r.rank) || !in.Get(&r.node_id) || !in.Get(&ns)) break;
      r.time = FromNanos(ns);
      return r;
    case static_cast<uint32_t>(LogRecord::Type::kBase):
      r.type = LogRecord::Type::kBase;
      r.data = fixed;
      return r;
    default:
      break;
  }
  return absl::InvalidArgumentError("a record too short for its type");
}

// Any record after the header.
MaybeRecord ReadRecord(RecordReader& in, const RecordHead& h) {
  if (h.type == static_cast<uint32_t>(LogRecord::Type::kRequest)) return ReadRequest(in, h);
  const bool base = h.type == static_cast<uint32_t>(LogRecord::Type::kBase);
  if (h.length > 64 && !(base && h.length <= kMaxLogBaseBytes)) {
    return Rejected(in, absl::StrFormat("a record of type %d and %d bytes", h.type, h.length));
  }
  std::string fixed;
  KAIROS_RETURN_IF_ERROR(in.ReadRest(&fixed));
  if (!in.ChecksumMatches()) {
    return Rejected(in, absl::StrFormat("the record's checksum does not match (type %d, %d bytes)",
                                        h.type, h.length));
  }
  absl::StatusOr<LogRecord> parsed = ParseBody(h.type, fixed);
  if (!parsed.ok()) return in.Corrupt(h.offset, parsed.status().message());
  return *std::move(parsed);
}

}  // namespace

std::string UpdateLogName(int shard, uint64_t segment) {
  if (segment == 0) return absl::StrFormat("shard-%05d.kul", shard);
  return absl::StrFormat("shard-%05d.%06d.kul", shard, segment);
}

std::vector<std::pair<uint64_t, std::string>> UpdateLogSegments(const Env& env,
                                                                const std::string& dir, int shard) {
  std::vector<std::pair<uint64_t, std::string>> out;
  const std::string first = UpdateLogName(shard);
  const std::string prefix = absl::StrFormat("shard-%05d.", shard);
  absl::StatusOr<std::vector<std::string>> names = env.GetChildren(dir);
  if (!names.ok()) return out;  // no directory: no segments
  for (const std::string& name : *names) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    if (name == first) {
      out.push_back({0, path});
      continue;
    }
    // shard-SSSSS.NNNNNN.kul
    if (name.size() != prefix.size() + 6 + 4 || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - 4, 4, ".kul") != 0) {
      continue;
    }
    uint64_t n = 0;
    bool digits = true;
    for (std::size_t i = prefix.size(); i < prefix.size() + 6; ++i) {
      if (name[i] < '0' || name[i] > '9') digits = false;
      n = n * 10 + static_cast<uint64_t>(name[i] - '0');
    }
    if (digits && n > 0) out.push_back({n, path});
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<LogHeader> ReadUpdateLogHeader(const Env& env, const std::string& path) {
  KAIROS_ASSIGN_OR_RETURN(RecordReader in, OpenLog(env, path));
  return ReadHeader(in);
}

absl::StatusOr<LogReplay> ReadUpdateLog(const Env& env, const std::string& path,
                                        const LogHeader& expected,
                                        const std::function<void(LogRecord)>& visit,
                                        uint64_t max_records) {
  KAIROS_ASSIGN_OR_RETURN(RecordReader in, OpenLog(env, path));
  KAIROS_ASSIGN_OR_RETURN(LogHeader header, ReadHeader(in));
  if (!(header == expected)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "update log %s belongs to job %016x shard %d of %d with %d workers, not job %016x "
        "shard %d of %d with %d workers",
        path, header.job_id, header.shard, header.num_shards, header.num_workers, expected.job_id,
        expected.shard, expected.num_shards, expected.num_workers));
  }
  LogReplay out;
  out.valid_bytes = kRecordMagicBytes + kRecordHeadBytes + kHeaderBody;
  while (out.records < max_records) {
    KAIROS_ASSIGN_OR_RETURN(std::optional<RecordHead> h, in.Next());
    if (!h.has_value()) break;  // the end, or a torn tail
    KAIROS_ASSIGN_OR_RETURN(std::optional<LogRecord> record, ReadRecord(in, *h));
    if (!record.has_value()) break;  // the torn tail
    visit(*std::move(record));
    ++out.records;
    out.valid_bytes = h->end;
  }
  out.torn_bytes = in.torn_bytes();
  return out;
}

absl::StatusOr<std::unique_ptr<UpdateLog>> UpdateLog::Create(const Env& env,
                                                             const std::string& path,
                                                             const LogHeader& header,
                                                             LogSync sync) {
  KAIROS_ASSIGN_OR_RETURN(RecordWriter writer, RecordWriter::Create(env, LogName(path), kMagic));
  ByteWriter w;
  w.Put<uint32_t>(kFormatVersion);
  w.Put<uint64_t>(header.job_id);
  w.Put<int32_t>(header.shard);
  w.Put<int32_t>(header.num_shards);
  w.Put<int32_t>(header.num_workers);
  writer.Add(static_cast<uint32_t>(LogRecord::Type::kHeader), std::move(w.bytes()));
  KAIROS_RETURN_IF_ERROR(writer.Flush());  // the magic and the header, in one write
  KAIROS_RETURN_IF_ERROR(writer.Sync());
  // The directory entry too, so that a restart finds the log.
  const std::size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  if (absl::Status synced = env.SyncDir(dir); !synced.ok()) return LogName(dir).Failed(synced);
  return std::unique_ptr<UpdateLog>(new UpdateLog(std::move(writer), sync));
}

absl::StatusOr<std::unique_ptr<UpdateLog>> UpdateLog::Continue(const Env& env,
                                                               const std::string& path,
                                                               uint64_t valid_bytes, LogSync sync) {
  KAIROS_ASSIGN_OR_RETURN(RecordWriter writer,
                          RecordWriter::Continue(env, LogName(path), valid_bytes));
  return std::unique_ptr<UpdateLog>(new UpdateLog(std::move(writer), sync));
}

UpdateLog::~UpdateLog() = default;

void UpdateLog::Append(const LogRecord& record) {
  std::vector<Buffer> frames = FramesOf(record);
  std::string fixed = Body(record, frames);
  writer_.Add(static_cast<uint32_t>(record.type), std::move(fixed), std::move(frames));
  ++records_;
}

absl::Status UpdateLog::Commit() {
  const bool any = writer_.pending();
  KAIROS_RETURN_IF_ERROR(writer_.Flush());  // one writev for every queued record
  if (!any) return absl::OkStatus();
  ++commits_;
  if (sync_ == LogSync::kMachine) {
    KAIROS_RETURN_IF_ERROR(writer_.Sync(/*data_only=*/true));
    ++syncs_;
  }
  return absl::OkStatus();
}

}  // namespace kairos::internal
