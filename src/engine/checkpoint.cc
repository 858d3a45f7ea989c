// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "engine/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <span>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "common/byte_io.h"
#include "common/file_sync.h"
#include "common/partition.h"
#include "kairos/status.h"

namespace kairos::internal {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'K', 'C', 'K', 'P', 'T', '0', '0', '1'};
constexpr uint32_t kFormatVersion = 1;
constexpr std::size_t kRecordHeaderBytes = 16;  // type, crc, length
// The largest record a reader accepts before it allocates: a dense chunk is at most
// kMaxChunkElements floats of values and (with Adam) twice that of state; sparse records
// are written in parts far below this.
constexpr uint64_t kMaxRecordBytes = uint64_t{13} * kMaxChunkElements + 4096;
constexpr uint64_t kSparseRowsPerRecord = 65536;

enum RecordType : uint32_t { kHeader = 1, kDense = 2, kSparse = 3, kEnd = 4 };

uint32_t RecordCrc(uint32_t type, uint64_t length, const std::string& payload) {
  char head[12];
  std::memcpy(head, &type, 4);
  std::memcpy(head + 4, &length, 8);
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(head), sizeof(head));
  // zlib's length is a uInt: feed large payloads in parts.
  const char* p = payload.data();
  std::size_t left = payload.size();
  while (left > 0) {
    const uInt n = static_cast<uInt>(std::min<std::size_t>(left, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(p), n);
    p += n;
    left -= n;
  }
  return static_cast<uint32_t>(crc);
}

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::UnavailableError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

class FileOut {
 public:
  static absl::StatusOr<FileOut> Open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Errno("cannot create", path);
    return FileOut(fd, path);
  }
  FileOut(FileOut&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }
  ~FileOut() {
    if (fd_ >= 0) ::close(fd_);
  }
  absl::Status Write(const char* p, std::size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        return Errno("cannot write", path_);
      }
      p += w;
      n -= static_cast<std::size_t>(w);
    }
    return absl::OkStatus();
  }
  absl::Status Record(uint32_t type, const std::string& payload) {
    const uint64_t length = payload.size();
    const uint32_t crc = RecordCrc(type, length, payload);
    char head[kRecordHeaderBytes];
    std::memcpy(head, &type, 4);
    std::memcpy(head + 4, &crc, 4);
    std::memcpy(head + 8, &length, 8);
    KAIROS_RETURN_IF_ERROR(Write(head, sizeof(head)));
    ++records_;
    return Write(payload.data(), payload.size());
  }
  absl::Status Close(bool sync) {
    if (sync && ::fsync(fd_) != 0) return Errno("cannot fsync", path_);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return Errno("cannot close", path_);
    return absl::OkStatus();
  }
  uint64_t records() const { return records_; }

 private:
  FileOut(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
  uint64_t records_ = 0;
};

std::string HeaderPayload(const ShardSnapshot& s) {
  ByteWriter w;
  w.Put<uint32_t>(kFormatVersion);
  w.Put<int32_t>(s.shard);
  w.Put<int32_t>(s.num_shards);
  w.Put<int64_t>(s.clock);
  w.Put<uint64_t>(s.chunk_elements);
  w.Put<uint32_t>(static_cast<uint32_t>(s.tables.size()));
  for (const CheckpointTable& t : s.tables) {
    w.PutString(t.name);
    w.Put<uint8_t>(static_cast<uint8_t>(t.kind));
    w.Put<uint64_t>(t.size);
    w.Put<uint32_t>(t.row_width);
    w.PutString(t.updater);
    w.Put<uint32_t>(t.state_per_element);
  }
  return std::move(w.bytes());
}

// Checked multiplication: false on overflow.
bool Mul(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_mul_overflow(a, b, out); }

absl::Status Corrupt(const std::string& path, uint64_t at, const std::string& what) {
  return absl::DataLossError(
      absl::StrFormat("checkpoint %s is torn or corrupt at byte %d: %s", path, at, what));
}

