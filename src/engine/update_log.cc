// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "engine/update_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/byte_io.h"
#include "common/crc32c.h"
#include "common/file_sync.h"

namespace kairos::internal {
namespace {

constexpr char kMagic[8] = {'K', 'U', 'L', 'O', 'G', '0', '0', '1'};
constexpr uint32_t kFormatVersion = 1;
constexpr std::size_t kRecordHead = 16;  // type, crc, length
constexpr int kMaxFrames = 2;
// The fixed fields of a request record, before the frames' sizes.
constexpr std::size_t kRequestFixed = 4 + 4 + 8 + 4 + 4 + 8 + 8 + 8 + 8 + 4 + 4 + 8;

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

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::Status(errno == ENOSPC ? absl::StatusCode::kResourceExhausted
                                      : absl::StatusCode::kInternal,
                      absl::StrFormat("update log %s: %s: %s", path, what, std::strerror(errno)));
}

// The fixed part of a record's body (everything but the request's frames).
std::string Body(const LogRecord& r, const std::vector<Buffer>& frames) {
  ByteWriter w;
  switch (r.type) {
    case LogRecord::Type::kHeader:
      break;  // written by Create
    case LogRecord::Type::kRequest: {
      const EngineRequest& q = r.request;
      w.Put<uint8_t>(static_cast<uint8_t>(q.kind));
      w.Put<uint8_t>(q.pull_after ? 1 : 0);
      w.Put<uint8_t>(static_cast<uint8_t>(frames.size()));
      w.Put<uint8_t>(0);
      w.Put<int32_t>(q.rank);
      w.Put<uint64_t>(q.request_id);
      w.Put<uint32_t>(q.sender);
      w.Put<uint32_t>(q.table);
      w.Put<uint64_t>(q.offset);
      w.Put<uint64_t>(q.length);
      w.Put<int64_t>(q.clock);
      w.Put<uint64_t>(q.timeout_ms);
      w.Put<float>(q.worker_scale);
      w.Put<float>(q.learning_rate);
      w.Put<int64_t>(TimeNanos(r.time));
      for (const Buffer& f : frames) w.Put<uint64_t>(f.size_bytes());
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

// The record head (type, crc, length) followed by `body`; `frames` follow it in the file.
std::string Head(uint32_t type, const std::string& body, const std::vector<Buffer>& frames) {
  uint64_t length = body.size();
  for (const Buffer& f : frames) length += f.size_bytes();
  uint32_t crc = Crc32cExtend(0, &type, sizeof(type));
  crc = Crc32cExtend(crc, &length, sizeof(length));
  crc = Crc32cExtend(crc, body.data(), body.size());
  for (const Buffer& f : frames) crc = Crc32cExtend(crc, f.data(), f.size_bytes());
  const uint32_t crc32v = crc;
  ByteWriter w;
  w.Put<uint32_t>(type);
  w.Put<uint32_t>(crc32v);
  w.Put<uint64_t>(length);
  std::string head = std::move(w.bytes());
  head += body;
  return head;
}

// The frames a request record carries.
std::vector<Buffer> FramesOf(const LogRecord& r) {
  if (r.type != LogRecord::Type::kRequest) return {};
  return r.payloads;
}

absl::Status WriteAll(int fd, const std::string& path, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Errno("write", path);
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return absl::OkStatus();
}

absl::Status Corrupt(const std::string& path, uint64_t at, const std::string& what) {
  return absl::DataLossError(absl::StrFormat("update log %s: byte %d: %s", path, at, what));
}

// Reads exactly n bytes at `at`; false at the end of the file.
bool ReadAt(int fd, uint64_t at, void* out, std::size_t n) {
  char* p = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(at));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    at += static_cast<uint64_t>(r);
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

// True when the file holds only zero bytes from `at` to `end`.
bool ZerosFrom(int fd, uint64_t at, uint64_t end) {
  char buf[1 << 16];
  while (at < end) {
    const std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(sizeof(buf), end - at));
    if (!ReadAt(fd, at, buf, n)) return false;
    if (std::any_of(buf, buf + n, [](char c) { return c != 0; })) return false;
    at += n;
  }
  return true;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

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

}  // namespace

std::string UpdateLogName(int shard, uint64_t segment) {
  if (segment == 0) return absl::StrFormat("shard-%05d.kul", shard);
  return absl::StrFormat("shard-%05d.%06d.kul", shard, segment);
}

std::vector<std::pair<uint64_t, std::string>> UpdateLogSegments(const std::string& dir,
                                                               int shard) {
  std::vector<std::pair<uint64_t, std::string>> out;
  std::error_code ec;
  const std::string first = UpdateLogName(shard);
  const std::string prefix = absl::StrFormat("shard-%05d.", shard);
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name == first) {
      out.push_back({0, e.path().string()});
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
    if (digits && n > 0) out.push_back({n, e.path().string()});
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<LogHeader> ReadUpdateLogHeader(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat("no update log at ", path));
    return Errno("open", path);
  }
  char magic[sizeof(kMagic)];
  if (!ReadAt(fd.get(), 0, magic, sizeof(magic)) ||
      std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) {
    return Corrupt(path, 0, "not an update log (no KULOG001 magic)");
  }
  char head[kRecordHead];
  if (!ReadAt(fd.get(), sizeof(kMagic), head, sizeof(head))) {
    return Corrupt(path, sizeof(kMagic), "no header record");
  }
  uint32_t type, crc;
  uint64_t length;
  std::memcpy(&type, head, 4);
  std::memcpy(&crc, head + 4, 4);
  std::memcpy(&length, head + 8, 8);
  constexpr uint64_t kHeaderBody = 4 + 8 + 4 + 4 + 4;
  if (type != static_cast<uint32_t>(LogRecord::Type::kHeader) || length != kHeaderBody) {
    return Corrupt(path, sizeof(kMagic), "the first record is not a header");
  }
  std::string body(kHeaderBody, '\0');
  if (!ReadAt(fd.get(), sizeof(kMagic) + kRecordHead, body.data(), body.size())) {
    return Corrupt(path, sizeof(kMagic), "the header record is cut short");
  }
  if (Head(type, body, {}).substr(4, 4) != std::string(head + 4, 4)) {
    return Corrupt(path, sizeof(kMagic), "the header record's checksum does not match");
  }
  ByteReader in(body);
  uint32_t version = 0;
  LogHeader h;
  in.Get(&version);
  in.Get(&h.job_id);
  in.Get(&h.shard);
  in.Get(&h.num_shards);
  in.Get(&h.num_workers);
  if (version != kFormatVersion) {
    return Corrupt(path, sizeof(kMagic),
                   absl::StrFormat("format version %d (this build reads %d)", version,
                                   kFormatVersion));
  }
  return h;
}

absl::StatusOr<LogReplay> ReadUpdateLog(const std::string& path, const LogHeader& expected,
                                        const std::function<void(LogRecord)>& visit,
                                        uint64_t max_records) {
  absl::StatusOr<LogHeader> header = ReadUpdateLogHeader(path);
  if (!header.ok()) return header.status();
  if (!(*header == expected)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "update log %s belongs to job %016x shard %d of %d with %d workers, not job %016x "
        "shard %d of %d with %d workers",
        path, header->job_id, header->shard, header->num_shards, header->num_workers,
        expected.job_id, expected.shard, expected.num_shards, expected.num_workers));
  }
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return Errno("open", path);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Errno("stat", path);
  const uint64_t end = static_cast<uint64_t>(st.st_size);
  LogReplay out;
  uint64_t at = sizeof(kMagic) + kRecordHead + 4 + 8 + 4 + 4 + 4;
  out.valid_bytes = at;
  while (at < end && out.records < max_records) {
    char head[kRecordHead];
    if (end - at < kRecordHead || !ReadAt(fd.get(), at, head, sizeof(head))) {
      out.torn_bytes = end - at;
      break;
    }
    uint32_t type = 0, crc = 0;
    uint64_t length = 0;
    std::memcpy(&type, head, 4);
    std::memcpy(&crc, head + 4, 4);
    std::memcpy(&length, head + 8, 8);
    if (type == 0 && length == 0 && ZerosFrom(fd.get(), at, end)) {
      out.torn_bytes = end - at;  // a machine crash left zeros where records were to go
      break;
    }
    if (length > kMaxLogRecordBytes) {
      return Corrupt(path, at, absl::StrFormat("a record of %d bytes (at most %d)", length,
                                               kMaxLogRecordBytes));
    }
    if (length > end - at - kRecordHead) {
      out.torn_bytes = end - at;  // the record was being written
      break;
    }
    const uint64_t next = at + kRecordHead + length;
    auto bad = [&](const std::string& what) -> absl::StatusOr<LogReplay> {
      if (next == end) {  // the last record: written in part when the process died
        out.torn_bytes = end - at;
        return out;
      }
      return Corrupt(path, at, what);
    };
    LogRecord record;
    std::string fixed;
    std::vector<Buffer> frames;
    if (type == static_cast<uint32_t>(LogRecord::Type::kRequest)) {
      if (length < kRequestFixed) return bad("a request record too short");
      fixed.resize(kRequestFixed);
      if (!ReadAt(fd.get(), at + kRecordHead, fixed.data(), fixed.size())) {
        return Errno("read", path);
      }
      const auto nframes = static_cast<uint8_t>(fixed[2]);
      if (nframes > kMaxFrames || length < kRequestFixed + 8 * nframes) {
        return bad(absl::StrFormat("a request record with %d frames", nframes));
      }
      std::string sizes(8 * nframes, '\0');
      if (!ReadAt(fd.get(), at + kRecordHead + kRequestFixed, sizes.data(), sizes.size())) {
        return Errno("read", path);
      }
      uint64_t total = kRequestFixed + sizes.size();
      std::vector<uint64_t> frame_bytes(nframes);
      for (int i = 0; i < nframes; ++i) {
        std::memcpy(&frame_bytes[i], sizes.data() + 8 * i, 8);
        if (frame_bytes[i] % sizeof(float) != 0 || frame_bytes[i] > length - total) {
          return bad(absl::StrFormat("frame %d of %d bytes does not fit the record", i,
                                     frame_bytes[i]));
        }
        total += frame_bytes[i];
      }
      if (total != length) return bad("the frames do not fill the record");
      fixed += sizes;
      uint64_t frame_at = at + kRecordHead + fixed.size();
      for (uint64_t bytes : frame_bytes) {
        Buffer f = Buffer::Allocate(bytes / sizeof(float));
        if (bytes > 0 && !ReadAt(fd.get(), frame_at, f.data(), bytes)) {
          return Errno("read", path);
        }
        frame_at += bytes;
        frames.push_back(std::move(f));
      }
    } else if (length <= 64 ||
               (type == static_cast<uint32_t>(LogRecord::Type::kBase) &&
                length <= kMaxLogBaseBytes)) {
      fixed.resize(length);
      if (!ReadAt(fd.get(), at + kRecordHead, fixed.data(), fixed.size())) {
        return Errno("read", path);
      }
    } else {
      return bad(absl::StrFormat("a record of type %d and %d bytes", type, length));
    }
    const std::string expect_head =
        Head(type, fixed, frames);  // recomputes the checksum over what was read
    uint32_t computed;
    std::memcpy(&computed, expect_head.data() + 4, 4);
    if (computed != crc) {
      return bad(absl::StrFormat("the record's checksum does not match (type %d, %d bytes)",
                                 type, length));
    }
    if (type == static_cast<uint32_t>(LogRecord::Type::kRequest)) {
      ByteReader in(fixed);
      uint8_t kind = 0, pull_after = 0, nframes = 0, pad = 0;
      int64_t ns = 0;
      EngineRequest& q = record.request;
      in.Get(&kind);
      in.Get(&pull_after);
      in.Get(&nframes);
      in.Get(&pad);
      in.Get(&q.rank);
      in.Get(&q.request_id);
      in.Get(&q.sender);
      in.Get(&q.table);
      in.Get(&q.offset);
      in.Get(&q.length);
      in.Get(&q.clock);
      in.Get(&q.timeout_ms);
      in.Get(&q.worker_scale);
      in.Get(&q.learning_rate);
      in.Get(&ns);
      if (kind > static_cast<uint8_t>(EngineRequest::Kind::kPullSparse)) {
        return Corrupt(path, at, absl::StrFormat("a request of unknown kind %d", kind));
      }
      q.kind = static_cast<EngineRequest::Kind>(kind);
      q.pull_after = pull_after != 0;
      record.type = LogRecord::Type::kRequest;
      record.time = FromNanos(ns);
      record.payloads = std::move(frames);
    } else {
      absl::StatusOr<LogRecord> parsed = ParseBody(type, fixed);
      if (!parsed.ok()) return Corrupt(path, at, std::string(parsed.status().message()));
      record = *std::move(parsed);
    }
    visit(std::move(record));
    ++out.records;
    at = next;
    out.valid_bytes = at;
  }
  return out;
}

