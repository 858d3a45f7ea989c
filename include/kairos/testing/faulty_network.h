// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// FaultyNetwork: network faults for tests of programs built on kairos (the kairos::testing
// target). It makes the nodes' transports (NodeOptions::transport_factory,
// ClusterOptions::transport_factory: the one way to put a transport under a node) and applies
// a plan to what they send and receive: drop, delay, duplicate and reorder messages of chosen
// kinds, and partition a node (cut it off from every peer, both ways, for a while). A test
// then checks that its training loop gets the error it should, or loses nothing:
//
//   kairos::testing::NetworkFaultPlan plan;
//   plan.faults.push_back({.action = kairos::testing::FaultAction::kDelay,
//                          .kinds = {"PUSH"}, .delay = absl::Milliseconds(50)});
//   absl::StatusOr<std::unique_ptr<kairos::testing::FaultyNetwork>> net =
//       kairos::testing::FaultyNetwork::Create(plan);
//   kairos::ClusterOptions options;
//   options.transport_factory = (*net)->factory();
//   ... run the job ...
//   EXPECT_GT((*net)->Count(kairos::testing::FaultAction::kDelay), 0);
//
// Kinds are the wire protocol's message kinds by name ("PUSH", "PULL", "PULL_REPLY",
// "CLOCK", "HEARTBEAT", "JOIN"...: docs/wire_format.md). Nodes are named by the transports
// the network made, "<kind>#<i>" ("worker#2": the third worker transport made); a fault's
// `node` is a prefix of that name ("worker" hits every worker). Every random choice comes from
// a generator seeded with the plan's seed and the transport's name, so a failing seed
// replays the same choices for the same messages.
//
// Order: one connection never reorders (TCP does not, and kairos's protocol relies on it),
// so a delayed or held message holds back every later message of its connection; reordering
// means messages of different connections overtaking each other. Delays are measured in the
// node's time (NodeOptions::env) and released by its tick: on a kairos::testing::ManualEnv a
// delay ends when the test moves the time.
//
// Without faults the network is the plain ZeroMQ transport (inproc://, ipc:// or tcp://, as
// the nodes ask), which still counts what is in flight (in_flight, AwaitInFlightAtMost): a
// test can wait until every message sent has been handled.
//
// FaultyNetwork lives in libkairos (it wraps the library's own transports, whose messages
// are not API); link kairos::testing, which brings it with the rest of kairos/testing/.
//
// Thread-safety: every method is safe to call from any thread.

#ifndef KAIROS_TESTING_FAULTY_NETWORK_H_
#define KAIROS_TESTING_FAULTY_NETWORK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kairos/export.h"
#include "kairos/options.h"

namespace kairos::testing {

enum class FaultAction { kDrop, kDelay, kDuplicate, kReorder, kPartition };
enum class FaultDirection { kSend, kReceive, kBoth };

// One kind of fault and the messages it hits.
struct NetworkFault {
  FaultAction action = FaultAction::kDrop;
  // The message kinds it hits, by name; empty: every kind. (kPartition cuts everything.)
  std::vector<std::string> kinds{};
  FaultDirection direction = FaultDirection::kBoth;
  // The transports it applies to: a prefix of their names ("worker", "worker#1", "server",
  // "coordinator"); empty: all.
  std::string node{};
  // Chance that a matching message is hit, in [0, 1].
  double probability = 1.0;
  // Hits at most this many messages per transport; -1: no limit.
  int64_t max_hits = -1;
  // kDelay: how long a hit message is held, in the node's time.
  absl::Duration delay = absl::Milliseconds(10);
  // kReorder: a hit message is released after this many later messages of other
  // connections (same direction) passed it, or at the next tick. >= 1.
  int reorder_after = 1;
  // kPartition: every message to or from the node is lost in the window
  // [partition_start, partition_start + partition_length) of the node's time; with
  // partition_after_messages >= 0 the window starts instead at the node's message of that
  // number (sent and received counted together, from 0), so that it lands mid-job whatever
  // the job's start time.
  absl::Time partition_start = absl::InfinitePast();
  absl::Duration partition_length = absl::ZeroDuration();
  int64_t partition_after_messages = -1;
};

struct NetworkFaultPlan {
  uint64_t seed = 1;
  std::vector<NetworkFault> faults;
};

// What a fault did to one message.
struct NetworkFaultEvent {
  FaultAction action = FaultAction::kDrop;
  FaultDirection direction = FaultDirection::kSend;  // kSend or kReceive
  std::string kind;                                  // "PUSH"
  std::string node;                                  // the transport's name, "worker#1"
  // "worker#1: drop send PUSH"
  KAIROS_EXPORT std::string ToString() const;
};

class KAIROS_EXPORT FaultyNetwork {
 public:
  // InvalidArgument naming the fault for an unknown kind, a probability outside [0, 1], a
  // negative delay or partition length, or reorder_after < 1.
  static absl::StatusOr<std::unique_ptr<FaultyNetwork>> Create(NetworkFaultPlan plan);
  ~FaultyNetwork();
  FaultyNetwork(const FaultyNetwork&) = delete;
  FaultyNetwork& operator=(const FaultyNetwork&) = delete;

  // For NodeOptions::transport_factory or ClusterOptions::transport_factory: every node
  // given it is on this network. It keeps the network's log alive.
  std::shared_ptr<TransportFactory> factory() const;

  // What the faults did, in order.
  std::vector<NetworkFaultEvent> events() const;
  // Events of `action`, of kind `kind` only when it is not empty.
  int64_t Count(FaultAction action, std::string_view kind = {}) const;
  // "2x drop send PUSH, 1x delay receive CLOCK", or "no faults".
  std::string Summary() const;

  // Messages sent or received on the network so far: a measure of progress.
  uint64_t activity() const;
  // Messages sent and not yet received and handled (held ones included), plus functions
  // posted to a node's I/O thread and not yet run. Messages to stopped nodes stay counted.
  int64_t in_flight() const;
  // Waits, at most `timeout` of real time, until at most `n` messages are in flight.
  bool AwaitInFlightAtMost(int64_t n, absl::Duration timeout) const;

 private:
  struct Impl;
  explicit FaultyNetwork(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kairos::testing

#endif  // KAIROS_TESTING_FAULTY_NETWORK_H_
