// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Checkpoints of a shard (docs/durability.md): the snapshot taken through the engine, the
// file written and read back, restores into another number of shards (every element, row,
// optimizer state and update count where it was), and files that are torn, corrupt or of
// another job, refused and named; files of the previous format (KCKPT001, zlib's CRC-32)
// still restore, and new ones (KCKPT002) carry CRC-32C. Delta checkpoints: what a delta
// holds, and a chain of them restored into any number of shards equals the live tables.

#include "engine/checkpoint.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/crc32c.h"
#include "common/partition.h"
#include "engine/shard_engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/job.h"
#include "policy/policy.h"
#include "tests/engine/checkpoint_job.h"
#include "zlib.h"

namespace kairos::internal {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const absl::Time kT0 = absl::UnixEpoch();

using Host = InlineEngineHost;

JobConfig Job() { return CheckpointJob(); }

// The shards of one job, each with its own engine.
struct Cluster {
  explicit Cluster(int shards, const JobConfig& job = Job()) {
    auto spec = policy::ParsePolicySpec(job.policy);
    EXPECT_TRUE(spec.ok());
    EngineOptions options;
    options.inline_apply_bytes = 8;  // some chunks inline, some on "lanes"
    for (int s = 0; s < shards; ++s) {
      hosts.push_back(std::make_unique<Host>());
      auto e = ShardEngine::Create(job, *spec, s, shards, /*workers=*/2, options,
                                   hosts.back().get());
      EXPECT_TRUE(e.ok()) << e.status();
      engines.push_back(*std::move(e));
    }
  }

  // Worker `rank` pushes gradient g(i) = i + 1 + round to every element of the dense tables
  // and `round + 1` x (key + 1) to rows of `keys` (default 0..11), each to its owner.
  void PushAll(int rank, int round, const std::vector<uint64_t>& sparse_keys = Keys(12)) {
    for (auto& e : engines) {
      for (ShardTable& t : e->shard().tables()) {
        for (ShardChunk& c : t.chunks) {
          std::vector<float> g;
          for (uint64_t i = c.chunk.begin; i < c.chunk.end; ++i) {
            g.push_back(static_cast<float>(i + 1 + round));
          }
          EngineRequest r;
          r.kind = EngineRequest::Kind::kPush;
          r.rank = rank;
          r.table = t.id;
          r.offset = c.chunk.begin;
          r.length = c.chunk.size();
          r.request_id = next_id++;
          r.clock = clock;
          e->OnPush(r, Buffer::CopyOf(g), kT0);
        }
      }
      std::vector<uint64_t> keys;
      std::vector<float> rows;
      for (uint64_t k : sparse_keys) {
        if (ShardOfKey(k, static_cast<int>(engines.size())) != e->shard().index()) continue;
        keys.push_back(k);
        rows.push_back(static_cast<float>((round + 1) * (k + 1)));
        rows.push_back(-static_cast<float>(k));
      }
      if (keys.empty()) continue;  // this shard owns none of them
      EngineRequest r;
      r.kind = EngineRequest::Kind::kPushSparse;
      r.rank = rank;
      r.table = 1;
      r.length = keys.size();
      r.request_id = next_id++;
      r.clock = clock;
      r.keys = Buffer::Allocate(keys.size() * 2);
      std::memcpy(r.keys.data(), keys.data(), keys.size() * 8);
      e->OnPushSparse(r, Buffer::CopyOf(rows), kT0);
    }
    for (auto& h : hosts) {
      for (const EngineAnswer& a : h->answers) ASSERT_TRUE(a.status.ok()) << a.status;
      h->answers.clear();
    }
  }

  static std::vector<uint64_t> Keys(uint64_t n) {
    std::vector<uint64_t> k(n);
    for (uint64_t i = 0; i < n; ++i) k[i] = i;
    return k;
  }

