// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// JobConfig: what every node of one job must agree on. The coordinator compares each
// joining node's configuration with the job's and refuses a mismatch with an error that
// names the field.

#ifndef KAIROS_JOB_H_
#define KAIROS_JOB_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kairos/export.h"
#include "kairos/table.h"

namespace kairos {

// The wire protocol version this build speaks; checked at join and on every message.
// Version 2: workers prove who they are to servers with a credential (docs/wire_format.md).
inline constexpr uint32_t kProtocolVersion = 3;

// Limits every job is checked against at join, before anything is allocated (a job
// description is input too: one typo must not take a server down). A server also refuses a
// job whose shard does not fit its memory budget (ServerOptions::memory_budget_bytes).
inline constexpr std::size_t kMaxTables = 1024;
inline constexpr std::size_t kMaxTableNameLength = 128;
// One dense table: 2^36 float32 elements (256 GiB).
inline constexpr uint64_t kMaxTableElements = uint64_t{1} << 36;
// All tables of a job together: 2^40 elements (4 TiB).
inline constexpr uint64_t kMaxJobElements = uint64_t{1} << 40;
// One chunk (one message, one update): 2^28 elements (1 GiB).
inline constexpr uint64_t kMaxChunkElements = uint64_t{1} << 28;
// Chunks of all tables together (each costs a few hundred bytes of bookkeeping): 2^24.
inline constexpr uint64_t kMaxJobChunks = uint64_t{1} << 24;
inline constexpr std::size_t kMaxPolicyLength = 1024;
// TableSpec::cache_clocks: how many clocks a worker's copy may serve reads.
inline constexpr uint32_t kMaxCacheClocks = uint32_t{1} << 20;
// TableSpec::write_back_clocks: how long a worker may hold a push back.
inline constexpr uint32_t kMaxWriteBackClocks = 1024;
// TableSpec::cache_rows: how many rows of a sparse table a worker may keep.
inline constexpr uint64_t kMaxCacheRows = uint64_t{1} << 26;
// An updater spec (UpdaterSpec::name, "adam:beta1=0.9,eps=1e-7") and a learning-rate
// schedule (UpdaterSpec::schedule).
inline constexpr std::size_t kMaxUpdaterNameLength = 256;
inline constexpr std::size_t kMaxScheduleLength = 256;
// Sparse tables (docs/sparse.md): the floats of one row, and the keys of one push or pull
// call (repeated keys counted once). keys x row_width of one call is also at most
// kMaxChunkElements, so that one message stays bounded.
inline constexpr uint32_t kMaxRowWidth = uint32_t{1} << 16;
inline constexpr uint64_t kMaxSparseKeys = uint64_t{1} << 20;
// Servers, and workers, of one job (CoordinatorOptions::num_servers, num_workers).
inline constexpr int kMaxNodes = 65536;

struct JobConfig {
  // The tables of the job (dense and sparse), in declaration order (a table's id is its index).
  std::vector<TableSpec> tables;
  // The synchronization policy as a spec string (docs/policies.md): "bsp", "asp", ...
  std::string policy = "asp";
  // Largest chunk, in elements, that a table is cut into. A chunk is the unit of one
  // message and of one update on a server; big tables are cut into chunks spread evenly over
  // the shards. Default 262144 elements (1 MiB): large enough that per-message overhead is
  // small, small enough that a big push is pipelined and applied in parallel.
  uint64_t chunk_elements = uint64_t{1} << 18;

  friend bool operator==(const JobConfig&, const JobConfig&) = default;
};

// Checks a configuration on its own against the limits above: names unique, 1..128
// printable characters; a kind that exists; dense tables: row_width 0 and sizes in
// 1..kMaxTableElements, their sum at most kMaxJobElements; sparse tables: size 0 and
// row_width in 1..kMaxRowWidth;
// chunk_elements in 1..kMaxChunkElements and at most kMaxJobChunks chunks; initializer
// parameters finite (uniform: low <= high; normal: stddev >= 0); updater name 1..256
// printable characters (the servers decide whether they know it), learning rate finite and
// >= 0, a schedule of at most 256 characters that parses; a policy of at most kMaxPolicyLength
// characters that parses, for the job and for each table that names one (TableSpec::policy:
// no pull or straggler part; a sparse table's without value weighting and with immediate or
// round-average aggregation). InvalidArgument names the table or field at fault and the
// limit.
KAIROS_EXPORT absl::Status ValidateJobConfig(const JobConfig& job);

// Compares `theirs` (a joining node's) with `ours` (the job's). Policies, built-in updater
// specs and schedules are compared in canonical form, so two spellings of one agree. OK when equal;
// otherwise InvalidArgument naming the first differing field, e.g. "table 0 ('w') size is 100 here
// but 200 in the job".
KAIROS_EXPORT absl::Status CompareJobConfig(const JobConfig& ours, const JobConfig& theirs);

}  // namespace kairos

#endif  // KAIROS_JOB_H_
