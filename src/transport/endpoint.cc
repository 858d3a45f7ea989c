// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "transport/endpoint.h"

#include <cstddef>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace kairos::internal {
namespace {

constexpr absl::string_view kTcp = "tcp://";

// Splits "tcp://HOST:PORT" at the last colon; false when it is not that shape.
bool SplitTcp(absl::string_view endpoint, absl::string_view* host, absl::string_view* port) {
  if (!absl::StartsWith(endpoint, kTcp)) return false;
  const absl::string_view rest = endpoint.substr(kTcp.size());
  const std::size_t colon = rest.rfind(':');
  if (colon == absl::string_view::npos) return false;
  *host = rest.substr(0, colon);
  *port = rest.substr(colon + 1);
  return true;
}

}  // namespace

absl::StatusOr<std::optional<PortRange>> ParsePortRange(const std::string& endpoint) {
  absl::string_view host;
  absl::string_view port;
  if (!SplitTcp(endpoint, &host, &port)) return std::optional<PortRange>();
  const std::size_t dash = port.find('-');
  if (dash == absl::string_view::npos) return std::optional<PortRange>();
  PortRange range;
  range.host = std::string(host);
  if (!absl::SimpleAtoi(port.substr(0, dash), &range.first) ||
      !absl::SimpleAtoi(port.substr(dash + 1), &range.last) || range.first < 1 ||
      range.last > 65535 || range.first > range.last || host.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' is not a port range: write tcp://HOST:FIRST-LAST with 1 <= FIRST <= LAST <= "
        "65535",
        endpoint));
  }
  return std::optional<PortRange>(range);
}

bool HasWildcardHost(const std::string& endpoint) {
  absl::string_view host;
  absl::string_view port;
  if (!SplitTcp(endpoint, &host, &port)) return false;
  return host == "*" || host == "0.0.0.0" || host == "::" || host == "[::]";
}

std::string WithHost(const std::string& endpoint, const std::string& host) {
  absl::string_view old_host;
  absl::string_view port;
  if (host.empty() || !SplitTcp(endpoint, &old_host, &port)) return endpoint;
  const bool ipv6 = absl::StrContains(host, ':') && !absl::StartsWith(host, "[");
  return absl::StrCat(kTcp, ipv6 ? absl::StrCat("[", host, "]") : host, ":", port);
}

}  // namespace kairos::internal