absl::Status ParseHeader(const std::string& payload, ShardSnapshot* s) {
  ByteReader r(payload);
  uint32_t version = 0, ntables = 0;
  int32_t shard = 0, num_shards = 0;
  if (!r.Get(&version)) return absl::InvalidArgumentError("short header");
  if (version != kFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("format version ", version, ", this build reads ", kFormatVersion));
  }
  if (!r.Get(&shard) || !r.Get(&num_shards) || !r.Get(&s->clock) ||
      !r.Get(&s->chunk_elements) || !r.Get(&ntables)) {
    return absl::InvalidArgumentError("short header");
  }
  if (num_shards < 1 || num_shards > kMaxNodes || shard < 0 || shard >= num_shards) {
    return absl::InvalidArgumentError(absl::StrCat("shard ", shard, " of ", num_shards));
  }
  if (ntables > kMaxTables) return absl::InvalidArgumentError(absl::StrCat(ntables, " tables"));
  s->shard = shard;
  s->num_shards = num_shards;
  for (uint32_t i = 0; i < ntables; ++i) {
    CheckpointTable t;
    uint8_t kind = 0;
    if (!r.GetString(kMaxTableNameLength, &t.name) || !r.Get(&kind) || !r.Get(&t.size) ||
        !r.Get(&t.row_width) || !r.GetString(kMaxUpdaterNameLength, &t.updater) ||
        !r.Get(&t.state_per_element)) {
      return absl::InvalidArgumentError(absl::StrCat("short description of table ", i));
    }
    if (kind > 1 || t.size > kMaxTableElements || t.row_width > kMaxRowWidth ||
        t.state_per_element > 64) {
      return absl::InvalidArgumentError(absl::StrCat("table ", i, " out of bounds"));
    }
    t.kind = static_cast<TableKind>(kind);
    s->tables.push_back(std::move(t));
  }
  if (r.left() != 0) return absl::InvalidArgumentError("bytes after the tables");
  return absl::OkStatus();
}

absl::Status ParseDense(const std::string& payload, ShardSnapshot* s) {
  ByteReader r(payload);
  ShardSnapshot::Dense d;
  if (!r.Get(&d.table) || !r.Get(&d.begin) || !r.Get(&d.end) || !r.Get(&d.version) ||
      !r.Get(&d.learning_rate)) {
    return absl::InvalidArgumentError("short dense record");
  }
  if (d.table >= s->tables.size() || s->tables[d.table].kind != TableKind::kDense ||
      d.begin >= d.end || d.end > s->tables[d.table].size ||
      d.end - d.begin > kMaxChunkElements) {
    return absl::InvalidArgumentError(
        absl::StrCat("dense record of table ", d.table, " [", d.begin, ", ", d.end, ")"));
  }
  const uint64_t n = d.end - d.begin;
  uint64_t state_n = 0;
  Mul(n, s->tables[d.table].state_per_element, &state_n);  // n <= 2^28, spe <= 64
  if (payload.size() != 4 + 8 * 3 + 4 + 8 + n * 4 + 8 + state_n * 4) {
    return absl::InvalidArgumentError("dense record of the wrong length");
  }
  d.values = Buffer::Allocate(n);
  d.state.resize(state_n);
  if (!r.GetArray(n, d.values.data()) || !r.GetArray(state_n, d.state.data())) {
    return absl::InvalidArgumentError("dense record's arrays");
  }
  s->dense.push_back(std::move(d));
  return absl::OkStatus();
}

absl::Status ParseSparse(const std::string& payload, ShardSnapshot* s) {
  ByteReader r(payload);
  ShardSnapshot::Sparse p;
  uint64_t n = 0;
  if (!r.Get(&p.table) || !r.Get(&p.version) || !r.Get(&p.learning_rate) || !r.Get(&p.stride) ||
      !r.Get(&n)) {
    return absl::InvalidArgumentError("short sparse record");
  }
  if (p.table >= s->tables.size() || s->tables[p.table].kind != TableKind::kSparse) {
    return absl::InvalidArgumentError(absl::StrCat("sparse record of table ", p.table));
  }
  const CheckpointTable& t = s->tables[p.table];
  if (p.stride != t.row_width * (1 + t.state_per_element)) {
    return absl::InvalidArgumentError(absl::StrCat("sparse record of stride ", p.stride));
  }
  // n rows: n keys, n steps, n x stride floats, each array with its count.
  uint64_t row_bytes = 0, rows_bytes = 0;
  if (n > kSparseRowsPerRecord || !Mul(p.stride, 4, &row_bytes) ||
      !Mul(n, 16 + row_bytes, &rows_bytes) || r.left() != rows_bytes + 24) {
    return absl::InvalidArgumentError("sparse record of the wrong length");
  }
  p.keys.resize(n);
  p.steps.resize(n);
  p.rows.resize(n * p.stride);
  if (!r.GetArray(n, p.keys.data()) || !r.GetArray(n, p.steps.data()) ||
      !r.GetArray(n * p.stride, p.rows.data())) {
    return absl::InvalidArgumentError("sparse record's arrays");
  }
  s->sparse.push_back(std::move(p));
  return absl::OkStatus();
}

