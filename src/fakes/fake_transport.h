// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// FakeTransport: an in-process Transport for tests and fuzzers. No sockets and no thread of
// its own: the caller plays the I/O thread. It delivers a message or a raw frame sequence
// from a chosen peer, synchronously, through the same Decode and malformed-message path as
// the ZeroMQ transport; it runs the tick with a time it chooses; and it reads what the node
// sent instead of a network carrying it away.
//
//   auto fake = std::make_unique<FakeTransport>();
//   FakeTransport* t = fake.get();
//   ... hand `fake` to the node (e.g. CreateServerWithTransport) ...
//   t->Deliver(FakeTransport::IncomingPeer(1), message);  // runs the node's handler here
//   std::vector<FakeTransport::Sent> out = t->TakeSent();   // what it answered
//
// The I/O thread: whichever thread is inside Deliver, DeliverFrames, Tick or RunPosted at
// the moment; OnIoThread() is true there and only there. These four must not run
// concurrently with each other (the caller serializes them, as the one I/O thread would).
//
// Post: functions are queued, never run inside Post, and run in order by RunPosted, on the
// calling thread as the I/O thread. Deliver, DeliverFrames and Tick call RunPosted after
// the handler returns, as the ZeroMQ loop runs its queued commands after each wake-up.
//
// Peers: Connect returns 0, 1, 2, ... like the ZeroMQ transport's outgoing connections;
// IncomingPeer(i) gives ids like its incoming ones (the top bit set). A send reaches a peer
// the node connected to or that delivered to it; a send to any other peer, or after Stop,
// is dropped and counted, as the ZeroMQ transport does with an unknown routing id.
//
// Thread-safety: every method may be called from any thread (the server's apply lanes send
// replies from their own threads); the handlers run without any lock held, so they may call
// back into the transport.

#ifndef KAIROS_FAKES_FAKE_TRANSPORT_H_
#define KAIROS_FAKES_FAKE_TRANSPORT_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "transport/transport.h"

namespace kairos::internal {

class FakeTransport final : public Transport {
 public:
  // A message the node sent: its destination and the message as it would go on the wire
  // (protocol_version and payload_frames set, as EncodeHeader sets them).
  struct Sent {
    PeerId to = 0;
    Message message;
  };

  // The id of the i-th remote peer that sends to this node, in the form the ZeroMQ
  // transport gives incoming peers (top bit set, so never equal to a Connect id).
  static constexpr PeerId IncomingPeer(uint64_t i) { return (PeerId{1} << 63) | i; }

  // `name` appears in errors and in the endpoints Listen returns ("fake://<name>/...").
  explicit FakeTransport(std::string name = "fake");
  ~FakeTransport() override = default;

  // ----------------------------------------------------------------- Transport
  // Returns "fake://<name>/listen" whatever `endpoint` is (it is kept: listen_endpoint()).
  // FailedPrecondition when already listening, Unavailable after Stop.
  absl::StatusOr<std::string> Listen(const std::string& endpoint) override;
  // Returns the next outgoing peer id (0, 1, ...); the endpoint is kept (connections()).
  // Unavailable after Stop.
  absl::StatusOr<PeerId> Connect(const std::string& endpoint) override;
  // Keeps the handlers; nothing runs until the caller delivers or ticks.
  void Start(MessageHandler on_message, MalformedHandler on_malformed,
             TickHandler on_tick) override;
  // Records `message` for `to` (see Sent), or drops and counts it (see the header comment).
  void Send(PeerId to, Message message) override;
  // Queues `fn` for RunPosted; after Stop it is destroyed unrun.
  void Post(std::function<void()> fn) override;
  // Later deliveries, ticks and sends are refused or dropped; queued functions are
  // destroyed unrun. Idempotent.
  void Stop() override;
  bool OnIoThread() const override;
  // Sends dropped plus deliveries that failed to decode.
  uint64_t dropped() const override { return dropped_.load(); }
  // Keeps the handler for FailConnect.
  void SetConnectErrorHandler(ConnectErrorHandler on_connect_error) override;
  // False (messages are handed over one at a time) unless EnablePasses was called: then
  // each RunPosted that ran something is a pass, ended by `on_batch`.
  bool SetBatchHandler(std::function<void()> on_batch) override;
  // No handshakes here: always 0.
  uint64_t handshakes_refused() const override { return 0; }

