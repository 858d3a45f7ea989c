// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Pure functions on endpoint strings ("tcp://host:port", "ipc://path", "inproc://name"):
// port ranges in a listening endpoint, wildcard hosts, and the host a node is reached at
// (docs/multi_host.md). Tested directly (tests/transport/endpoint_test.cc).

#ifndef KAIROS_TRANSPORT_ENDPOINT_H_
#define KAIROS_TRANSPORT_ENDPOINT_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace kairos::internal {

// A "tcp://HOST:FIRST-LAST" listening endpoint: bind the first free port of the range.
struct PortRange {
  std::string host;  // as written, e.g. "0.0.0.0", "*", "10.0.0.1", "[::]"
  int first = 0;
  int last = 0;
};

// Nullopt when `endpoint` names no range (any other endpoint, "tcp://h:*", "tcp://h:7000").
// InvalidArgument naming the endpoint for a malformed range: not numbers, a port outside
// 1..65535, or FIRST > LAST.
absl::StatusOr<std::optional<PortRange>> ParsePortRange(const std::string& endpoint);

// True for a tcp:// endpoint whose host is a wildcard ("*", "0.0.0.0", "::", "[::]"): such
// an address is where a node listens, never one another node can connect to.
bool HasWildcardHost(const std::string& endpoint);

// "tcp://HOST:PORT" with `host` in place of the endpoint's host (an IPv6 address gets its
// brackets). Returns `endpoint` unchanged when it is not tcp:// or `host` is empty.
std::string WithHost(const std::string& endpoint, const std::string& host);

}  // namespace kairos::internal

#endif  // KAIROS_TRANSPORT_ENDPOINT_H_
