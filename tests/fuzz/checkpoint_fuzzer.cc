// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target: ReadCheckpoint and RestoreShard (src/engine/checkpoint.h) of arbitrary
// files. A server reads checkpoint files at --restore-from and at a restart (its update
// log's base); a file damaged on disk, or written for another job, must be refused and
// named, never crash the server, write outside a chunk or make it allocate what the file
// does not hold.
//
// Input: a flags byte, then the file.
//   bit 0  framed: the rest is records { u8 type, frame (u16 length, payload) }; the
//          harness writes the magic, each record with its true length and checksum, and
//          (bit 1) an END that counts them, so that mutations reach the records' parsers
//          instead of stopping at the checksum. Otherwise the rest is the whole file.
//   bit 2  the job has 2 shards (else 1); bit 3: the restore is into shard 1 (of 2).
//   bit 4  framed in the previous release's format (magic KCKPT001, zlib's CRC-32), which
//          is still read; else the current one (KCKPT002, CRC-32C).
//
// Besides "no crash, no sanitizer report", it checks what the reader promises: success or
// DataLoss; on success a snapshot whose records lie inside their tables with arrays of the
// sizes their tables give (a delta's removed keys: of sparse tables), written again
// (WriteCheckpoint) and read back to the same bytes (a KCKPT001 file: to its records framed
// in the current format; a HEADER of format version 1 is written as version 2, so such a
// file is only checked to read back to the same snapshot).
// Then RestoreShard of the file into a fresh shard of a small job (the tables of
// tests/engine/checkpoint_test.cc): success or FailedPrecondition, or the reader's error.
//
// `checkpoint_fuzzer --write-seeds=DIR` writes the seed corpus (tests/fuzz/corpus/checkpoint).

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/crc32c.h"
#include "engine/checkpoint.h"
#include "engine/shard_engine.h"
#include "kairos/job.h"
#include "policy/policy.h"
#include "tests/engine/checkpoint_job.h"
#include "tests/fuzz/fuzz_input.h"
#include "zlib.h"

namespace kairos::fuzz {
namespace {

namespace fs = std::filesystem;
using internal::EngineOptions;
using internal::EngineRequest;
using internal::ShardEngine;
using internal::ShardSnapshot;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The file format's framing (checkpoint.h, common/record_file.h): magic, then { u32 type,
// u32 checksum of type, length and payload, u64 length, payload }. The checksum is CRC-32C
// under the current magic, zlib's CRC-32 under the previous one.
constexpr char kMagic[] = "KCKPT002";
constexpr char kPreviousMagic[] = "KCKPT001";
constexpr uint32_t kEndRecord = 4;

std::string Record(uint32_t type, const std::string& payload, bool previous = false) {
  const uint64_t length = payload.size();
  char head[12];
  std::memcpy(head, &type, 4);
  std::memcpy(head + 4, &length, 8);
  uint32_t crc32v = 0;
  if (previous) {
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(head), sizeof(head));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(payload.data()),
                static_cast<uInt>(payload.size()));
    crc32v = static_cast<uint32_t>(crc);
  } else {
    crc32v = internal::Crc32cExtend(internal::Crc32c(head, sizeof(head)), payload.data(),
                                    payload.size());
  }
  std::string out(16, '\0');
  std::memcpy(out.data(), &type, 4);
  std::memcpy(out.data() + 4, &crc32v, 4);
  std::memcpy(out.data() + 8, &length, 8);
  return out + payload;
}

// The records of a file of either format (as their lengths say: for a file the reader took).
std::vector<std::pair<uint32_t, std::string>> RecordsOf(const std::string& file) {
  std::vector<std::pair<uint32_t, std::string>> out;
  std::size_t at = 8;
  while (at + 16 <= file.size()) {
    uint32_t type = 0;
    uint64_t length = 0;
    std::memcpy(&type, file.data() + at, 4);
    std::memcpy(&length, file.data() + at + 8, 8);
    out.push_back({type, file.substr(at + 16, length)});
    at += 16 + length;
  }
  return out;
}

// `file`'s records framed in the current format, or in the previous one.
std::string Framed(const std::string& file, bool previous) {
  std::string out(previous ? kPreviousMagic : kMagic, 8);
  for (const auto& [type, payload] : RecordsOf(file)) out += Record(type, payload, previous);
  return out;
}

using Host = internal::InlineEngineHost;
using internal::CheckpointJob;

std::unique_ptr<ShardEngine> MakeEngine(const JobConfig& job, int shard, int shards,
                                        Host* host) {
  auto spec = policy::ParsePolicySpec(job.policy);
  Require(spec.ok(), "the job's policy parses");
  auto e = ShardEngine::Create(job, *spec, shard, shards, /*workers=*/2, EngineOptions(), host);
  Require(e.ok(), "the job's shard is built");
  return *std::move(e);
}

