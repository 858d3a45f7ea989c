// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// CoordinatorLink: what a server or a worker keeps of its connection to the coordinator:
// heartbeats when they are due, and the watch on the coordinator's silence.
//
// Thread-safety: I/O thread only (like the transport's handlers that call it).

#ifndef KAIROS_TRANSPORT_COORDINATOR_LINK_H_
#define KAIROS_TRANSPORT_COORDINATOR_LINK_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "transport/transport.h"

namespace kairos::internal {

class CoordinatorLink {
 public:
  // The coordinator counts as dead after this many heartbeat intervals of silence.
  static constexpr int kSilentIntervals = 20;

  // `clock` (the node's; it outlives the link) dates the connection's opening.
  CoordinatorLink(std::string endpoint, absl::Duration heartbeat_interval,
                  const Clock& clock = RealClock::Get())
      : endpoint_(std::move(endpoint)), interval_(heartbeat_interval), clock_(clock) {}

  // Opens the connection (the coordinator counts as heard from now on the clock).
  // REQUIRES: called once, before the transport's I/O thread runs.
  absl::Status Connect(Transport& transport);
  PeerId peer() const { return peer_; }

  // Any message from the coordinator arrived at `now`.
  void Heard(absl::Time now) { last_heard_ = now; }

  // Sends a heartbeat from node `sender` when one is due (none before the node has its id,
  // `sender` 0); returns Unavailable once the
  // coordinator has been silent for kSilentIntervals heartbeat intervals.
  // `stragglers` travels with the heartbeat (a server's straggler report).
  absl::Status Tick(Transport& transport, uint32_t sender, absl::Time now,
                    const std::vector<int>& stragglers = {});

 private:
  const std::string endpoint_;
  const absl::Duration interval_;
  const Clock& clock_;
  PeerId peer_ = 0;
  absl::Time last_heard_;
  absl::Time last_sent_ = absl::InfinitePast();
};

}  // namespace kairos::internal

#endif  // KAIROS_TRANSPORT_COORDINATOR_LINK_H_