  // Both workers end their iteration: the clock snapshots are named by moves on.
  void Clock() {
    ++clock;
    for (auto& e : engines) {
      for (int rank = 0; rank < 2; ++rank) {
        EngineRequest r;
        r.kind = EngineRequest::Kind::kClock;
        r.rank = rank;
        r.clock = clock;
        r.request_id = next_id++;
        e->OnClock(r, kT0);
      }
    }
  }

  // Every shard keeps its changes for deltas (the server's checkpoint_deltas).
  void KeepChanges() {
    for (auto& e : engines) e->KeepChanges();
  }

  // Removes the rows of `keys` from their owners, as eviction does.
  void Remove(const std::vector<uint64_t>& keys) {
    for (auto& e : engines) {
      std::vector<uint64_t> own;
      for (uint64_t k : keys) {
        if (ShardOfKey(k, static_cast<int>(engines.size())) == e->shard().index()) {
          own.push_back(k);
        }
      }
      e->shard().tables()[1].RemoveRows(EvictionReason::kIdle, own);
    }
  }

  std::vector<std::shared_ptr<ShardSnapshot>> Snapshots(ShardEngine::SnapshotOptions o = {}) {
    std::vector<std::shared_ptr<ShardSnapshot>> out;
    for (auto& e : engines) {
      std::shared_ptr<ShardSnapshot> got;
      e->Snapshot(o, [&](std::shared_ptr<ShardSnapshot> s) { got = std::move(s); });
      EXPECT_NE(got, nullptr) << "the host runs lane jobs at once";
      out.push_back(got);
    }
    return out;
  }

  std::vector<std::unique_ptr<Host>> hosts;
  std::vector<std::unique_ptr<ShardEngine>> engines;
  uint64_t next_id = 1;
  int64_t clock = 0;
};

// Everything a job's shards hold, by table coordinates: comparable across partitions.
struct Global {
  std::map<std::pair<uint32_t, uint64_t>, std::vector<float>> elements;  // value, state
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> element_version;
  std::map<uint64_t, std::pair<std::vector<float>, uint64_t>> rows;       // row+state, step
  friend bool operator==(const Global&, const Global&) = default;
};

Global Collect(const std::vector<std::shared_ptr<ShardSnapshot>>& snaps) {
  Global g;
  for (const auto& s : snaps) {
    for (const ShardSnapshot::Dense& d : s->dense) {
      const std::size_t per = s->tables[d.table].state_per_element;
      for (uint64_t i = d.begin; i < d.end; ++i) {
        std::vector<float> v = {d.values.data()[i - d.begin]};
        for (std::size_t k = 0; k < per; ++k) v.push_back(d.state[(i - d.begin) * per + k]);
        g.elements[{d.table, i}] = v;
        g.element_version[{d.table, i}] = d.version;
      }
    }
    for (const ShardSnapshot::Sparse& p : s->sparse) {
      for (std::size_t i = 0; i < p.keys.size(); ++i) {
        g.rows[p.keys[i]] = {std::vector<float>(p.rows.begin() + i * p.stride,
                                                p.rows.begin() + (i + 1) * p.stride),
                             p.steps[i]};
      }
    }
  }
  return g;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), bytes.size());
}

// A checkpoint file's records: { u32 type, u32 checksum, u64 length, payload } after the
// 8-byte magic.
struct FileRecord {
  uint32_t type = 0, checksum = 0;
  std::string payload;
};

std::vector<FileRecord> Records(const std::string& file) {
  std::vector<FileRecord> out;
  for (std::size_t at = 8; at + 16 <= file.size();) {
    FileRecord r;
    uint64_t length = 0;
    std::memcpy(&r.type, file.data() + at, 4);
    std::memcpy(&r.checksum, file.data() + at + 4, 4);
    std::memcpy(&length, file.data() + at + 8, 8);
    r.payload = file.substr(at + 16, length);
    out.push_back(std::move(r));
    at += 16 + length;
  }
  return out;
}

