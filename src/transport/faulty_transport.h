// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// FaultyTransport: wraps any Transport and injects network faults into what the node sends
// and receives: drop, delay, duplicate and reorder messages of chosen kinds, and partition
// (cut the node off from every peer, both ways, for a while). Every random choice comes
// from a generator seeded from FaultPlan::seed, so a failing seed replays the same choices
// for the same sequence of messages.
//
// Order: ZeroMQ over one connection never reorders (TCP), and the protocol relies on it, so
// the faults keep each connection's FIFO order: a delayed or held message holds back every
// later message of its connection (same peer, same direction) until it is released.
// "Reorder" therefore means messages of different connections overtaking each other: a
// held message is released once `reorder_after` later messages of other connections have
// passed (or at the next tick). Delays are measured on the node's time (options.env)
// and released by the tick, so on a ManualEnv a delay ends when the test moves the time.
//
// Use: give a FaultyTransportFactory as the nodes' transport_factory (ClusterOptions has
// one for every node of a LocalCluster); the public front is kairos::testing::FaultyNetwork
// (kairos/testing/faulty_network.h, src/api/faulty_network.cc). Each transport it makes is
// named "<name>#<i>" ("worker#2": the third worker transport made) in its events and
// selectors.
//
// Thread-safety: as Transport; the factory and the FaultLog are thread-safe.

#ifndef KAIROS_TRANSPORT_FAULTY_TRANSPORT_H_
#define KAIROS_TRANSPORT_FAULTY_TRANSPORT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kairos/testing/faulty_network.h"
#include "transport/transport.h"

namespace kairos::internal {

// The public plan's actions and directions (kairos/testing/faulty_network.h).
using FaultAction = ::kairos::testing::FaultAction;
using FaultDirection = ::kairos::testing::FaultDirection;

// One kind of fault and the messages it hits: each field as kairos::testing::NetworkFault's
// (kairos/testing/faulty_network.h), but the kinds as wire::Kind (empty: every kind).
struct FaultRule {
  FaultAction action = FaultAction::kDrop;
  std::vector<wire::Kind> kinds;
  FaultDirection direction = FaultDirection::kBoth;
  std::string node;
  double probability = 1.0;
  int64_t max_hits = -1;
  absl::Duration delay = absl::Milliseconds(10);
  int reorder_after = 1;
  absl::Time partition_start = absl::InfinitePast();
  absl::Duration partition_length = absl::ZeroDuration();
  int64_t partition_after_messages = -1;
};

struct FaultPlan {
  uint64_t seed = 1;
  std::vector<FaultRule> rules;
};

// What a fault did to one message, for the test's report and its assertions.
struct FaultEvent {
  FaultAction action;
  FaultDirection direction;  // kSend or kReceive
  wire::Kind kind;
  std::string node;  // the transport's name, "worker#1"
  PeerId peer;       // the other end
  std::string ToString() const;
};

// The events of every transport of a factory, and what a test driving virtual time needs
// to know of them: the messages in flight between them and the time of their last tick.
// Thread-safety: thread-safe.
class FaultLog {
 public:
  std::vector<FaultEvent> events() const;
  // How many events of `action` (any kind when `kind` is unset).
  int64_t Count(FaultAction action, std::optional<wire::Kind> kind = std::nullopt) const;
  // "2x drop send PUSH, 1x delay receive CLOCK", or "no faults".
  std::string Summary() const;

  // Messages sent or received by any transport of the factory: a measure of progress.
  uint64_t activity() const;
  // Messages held (delayed or reordered, or behind such a message) and not released yet;
  // of the kinds `kinds` only, when given.
  int64_t held(const std::vector<wire::Kind>& kinds = {}) const;
  // Messages handed to a wrapped transport and not yet received (and handled) by a
  // transport of the factory, plus functions posted to an I/O thread and not yet run or
  // discarded. Messages to nodes that stopped never arrive and stay counted.
  int64_t in_flight() const;
  // Waits, at most `timeout` of real time, until at most `n` messages are in flight; true
  // if so.
  bool AwaitInFlightAtMost(int64_t n, absl::Duration timeout) const;
  // Waits, at most `timeout` of real time, until a message (of the kinds `kinds`, when
  // given) is held or `or_until` (when given) returns true; true if such a message is held.
  // `or_until` is called with the log's lock held, whenever the log changes and at each
  // Wake.
  bool AwaitHeld(absl::Duration timeout, const std::function<bool()>& or_until = nullptr,
                 const std::vector<wire::Kind>& kinds = {}) const;
  // Has every AwaitHeld look at its `or_until` again (after what it reads changed).
  void Wake() const;
  // Waits, at most `timeout` of real time, until every transport that started and has not
  // stopped has finished a tick at `t` or later; true if so.
  bool AwaitTicked(absl::Time t, absl::Duration timeout) const;

 private:
  friend class FaultyTransport;
  void Add(FaultEvent e);
  void AddSent(int64_t n);
  void AddArrived();
  void AddHeld(wire::Kind kind, int64_t n);
  int64_t Held(const std::vector<wire::Kind>& kinds) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Started(const std::string& name);
  void Ticked(const std::string& name, absl::Time now);
  void Stopped(const std::string& name);

  mutable absl::Mutex mu_;
  std::vector<FaultEvent> events_ ABSL_GUARDED_BY(mu_);
  int64_t sent_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t arrived_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t held_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<wire::Kind, int64_t> held_by_kind_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Time> last_tick_ ABSL_GUARDED_BY(mu_);  // running transports
};

class FaultyTransport final : public Transport {
 public:
  // `env`: the node's (null: Env::Default()). `log` collects the events (may be shared).
  FaultyTransport(std::unique_ptr<Transport> inner, FaultPlan plan, std::string name,
                  std::shared_ptr<const Env> env, std::shared_ptr<FaultLog> log);
  ~FaultyTransport() override;

