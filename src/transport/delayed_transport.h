// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A transport decorator that adds a fixed one-way latency to every message a node sends
// (TransportOptions::send_delay, NodeOptions::send_delay): the testbed's latency
// (docs/lab.md, "Shaped links"). The kernels the lab runs on have no `netem` qdisc, so
// latency cannot come from the network namespaces' links; their `htb` qdiscs shape the
// bandwidth, and this holds each message for the delay before the link sees it.
//
// Each message is held from Send until `delay` later, then handed to the wrapped transport
// (whose I/O thread sends it at once). A constant delay keeps the order of the sends. The
// held messages wait on a timer thread of their own ("kairos-delay"), which sleeps on a
// condition variable until the next message is due: no polling, and the wrapped transport's
// loop is unchanged. MakeTransport wraps a transport only when the delay is positive.

#ifndef KAIROS_TRANSPORT_DELAYED_TRANSPORT_H_
#define KAIROS_TRANSPORT_DELAYED_TRANSPORT_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "transport/transport.h"

namespace kairos::internal {

// Thread-safety: as Transport (every method from any thread). The wrapped transport's
// handlers run on its I/O thread as before; held messages are handed to it from the timer
// thread. Stop hands what is held to the wrapped transport when it falls due (so a message
// sent just before Stop still leaves, as it would over a slow link) and then stops the
// wrapped transport, whose Stop discards what it has not yet sent (Transport::Stop): it
// blocks at most `delay`.
class DelayedTransport final : public Transport {
 public:
  // REQUIRES: delay > 0, inner != nullptr.
  DelayedTransport(std::unique_ptr<Transport> inner, absl::Duration delay);
  ~DelayedTransport() override;

  absl::StatusOr<std::string> Listen(const std::string& endpoint) override {
    return inner_->Listen(endpoint);
  }
  absl::StatusOr<PeerId> Connect(const std::string& endpoint) override {
    return inner_->Connect(endpoint);
  }
  void Start(MessageHandler on_message, MalformedHandler on_malformed,
             TickHandler on_tick) override {
    inner_->Start(std::move(on_message), std::move(on_malformed), std::move(on_tick));
  }
  void SetConnectErrorHandler(ConnectErrorHandler on_connect_error) override {
    inner_->SetConnectErrorHandler(std::move(on_connect_error));
  }
  bool SetBatchHandler(std::function<void()> on_batch) override {
    return inner_->SetBatchHandler(std::move(on_batch));
  }
  // Holds `message` until `delay` from now; after Stop it is dropped (counted).
  void Send(PeerId to, Message message) override;
  void Post(std::function<void()> fn) override { inner_->Post(std::move(fn)); }
  void Stop() override;
  bool OnIoThread() const override { return inner_->OnIoThread(); }
  std::string PeerAddress(PeerId peer) const override { return inner_->PeerAddress(peer); }
  bool Connected(PeerId peer) const override { return inner_->Connected(peer); }
  uint64_t dropped() const override { return inner_->dropped() + dropped_.load(); }
  uint64_t peers_forgotten() const override { return inner_->peers_forgotten(); }
  uint64_t handshakes_refused() const override { return inner_->handshakes_refused(); }
  HandOffCounts hand_offs() const override { return inner_->hand_offs(); }
  TrafficCounts traffic() const override { return inner_->traffic(); }

  absl::Duration delay() const { return delay_; }

 private:
  struct Held {
    absl::Time due;
    PeerId to;
    Message message;
  };

  // The timer thread: hands each held message to inner_ once due, until Stop and empty.
  void Run();
  // Waits until held messages are due and moves them, in order, to `due`. False once Stop
  // was called and nothing is held.
  bool TakeDue(std::vector<Held>* due) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::unique_ptr<Transport> inner_;
  const absl::Duration delay_;
  absl::Mutex mu_;
  // Signalled when a message is held into an empty queue, and by Stop.
  absl::CondVar changed_;
  std::deque<Held> held_ ABSL_GUARDED_BY(mu_);  // in Send order, so in due order
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> dropped_{0};  // sent after Stop
  std::thread timer_;
};

}  // namespace kairos::internal

#endif  // KAIROS_TRANSPORT_DELAYED_TRANSPORT_H_
