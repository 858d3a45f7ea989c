// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Reading the checkpoint files servers write (docs/durability.md): for programs that take
// what a job trained elsewhere (a serving system fed with delta checkpoints, an offline
// evaluation, an audit of a table) without starting a job. A file is one shard's part of
// one checkpoint, whole or a delta; CheckpointChain lists the files a delta builds on.
//
//   absl::StatusOr<kairos::CheckpointFile> f = kairos::ReadCheckpointFile(path);
//   for (const kairos::CheckpointFile::Rows& r : f->rows) { ... r.keys, r.values ... }
//
// Every file is checked whole before anything is returned (checksums, lengths, its END),
// as a restore checks it. Thread-safety: the functions are thread-safe; a CheckpointFile is
// a plain value.

#ifndef KAIROS_CHECKPOINT_H_
#define KAIROS_CHECKPOINT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kairos/export.h"
#include "kairos/table.h"

namespace kairos {

struct CheckpointFile {
  int shard = 0;  // the shard that wrote it, of num_shards
  int num_shards = 1;
  int64_t clock = 0;  // the clock that names it (clock-<N>)
  // A delta's parent: the clock of the checkpoint it applies to; -1: a whole checkpoint.
  int64_t delta_of = -1;

  // Each table of the job, in the job's order (a table id is an index here).
  struct Table {
    std::string name;
    TableKind kind = TableKind::kDense;
    uint64_t size = 0;               // dense: elements
    uint32_t row_width = 0;          // sparse: floats per row
    std::string updater;             // UpdaterSpec::name
    uint32_t state_per_element = 0;  // the updater's state, floats per element
    friend bool operator==(const Table&, const Table&) = default;
  };
  std::vector<Table> tables;

  // Dense: elements [begin, begin + values.size()) of table `table`, with their updater
  // state (values.size() x state_per_element floats) and update count.
  struct Range {
    uint32_t table = 0;
    uint64_t begin = 0;
    std::vector<float> values;
    std::vector<float> state;
    uint64_t updates = 0;
  };
  std::vector<Range> ranges;

  // Sparse: the rows of table `table` this file holds (all of the shard's, or a delta's
  // changed ones), row i of key keys[i]: values [i x row_width, (i + 1) x row_width), state
  // row_width x state_per_element floats per row, its update count. One entry per table.
  struct Rows {
    uint32_t table = 0;
    std::vector<uint64_t> keys;
    std::vector<float> values;
    std::vector<float> state;
    std::vector<uint64_t> updates;
  };
  std::vector<Rows> rows;

  // A delta: the keys of table `table` removed since its parent (rows a loader should drop
  // before it takes this file's rows; a key removed and created again is in both).
  struct Removed {
    uint32_t table = 0;
    std::vector<uint64_t> keys;
  };
  std::vector<Removed> removed;
};

// Reads one file (DIR/clock-<N>/shard-<i>-of-<S>.kcp). Errors: NotFound or Unavailable for
// a file that cannot be opened or read, DataLoss naming the file and the byte offset for a
// torn or corrupt one.
KAIROS_EXPORT absl::StatusOr<CheckpointFile> ReadCheckpointFile(const std::string& path);

// The files a loader reads, in order, to have what `path` holds: the whole checkpoint its
// chain of deltas starts from, then each delta up to `path` (only `path` when it is whole).
// FailedPrecondition naming a file of the chain that is missing or is not the parent it
// should be.
KAIROS_EXPORT absl::StatusOr<std::vector<std::string>> CheckpointChain(const std::string& path);

}  // namespace kairos

#endif  // KAIROS_CHECKPOINT_H_