// A directory of this process for the rewritten files, removed when the process exits.
const fs::path& ScratchDir() {
  struct Dir {
    Dir() : path(fs::temp_directory_path() / ("checkpoint_fuzzer." + std::to_string(::getpid()))) {
      fs::create_directories(path);
    }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
    fs::path path;
  };
  static const Dir dir;
  return dir.path;
}

// What a snapshot that ReadCheckpoint accepted must be.
void CheckSnapshot(const ShardSnapshot& s) {
  Require(s.num_shards >= 1 && s.shard >= 0 && s.shard < s.num_shards, "shard in range");
  for (const ShardSnapshot::Dense& d : s.dense) {
    Require(d.table < s.tables.size(), "dense record of a known table");
    const auto& t = s.tables[d.table];
    Require(t.kind == TableKind::kDense, "dense record of a dense table");
    Require(d.begin < d.end && d.end <= t.size, "dense record inside its table");
    Require(d.values.size() == d.end - d.begin, "dense values of the record's length");
    Require(d.state.size() == (d.end - d.begin) * t.state_per_element,
            "dense state of the record's length");
  }
  for (const ShardSnapshot::Sparse& p : s.sparse) {
    Require(p.table < s.tables.size(), "sparse record of a known table");
    const auto& t = s.tables[p.table];
    Require(t.kind == TableKind::kSparse, "sparse record of a sparse table");
    Require(p.stride == t.row_width * (1 + t.state_per_element), "sparse stride");
    Require(p.steps.size() == p.keys.size(), "a step per key");
    Require(p.rows.size() == p.keys.size() * p.stride, "a row per key");
  }
  Require(s.delta_of >= -1 && s.delta_of < s.clock, "a delta's parent is earlier");
  Require(s.delta_of >= 0 || s.removed.empty(), "removed keys only in a delta");
  for (const ShardSnapshot::Removed& r : s.removed) {
    Require(r.table < s.tables.size() && s.tables[r.table].kind == TableKind::kSparse,
            "removed keys of a sparse table");
  }
}

// The format version of `file`'s HEADER (the first record's first u32; framing of either
// magic), or 0 when it has none.
uint32_t HeaderVersion(const std::string& file) {
  uint32_t version = 0;
  if (file.size() >= 8 + 16 + 4) std::memcpy(&version, file.data() + 8 + 16, 4);
  return version;
}

void Run(const uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  const uint8_t flags = in.U8();
  std::string file;
  if ((flags & 1) != 0) {
    const bool previous = (flags & 16) != 0;
    file = std::string(previous ? kPreviousMagic : kMagic, 8);
    uint64_t records = 0;
    while (!in.empty()) {
      const uint32_t type = in.U8();
      file += Record(type, in.Frame(), previous);
      ++records;
    }
    if ((flags & 2) != 0) {
      std::string count(8, '\0');
      std::memcpy(count.data(), &records, 8);
      file += Record(kEndRecord, count, previous);
    }
  } else {
    file = in.Bytes(in.remaining());
  }
  MemFile f(file);

  absl::StatusOr<ShardSnapshot> s = internal::ReadCheckpoint(Env::Default(), f.path());
  if (!s.ok()) {
    Require(absl::IsDataLoss(s.status()), "a refused file is DataLoss");
    Require(s.status().message().find(f.path()) != std::string::npos,
            "the error names the file");
  } else {
    CheckSnapshot(*s);
    // Written again, the snapshot reads back to the same bytes (the format has one encoding).
    absl::StatusOr<std::string> a = internal::WriteCheckpoint(Env::Default(), *s, ScratchDir(), /*sync=*/false);
    Require(a.ok(), "a snapshot read is written again");
    absl::StatusOr<ShardSnapshot> again = internal::ReadCheckpoint(Env::Default(), *a);
    Require(again.ok(), "a snapshot written reads back");
    const std::string first = ReadAll(*a);
    absl::StatusOr<std::string> b = internal::WriteCheckpoint(Env::Default(), *again, ScratchDir(), false);
    Require(b.ok() && ReadAll(*b) == first, "the snapshot reads back the same");
    // Of the current format, the one encoding of its snapshot; of the previous one, its
    // records are (only the framing changed).
    const bool previous = file.compare(0, 8, kPreviousMagic, 8) == 0;
    if (HeaderVersion(file) != 1) {
      Require(first == (previous ? Framed(file, false) : file),
              "an accepted file is the one encoding of its snapshot");
    }
    std::error_code ec;
    fs::remove_all(fs::path(*a).parent_path(), ec);  // clock-N: one per clock read
  }

  const JobConfig job = CheckpointJob();
  const int shards = (flags & 4) != 0 ? 2 : 1;
  const int shard = shards == 2 && (flags & 8) != 0 ? 1 : 0;
  Host host;
  std::unique_ptr<ShardEngine> engine = MakeEngine(job, shard, shards, &host);
  absl::StatusOr<int64_t> restored =
      internal::RestoreShard(Env::Default(), engine->shard(), shards, job, {f.path()});
  if (!s.ok()) {
    Require(!restored.ok() && restored.status() == s.status(), "the reader's error, as it is");
  } else if (!restored.ok()) {
    Require(absl::IsFailedPrecondition(restored.status()),
            "a readable file is refused as FailedPrecondition");
  } else {
    Require(*restored == s->clock, "the restore returns the checkpoint's clock");
  }
}

