// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// MessageWatch: what is in flight between the nodes of one test cluster, each message with
// its receiver, for the pacer of virtual_time.h. WatchedTransport wraps a node's ZeroMQ
// transport (inside its FaultyTransport, so it sees what goes on the wire, after the
// faults) and tells the watch of every message it sends and receives and every function
// posted to its I/O thread.
//
// In flight: a message sent and not yet received and handled by its receiver, and a
// function posted and not yet run. Unlike FaultLog::in_flight, which counts a message to a
// node that stopped for ever, the watch knows each message's receiver: when a transport
// stops, what is in flight to it and what is posted to it leaves the count, what is sent to
// it later is never counted, and the sends it was asked for from other threads and dropped
// unsent leave the count too. So the count falls to zero exactly when nothing is on its way
// to a running node, with no allowance of real time for lost messages.
//
// Receivers: a message to a peer the sender connected to is for the transport listening at
// that endpoint. A message carries a tag in header fields that no node knows (protobuf
// keeps unknown fields; the receiving WatchedTransport takes them out before the node sees
// the message): its number, its sender and the sender's peer id for the receiver. From it
// the receiver learns which transport is behind the peer it came from (its replies there
// are counted for that transport), and the sender which transport is behind its own peer.
// A message to a peer that never sent a tag (a bare client of the test) is not counted.
// A send asked for on another thread than the I/O thread waits in the transport's queue;
// a function posted behind it tells that it went (the queue is first in, first out), and
// what has not gone when the transport stopped never will.
//
// Thread-safety: thread-safe.

#ifndef KAIROS_TESTS_CLUSTER_WATCHED_TRANSPORT_H_
#define KAIROS_TESTS_CLUSTER_WATCHED_TRANSPORT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "google/protobuf/message.h"
#include "google/protobuf/unknown_field_set.h"
#include "transport/transport.h"

namespace kairos::test_support {

class MessageWatch {
 public:
  // What a message carries: its number, the watch, its sender and the sender's peer id.
  struct Tag {
    uint64_t id = 0;
    uint64_t watch = 0;
    int from = -1;
    internal::PeerId peer = 0;
  };

  MessageWatch() : serial_(NextSerial()) {}
  MessageWatch(const MessageWatch&) = delete;
  MessageWatch& operator=(const MessageWatch&) = delete;

  // A new transport named `name`; returns its number.
  int Add(const std::string& name) {
    absl::MutexLock lock(&mu_);
    Node n;
    n.name = name;
    nodes_.push_back(std::move(n));
    return static_cast<int>(nodes_.size()) - 1;
  }

  // Transport `t` listens at `endpoint` (as Listen returned it).
  void Listening(int t, const std::string& endpoint) {
    absl::MutexLock lock(&mu_);
    listeners_[endpoint] = t;
  }

  // Transport `t` connected to `endpoint`, as its peer `peer`.
  void Connected(int t, internal::PeerId peer, const std::string& endpoint) {
    absl::MutexLock lock(&mu_);
    if (auto it = listeners_.find(endpoint); it != listeners_.end()) {
      nodes_[t].peer_node[peer] = it->second;
    } else {
      nodes_[t].unresolved.insert(peer);  // counted; its receiver learned at the arrival
    }
  }

  // Transport `t` sends a message to its peer `peer`: returns the message's tag, and
  // whether it is counted in flight (its receiver runs, or is not known yet).
  Tag Sent(int t, internal::PeerId peer, bool* counted) {
    absl::MutexLock lock(&mu_);
    const Tag tag{next_id_++, serial_, t, peer};
    const Node& n = nodes_[t];
    int to = -1;
    *counted = false;
    if (auto it = n.peer_node.find(peer); it != n.peer_node.end()) {
      to = it->second;
      *counted = !nodes_[to].stopped;
    } else {
      *counted = n.unresolved.contains(peer);
    }
    if (*counted) records_[tag.id] = Record{t, peer, to};
    return tag;
  }

