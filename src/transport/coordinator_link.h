// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// CoordinatorLink: what a server or a worker keeps of its connection to the coordinator:
// heartbeats when they are due, and the watch on the coordinator's silence. In a job whose
// coordinator keeps its state (START's coordinator_restart_timeout_ms; docs/durability.md,
// "Coordinator restarts") a silent coordinator is waited for that long, and while it is
// silent, or once it refused the node as a stranger (a restarted coordinator), the node asks
// to be taken back (the resume JOIN its node builds) in place of each heartbeat.
//
// Thread-safety: I/O thread only (like the transport's handlers that call it).

#ifndef KAIROS_TRANSPORT_COORDINATOR_LINK_H_
#define KAIROS_TRANSPORT_COORDINATOR_LINK_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/env.h"
#include "transport/transport.h"

namespace kairos::internal {

class CoordinatorLink {
 public:
  // The coordinator counts as dead after this many heartbeat intervals of silence.
  static constexpr int kSilentIntervals = 20;
  // With a restart wait, the node asks to be taken back after this many intervals of
  // silence.
  static constexpr int kLostIntervals = 3;

  // `env` (the node's; it outlives the link) dates the connection's opening.
  CoordinatorLink(std::string endpoint, absl::Duration heartbeat_interval,
                  const Env& env = Env::Default())
      : endpoint_(std::move(endpoint)), interval_(heartbeat_interval), env_(env) {}

  // Opens the connection (the coordinator counts as heard from now on).
  // REQUIRES: called once, before the transport's I/O thread runs.
  absl::Status Connect(Transport& transport);
  PeerId peer() const { return peer_; }

  // Any message from the coordinator arrived at `now`.
  void Heard(absl::Time now) { last_heard_ = now; }

  // Sends a heartbeat from node `sender` when one is due (none before the node has its id,
  // `sender` 0), or the resume JOIN while the coordinator is lost; returns Unavailable once
  // the coordinator has been silent for kSilentIntervals heartbeat intervals (with a restart
  // wait: for that long). `stragglers` travels with the heartbeat (a server's straggler
  // report).
  absl::Status Tick(Transport& transport, uint32_t sender, absl::Time now,
                    const std::vector<int>& stragglers = {});

  // The job's coordinator keeps its state: silence is waited for `wait`, and while the
  // coordinator is lost `resume_join` (the node's JOIN with its resume_node_id) goes in
  // place of each heartbeat. A zero wait changes nothing.
  void SetRestartWait(absl::Duration wait, std::function<Message()> resume_join);
  bool resumable() const { return restart_wait_ > absl::ZeroDuration(); }
  // The coordinator refused one of this node's messages as a stranger's: a restarted
  // coordinator that has not bound this node yet. With a restart wait the next tick asks to
  // be taken back.
  void Lost() { lost_ = true; }
  // Whether the node has asked to be taken back and has not been yet.
  bool resuming() const { return resuming_; }
  // The coordinator took the node back (its JOIN_REPLY to the resume JOIN).
  void Resumed() { lost_ = resuming_ = false; }

 private:
  const std::string endpoint_;
  const absl::Duration interval_;
  const Env& env_;
  PeerId peer_ = 0;
  absl::Time last_heard_;
  absl::Time last_sent_ = absl::InfinitePast();
  absl::Duration restart_wait_ = absl::ZeroDuration();
  std::function<Message()> resume_join_;
  bool lost_ = false;      // refused as a stranger
  bool resuming_ = false;  // a resume JOIN was sent, not answered yet
};

// How long a node of the job `start` describes waits for its coordinator to come back
// (CoordinatorLink::SetRestartWait): START's coordinator_restart_timeout_ms, at most a week.
absl::Duration CoordinatorRestartWait(const wire::Start& start);

}  // namespace kairos::internal

#endif  // KAIROS_TRANSPORT_COORDINATOR_LINK_H_