// The checksums of the two formats, over a record's type, length and payload.
uint32_t ZlibCrc(uint32_t type, const std::string& payload) {
  const uint64_t length = payload.size();
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(&type), 4);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(&length), 8);
  crc =
      crc32(crc, reinterpret_cast<const Bytef*>(payload.data()), static_cast<uInt>(payload.size()));
  return static_cast<uint32_t>(crc);
}
uint32_t Crc32cOf(uint32_t type, const std::string& payload) {
  const uint64_t length = payload.size();
  uint32_t crc = Crc32cExtend(0, &type, 4);
  crc = Crc32cExtend(crc, &length, 8);
  return Crc32cExtend(crc, payload.data(), payload.size());
}

// `records` framed as a file of magic `magic`, each with the checksum `sum` gives.
std::string Frame(const std::string& magic, const std::vector<FileRecord>& records,
                  uint32_t (*sum)(uint32_t, const std::string&)) {
  std::string out = magic;
  for (const FileRecord& r : records) {
    const uint32_t checksum = sum(r.type, r.payload);
    const uint64_t length = r.payload.size();
    out.append(reinterpret_cast<const char*>(&r.type), 4);
    out.append(reinterpret_cast<const char*>(&checksum), 4);
    out.append(reinterpret_cast<const char*>(&length), 8);
    out += r.payload;
  }
  return out;
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("kairos_ckpt_" + std::string(::testing::UnitTest::GetInstance()
                                               ->current_test_info()
                                               ->name()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // Writes every shard's snapshot under root_; returns the files.
  std::vector<std::string> Write(const std::vector<std::shared_ptr<ShardSnapshot>>& snaps) {
    std::vector<std::string> files;
    for (const auto& s : snaps) {
      auto path = WriteCheckpoint(Env::Default(), *s, root_.string(), /*sync=*/false);
      EXPECT_TRUE(path.ok()) << path.status();
      files.push_back(*path);
    }
    return files;
  }

  fs::path root_;
};

TEST_F(CheckpointTest, FileRoundTripHoldsEverything) {
  Cluster c(2);
  c.PushAll(0, 0);
  c.PushAll(1, 1);
  const auto snaps = c.Snapshots();
  const std::vector<std::string> files = Write(snaps);
  EXPECT_EQ(fs::path(files[0]).filename(), "shard-00000-of-00002.kcp");
  EXPECT_EQ(fs::path(files[0]).parent_path().filename(), "clock-000000000000");
  std::vector<std::shared_ptr<ShardSnapshot>> read;
  for (const std::string& f : files) {
    auto s = ReadCheckpoint(Env::Default(), f);
    ASSERT_TRUE(s.ok()) << s.status();
    read.push_back(std::make_shared<ShardSnapshot>(*std::move(s)));
  }
  EXPECT_EQ(Collect(read), Collect(snaps));
  EXPECT_EQ(Collect(snaps).rows.size(), 12u);
  EXPECT_EQ(Collect(snaps).elements.size(), 12u);
  // Two pushes: every row and chunk was updated twice (its steps, Adam's bias correction).
  for (const auto& [key, row] : Collect(snaps).rows) EXPECT_EQ(row.second, 2u) << key;
  for (const auto& [at, v] : Collect(snaps).element_version) EXPECT_EQ(v, 2u);
}

// A job of 1, 2 or 3 shards checkpointed, restored into 1, 2 or 3: every element, its
// optimizer state and update count, and every row are where they were; the restored job
// then goes on exactly as the job that never stopped.
TEST_F(CheckpointTest, RestoreRepartitionsExactly) {
  for (int from = 1; from <= 3; ++from) {
    for (int to = 1; to <= 3; ++to) {
      SCOPED_TRACE(::testing::Message() << from << " shards restored into " << to);
      fs::remove_all(root_);
      Cluster before(from);
      before.PushAll(0, 0);
      before.PushAll(1, 0);
      Write(before.Snapshots());
      auto files = FindCheckpoint(Env::Default(), root_.string());
      ASSERT_TRUE(files.ok()) << files.status();
      ASSERT_EQ(files->size(), static_cast<std::size_t>(from));
      Cluster after(to);
      for (auto& e : after.engines) {
        auto clock = e->Restore(Env::Default(), *files);
        ASSERT_TRUE(clock.ok()) << clock.status();
      }
      EXPECT_EQ(Collect(after.Snapshots()), Collect(before.Snapshots()));
      // And the next updates land identically (Adam's step counts came back too).
      before.PushAll(0, 5);
      after.PushAll(0, 5);
      EXPECT_EQ(Collect(after.Snapshots()), Collect(before.Snapshots()));
    }
  }
}

TEST_F(CheckpointTest, TornCorruptOrForeignFilesAreRefusedAndNamed) {
  Cluster c(1);
  c.PushAll(0, 0);
  const std::string file = Write(c.Snapshots())[0];
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto write = [&](const std::string& b) {
    std::ofstream(file, std::ios::binary | std::ios::trunc).write(b.data(), b.size());
  };
  // Torn: the file ends inside a record, or before the END.
  for (std::size_t keep : {bytes.size() - 1, bytes.size() - 24, bytes.size() / 2, 8ul, 3ul}) {
    write(bytes.substr(0, keep));
    auto s = ReadCheckpoint(Env::Default(), file);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << keep;
    EXPECT_THAT(s.status().message(), HasSubstr(file));
  }
  // One bit flipped anywhere after the magic: a checksum (or a length) catches it.
  for (std::size_t at : {9ul, 30ul, bytes.size() / 3, bytes.size() - 5}) {
    std::string b = bytes;
    b[at] ^= 0x10;
    write(b);
    auto s = ReadCheckpoint(Env::Default(), file);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << at;
  }
  write(bytes + "x");
  EXPECT_THAT(ReadCheckpoint(Env::Default(), file).status().message(), HasSubstr("after the END"));
  write("not a checkpoint at all");
  EXPECT_THAT(ReadCheckpoint(Env::Default(), file).status().message(), HasSubstr("magic"));
  write(bytes);
  ASSERT_TRUE(ReadCheckpoint(Env::Default(), file).ok());
  // Another job: a table of another size or updater.
  JobConfig other = Job();
  other.tables[0].size = 11;
  Cluster wrong(1, other);
  auto restored = wrong.engines[0]->Restore(Env::Default(), {file});
  EXPECT_EQ(restored.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(restored.status().message(), HasSubstr("table 0 is 'w' (dense, size 10"));
  other = Job();
  other.tables[1].updater.name = "adam";
  Cluster wrong2(1, other);
  EXPECT_THAT(wrong2.engines[0]->Restore(Env::Default(), {file}).status().message(),
              HasSubstr("updater adagrad"));
}

TEST_F(CheckpointTest, NewFilesCarryCrc32c) {
  Cluster c(1);
  c.PushAll(0, 0);
  const std::string bytes = ReadFile(Write(c.Snapshots())[0]);
  EXPECT_EQ(bytes.substr(0, 8), "KCKPT002");
  const std::vector<FileRecord> records = Records(bytes);
  ASSERT_GE(records.size(), 4u);  // HEADER, DENSE..., SPARSE..., END
  EXPECT_EQ(records.front().type, 1u);
  EXPECT_EQ(records.back().type, 4u);
  for (const FileRecord& r : records) {
    EXPECT_EQ(r.checksum, Crc32cOf(r.type, r.payload)) << "record of type " << r.type;
    EXPECT_NE(r.checksum, ZlibCrc(r.type, r.payload)) << "record of type " << r.type;
  }
  // The whole file is these records, framed so.
  EXPECT_EQ(Frame("KCKPT002", records, &Crc32cOf), bytes);
}

// `records` with their HEADER in format version 1: no parent clock (the u64 after the
// clock).
std::vector<FileRecord> WithVersion1Header(std::vector<FileRecord> records) {
  std::string& header = records.at(0).payload;
  const uint32_t version = 1;
  std::memcpy(header.data(), &version, 4);
  header.erase(4 + 4 + 4 + 8, 8);
  return records;
}

// A checkpoint written by the previous release: magic KCKPT001, records checksummed with
// zlib's CRC-32, its HEADER of format version 1. It reads back and restores into any
// number of shards.
TEST_F(CheckpointTest, AFileOfThePreviousFormatStillRestores) {
  Cluster before(2);
  before.PushAll(0, 0);
  before.PushAll(1, 1);
  const std::vector<std::string> files = Write(before.Snapshots());
  for (const std::string& f : files) {
    WriteFile(f, Frame("KCKPT001", WithVersion1Header(Records(ReadFile(f))), &ZlibCrc));
    ASSERT_EQ(ReadFile(f).substr(0, 8), "KCKPT001");
    auto s = ReadCheckpoint(Env::Default(), f);
    ASSERT_TRUE(s.ok()) << s.status();
  }
  auto found = FindCheckpoint(Env::Default(), root_.string());
  ASSERT_TRUE(found.ok()) << found.status();
  for (int to : {1, 3}) {
    Cluster after(to);
    for (auto& e : after.engines) {
      auto clock = e->Restore(Env::Default(), *found);
      ASSERT_TRUE(clock.ok()) << clock.status();
    }
    EXPECT_EQ(Collect(after.Snapshots()), Collect(before.Snapshots())) << to << " shards";
  }
  // Written again, it is of the current format.
  auto again = ReadCheckpoint(Env::Default(), files[0]);
  ASSERT_TRUE(again.ok());
  again->clock = 9;
  auto rewritten = WriteCheckpoint(Env::Default(), *again, root_.string(), /*sync=*/false);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  EXPECT_EQ(ReadFile(*rewritten).substr(0, 8), "KCKPT002");
}

// The magic chooses the checksum: records of one format under the other's magic fail it.
TEST_F(CheckpointTest, TheMagicChoosesTheChecksum) {
  Cluster c(1);
  const std::string file = Write(c.Snapshots())[0];
  const std::vector<FileRecord> records = Records(ReadFile(file));
  for (const auto& [magic, sum] :
       {std::pair{"KCKPT001", &Crc32cOf}, std::pair{"KCKPT002", &ZlibCrc}}) {
    WriteFile(file, Frame(magic, records, sum));
    auto s = ReadCheckpoint(Env::Default(), file);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << magic;
    EXPECT_THAT(s.status().message(), HasSubstr("at byte 8: checksum mismatch")) << magic;
  }
  WriteFile(file, Frame("KCKPT003", records, &Crc32cOf));
  EXPECT_THAT(ReadCheckpoint(Env::Default(), file).status().message(),
              HasSubstr("no KCKPT002 or KCKPT001 magic"));
}

TEST_F(CheckpointTest, FindCheckpointTakesTheLatestCompleteOne) {
  EXPECT_EQ(FindCheckpoint(Env::Default(), root_.string()).status().code(),
            absl::StatusCode::kNotFound);
  Cluster c(2);
  auto snaps = c.Snapshots();
  Write(snaps);  // clock 0, complete
  snaps[0]->clock = 4;
  snaps[1]->clock = 4;
  Write(snaps);  // clock 4, complete
  snaps[0]->clock = 8;
  Write({snaps[0]});  // clock 8: shard 1's file is missing (it was still being written)
  auto files = FindCheckpoint(Env::Default(), root_.string());
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT((*files)[0], HasSubstr("clock-000000000004"));
  // Named directly, the incomplete one is an error that says what is missing.
  auto partial = FindCheckpoint(Env::Default(), (root_ / "clock-000000000008").string());
  EXPECT_EQ(partial.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(partial.status().message(), HasSubstr("1 of its 2 shard files"));
  // A temporary file left by a crash is not a shard file.
  std::ofstream(root_ / "clock-000000000008" / "shard-00001-of-00002.kcp.tmp") << "torn";
  EXPECT_THAT(FindCheckpoint(Env::Default(), root_.string()).value()[0],
              HasSubstr("clock-000000000004"));
}

// Keys of `snaps`' sparse parts, and of their removed lists, sorted.
std::vector<uint64_t> RowKeys(const std::vector<std::shared_ptr<ShardSnapshot>>& snaps) {
  std::vector<uint64_t> keys;
  for (const auto& s : snaps) {
    for (const ShardSnapshot::Sparse& p : s->sparse)
      keys.insert(keys.end(), p.keys.begin(), p.keys.end());
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}
std::vector<uint64_t> RemovedKeys(const std::vector<std::shared_ptr<ShardSnapshot>>& snaps) {
  std::vector<uint64_t> keys;
  for (const auto& s : snaps) {
    for (const ShardSnapshot::Removed& r : s->removed) {
      keys.insert(keys.end(), r.keys.begin(), r.keys.end());
    }
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

// A delta holds every dense chunk, the rows created or updated since the checkpoint before
// (a plain snapshot, as the update log's bases take, does not start the changes afresh) and
// the keys removed since then, a key removed and created again in both; its parent is named.
TEST_F(CheckpointTest, ADeltaHoldsTheRowsChangedAndTheKeysRemovedSinceTheCheckpointBefore) {
  Cluster c(2);
  c.KeepChanges();
  c.PushAll(0, 0);  // rows 0..11
  c.Clock();
  const auto whole = c.Snapshots({.checkpoint = true, .delta_of = -1});
  EXPECT_EQ(RowKeys(whole), Cluster::Keys(12));
  EXPECT_TRUE(RemovedKeys(whole).empty());
  EXPECT_EQ(whole[0]->delta_of, -1);

  c.PushAll(1, 1, {2, 7, 12, 13});  // 12, 13 new
  c.Snapshots();                    // not a checkpoint's: the changes stay
  c.Remove({5, 7, 13});             // 13 created and removed; 7 removed ...
  c.PushAll(0, 2, {7});             // ... and created again
  c.Clock();
  const auto delta = c.Snapshots({.checkpoint = true, .delta_of = 1});
  for (const auto& s : delta) {
    EXPECT_EQ(s->delta_of, 1);
    EXPECT_EQ(s->clock, 2);
  }
  EXPECT_EQ(RowKeys(delta), (std::vector<uint64_t>{2, 7, 12}));
  EXPECT_EQ(RemovedKeys(delta), (std::vector<uint64_t>{5, 7, 13}));
  EXPECT_EQ(Collect(delta).elements, Collect(c.Snapshots()).elements);

  // Nothing changed since: an empty delta (dense tables whole). Of a clock not below its own,
  // a delta is taken whole.
  c.Clock();
  const auto empty = c.Snapshots({.checkpoint = true, .delta_of = 2});
  EXPECT_TRUE(RowKeys(empty).empty());
  EXPECT_TRUE(RemovedKeys(empty).empty());
  const auto same = c.Snapshots({.checkpoint = true, .delta_of = 3});
  EXPECT_EQ(same[0]->delta_of, -1);
  EXPECT_EQ(RowKeys(same).size(), 12u);  // 0..12 without 5

  // Engines that do not keep changes take every snapshot whole.
  Cluster plain(1);
  plain.PushAll(0, 0);
  plain.Clock();
  const auto asked = plain.Snapshots({.checkpoint = true, .delta_of = 0});
  EXPECT_EQ(asked[0]->delta_of, -1);
  EXPECT_EQ(RowKeys(asked).size(), 12u);
}

// Whole checkpoint, then deltas with rows updated, created, removed and created again,
// written as files: the chain restored into 1, 2 or 3 shards equals the live tables bit for
// bit (values, optimizer state, update counts, rows), and the next updates land alike.
TEST_F(CheckpointTest, ABaseAndItsDeltasRestoreTheLiveTablesBitForBit) {
  for (int from = 1; from <= 3; ++from) {
    for (int to = 1; to <= 3; ++to) {
      SCOPED_TRACE(::testing::Message() << from << " shards restored into " << to);
      fs::remove_all(root_);
      Cluster before(from);
      before.KeepChanges();
      before.PushAll(0, 0);
      before.Clock();
      Write(before.Snapshots({.checkpoint = true, .delta_of = -1}));  // clock 1, whole
      before.PushAll(1, 1, {1, 4, 20, 21, 22});
      before.Remove({2, 3, 21});
      before.Clock();
      Write(before.Snapshots({.checkpoint = true, .delta_of = 1}));  // clock 2
      before.PushAll(0, 2, {3, 20, 30});                             // 3 back
      before.Remove({4, 22, 30});
      before.Clock();
      const auto last = before.Snapshots({.checkpoint = true, .delta_of = 2});  // clock 3
      ASSERT_EQ(last[0]->delta_of, 2);
      Write(last);

      auto files = FindCheckpoint(Env::Default(), root_.string());
      ASSERT_TRUE(files.ok()) << files.status();
      EXPECT_THAT((*files)[0], HasSubstr("clock-000000000003"));
      auto chain = CheckpointChain(Env::Default(), (*files)[0]);
      ASSERT_TRUE(chain.ok()) << chain.status();
      ASSERT_EQ(chain->size(), 3u);
      EXPECT_THAT((*chain)[0], HasSubstr("clock-000000000001"));
      Cluster after(to);
      for (auto& e : after.engines) {
        auto clock = e->Restore(Env::Default(), *files);
        ASSERT_TRUE(clock.ok()) << clock.status();
        EXPECT_EQ(*clock, 3);
      }
      const Global live = Collect(before.Snapshots());
      EXPECT_EQ(live.rows.size(), 11u);  // 0..11 and 20, without 2 and 4
      EXPECT_EQ(Collect(after.Snapshots()), live);
      before.PushAll(0, 5);
      after.PushAll(0, 5);
      EXPECT_EQ(Collect(after.Snapshots()), Collect(before.Snapshots()));
    }
  }
}

// A delta whose parent file is missing, or is not its parent, is refused and named; a
// delta is not a base for RestoreOwnShard.
TEST_F(CheckpointTest, ABrokenChainIsRefusedAndNamed) {
  Cluster c(1);
  c.KeepChanges();
  c.PushAll(0, 0);
  c.Clock();
  const std::string base = Write(c.Snapshots({.checkpoint = true}))[0];
  c.PushAll(0, 1, {3});
  c.Clock();
  const std::string delta = Write(c.Snapshots({.checkpoint = true, .delta_of = 1}))[0];

  auto own = RestoreOwnShard(Env::Default(), c.engines[0]->shard(), 1, Job(), delta);
  EXPECT_EQ(own.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(own.message(), HasSubstr("is a delta checkpoint"));

  // Another shard count's file in the parent's place.
  const std::string saved = ReadFile(base);
  fs::rename(base, root_ / "moved.kcp");
  Cluster two(2);
  auto other = two.Snapshots({.checkpoint = true});
  other[0]->clock = 1;
  const std::string foreign = Write({other[0]})[0];
  fs::rename(foreign, base);
  Cluster after(1);
  auto wrong = after.engines[0]->Restore(Env::Default(), {delta});
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(wrong.status().message(), HasSubstr("not the parent of " + delta));

  fs::remove(base);
  auto missing = after.engines[0]->Restore(Env::Default(), {delta});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(),
              HasSubstr(delta + " is a delta of the checkpoint of clock 1, whose file " + base +
                        " is missing"));

  // Put back, the chain restores.
  WriteFile(base, saved);
  Cluster good(1);
  EXPECT_TRUE(good.engines[0]->Restore(Env::Default(), {delta}).ok());
  EXPECT_EQ(Collect(good.Snapshots()), Collect(c.Snapshots()));
}

}  // namespace
}  // namespace kairos::internal
