// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Server memory: the resident memory of a real kairos-server process holding one table,
// while a worker in this process pushes and pulls the whole table. The coordinator and the
// worker run here; the server is a child process, so its VmHWM (peak resident set, from
// /proc/<pid>/status) is the server's alone.
//
// Thread-safety: one call at a time.

#ifndef KAIROS_BENCH_MEMORY_WORKLOAD_H_
#define KAIROS_BENCH_MEMORY_WORKLOAD_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace kairos::bench {

struct MemoryFigures {
  uint64_t table_bytes = 0;
  uint64_t baseline_rss_bytes = 0;  // VmRSS once listening, before the table exists
  uint64_t peak_rss_bytes = 0;      // VmHWM after the rounds
  uint64_t final_rss_bytes = 0;     // VmRSS after the rounds
  uint64_t bound_bytes = 0;         // the target: (1.3 + state floats) x table + 64 MiB
  uint64_t state_per_element = 0;   // the updater's state, floats per element
};

// Runs `server_binary` (kairos-server) as a child with a coordinator and one worker here,
// in a job of one table of `table_bytes` under `policy` whose server-side optimizer is
// `updater` (an UpdaterSpec name: "sgd", "adam", ...); the worker runs `rounds` rounds of
// { PushAsync(whole table, zero-copy); AdvanceClock(); PullAsync(whole table); wait for both }.
// Errors: Unavailable when the server cannot be started, or the job's error.
absl::StatusOr<MemoryFigures> MeasureServerMemory(const std::string& server_binary,
                                                  uint64_t table_bytes, const std::string& policy,
                                                  int rounds, const std::string& updater = "sgd");

// Server memory of a sparse table: like MeasureServerMemory, with a job of one sparse table
// of rows of `width` floats (updater `updater`) into which the worker pushes `rows` distinct
// rows (SparseKey(0..rows-1), batches of 16384 keys), and then pulls them all once.
struct SparseMemoryFigures {
  uint64_t rows = 0;
  uint32_t width = 0;
  uint64_t raw_bytes = 0;           // rows x width x 4: the values alone
  uint64_t baseline_rss_bytes = 0;  // VmRSS once listening, before any row exists
  uint64_t pushed_rss_bytes = 0;    // VmHWM after the pushes, before the pull
  uint64_t peak_rss_bytes = 0;      // VmHWM after the pushes and the pull
  uint64_t final_rss_bytes = 0;     // VmRSS then
  // The target: 2 x raw_bytes x (1 + state_per_element) + 64 MiB (2 x raw + 64 MiB for sgd).
  uint64_t bound_bytes = 0;
  uint64_t state_per_element = 0;   // the updater's state, floats per element
};
absl::StatusOr<SparseMemoryFigures> MeasureSparseServerMemory(const std::string& server_binary,
                                                              uint64_t rows, uint32_t width,
                                                              const std::string& updater = "sgd");

}  // namespace kairos::bench

#endif  // KAIROS_BENCH_MEMORY_WORKLOAD_H_
