// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "server/start_checks.h"

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/limits.h"
#include "engine/shard.h"
#include "kairos/status.h"
#include "wire/start_nodes.h"

namespace kairos::internal {

absl::Status CheckStart(const wire::Start& start, int shard) {
  if (start.num_servers() < 1 || start.num_workers() < 1 || start.num_servers() > kMaxNodes ||
      start.num_workers() > kMaxNodes) {
    return absl::InvalidArgumentError(absl::StrFormat("START for %d servers and %d workers",
                                                      start.num_servers(), start.num_workers()));
  }
  if (shard < 0 || shard >= start.num_servers()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "START for %d servers, but this server is shard %d", start.num_servers(), shard));
  }
  return NodesByRank(start, wire::WORKER, start.num_workers()).status();
}

absl::Status CheckJob(const JobConfig& job, int shard, int num_servers, int num_workers,
                      const ServerOptions& options) {
  KAIROS_RETURN_IF_ERROR(ValidateJobConfig(job));
  const uint64_t chunk_bytes = job.chunk_elements * sizeof(float);
  if (chunk_bytes > static_cast<uint64_t>(options.max_message_bytes)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a chunk of %d elements is %d bytes, more than this server accepts in one message "
        "(max_message_bytes %d)",
        job.chunk_elements, chunk_bytes, options.max_message_bytes));
  }
  std::vector<uint64_t> table_bytes;
  KAIROS_ASSIGN_OR_RETURN(const uint64_t need,
                          Shard::EstimateBytes(job, shard, num_servers, num_workers,
                                               options.updater_factory, &table_bytes));
  const uint64_t budget = options.memory_budget_bytes > 0 ? options.memory_budget_bytes
                                                           : DefaultMemoryBudget();
  if (need > budget) {
    std::size_t largest = 0;
    for (std::size_t i = 1; i < table_bytes.size(); ++i) {
      if (table_bytes[i] > table_bytes[largest]) largest = i;
    }
    return absl::ResourceExhaustedError(absl::StrFormat(
        "shard %d needs %d bytes (%s) for the job's tables (the largest share: table "
        "'%s', %d bytes) but its memory budget is %d bytes (%s; "
        "ServerOptions::memory_budget_bytes)",
        shard, need, HumanBytes(need), job.tables[largest].name, table_bytes[largest], budget,
        HumanBytes(budget)));
  }
  return absl::OkStatus();
}

std::string HumanBytes(uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? absl::StrFormat("%d bytes", bytes)
                   : absl::StrFormat("%.1f %s", value, units[unit]);
}

std::string Advertise(const std::string& bound, const std::string& host) {
  if (host.empty() || !absl::StartsWith(bound, "tcp://")) return bound;
  const std::size_t colon = bound.rfind(':');
  return absl::StrCat("tcp://", host, bound.substr(colon));
}

}  // namespace kairos::internal