  // Transport `t` received the message tagged `tag` from its peer `peer` (before the node
  // handles it): each side learns the transport behind its peer.
  void Received(int t, internal::PeerId peer, const Tag& tag) {
    absl::MutexLock lock(&mu_);
    if (tag.watch != serial_ || tag.from < 0 || tag.from >= static_cast<int>(nodes_.size())) {
      return;
    }
    nodes_[t].peer_node[peer] = tag.from;
    Node& sender = nodes_[tag.from];
    sender.peer_node[tag.peer] = t;
    if (sender.unresolved.erase(tag.peer) > 0) {
      for (auto& [id, r] : records_) {
        if (r.from == tag.from && r.peer == tag.peer && r.to < 0) r.to = t;
      }
    }
  }

  // The message `id` was received and handled, or will never go.
  void Done(uint64_t id) {
    absl::MutexLock lock(&mu_);
    records_.erase(id);
  }

  // A function was posted to transport `t`'s I/O thread; it ran (or was destroyed unrun).
  void Posted(int t) {
    absl::MutexLock lock(&mu_);
    ++nodes_[t].posts;
  }
  void PostDone(int t) {
    absl::MutexLock lock(&mu_);
    --nodes_[t].posts;
  }

  // Transport `t` stops: nothing in flight to it or posted to it will arrive or run.
  void Stopped(int t) {
    absl::MutexLock lock(&mu_);
    nodes_[t].stopped = true;
    absl::erase_if(records_, [t](const auto& kv) { return kv.second.to == t; });
  }

  int64_t in_flight() const {
    absl::MutexLock lock(&mu_);
    return InFlight();
  }

  // Waits, at most `timeout` of real time, until nothing is in flight or `stop` is true
  // (looked at again at each Wake); true when nothing is in flight.
  bool AwaitNothingInFlight(absl::Duration timeout, const std::atomic<bool>& stop) const {
    absl::MutexLock lock(&mu_);
    auto quiet = [this, &stop]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return InFlight() == 0 || stop.load();
    };
    mu_.AwaitWithTimeout(absl::Condition(&quiet), timeout);
    return InFlight() == 0;
  }

  // Waits, at most `timeout` of real time, until at most `n` messages are in flight; true
  // when they are.
  bool AwaitInFlightAtMost(int64_t n, absl::Duration timeout) const {
    absl::MutexLock lock(&mu_);
    auto few = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return InFlight() <= n; };
    mu_.AwaitWithTimeout(absl::Condition(&few), timeout);
    return InFlight() <= n;
  }

  // Has AwaitNothingInFlight look at its `stop` again.
  void Wake() const { absl::MutexLock lock(&mu_); }

  // What is in flight, for a failure: "worker#1 -> server#0 (3), 2 posted to worker#0".
  std::string Describe() const {
    absl::MutexLock lock(&mu_);
    absl::flat_hash_map<std::string, int> messages;
    for (const auto& [id, r] : records_) {
      ++messages[absl::StrCat(nodes_[r.from].name, " -> ",
                              r.to < 0 ? "its peer " + std::to_string(r.peer) : nodes_[r.to].name)];
    }
    std::string out;
    for (const auto& [what, n] : messages)
      absl::StrAppend(&out, out.empty() ? "" : ", ", what, " (", n, ")");
    for (const Node& n : nodes_) {
      if (!n.stopped && n.posts > 0) {
        absl::StrAppend(&out, out.empty() ? "" : ", ", n.posts, " posted to ", n.name);
      }
    }
    return out;
  }

  // Counts nothing of what is in flight now (after a failure was reported for it).
  void Forget() {
    absl::MutexLock lock(&mu_);
    records_.clear();
    for (Node& n : nodes_) n.posts = 0;
  }

 private:
  struct Node {
    std::string name;
    bool stopped = false;
    int64_t posts = 0;                                     // posted and not run
    absl::flat_hash_map<internal::PeerId, int> peer_node;  // the transport behind a peer
    absl::flat_hash_set<internal::PeerId> unresolved;      // connected, receiver not known
  };
  struct Record {
    int from;
    internal::PeerId peer;
    int to;  // -1: not known yet
  };

  static uint64_t NextSerial() {
    static std::atomic<uint64_t> serial{1};
    return serial.fetch_add(1);
  }

  int64_t InFlight() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    int64_t n = static_cast<int64_t>(records_.size());
    for (const Node& node : nodes_) {
      if (!node.stopped) n += node.posts;
    }
    return n;
  }

  const uint64_t serial_;  // tells this watch's tags from another's
  mutable absl::Mutex mu_;
  std::vector<Node> nodes_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int> listeners_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, Record> records_ ABSL_GUARDED_BY(mu_);  // counted messages
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
};