// "clock-000000000120" -> 120.
bool ParseDirName(const std::string& name, int64_t* clock) {
  absl::string_view v = name;
  return absl::ConsumePrefix(&v, "clock-") && absl::SimpleAtoi(v, clock) && *clock >= 0;
}

// "shard-00001-of-00004.kcp" -> 1, 4.
bool ParseFileName(const std::string& name, int* shard, int* of) {
  return std::sscanf(name.c_str(), "shard-%d-of-%d.kcp", shard, of) == 2 &&
         name == CheckpointFileName(*shard, *of);
}

// The files of one checkpoint directory, in shard order, when all are there.
absl::StatusOr<std::vector<std::string>> CompleteFiles(const fs::path& dir) {
  std::map<int, std::string> by_shard;
  std::set<int> counts;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    int shard = 0, of = 0;
    if (!e.is_regular_file() || !ParseFileName(e.path().filename().string(), &shard, &of)) {
      continue;
    }
    by_shard[shard] = e.path().string();
    counts.insert(of);
  }
  if (ec) return absl::UnavailableError(absl::StrCat("cannot list ", dir.string(), ": ",
                                                     ec.message()));
  if (counts.empty()) {
    return absl::NotFoundError(absl::StrCat("no checkpoint files in ", dir.string()));
  }
  if (counts.size() > 1) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir.string(), " holds files of different shard counts"));
  }
  const int of = *counts.begin();
  if (static_cast<int>(by_shard.size()) != of) {
    return absl::FailedPreconditionError(absl::StrCat(dir.string(), " holds ", by_shard.size(),
                                                      " of its ", of, " shard files"));
  }
  std::vector<std::string> files;
  for (auto& [shard, path] : by_shard) files.push_back(path);
  return files;
}

}  // namespace

std::vector<CheckpointTable> CheckpointTables(const JobConfig& job, Shard& shard) {
  std::vector<CheckpointTable> out;
  for (std::size_t i = 0; i < job.tables.size(); ++i) {
    const TableSpec& ts = job.tables[i];
    CheckpointTable t;
    t.name = ts.name;
    t.kind = ts.kind;
    t.size = ts.size;
    t.row_width = ts.row_width;
    t.updater = ts.updater.name;
    t.state_per_element =
        static_cast<uint32_t>(shard.tables()[i].updater->state_per_element());
    out.push_back(std::move(t));
  }
  return out;
}

std::string CheckpointDirName(int64_t clock) { return absl::StrFormat("clock-%012d", clock); }

std::string CheckpointFileName(int shard, int num_shards) {
  return absl::StrFormat("shard-%05d-of-%05d.kcp", shard, num_shards);
}

absl::StatusOr<std::string> WriteCheckpoint(const ShardSnapshot& s, const std::string& root,
                                            bool sync) {
  const fs::path dir = fs::path(root) / CheckpointDirName(s.clock);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot create ", dir.string(), ": ", ec.message()));
  }
  const std::string name = CheckpointFileName(s.shard, s.num_shards);
  const std::string final_path = (dir / name).string();
  const std::string temp_path = (dir / (name + ".tmp")).string();
  {
    KAIROS_ASSIGN_OR_RETURN(FileOut out, FileOut::Open(temp_path));
    KAIROS_RETURN_IF_ERROR(out.Write(kMagic, sizeof(kMagic)));
    KAIROS_RETURN_IF_ERROR(out.Record(kHeader, HeaderPayload(s)));
    for (const ShardSnapshot::Dense& d : s.dense) {
      ByteWriter w;
      w.Put(d.table);
      w.Put(d.begin);
      w.Put(d.end);
      w.Put(d.version);
      w.Put(d.learning_rate);
      w.PutArray<float>(d.values.span());
      w.PutArray<float>(d.state);
      KAIROS_RETURN_IF_ERROR(out.Record(kDense, w.bytes()));
    }
    for (const ShardSnapshot::Sparse& p : s.sparse) {
      const uint64_t rows = p.keys.size();
      for (uint64_t first = 0; first == 0 || first < rows; first += kSparseRowsPerRecord) {
        const uint64_t n = std::min(kSparseRowsPerRecord, rows - first);
        ByteWriter w;
        w.Put(p.table);
        w.Put(p.version);
        w.Put(p.learning_rate);
        w.Put(p.stride);
        w.Put<uint64_t>(n);
        w.PutArray<uint64_t>(std::span<const uint64_t>(p.keys).subspan(first, n));
        w.PutArray<uint64_t>(std::span<const uint64_t>(p.steps).subspan(first, n));
        w.PutArray<float>(std::span<const float>(p.rows).subspan(first * p.stride, n * p.stride));
        KAIROS_RETURN_IF_ERROR(out.Record(kSparse, w.bytes()));
      }
    }
    ByteWriter end;
    end.Put<uint64_t>(out.records());
    KAIROS_RETURN_IF_ERROR(out.Record(kEnd, end.bytes()));
    KAIROS_RETURN_IF_ERROR(out.Close(sync));
  }
  if (std::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    return Errno("cannot rename to", final_path);
  }
  if (sync && !SyncDirectory(dir.string())) {
    return Errno("cannot sync directory", dir.string());
  }
  return final_path;
}

