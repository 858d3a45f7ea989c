// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "wire/start_nodes.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace kairos::internal {

absl::StatusOr<std::vector<const wire::Node*>> NodesByRank(const wire::Start& start,
                                                           wire::Role role, int count) {
  const bool servers = role == wire::SERVER;
  const char* what = servers ? "server shard" : "worker rank";
  std::vector<const wire::Node*> by_rank(static_cast<std::size_t>(count), nullptr);
  for (const wire::Node& n : start.nodes()) {
    if (n.role() != role) continue;
    if (n.rank() < 0 || n.rank() >= count) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "START gives node %d %s %d, out of range (%d %s)", n.node_id(), what, n.rank(), count,
          servers ? "servers" : "workers"));
    }
    if (by_rank[n.rank()] != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("START names %s %d twice", what, n.rank()));
    }
    by_rank[n.rank()] = &n;
  }
  return by_rank;
}

}  // namespace kairos::internal