// A node's transport that tells `watch` what it sends, receives and runs (see above).
class WatchedTransport final : public internal::Transport {
 public:
  WatchedTransport(std::unique_ptr<internal::Transport> inner, std::shared_ptr<MessageWatch> watch,
                   const std::string& name)
      : inner_(std::move(inner)),
        watch_(std::move(watch)),
        id_(watch_->Add(name)),
        unsent_(std::make_shared<Unsent>()) {}
  ~WatchedTransport() override { Stop(); }

  absl::StatusOr<std::string> Listen(const std::string& endpoint) override {
    absl::StatusOr<std::string> bound = inner_->Listen(endpoint);
    if (bound.ok()) watch_->Listening(id_, *bound);
    return bound;
  }
  absl::StatusOr<internal::PeerId> Connect(const std::string& endpoint) override {
    absl::StatusOr<internal::PeerId> peer = inner_->Connect(endpoint);
    if (peer.ok()) watch_->Connected(id_, *peer, endpoint);
    return peer;
  }
  void Start(internal::MessageHandler on_message, internal::MalformedHandler on_malformed,
             internal::TickHandler on_tick) override {
    inner_->Start(
        [this, on_message = std::move(on_message)](internal::PeerId from, internal::Message m) {
          const std::optional<MessageWatch::Tag> tag = TakeTag(m.header);
          if (tag.has_value()) watch_->Received(id_, from, *tag);
          on_message(from, std::move(m));
          if (tag.has_value()) watch_->Done(tag->id);
        },
        std::move(on_malformed), std::move(on_tick));
  }
  void SetConnectErrorHandler(internal::ConnectErrorHandler on_connect_error) override {
    inner_->SetConnectErrorHandler(std::move(on_connect_error));
  }
  void Send(internal::PeerId to, internal::Message message) override {
    bool queued = false;
    MessageWatch::Tag tag;
    {
      absl::MutexLock lock(&unsent_->mu);
      if (unsent_->stopped) return inner_->Send(to, std::move(message));  // dropped there
      bool counted = false;
      tag = watch_->Sent(id_, to, &counted);
      queued = counted && !inner_->OnIoThread();
      if (queued) unsent_->ids.insert(tag.id);
    }
    PutTag(tag, &message.header);
    inner_->Send(to, std::move(message));
    if (queued) {
      // Runs after the send (the queue is FIFO): the message went.
      inner_->Post([unsent = unsent_, id = tag.id] {
        absl::MutexLock lock(&unsent->mu);
        unsent->ids.erase(id);
      });
    }
  }
  void Post(std::function<void()> fn) override {
    watch_->Posted(id_);
    inner_->Post([fn = std::move(fn), done = std::make_shared<PostGuard>(watch_, id_)] { fn(); });
  }
  void Stop() override {
    watch_->Stopped(id_);
    inner_->Stop();
    // The I/O thread has ended: a send still waiting for its turn never went.
    absl::flat_hash_set<uint64_t> never;
    {
      absl::MutexLock lock(&unsent_->mu);
      unsent_->stopped = true;
      never.swap(unsent_->ids);
    }
    for (uint64_t id : never) watch_->Done(id);
  }
  bool OnIoThread() const override { return inner_->OnIoThread(); }
  std::string PeerAddress(internal::PeerId peer) const override {
    return inner_->PeerAddress(peer);
  }
  bool Connected(internal::PeerId peer) const override { return inner_->Connected(peer); }
  uint64_t dropped() const override { return inner_->dropped(); }
  uint64_t peers_forgotten() const override { return inner_->peers_forgotten(); }
  uint64_t handshakes_refused() const override { return inner_->handshakes_refused(); }
  internal::HandOffCounts hand_offs() const override { return inner_->hand_offs(); }