absl::StatusOr<ShardSnapshot> ReadCheckpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open checkpoint ", path));
  std::error_code ec;
  const uint64_t file_size = fs::file_size(path, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot stat ", path, ": ", ec.message()));
  char magic[sizeof(kMagic)];
  if (!in.read(magic, sizeof(magic)) || std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) {
    return Corrupt(path, 0, "not a kairos checkpoint (no KCKPT001 magic)");
  }
  ShardSnapshot s;
  uint64_t at = sizeof(kMagic);
  uint64_t records = 0;
  bool header = false;
  std::string payload;
  for (;;) {
    char head[kRecordHeaderBytes];
    if (at + kRecordHeaderBytes > file_size || !in.read(head, sizeof(head))) {
      return Corrupt(path, at, "the file ends before its END record");
    }
    uint32_t type = 0, crc = 0;
    uint64_t length = 0;
    std::memcpy(&type, head, 4);
    std::memcpy(&crc, head + 4, 4);
    std::memcpy(&length, head + 8, 8);
    if (length > kMaxRecordBytes || length > file_size - at - kRecordHeaderBytes) {
      return Corrupt(path, at, absl::StrCat("a record of ", length, " bytes"));
    }
    payload.resize(length);
    if (!in.read(payload.data(), static_cast<std::streamsize>(length))) {
      return Corrupt(path, at, "short record");
    }
    if (RecordCrc(type, length, payload) != crc) {
      return Corrupt(path, at, "checksum mismatch");
    }
    absl::Status parsed;
    if (!header && type != kHeader) {
      parsed = absl::InvalidArgumentError("the first record is not the header");
    } else if (type == kHeader) {
      parsed = header ? absl::InvalidArgumentError("a second header") : ParseHeader(payload, &s);
      header = true;
    } else if (type == kDense) {
      parsed = ParseDense(payload, &s);
    } else if (type == kSparse) {
      parsed = ParseSparse(payload, &s);
    } else if (type == kEnd) {
      uint64_t count = 0;
      ByteReader r(payload);
      if (!r.Get(&count) || r.left() != 0 || count != records) {
        return Corrupt(path, at, "the END record does not count the records");
      }
      if (at + kRecordHeaderBytes + length != file_size) {
        return Corrupt(path, at, "bytes after the END record");
      }
      return s;
    } else {
      parsed = absl::InvalidArgumentError(absl::StrCat("unknown record type ", type));
    }
    if (!parsed.ok()) return Corrupt(path, at, std::string(parsed.message()));
    ++records;
    at += kRecordHeaderBytes + length;
  }
}

absl::StatusOr<std::vector<std::string>> FindCheckpoint(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    return absl::NotFoundError(absl::StrCat("no checkpoint directory ", path));
  }
  int64_t clock = 0;
  if (ParseDirName(fs::path(path).filename().string(), &clock)) return CompleteFiles(path);
  // A root: the complete checkpoint of the highest clock.
  std::map<int64_t, fs::path, std::greater<>> dirs;
  for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
    if (e.is_directory() && ParseDirName(e.path().filename().string(), &clock)) {
      dirs[clock] = e.path();
    }
  }
  for (const auto& [c, dir] : dirs) {
    absl::StatusOr<std::vector<std::string>> files = CompleteFiles(dir);
    if (files.ok()) return files;
  }
  return absl::NotFoundError(absl::StrCat("no complete checkpoint in ", path));
}

namespace {

// Checks snapshot `s` (read from `path`) against the job's tables.
absl::Status CheckTables(const ShardSnapshot& s, const std::vector<CheckpointTable>& tables,
                         const std::string& path) {
  if (s.tables.size() != tables.size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the checkpoint ", path, " has ", s.tables.size(), " tables, the job ", tables.size()));
  }
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (!(s.tables[i] == tables[i])) {
      const CheckpointTable& a = s.tables[i];
      const CheckpointTable& b = tables[i];
      return absl::FailedPreconditionError(absl::StrFormat(
          "table %d is '%s' (%s, size %d, row_width %d, updater %s) in the checkpoint %s "
          "but '%s' (%s, size %d, row_width %d, updater %s) in the job",
          i, a.name, a.kind == TableKind::kSparse ? "sparse" : "dense", a.size, a.row_width,
          a.updater, path, b.name, b.kind == TableKind::kSparse ? "sparse" : "dense", b.size,
          b.row_width, b.updater));
    }
  }
  return absl::OkStatus();
}

