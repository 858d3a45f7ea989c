// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "engine/checkpoint.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <span>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "common/byte_io.h"
#include "common/partition.h"
#include "common/record_file.h"
#include "kairos/status.h"

namespace kairos::internal {
namespace {

namespace fs = std::filesystem;

// zlib's CRC-32: the checksum of the records of KCKPT001 files (read, no longer written).
uint32_t ZlibCrc32Extend(uint32_t crc, const void* p, std::size_t n) {
  uLong c = crc;
  const auto* b = static_cast<const Bytef*>(p);
  while (n > 0) {  // zlib's length is a uInt: large payloads in parts
    const uInt k = static_cast<uInt>(std::min<std::size_t>(n, std::size_t{1} << 30));
    c = crc32(c, b, k);
    b += k;
    n -= k;
  }
  return static_cast<uint32_t>(c);
}

// The magic of the files written; files of the previous release (zlib's CRC-32) are read.
constexpr absl::string_view kMagic("KCKPT002", kRecordMagicBytes);
constexpr RecordFormat kFormats[] = {
    {kMagic},  // CRC-32C
    {absl::string_view("KCKPT001", kRecordMagicBytes), &ZlibCrc32Extend},
};
// The version of the records' contents (the HEADER's first field), written; version 1 (no
// parent clock in the HEADER, no REMOVED records) is read too.
constexpr uint32_t kFormatVersion = 2;
// The largest record a reader accepts before it allocates: a dense chunk is at most
// kMaxChunkElements floats of values and (with Adam) twice that of state; sparse records
// are written in parts far below this.
constexpr uint64_t kMaxRecordBytes = uint64_t{13} * kMaxChunkElements + 4096;
constexpr uint64_t kSparseRowsPerRecord = 65536;
constexpr uint64_t kRemovedKeysPerRecord = 1 << 20;

enum RecordType : uint32_t { kHeader = 1, kDense = 2, kSparse = 3, kEnd = 4, kRemoved = 5 };

RecordFileName CheckpointName(const std::string& path) {
  return {path, "checkpoint", absl::StatusCode::kUnavailable};
}

std::string HeaderPayload(const ShardSnapshot& s) {
  ByteWriter w;
  w.Put<uint32_t>(kFormatVersion);
  w.Put<int32_t>(s.shard);
  w.Put<int32_t>(s.num_shards);
  w.Put<int64_t>(s.clock);
  w.Put<int64_t>(s.delta_of);
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

std::string DensePayload(const ShardSnapshot::Dense& d) {
  ByteWriter w;
  w.Put(d.table);
  w.Put(d.begin);
  w.Put(d.end);
  w.Put(d.version);
  w.Put(d.learning_rate);
  w.PutArray<float>(d.values.span());
  w.PutArray<float>(d.state);
  return std::move(w.bytes());
}

// Rows [first, first + n) of `p`.
std::string SparsePayload(const ShardSnapshot::Sparse& p, uint64_t first, uint64_t n) {
  ByteWriter w;
  w.Put(p.table);
  w.Put(p.version);
  w.Put(p.learning_rate);
  w.Put(p.stride);
  w.Put<uint64_t>(n);
  w.PutArray<uint64_t>(std::span<const uint64_t>(p.keys).subspan(first, n));
  w.PutArray<uint64_t>(std::span<const uint64_t>(p.steps).subspan(first, n));
  w.PutArray<float>(std::span<const float>(p.rows).subspan(first * p.stride, n * p.stride));
  return std::move(w.bytes());
}

// Keys [first, first + n) of `r`.
std::string RemovedPayload(const ShardSnapshot::Removed& r, uint64_t first, uint64_t n) {
  ByteWriter w;
  w.Put(r.table);
  w.Put<uint64_t>(n);
  w.PutArray<uint64_t>(std::span<const uint64_t>(r.keys).subspan(first, n));
  return std::move(w.bytes());
}

// Writes every record of `s` but the END, each as soon as it is made (a dense chunk's can
// be large), and returns how many.
absl::StatusOr<uint64_t> WriteRecords(RecordWriter& out, const ShardSnapshot& s) {
  uint64_t records = 0;
  auto put = [&](RecordType type, std::string payload) {
    out.Add(type, std::move(payload));
    ++records;
    return out.Flush();
  };
  KAIROS_RETURN_IF_ERROR(put(kHeader, HeaderPayload(s)));  // after the magic, in one write
  for (const ShardSnapshot::Dense& d : s.dense) {
    KAIROS_RETURN_IF_ERROR(put(kDense, DensePayload(d)));
  }
  for (const ShardSnapshot::Sparse& p : s.sparse) {
    const uint64_t rows = p.keys.size();
    for (uint64_t first = 0; first == 0 || first < rows; first += kSparseRowsPerRecord) {
      KAIROS_RETURN_IF_ERROR(
          put(kSparse, SparsePayload(p, first, std::min(kSparseRowsPerRecord, rows - first))));
    }
  }
  for (const ShardSnapshot::Removed& r : s.removed) {
    for (uint64_t first = 0; first < r.keys.size(); first += kRemovedKeysPerRecord) {
      KAIROS_RETURN_IF_ERROR(
          put(kRemoved,
              RemovedPayload(r, first, std::min(kRemovedKeysPerRecord, r.keys.size() - first))));
    }
  }
  return records;
}

// Checked multiplication: false on overflow.
bool Mul(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_mul_overflow(a, b, out); }

absl::Status ParseHeader(const std::string& payload, ShardSnapshot* s) {
  ByteReader r(payload);
  uint32_t version = 0, ntables = 0;
  int32_t shard = 0, num_shards = 0;
  if (!r.Get(&version)) return absl::InvalidArgumentError("short header");
  if (version != 1 && version != kFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("format version ", version, ", this build reads 1 to ", kFormatVersion));
  }
  s->delta_of = -1;
  if (!r.Get(&shard) || !r.Get(&num_shards) || !r.Get(&s->clock) ||
      (version >= 2 && !r.Get(&s->delta_of)) || !r.Get(&s->chunk_elements) || !r.Get(&ntables)) {
    return absl::InvalidArgumentError("short header");
  }
  if (s->clock < 0 || s->delta_of < -1 || s->delta_of >= s->clock) {
    return absl::InvalidArgumentError(
        absl::StrCat("clock ", s->clock, " chained to clock ", s->delta_of));
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

absl::Status ParseRemoved(const std::string& payload, ShardSnapshot* s) {
  ByteReader r(payload);
  ShardSnapshot::Removed p;
  uint64_t n = 0;
  if (!r.Get(&p.table) || !r.Get(&n)) return absl::InvalidArgumentError("short removed record");
  if (s->delta_of < 0) return absl::InvalidArgumentError("removed keys in a whole checkpoint");
  if (p.table >= s->tables.size() || s->tables[p.table].kind != TableKind::kSparse) {
    return absl::InvalidArgumentError(absl::StrCat("removed record of table ", p.table));
  }
  if (n > kRemovedKeysPerRecord || r.left() != 8 + n * 8) {
    return absl::InvalidArgumentError("removed record of the wrong length");
  }
  p.keys.resize(n);
  if (!r.GetArray(n, p.keys.data())) return absl::InvalidArgumentError("removed record's keys");
  s->removed.push_back(std::move(p));
  return absl::OkStatus();
}

// Any record but the END; `first`: the first of the file, which must be the header.
absl::Status ParseRecord(uint32_t type, const std::string& payload, bool first, ShardSnapshot* s) {
  if (first && type != kHeader) {
    return absl::InvalidArgumentError("the first record is not the header");
  }
  switch (type) {
    case kHeader:
      return first ? ParseHeader(payload, s) : absl::InvalidArgumentError("a second header");
    case kDense:
      return ParseDense(payload, s);
    case kSparse:
      return ParseSparse(payload, s);
    case kRemoved:
      return ParseRemoved(payload, s);
    default:
      return absl::InvalidArgumentError(absl::StrCat("unknown record type ", type));
  }
}

// The END record `h` (its payload read and checked) after `records` others.
absl::Status CheckEnd(const RecordReader& in, const RecordHead& h, const std::string& payload,
                      uint64_t records) {
  uint64_t count = 0;
  ByteReader r(payload);
  if (!r.Get(&count) || r.left() != 0 || count != records) {
    return in.Corrupt(h.offset, "the END record does not count the records");
  }
  if (h.end != in.size()) return in.Corrupt(h.offset, "bytes after the END record");
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
absl::StatusOr<std::vector<std::string>> CompleteFiles(const Env& env, const fs::path& dir) {
  std::map<int, std::string> by_shard;
  std::set<int> counts;
  absl::StatusOr<std::vector<std::string>> names = env.GetChildren(dir.string());
  if (!names.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot list ", dir.string(), ": ", names.status().message()));
  }
  for (const std::string& name : *names) {
    int shard = 0, of = 0;
    const std::string path = (dir / name).string();
    if (!ParseFileName(name, &shard, &of) || env.IsDirectory(path)) continue;
    by_shard[shard] = path;
    counts.insert(of);
  }
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

absl::StatusOr<std::string> WriteCheckpoint(const Env& env, const ShardSnapshot& s,
                                            const std::string& root, bool sync) {
  const fs::path dir = fs::path(root) / CheckpointDirName(s.clock);
  if (absl::Status made = env.CreateDirs(dir.string()); !made.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot create ", dir.string(), ": ", made.message()));
  }
  const std::string name = CheckpointFileName(s.shard, s.num_shards);
  const std::string final_path = (dir / name).string();
  const std::string temp_path = (dir / (name + ".tmp")).string();
  {
    KAIROS_ASSIGN_OR_RETURN(RecordWriter out,
                            RecordWriter::Create(env, CheckpointName(temp_path), kMagic));
    KAIROS_ASSIGN_OR_RETURN(const uint64_t records, WriteRecords(out, s));
    ByteWriter end;
    end.Put<uint64_t>(records);
    out.Add(kEnd, std::move(end.bytes()));
    KAIROS_RETURN_IF_ERROR(out.Flush());
    if (sync) KAIROS_RETURN_IF_ERROR(out.Sync());
    KAIROS_RETURN_IF_ERROR(out.Close());
  }
  if (absl::Status moved = env.RenameFile(temp_path, final_path); !moved.ok()) {
    return CheckpointName(final_path).Failed(moved);
  }
  if (sync) {
    if (absl::Status synced = env.SyncDir(dir.string()); !synced.ok()) {
      return CheckpointName(dir.string()).Failed(synced);
    }
  }
  return final_path;
}

absl::StatusOr<ShardSnapshot> ReadCheckpoint(const Env& env, const std::string& path) {
  KAIROS_ASSIGN_OR_RETURN(RecordReader in,
                          RecordReader::Open(env, CheckpointName(path),
                                             {kFormats, kMaxRecordBytes, /*torn_tail=*/false}));
  ShardSnapshot s;
  uint64_t records = 0;
  std::string payload;
  for (;;) {
    KAIROS_ASSIGN_OR_RETURN(std::optional<RecordHead> h, in.Next());
    if (!h.has_value()) return in.Corrupt(in.size(), "the file ends before its END record");
    KAIROS_RETURN_IF_ERROR(in.ReadRest(&payload));
    if (!in.ChecksumMatches()) return in.Corrupt(h->offset, "checksum mismatch");
    if (h->type == kEnd && records > 0) {
      KAIROS_RETURN_IF_ERROR(CheckEnd(in, *h, payload, records));
      return s;
    }
    const absl::Status parsed = ParseRecord(h->type, payload, records == 0, &s);
    if (!parsed.ok()) return in.Corrupt(h->offset, parsed.message());
    ++records;
  }
}

absl::StatusOr<ShardSnapshot> ReadCheckpointHeader(const Env& env, const std::string& path) {
  KAIROS_ASSIGN_OR_RETURN(RecordReader in,
                          RecordReader::Open(env, CheckpointName(path),
                                             {kFormats, kMaxRecordBytes, /*torn_tail=*/false}));
  ShardSnapshot s;
  std::string payload;
  KAIROS_ASSIGN_OR_RETURN(std::optional<RecordHead> h, in.Next());
  if (!h.has_value()) return in.Corrupt(in.size(), "the file ends before its header");
  KAIROS_RETURN_IF_ERROR(in.ReadRest(&payload));
  if (!in.ChecksumMatches()) return in.Corrupt(h->offset, "checksum mismatch");
  const absl::Status parsed = ParseRecord(h->type, payload, /*first=*/true, &s);
  if (!parsed.ok()) return in.Corrupt(h->offset, parsed.message());
  return s;
}

absl::StatusOr<std::vector<std::string>> CheckpointChain(const Env& env, const std::string& path) {
  std::vector<std::string> chain = {path};
  KAIROS_ASSIGN_OR_RETURN(ShardSnapshot head, ReadCheckpointHeader(env, path));
  const fs::path root = fs::path(path).parent_path().parent_path();
  // Each parent's clock is below its child's (ParseHeader), so the walk ends.
  while (head.delta_of >= 0) {
    const std::string parent =
        (root / CheckpointDirName(head.delta_of) / CheckpointFileName(head.shard, head.num_shards))
            .string();
    if (!env.FileExists(parent) || env.IsDirectory(parent)) {
      return absl::FailedPreconditionError(
          absl::StrCat(chain.back(), " is a delta of the checkpoint of clock ", head.delta_of,
                       ", whose file ", parent, " is missing"));
    }
    KAIROS_ASSIGN_OR_RETURN(ShardSnapshot up, ReadCheckpointHeader(env, parent));
    if (up.shard != head.shard || up.num_shards != head.num_shards || up.clock != head.delta_of) {
      return absl::FailedPreconditionError(absl::StrCat(parent, " is shard ", up.shard, " of ",
                                                        up.num_shards, " at clock ", up.clock,
                                                        ", not the parent of ", chain.back()));
    }
    chain.push_back(parent);
    head = std::move(up);
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

absl::StatusOr<std::vector<std::string>> FindCheckpoint(const Env& env, const std::string& path) {
  if (!env.IsDirectory(path)) {
    return absl::NotFoundError(absl::StrCat("no checkpoint directory ", path));
  }
  int64_t clock = 0;
  if (ParseDirName(fs::path(path).filename().string(), &clock)) return CompleteFiles(env, path);
  // A root: the complete checkpoint of the highest clock.
  std::map<int64_t, fs::path, std::greater<>> dirs;
  absl::StatusOr<std::vector<std::string>> names = env.GetChildren(path);
  if (!names.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot list ", path, ": ", names.status().message()));
  }
  for (const std::string& name : *names) {
    const fs::path dir = fs::path(path) / name;
    if (ParseDirName(name, &clock) && env.IsDirectory(dir.string())) dirs[clock] = dir;
  }
  for (const auto& [c, dir] : dirs) {
    absl::StatusOr<std::vector<std::string>> files = CompleteFiles(env, dir);
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
  for (const ShardSnapshot::Removed& r : s.removed) {
    SparseRows& rows = shard.tables()[r.table].sparse->rows;
    for (uint64_t key : r.keys) rows.Erase(key);  // rows of other shards are not held
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
    for (ShardChunk& c : t.chunks) c.ResetReads(c.version_read.size());
    if (t.sparse) t.sparse->lane.ResetReads(t.sparse->lane.version_read.size());
  }
}

}  // namespace

absl::StatusOr<int64_t> RestoreShard(const Env& env, Shard& shard, int num_shards,
                                     const JobConfig& job, const std::vector<std::string>& files) {
  const std::vector<CheckpointTable> tables = CheckpointTables(job, shard);
  std::optional<int64_t> clock;
  std::vector<bool> seen(files.size(), false);
  for (const std::string& path : files) {
    KAIROS_ASSIGN_OR_RETURN(ShardSnapshot s, ReadCheckpoint(env, path));
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
    // A delta: the files it builds on first, whole one first; then the delta itself.
    KAIROS_ASSIGN_OR_RETURN(const std::vector<std::string> chain, CheckpointChain(env, path));
    for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
      KAIROS_ASSIGN_OR_RETURN(ShardSnapshot part, ReadCheckpoint(env, chain[i]));
      KAIROS_RETURN_IF_ERROR(CheckTables(part, tables, chain[i]));
      Apply(shard, num_shards, part);
    }
    Apply(shard, num_shards, s);
  }
  ResetReads(shard);
  return clock.value_or(0);
}

absl::Status RestoreOwnShard(const Env& env, Shard& shard, int num_shards, const JobConfig& job,
                             const std::string& path) {
  KAIROS_ASSIGN_OR_RETURN(ShardSnapshot s, ReadCheckpoint(env, path));
  if (s.shard != shard.index() || s.num_shards != num_shards) {
    return absl::FailedPreconditionError(absl::StrCat(path, " is shard ", s.shard, " of ",
                                                      s.num_shards, ", not shard ",
                                                      shard.index(), " of ", num_shards));
  }
  if (s.delta_of >= 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is a delta checkpoint, not a snapshot of the whole shard"));
  }
  KAIROS_RETURN_IF_ERROR(CheckTables(s, CheckpointTables(job, shard), path));
  Apply(shard, num_shards, s);
  ResetReads(shard);
  return absl::OkStatus();
}

}  // namespace kairos::internal