// Seeds: checkpoints of the job above, written by the engine after a push, as framed
// inputs (the records the file holds) and as whole files, in both formats.
Seeds MakeSeeds() {
  const JobConfig job = CheckpointJob();
  Seeds seeds;
  for (const int shards : {1, 2}) {
    std::vector<std::unique_ptr<Host>> hosts;
    for (int shard = 0; shard < shards; ++shard) {
      hosts.push_back(std::make_unique<Host>());
      std::unique_ptr<ShardEngine> e = MakeEngine(job, shard, shards, hosts.back().get());
      // A push to every dense chunk and to rows 0..5, so values, states and steps are set.
      uint64_t id = 1;
      for (internal::ShardTable& t : e->shard().tables()) {
        for (internal::ShardChunk& c : t.chunks) {
          EngineRequest r;
          r.kind = EngineRequest::Kind::kPush;
          r.table = t.id;
          r.offset = c.chunk.begin;
          r.length = c.chunk.size();
          r.request_id = id++;
          std::vector<float> g(c.chunk.size(), 0.25f);
          e->OnPush(r, Buffer::CopyOf(g), absl::UnixEpoch());
        }
      }
      EngineRequest r;
      r.kind = EngineRequest::Kind::kPushSparse;
      r.table = 1;
      r.length = 6;
      r.request_id = id++;
      r.keys = Buffer::Allocate(12);
      for (uint64_t k = 0; k < 6; ++k) std::memcpy(r.keys.data() + 2 * k, &k, 8);
      std::vector<float> rows(12, 0.5f);
      e->OnPushSparse(r, Buffer::CopyOf(rows), absl::UnixEpoch());
      std::shared_ptr<ShardSnapshot> snap;
      e->Snapshot([&](std::shared_ptr<ShardSnapshot> got) { snap = std::move(got); });
      Require(snap != nullptr, "the snapshot is taken at once");
      snap->clock = 7;
      absl::StatusOr<std::string> path = internal::WriteCheckpoint(Env::Default(), *snap, ScratchDir(), false);
      Require(path.ok(), "the seed checkpoint is written");
      const std::string file = ReadAll(*path);
      const std::string name = "shard-" + std::to_string(shard) + "-of-" + std::to_string(shards);
      const uint8_t job_flags = (shards == 2 ? 4 : 0) | (shard == 1 ? 8 : 0);
      ByteWriter framed;
      framed.U8(static_cast<uint8_t>(1 | 2 | job_flags));
      for (const auto& [type, payload] : RecordsOf(file)) {
        if (type == kEndRecord) continue;  // bit 1 writes it
        framed.U8(static_cast<uint8_t>(type)).Frame(payload);
      }
      seeds.push_back({name + "-framed", framed.data()});
      seeds.push_back({name + "-whole", ByteWriter().U8(job_flags).Bytes(file).data()});
      // The same checkpoint as the previous release wrote it.
      seeds.push_back({"kckpt001-" + name + "-whole",
                       ByteWriter().U8(job_flags).Bytes(Framed(file, /*previous=*/true)).data()});
      if (shards == 1) {
        std::string framed_previous = framed.data();
        framed_previous[0] = static_cast<char>(framed_previous[0] | 16);
        seeds.push_back({"kckpt001-" + name + "-framed", framed_previous});
        // A delta of clock 6: two of the rows, and two keys removed.
        ShardSnapshot delta = *snap;
        delta.delta_of = 6;
        for (ShardSnapshot::Sparse& p : delta.sparse) {
          p.keys.resize(std::min<std::size_t>(p.keys.size(), 2));
          p.steps.resize(p.keys.size());
          p.rows.resize(p.keys.size() * p.stride);
        }
        delta.removed.push_back({1, {4, 5}});
        absl::StatusOr<std::string> at = internal::WriteCheckpoint(Env::Default(), delta, ScratchDir(), false);
        Require(at.ok(), "the seed delta is written");
        seeds.push_back(
            {"delta-" + name + "-whole", ByteWriter().U8(job_flags).Bytes(ReadAll(*at)).data()});
      }
    }
  }
  seeds.push_back({"not-a-checkpoint", ByteWriter().U8(0).Bytes("not a checkpoint").data()});
  seeds.push_back({"empty-framed", ByteWriter().U8(1 | 2).data()});
  return seeds;
}

}  // namespace
}  // namespace kairos::fuzz

KAIROS_FUZZ_TARGET(kairos::fuzz::Run, kairos::fuzz::MakeSeeds)