 private:
  // Header fields no node knows (the largest field numbers protobuf allows).
  static constexpr int kTagId = 536870908;
  static constexpr int kTagWatch = 536870909;
  static constexpr int kTagFrom = 536870910;
  static constexpr int kTagPeer = 536870911;

  // Counts a posted function done once it ran or was destroyed unrun.
  struct PostGuard {
    PostGuard(std::shared_ptr<MessageWatch> w, int t) : watch(std::move(w)), id(t) {}
    PostGuard(const PostGuard&) = delete;
    PostGuard& operator=(const PostGuard&) = delete;
    ~PostGuard() { watch->PostDone(id); }
    std::shared_ptr<MessageWatch> watch;
    int id;
  };
  // The counted sends asked for on other threads that have not gone yet.
  struct Unsent {
    absl::Mutex mu;
    bool stopped ABSL_GUARDED_BY(mu) = false;
    absl::flat_hash_set<uint64_t> ids ABSL_GUARDED_BY(mu);
  };

  static void PutTag(const MessageWatch::Tag& tag, wire::Header* h) {
    google::protobuf::UnknownFieldSet* u = h->GetReflection()->MutableUnknownFields(h);
    for (int f : {kTagId, kTagWatch, kTagFrom, kTagPeer}) u->DeleteByNumber(f);
    u->AddVarint(kTagId, tag.id);
    u->AddVarint(kTagWatch, tag.watch);
    u->AddVarint(kTagFrom, static_cast<uint64_t>(tag.from));
    u->AddVarint(kTagPeer, tag.peer);
  }

  // The tag of a message, taken out of its header; nullopt when it has none.
  static std::optional<MessageWatch::Tag> TakeTag(wire::Header& h) {
    const google::protobuf::UnknownFieldSet& u = h.GetReflection()->GetUnknownFields(h);
    if (u.empty()) return std::nullopt;
    MessageWatch::Tag tag;
    int found = 0;
    for (int i = 0; i < u.field_count(); ++i) {
      const google::protobuf::UnknownField& f = u.field(i);
      if (f.type() != google::protobuf::UnknownField::TYPE_VARINT) continue;
      switch (f.number()) {
        case kTagId:
          tag.id = f.varint();
          ++found;
          break;
        case kTagWatch:
          tag.watch = f.varint();
          ++found;
          break;
        case kTagFrom:
          tag.from = static_cast<int>(f.varint());
          ++found;
          break;
        case kTagPeer:
          tag.peer = f.varint();
          ++found;
          break;
        default:
          break;
      }
    }
    google::protobuf::UnknownFieldSet* fields = h.GetReflection()->MutableUnknownFields(&h);
    for (int f : {kTagId, kTagWatch, kTagFrom, kTagPeer}) fields->DeleteByNumber(f);
    if (found != 4) return std::nullopt;
    return tag;
  }

  const std::unique_ptr<internal::Transport> inner_;
  const std::shared_ptr<MessageWatch> watch_;
  const int id_;
  const std::shared_ptr<Unsent> unsent_;
};

// Makes the ZeroMQ transports of a cluster, each a WatchedTransport of one watch.
class WatchedTransportFactory final : public kairos::TransportFactory {
 public:
  WatchedTransportFactory() = default;

  absl::StatusOr<std::unique_ptr<internal::Transport>> Make(
      const internal::TransportOptions& options) override {
    absl::StatusOr<std::unique_ptr<internal::Transport>> inner =
        internal::MakeZmqTransport(options);
    if (!inner.ok()) return inner.status();
    int n = 0;
    {
      absl::MutexLock lock(&mu_);
      n = made_[options.name]++;
    }
    return std::unique_ptr<internal::Transport>(std::make_unique<WatchedTransport>(
        *std::move(inner), watch_, absl::StrCat(options.name, "#", n)));
  }

  MessageWatch& watch() { return *watch_; }

 private:
  const std::shared_ptr<MessageWatch> watch_ = std::make_shared<MessageWatch>();
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, int> made_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kairos::test_support

#endif  // KAIROS_TESTS_CLUSTER_WATCHED_TRANSPORT_H_
