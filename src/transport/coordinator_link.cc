// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "transport/coordinator_link.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "kairos/status.h"

namespace kairos::internal {

absl::Status CoordinatorLink::Connect(Transport& transport) {
  KAIROS_ASSIGN_OR_RETURN(peer_, transport.Connect(endpoint_));
  last_heard_ = env_.Now();
  return absl::OkStatus();
}

absl::Status CoordinatorLink::Tick(Transport& transport, uint32_t sender, absl::Time now,
                                   const std::vector<int>& stragglers) {
  // Node ids start at 1: before the JOIN_REPLY the coordinator would refuse a heartbeat.
  if (sender != 0 && now - last_sent_ >= interval_) {
    last_sent_ = now;
    // Silent for a few heartbeats: the coordinator may be a new process by now.
    if (resumable() && (lost_ || now - last_heard_ > kLostIntervals * interval_)) {
      resuming_ = true;
      transport.Send(peer_, resume_join_());
    } else {
      Message hb;
      hb.header.set_kind(wire::HEARTBEAT);
      hb.header.set_sender(sender);
      for (int w : stragglers) hb.header.add_stragglers(w);
      transport.Send(peer_, std::move(hb));
    }
  }
  const absl::Duration limit = resumable() ? restart_wait_ : kSilentIntervals * interval_;
  if (now - last_heard_ > limit) {
    return absl::UnavailableError(absl::StrFormat(
        "the coordinator at %s has been silent for %s%s", endpoint_,
        absl::FormatDuration(now - last_heard_),
        resumable() ? " and did not come back (CoordinatorOptions::restart_timeout)" : ""));
  }
  return absl::OkStatus();
}

void CoordinatorLink::SetRestartWait(absl::Duration wait, std::function<Message()> resume_join) {
  restart_wait_ = wait;
  resume_join_ = std::move(resume_join);
}

absl::Duration CoordinatorRestartWait(const wire::Start& start) {
  constexpr uint64_t kWeekMs = uint64_t{7} * 24 * 3600 * 1000;
  return absl::Milliseconds(
      static_cast<int64_t>(std::min(start.coordinator_restart_timeout_ms(), kWeekMs)));
}

}  // namespace kairos::internal
