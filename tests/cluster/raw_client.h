// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// RawClient: a hand-driven node for tests. It speaks the wire protocol through the internal
// transport, so a test can join a job as a worker and then send exactly the (bad) messages
// it wants, and read every reply.

#ifndef KAIROS_TESTS_CLUSTER_RAW_CLIENT_H_
#define KAIROS_TESTS_CLUSTER_RAW_CLIENT_H_

#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kairos/job.h"
#include "transport/transport.h"
#include "wire/convert.h"
#include "wire/credential.h"

namespace kairos::testing {

class RawClient {
 public:
  RawClient() {
    internal::TransportOptions options;
    options.name = "raw client";
    transport_ = *internal::MakeZmqTransport(options);
    transport_->Start(
        [this](internal::PeerId, internal::Message m) {
          absl::MutexLock lock(&mu_);
          inbox_.push_back(std::move(m));
        },
        [](internal::PeerId, const absl::Status&, const wire::Header*) {},
        [](absl::Time) {});
  }
  ~RawClient() { transport_->Stop(); }

  internal::PeerId Connect(const std::string& endpoint) {
    return *transport_->Connect(endpoint);
  }
  void Send(internal::PeerId to, internal::Message m) { transport_->Send(to, std::move(m)); }

  // The next message of `kind` (others are kept), or nullopt after `timeout`.
  std::optional<internal::Message> Next(wire::Kind kind, absl::Duration timeout) {
    return Take([kind](const wire::Header& h) { return h.kind() == kind; }, timeout);
  }

  // The reply (of any kind) to request `id`, or nullopt after `timeout`.
  std::optional<internal::Message> Reply(uint64_t id, absl::Duration timeout) {
    return Take([id](const wire::Header& h) { return h.request_id() == id; }, timeout);
  }

  // Opens the connection to the coordinator (JoinAsWorker does it too).
  void ConnectCoordinator(const std::string& coordinator) { coordinator_ = Connect(coordinator); }

  // Joins the job at `coordinator` as a worker and waits for START. Returns the START body.
  std::optional<wire::Start> JoinAsWorker(const std::string& coordinator, const JobConfig& job,
                                          int rank) {
    coordinator_ = Connect(coordinator);
    internal::Message join;
    join.header.set_kind(wire::JOIN);
    join.header.set_request_id(1);
    join.header.mutable_join()->set_role(wire::WORKER);
    join.header.mutable_join()->set_requested_rank(rank);
    internal::ToWire(job, join.header.mutable_join()->mutable_job());
    Send(coordinator_, std::move(join));
    auto reply = Next(wire::JOIN_REPLY, absl::Seconds(20));
    if (!reply || reply->header.has_status()) return std::nullopt;
    node_id_ = reply->header.join_reply().node_id();
    credential_ = {reply->header.join_reply().token_hi(), reply->header.join_reply().token_lo()};
    auto start = Next(wire::START, absl::Seconds(20));
    if (!start) return std::nullopt;
    return start->header.start();
  }

  uint32_t node_id() const { return node_id_; }
  // The credential the coordinator gave this client at join (zero before).
  internal::Credential credential() const { return credential_; }
  // Sets the header's sender and credential to this client's, as a worker's messages to a
  // server carry them.
  void Stamp(wire::Header* h) const {
    h->set_sender(node_id_);
    internal::SetCredential(credential_, h);
  }
  internal::PeerId coordinator() const { return coordinator_; }

 private:
  // Removes and returns the first message whose header satisfies `match`, waiting for new
  // arrivals until `timeout`.
  template <typename Match>
  std::optional<internal::Message> Take(Match match, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    absl::MutexLock lock(&mu_);
    for (;;) {
      for (auto it = inbox_.begin(); it != inbox_.end(); ++it) {
        if (match(it->header)) {
          internal::Message m = std::move(*it);
          inbox_.erase(it);
          return m;
        }
      }
      auto arrived = [this, n = inbox_.size()]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return inbox_.size() > n;
      };
      if (!mu_.AwaitWithDeadline(absl::Condition(&arrived), deadline)) return std::nullopt;
    }
  }

  std::unique_ptr<internal::Transport> transport_;
  absl::Mutex mu_;
  std::deque<internal::Message> inbox_ ABSL_GUARDED_BY(mu_);
  internal::PeerId coordinator_ = 0;
  uint32_t node_id_ = 0;
  internal::Credential credential_;
};

}  // namespace kairos::testing

#endif  // KAIROS_TESTS_CLUSTER_RAW_CLIENT_H_
