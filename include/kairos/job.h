// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// JobConfig: what every node of one job must agree on. The coordinator compares each
// joining node's configuration with the job's and refuses a mismatch with an error that
// names the field.

#ifndef KAIROS_JOB_H_
#define KAIROS_JOB_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kairos/table.h"

namespace kairos {

// The wire protocol version this build speaks; checked at join and on every message.
inline constexpr uint32_t kProtocolVersion = 1;

struct JobConfig {
  // The dense tables of the job, in declaration order (a table's id is its index).
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

// Checks a configuration on its own: names unique and non-empty, sizes > 0, a policy that
// parses, chunk_elements > 0. The error names the table or field at fault.
absl::Status ValidateJobConfig(const JobConfig& job);

// Compares `theirs` (a joining node's) with `ours` (the job's). Policies are compared in
// canonical form, so two spellings of one policy agree. OK when equal; otherwise
// InvalidArgument naming the first differing field, e.g.
// "table 0 ('w') size is 100 here but 200 in the job".
absl::Status CompareJobConfig(const JobConfig& ours, const JobConfig& theirs);

}  // namespace kairos

#endif  // KAIROS_JOB_H_
