// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Checkpoints of a shard (docs/durability.md): a snapshot of every table the shard owns
// (dense chunks: values, optimizer state, update count, learning rate; sparse tables: every
// row with its state and update count), written to one file per shard, atomically, with a
// checksum per record; and the restore of a new job's shard from a whole checkpoint of any
// number of shards (the chunks and rows are re-partitioned).
//
// Layout: ROOT/clock-<12 digits>/shard-<5 digits>-of-<5 digits>.kcp. A checkpoint is
// complete when the files of all its shards are there (each appears only once written and
// synced: temporary file, fsync, rename, fsync of the directory).
//
// A delta checkpoint's file (docs/durability.md, "Delta checkpoints") holds every dense
// chunk but only the sparse rows changed since the shard's previous checkpoint, and the keys
// removed since then; its header names the clock of that previous checkpoint (its parent,
// whole or delta), whose file of the same shard is in ROOT/clock-<parent>. A restore loads
// the chain from its whole checkpoint on.
//
// File: the magic "KCKPT002", then records (common/record_file.h: { u32 type, u32 CRC-32C
// of the rest of the record, u64 payload length, payload }, little-endian): one HEADER,
// DENSE, SPARSE and (deltas) REMOVED records, one END (the number of records before it). A
// file without its END, with a record whose checksum or length is wrong, or with bytes
// after the END is refused and named, never loaded. Files of the previous release, magic
// "KCKPT001", are the same but for the checksum (zlib's CRC-32): they are read, never
// written. The HEADER's format version is 2 (version 1, read too, has no parent clock).
//
// Thread-safety: the functions are thread-compatible; a ShardSnapshot is filled on the
// shard's lanes (ShardEngine::Snapshot) and then read by one thread.

#ifndef KAIROS_ENGINE_CHECKPOINT_H_
#define KAIROS_ENGINE_CHECKPOINT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/shard.h"
#include "kairos/buffer.h"
#include "kairos/checkpoint.h"
#include "kairos/env.h"
#include "kairos/job.h"

namespace kairos::internal {

// What a checkpoint says of each table of its job (the public view's); a restore requires
// the same tables.
using CheckpointTable = CheckpointFile::Table;

struct ShardSnapshot {
  int shard = 0;
  int num_shards = 1;
  int64_t clock = 0;  // the smallest clock of an active worker when it was taken
  // A delta's parent: the clock of the checkpoint it applies to; -1: a whole checkpoint.
  int64_t delta_of = -1;
  uint64_t chunk_elements = 0;
  std::vector<CheckpointTable> tables;

  struct Dense {
    uint32_t table = 0;
    uint64_t begin = 0, end = 0;  // table coordinates
    uint64_t version = 0;         // updates applied (the updaters' step)
    float learning_rate = 0;
    Buffer values;                // end - begin floats (shared with the chunk: copy on write)
    std::vector<float> state;     // (end - begin) x state_per_element
  };
  struct Sparse {
    uint32_t table = 0;
    uint64_t version = 0;
    float learning_rate = 0;
    uint32_t stride = 0;          // floats per row: row_width values, then the state
    std::vector<uint64_t> keys;
    std::vector<uint64_t> steps;  // each row's update count
    std::vector<float> rows;      // keys.size() x stride
  };
  // A delta's keys of sparse table `table` removed since its parent (evicted); a restore
  // removes them before it loads the delta's rows (a key removed and created again is in
  // both).
  struct Removed {
    uint32_t table = 0;
    std::vector<uint64_t> keys;
  };
  std::vector<Dense> dense;
  std::vector<Sparse> sparse;
  std::vector<Removed> removed;
};

// The tables of `job` as a checkpoint describes them (`state_per_element` from `shard`).
std::vector<CheckpointTable> CheckpointTables(const JobConfig& job, Shard& shard);

// "clock-000000000120", "shard-00001-of-00004.kcp".
std::string CheckpointDirName(int64_t clock);
std::string CheckpointFileName(int shard, int num_shards);

// Writes `s` as ROOT/clock-N/shard-i-of-S.kcp atomically (temporary file, fsync, rename,
// fsync of the directory) and returns its path. `sync`: false skips both fsyncs (tests).
// Errors name the path and the system's reason.
absl::StatusOr<std::string> WriteCheckpoint(const Env& env, const ShardSnapshot& s,
                                            const std::string& root, bool sync = true);

// Reads one file, checking the magic, every record's checksum and bounds, and the END.
// DataLoss naming the file and the byte offset for a torn or corrupt file.
absl::StatusOr<ShardSnapshot> ReadCheckpoint(const Env& env, const std::string& path);
// Reads only the HEADER of a file (shard, clock, parent, tables; nothing else is checked).
absl::StatusOr<ShardSnapshot> ReadCheckpointHeader(const Env& env, const std::string& path);

// The files to load, in order, for the checkpoint file `path`: the whole one its chain of
// deltas starts from, then each delta up to `path` itself (only `path` when it is whole).
// FailedPrecondition naming the file a delta needs when it is missing or not that
// checkpoint's (another shard, another clock); the headers' errors.
absl::StatusOr<std::vector<std::string>> CheckpointChain(const Env& env, const std::string& path);

// The files of the checkpoint to restore from `path`: a checkpoint directory (clock-N) with
// every shard's file, or a root holding clock-N directories (the one with the highest clock
// whose files are all there). NotFound when there is none; FailedPrecondition for a
// directory whose files are of different shard counts or missing.
absl::StatusOr<std::vector<std::string>> FindCheckpoint(const Env& env, const std::string& path);

// Loads a checkpoint (`files`, as FindCheckpoint returns them; of a delta checkpoint, each
// file's chain) into shard `shard` of a new job (its tables freshly built for `job`): the
// parts of dense tables it owns, the rows of sparse tables whose owner it is (ShardOfKey),
// their optimizer state, update counts and learning rates. Each file is checked before
// anything of it is loaded. FailedPrecondition when the job's tables differ from the
// checkpoint's (naming the table and what differs). Call before the shard serves anything.
// Returns the checkpoint's clock.
absl::StatusOr<int64_t> RestoreShard(const Env& env, Shard& shard, int num_shards,
                                     const JobConfig& job, const std::vector<std::string>& files);

// Loads the file of this very shard (`path`: shard shard.index() of `num_shards`, as the
// server writes for its update log's base, docs/durability.md) into `shard`. Errors: the
// file's (ReadCheckpoint), another shard's file, a delta, tables that differ.
absl::Status RestoreOwnShard(const Env& env, Shard& shard, int num_shards, const JobConfig& job,
                             const std::string& path);

}  // namespace kairos::internal

#endif  // KAIROS_ENGINE_CHECKPOINT_H_