absl::StatusOr<std::unique_ptr<UpdateLog>> UpdateLog::Create(const std::string& path,
                                                             const LogHeader& header,
                                                             LogSync sync) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("create", path);
  ByteWriter w;
  w.Put<uint32_t>(kFormatVersion);
  w.Put<uint64_t>(header.job_id);
  w.Put<int32_t>(header.shard);
  w.Put<int32_t>(header.num_shards);
  w.Put<int32_t>(header.num_workers);
  std::string bytes(kMagic, sizeof(kMagic));
  bytes += Head(static_cast<uint32_t>(LogRecord::Type::kHeader), std::move(w.bytes()), {});
  auto log = std::unique_ptr<UpdateLog>(new UpdateLog(path, fd, 0, sync));
  if (absl::Status s = WriteAll(fd, path, bytes.data(), bytes.size()); !s.ok()) return s;
  if (::fsync(fd) != 0) return Errno("fsync", path);
  log->bytes_ = bytes.size();
  // The directory entry too, so that a restart finds the log.
  const std::size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0                ? "/"
                                                      : path.substr(0, slash);
  if (!SyncDirectory(dir)) return Errno("sync directory", dir);
  return log;
}

absl::StatusOr<std::unique_ptr<UpdateLog>> UpdateLog::Continue(const std::string& path,
                                                               uint64_t valid_bytes,
                                                               LogSync sync) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Errno("open", path);
  auto log = std::unique_ptr<UpdateLog>(new UpdateLog(path, fd, valid_bytes, sync));
  if (::ftruncate(fd, static_cast<off_t>(valid_bytes)) != 0) return Errno("truncate", path);
  if (::lseek(fd, static_cast<off_t>(valid_bytes), SEEK_SET) < 0) return Errno("seek", path);
  if (::fsync(fd) != 0) return Errno("fsync", path);
  return log;
}