  absl::StatusOr<std::string> Listen(const std::string& endpoint) override {
    return inner_->Listen(endpoint);
  }
  absl::StatusOr<PeerId> Connect(const std::string& endpoint) override {
    return inner_->Connect(endpoint);
  }
  void Start(MessageHandler on_message, MalformedHandler on_malformed,
             TickHandler on_tick) override;
  void SetConnectErrorHandler(ConnectErrorHandler on_connect_error) override {
    inner_->SetConnectErrorHandler(std::move(on_connect_error));
  }
  void Send(PeerId to, Message message) override;
  // Counted in flight until it has run (or was discarded): a worker's request is posted
  // to the I/O thread before it is sent.
  void Post(std::function<void()> fn) override;
  void Stop() override;
  bool OnIoThread() const override { return inner_->OnIoThread(); }
  std::string PeerAddress(PeerId peer) const override { return inner_->PeerAddress(peer); }
  bool Connected(PeerId peer) const override { return inner_->Connected(peer); }
  uint64_t dropped() const override { return inner_->dropped(); }
  uint64_t peers_forgotten() const override { return inner_->peers_forgotten(); }
  uint64_t handshakes_refused() const override { return inner_->handshakes_refused(); }
  HandOffCounts hand_offs() const override { return inner_->hand_offs(); }
  TrafficCounts traffic() const override { return inner_->traffic(); }

  const std::string& name() const { return name_; }
  // The wrapped transport (a test drives a FakeTransport through it).
  Transport& inner() { return *inner_; }

 private:
  // A message waiting in its connection's queue. Released when due (`due` has passed) and
  // when `overtakes_left` other messages have passed; only the head of a queue goes.
  struct Held {
    Message message;
    absl::Time due = absl::InfinitePast();
    int overtakes_left = 0;
  };
  struct Connection {
    FaultDirection direction;
    PeerId peer;
    std::vector<Held> queue;  // FIFO: front first
  };
  // What to do with one message.
  struct Verdict {
    bool drop = false;
    bool partition = false;
    bool duplicate = false;
    absl::Time due = absl::InfinitePast();
    int overtakes = 0;
  };

  Verdict Decide(FaultDirection direction, const Message& m, PeerId peer, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Connection& ConnectionOf(FaultDirection direction, PeerId peer)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One message passed on `direction` from/to `peer`: the other connections' held messages
  // count it; returns what is now releasable, in order, removed from the queues.
  void Passed(FaultDirection direction, PeerId peer) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What the plan does with `message` on `direction` from/to `peer` at `now`: nothing goes
  // (dropped, partitioned), or it and its duplicate are held in the connection's queue
  // (delayed, to be overtaken, or behind held ones) or returned to go now, followed by the
  // held messages its passing releases, in order.
  std::vector<std::pair<PeerId, Message>> Pass(FaultDirection direction, PeerId peer,
                                               Message message, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes every releasable head (repeatedly) of `direction`'s connections.
  std::vector<std::pair<PeerId, Message>> TakeReleasable(FaultDirection direction, absl::Time now,
                                                         bool tick)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Record(FaultAction action, FaultDirection direction, const Message& m, PeerId peer)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Incoming (I/O thread).
  void OnReceive(PeerId from, Message message);
  void OnTick(absl::Time now);
  void Deliver(PeerId from, Message message);
  void SendOut(PeerId to, Message message);
  static Message Copy(const Message& m);

  std::unique_ptr<Transport> inner_;
  const FaultPlan plan_;
  const std::string name_;
  const std::shared_ptr<const Env> env_holder_;
  const Env& env_;
  const std::shared_ptr<FaultLog> log_;

  MessageHandler on_message_;
  TickHandler on_tick_;

  absl::Mutex mu_;
  uint64_t rng_state_ ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> hits_ ABSL_GUARDED_BY(mu_);  // per rule
  // Per rule: when its partition started (partition_after_messages), else InfinitePast.
  std::vector<absl::Time> partition_started_ ABSL_GUARDED_BY(mu_);
  int64_t messages_ ABSL_GUARDED_BY(mu_) = 0;  // sent and received so far
  std::vector<Connection> connections_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

// Makes FaultyTransports around the transports of `inner` (null: ZeroMQ). Each transport's
// generator is seeded from the plan's seed and the transport's name, so the choices of one
// node do not depend on how the others' messages interleave with its own.
class FaultyTransportFactory final : public TransportFactory {
 public:
  explicit FaultyTransportFactory(FaultPlan plan,
                                  std::shared_ptr<TransportFactory> inner = nullptr);
  absl::StatusOr<std::unique_ptr<Transport>> Make(const TransportOptions& options) override;
  const std::shared_ptr<FaultLog>& log() const { return log_; }

 private:
  const FaultPlan plan_;
  const std::shared_ptr<TransportFactory> inner_;
  const std::shared_ptr<FaultLog> log_ = std::make_shared<FaultLog>();
  absl::Mutex mu_;
  std::map<std::string, int> made_ ABSL_GUARDED_BY(mu_);  // per name
};

std::string FaultActionName(FaultAction action);           // "drop"
std::string FaultDirectionName(FaultDirection direction);  // "send"

}  // namespace kairos::internal

#endif  // KAIROS_TRANSPORT_FAULTY_TRANSPORT_H_
