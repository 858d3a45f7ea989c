// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// What a node that receives START relies on of its list of nodes: each server shard and
// worker rank held by one node. Shared by the server (worker ranks) and the worker (server
// shards), which read START like any other message.

#ifndef KAIROS_WIRE_START_NODES_H_
#define KAIROS_WIRE_START_NODES_H_

#include <vector>

#include "absl/status/statusor.h"
#include "wire/kairos.pb.h"

namespace kairos::internal {

// The nodes of `role` in `start`, indexed by their rank (a server's shard): each rank in
// [0, count) and given at most once, else InvalidArgument naming the node and the rank
// ("START names server shard 0 twice", "START gives node 7 worker rank 2, out of range (2
// workers)").
// A rank no node holds stays null: the caller decides whether that may be.
// REQUIRES: 0 <= count (bounded by the caller).
absl::StatusOr<std::vector<const wire::Node*>> NodesByRank(const wire::Start& start,
                                                           wire::Role role, int count);

}  // namespace kairos::internal

#endif  // KAIROS_WIRE_START_NODES_H_