// Copies what shard `shard` of `num_shards` owns of snapshot `s` into it.
void Apply(Shard& shard, int num_shards, const ShardSnapshot& s) {
  for (const ShardSnapshot::Dense& d : s.dense) {
    ShardTable& t = shard.tables()[d.table];
    const std::size_t per = t.updater->state_per_element();
    for (ShardChunk& c : t.chunks) {
      const uint64_t b = std::max(c.chunk.begin, d.begin);
      const uint64_t e = std::min(c.chunk.end, d.end);
      if (b >= e) continue;
      std::copy_n(d.values.data() + (b - d.begin), e - b,
                  c.values.data() + (b - c.chunk.begin));
      std::copy_n(d.state.data() + (b - d.begin) * per, (e - b) * per,
                  c.state.data() + (b - c.chunk.begin) * per);
      c.version = std::max(c.version, d.version);
      c.learning_rate = d.learning_rate;
    }
  }
  for (const ShardSnapshot::Sparse& p : s.sparse) {
    ShardTable& t = shard.tables()[p.table];
    SparseShard& held = *t.sparse;
    held.lane.version = std::max(held.lane.version, p.version);
    held.lane.learning_rate = p.learning_rate;
    const uint32_t width = held.rows.width();
    for (std::size_t i = 0; i < p.keys.size(); ++i) {
      if (ShardOfKey(p.keys[i], num_shards) != shard.index()) continue;
      const uint32_t slot = held.rows.FindOrCreate(p.keys[i], t.spec.init);
      const float* row = p.rows.data() + i * p.stride;
      std::copy_n(row, width, held.rows.values(slot).data());
      std::span<float> state = held.rows.state(slot);
      std::copy_n(row + width, state.size(), state.data());
      held.rows.step(slot) = p.steps[i];
    }
  }
}

// Every worker starts as if it had just read the restored values: no staleness yet.
void ResetReads(Shard& shard) {
  for (ShardTable& t : shard.tables()) {
    for (ShardChunk& c : t.chunks) c.version_read.assign(c.version_read.size(), c.version);
    if (t.sparse) {
      ShardChunk& lane = t.sparse->lane;
      lane.version_read.assign(lane.version_read.size(), lane.version);
    }
  }
}

}  // namespace

absl::StatusOr<int64_t> RestoreShard(Shard& shard, int num_shards, const JobConfig& job,
                                     const std::vector<std::string>& files) {
  const std::vector<CheckpointTable> tables = CheckpointTables(job, shard);
  std::optional<int64_t> clock;
  std::vector<bool> seen(files.size(), false);
  for (const std::string& path : files) {
    KAIROS_ASSIGN_OR_RETURN(ShardSnapshot s, ReadCheckpoint(path));
    if (s.num_shards != static_cast<int>(files.size()) || seen[s.shard]) {
      return absl::FailedPreconditionError(absl::StrCat(
          path, " is shard ", s.shard, " of ", s.num_shards, ", in a checkpoint of ",
          files.size(), " files"));
    }
    seen[s.shard] = true;
    if (clock.has_value() && *clock != s.clock) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " was taken at clock ", s.clock, ", the others at ", *clock));
    }
    clock = s.clock;
    KAIROS_RETURN_IF_ERROR(CheckTables(s, tables, path));
    Apply(shard, num_shards, s);
  }
  ResetReads(shard);
  return clock.value_or(0);
}

absl::Status RestoreOwnShard(Shard& shard, int num_shards, const JobConfig& job,
                             const std::string& path) {
  KAIROS_ASSIGN_OR_RETURN(ShardSnapshot s, ReadCheckpoint(path));
  if (s.shard != shard.index() || s.num_shards != num_shards) {
    return absl::FailedPreconditionError(absl::StrCat(path, " is shard ", s.shard, " of ",
                                                      s.num_shards, ", not shard ",
                                                      shard.index(), " of ", num_shards));
  }
  KAIROS_RETURN_IF_ERROR(CheckTables(s, CheckpointTables(job, shard), path));
  Apply(shard, num_shards, s);
  ResetReads(shard);
  return absl::OkStatus();
}

}  // namespace kairos::internal