UpdateLog::~UpdateLog() {
  if (fd_ >= 0) ::close(fd_);
}

void UpdateLog::Append(const LogRecord& record) {
  std::vector<Buffer> frames = FramesOf(record);
  Pending p;
  p.head = Head(static_cast<uint32_t>(record.type), Body(record, frames), frames);
  p.payloads = std::move(frames);
  pending_.push_back(std::move(p));
  ++records_;
}

absl::Status UpdateLog::Commit() {
  if (!broken_.ok()) return broken_;
  if (pending_.empty()) return absl::OkStatus();
  std::vector<iovec> iov;
  uint64_t total = 0;
  for (const Pending& p : pending_) {
    iov.push_back({const_cast<char*>(p.head.data()), p.head.size()});
    total += p.head.size();
    for (const Buffer& f : p.payloads) {
      if (f.size_bytes() == 0) continue;
      iov.push_back({f.data(), f.size_bytes()});
      total += f.size_bytes();
    }
  }
  // writev takes at most IOV_MAX entries and may write in part: go on where it stopped.
  std::size_t first = 0;
  while (first < iov.size()) {
    const int n = static_cast<int>(std::min<std::size_t>(iov.size() - first, IOV_MAX));
    const ssize_t w = ::writev(fd_, iov.data() + first, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      broken_ = Errno("write", path_);
      return broken_;
    }
    std::size_t left = static_cast<std::size_t>(w);
    while (first < iov.size() && left >= iov[first].iov_len) {
      left -= iov[first].iov_len;
      ++first;
    }
    if (left > 0) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  pending_.clear();
  bytes_ += total;
  ++commits_;
  if (sync_ == LogSync::kMachine) {
    if (::fdatasync(fd_) != 0) {
      broken_ = Errno("fdatasync", path_);
      return broken_;
    }
    ++syncs_;
  }
  return absl::OkStatus();
}

}  // namespace kairos::internal