  // ------------------------------------------------------------ driving the node
  // Encodes `message` as a sender's transport would (EncodeHeader: protocol_version and
  // payload_frames set from it) and delivers the frames: see DeliverFrames.
  absl::Status Deliver(PeerId from, Message message);
  // Delivers one received multipart message from `from`: Decode, then the message handler
  // when it decodes, else a count in dropped() and the malformed handler (with the header
  // when it parsed), exactly as the ZeroMQ transport does. Runs on the calling thread, then
  // RunPosted. Returns OK when the message reached the message handler, Decode's error when
  // it went to the malformed one, FailedPrecondition before Start and Unavailable after Stop
  // (nothing is run then).
  absl::Status DeliverFrames(PeerId from, std::vector<std::string> frames);
  absl::Status DeliverFrames(PeerId from, std::vector<RawFrame> frames);
  // Runs the tick handler with `now`, then RunPosted. Nothing before Start or after Stop.
  void Tick(absl::Time now);
  // Reports that the connection `peer` was refused at its security handshake: runs the
  // connect-error handler (when set) with `why` on the calling thread as the I/O thread.
  void FailConnect(PeerId peer, const absl::Status& why);
  // Runs the posted functions in order, including those they post, on the calling thread
  // as the I/O thread, then (passes enabled) the batch handler. Returns how many ran.
  int RunPosted();
  // Makes SetBatchHandler take its handler (a node that holds work until the end of a
  // pass, such as a worker merging pushes, is then tested as over ZeroMQ). Before Start.
  void EnablePasses() { passes_ = true; }
  // Waits, at most `timeout` of real time, until a function is posted (one waiting for
  // RunPosted counts at once) or the transport stopped; true when one is waiting. For a
  // test whose node posts from a thread of its own.
  bool AwaitPosted(absl::Duration timeout);

  // ------------------------------------------------------------------ inspection
  // What the node sent, in order, since the last TakeSent/ClearSent.
  std::vector<Sent> sent() const;
  std::vector<Sent> TakeSent();
  void ClearSent();
  std::size_t sent_count() const;
  std::size_t posted_count() const;  // functions waiting for RunPosted
  bool started() const;
  bool stopped() const;
  std::string listen_endpoint() const;       // as given to Listen; empty before
  std::vector<std::string> connections() const;  // Connect's endpoints, index = peer id

 private:
  // Marks the calling thread as the I/O thread while alive (nests).
  class IoScope;

  absl::Status Dispatch(PeerId from, std::vector<RawFrame> frames);

  const std::string name_;
  std::atomic<uint64_t> dropped_{0};
  // The thread inside Deliver/Tick/RunPosted and how deep (a handler may deliver again).
  std::atomic<std::thread::id> io_thread_{};
  int io_depth_ = 0;  // touched by the I/O thread only

  // Written once by Start, which comes before any delivery or tick (they check started_
  // under mu_, which orders them after it); read by the I/O thread without the lock.
  MessageHandler on_message_;
  MalformedHandler on_malformed_;
  TickHandler on_tick_;
  ConnectErrorHandler on_connect_error_;
  bool passes_ = false;             // EnablePasses
  std::function<void()> on_batch_;  // set before Start when passes_

  mutable absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::string listen_endpoint_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> connections_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<PeerId> known_peers_ ABSL_GUARDED_BY(mu_);
  std::vector<Sent> sent_ ABSL_GUARDED_BY(mu_);
  std::deque<std::function<void()>> posted_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kairos::internal

#endif  // KAIROS_FAKES_FAKE_TRANSPORT_H_
