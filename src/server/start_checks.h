// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// What a server checks of a job before it allocates anything for it: the START message's
// consistency and the job against the server's own limits (its largest message, its memory
// budget). Pure functions, tested directly (tests/server/start_checks_test.cc).

#ifndef KAIROS_SERVER_START_CHECKS_H_
#define KAIROS_SERVER_START_CHECKS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "kairos/job.h"
#include "kairos/options.h"
#include "wire/kairos.pb.h"

namespace kairos::internal {

// What the server relies on in a START: at least one server and one worker, its own shard
// among the servers, and each worker rank inside [0, num_workers) and given once.
absl::Status CheckStart(const wire::Start& start, int shard);

// The job's limits (kairos/job.h), the chunk size against the largest message this server
// accepts, and shard `shard`'s memory against the budget (options.memory_budget_bytes, or
// DefaultMemoryBudget() when 0). Errors name the table, the need and the limit.
absl::Status CheckJob(const JobConfig& job, int shard, int num_servers, int num_workers,
                      const ServerOptions& options);

// "4.0 MiB", "1.5 GiB".
std::string HumanBytes(uint64_t bytes);

// Replaces the host of a bound "tcp://host:port" endpoint with `host` (when not empty).
std::string Advertise(const std::string& bound, const std::string& host);

}  // namespace kairos::internal

#endif  // KAIROS_SERVER_START_CHECKS_H_
