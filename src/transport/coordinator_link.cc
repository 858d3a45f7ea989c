// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "transport/coordinator_link.h"

#include "absl/strings/str_format.h"
#include "kairos/status.h"

namespace kairos::internal {

absl::Status CoordinatorLink::Connect(Transport& transport) {
  KAIROS_ASSIGN_OR_RETURN(peer_, transport.Connect(endpoint_));
  last_heard_ = clock_.Now();
  return absl::OkStatus();
}

absl::Status CoordinatorLink::Tick(Transport& transport, uint32_t sender, absl::Time now,
                                   const std::vector<int>& stragglers) {
  // Node ids start at 1: before the JOIN_REPLY the coordinator would refuse a heartbeat.
  if (sender != 0 && now - last_sent_ >= interval_) {
    last_sent_ = now;
    Message hb;
    hb.header.set_kind(wire::HEARTBEAT);
    hb.header.set_sender(sender);
    for (int w : stragglers) hb.header.add_stragglers(w);
    transport.Send(peer_, std::move(hb));
  }
  if (now - last_heard_ > kSilentIntervals * interval_) {
    return absl::UnavailableError(
        absl::StrFormat("the coordinator at %s has been silent for %s", endpoint_,
                        absl::FormatDuration(now - last_heard_)));
  }
  return absl::OkStatus();
}

}  // namespace kairos::internal
