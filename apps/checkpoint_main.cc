// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos-checkpoint: what checkpoint files hold (kairos/checkpoint.h, docs/durability.md),
// for an operator or a script that exports rows to another system.
//
//   kairos-checkpoint FILE...                one line per file: shard, clock, whole or the
//                                            parent of a delta, each table's share
//   kairos-checkpoint --chain FILE           the files a loader reads for FILE, whole first
//   kairos-checkpoint --rows TABLE FILE...   every row of sparse table TABLE in the files:
//                                            "KEY V0 V1 ..." (%.9g: read back exactly), then
//                                            "removed KEY" for the keys a delta removed
//
// Every file is checked whole before anything of it is printed. Exit codes: 0 printed; 1 a
// file cannot be read, is corrupt, or has no sparse table TABLE (the message names it); 2
// usage error.

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kairos/checkpoint.h"

namespace kairos::apps {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

int Fail(const std::string& what) {
  std::fprintf(stderr, "kairos-checkpoint: %s\n", what.c_str());
  return kExitFailed;
}

std::string Summary(const std::string& path, const CheckpointFile& f) {
  std::string out =
      absl::StrCat(path, ": shard ", f.shard, " of ", f.num_shards, ", clock ", f.clock);
  absl::StrAppend(&out, f.delta_of < 0 ? ", whole" : absl::StrCat(", delta of clock ", f.delta_of));
  for (uint32_t t = 0; t < f.tables.size(); ++t) {
    const CheckpointFile::Table& table = f.tables[t];
    if (table.kind == TableKind::kDense) {
      uint64_t here = 0;
      for (const CheckpointFile::Range& r : f.ranges) here += r.table == t ? r.values.size() : 0;
      absl::StrAppend(&out, "; ", table.name, ": dense, ", here, " of ", table.size, " elements");
      continue;
    }
    uint64_t rows = 0, removed = 0;
    for (const CheckpointFile::Rows& r : f.rows) rows += r.table == t ? r.keys.size() : 0;
    for (const CheckpointFile::Removed& r : f.removed) removed += r.table == t ? r.keys.size() : 0;
    absl::StrAppend(&out, "; ", table.name, ": sparse, ", rows, " rows");
    if (f.delta_of >= 0) absl::StrAppend(&out, ", ", removed, " removed");
  }
  return out;
}

// Prints the rows of sparse table `name` in `f`; false when it has none of that name.
bool PrintRows(const CheckpointFile& f, const std::string& name) {
  for (uint32_t t = 0; t < f.tables.size(); ++t) {
    if (f.tables[t].name != name || f.tables[t].kind != TableKind::kSparse) continue;
    const uint32_t width = f.tables[t].row_width;
    for (const CheckpointFile::Rows& r : f.rows) {
      if (r.table != t) continue;
      for (std::size_t i = 0; i < r.keys.size(); ++i) {
        std::printf("%" PRIu64, r.keys[i]);
        for (uint32_t c = 0; c < width; ++c) std::printf(" %.9g", r.values[i * width + c]);
        std::printf("\n");
      }
    }
    for (const CheckpointFile::Removed& r : f.removed) {
      if (r.table != t) continue;
      for (uint64_t key : r.keys) std::printf("removed %" PRIu64 "\n", key);
    }
    return true;
  }
  return false;
}

int Main(int argc, char** argv) {
  CLI::App app(
      "Prints what kairos checkpoint files hold (docs/durability.md): a summary of each, the "
      "chain of files a delta builds on, or the rows of a sparse table.",
      "kairos-checkpoint");
  std::vector<std::string> files;
  bool chain = false;
  std::string table;
  app.add_option("FILE", files, "Checkpoint files (DIR/clock-N/shard-I-of-S.kcp)")->required();
  app.add_flag("--chain", chain, "Print the files a loader reads for each FILE, whole first");
  app.add_option("--rows", table, "Print every row of this sparse table, then removed keys");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  for (const std::string& path : files) {
    if (chain) {
      absl::StatusOr<std::vector<std::string>> links = CheckpointChain(path);
      if (!links.ok()) return Fail(std::string(links.status().message()));
      for (const std::string& link : *links) std::printf("%s\n", link.c_str());
      continue;
    }
    absl::StatusOr<CheckpointFile> f = ReadCheckpointFile(path);
    if (!f.ok()) return Fail(std::string(f.status().message()));
    if (table.empty()) {
      std::printf("%s\n", Summary(path, *f).c_str());
    } else if (!PrintRows(*f, table)) {
      return Fail(absl::StrCat(path, " has no sparse table '", table, "'"));
    }
  }
  return kExitOk;
}

}  // namespace
}  // namespace kairos::apps

int main(int argc, char** argv) { return kairos::apps::Main(argc, argv); }
