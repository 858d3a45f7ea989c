// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The transport seam: a node's messaging endpoint. One I/O thread owns every socket of the
// node; other threads hand it messages through Send/Post. Messages are kairos Messages
// (wire/message.h): a header frame plus float32 payload frames sent without a copy.

#ifndef KAIROS_TRANSPORT_TRANSPORT_H_
#define KAIROS_TRANSPORT_TRANSPORT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/thread_checker.h"
#include "kairos/env.h"
#include "kairos/keys.h"
#include "kairos/log.h"
#include "kairos/transport_context.h"
#include "wire/message.h"

namespace kairos {
class TransportFactory;  // below
}  // namespace kairos

namespace kairos::internal {

// Identifies a connection: one this node opened (Connect) or a remote peer that sent to this
// node's listening endpoint. Never reused; a remote peer's id is valid until the transport
// forgets the peer (TransportOptions::max_peers).
using PeerId = uint64_t;

struct TransportOptions {
  std::shared_ptr<TransportContext> context;  // null: a private one
  // Largest message accepted; bigger ones are refused by the transport (ZMQ_MAXMSGSIZE).
  int64_t max_message_bytes = int64_t{1} << 30;
  // Payloads smaller than this are copied into the message rather than referenced (the
  // reference costs an allocation and a callback).
  int64_t zero_copy_min_bytes = 4096;
  // Period of the tick callback (heartbeats, deadline scans) where time moves by itself.
  // On virtual time (Env::IsVirtual) the tick runs instead once each time it moves, and
  // never otherwise.
  absl::Duration tick_period = absl::Milliseconds(100);
  // The node's environment (NodeOptions::env): the time the tick handler is given and every
  // timestamp the transport takes, and its I/O thread. Null: Env::Default().
  std::shared_ptr<const Env> env;
  // Names the node in error messages, e.g. "server 1".
  std::string name = "node";
  // Connections to the listening endpoint that the transport keeps a PeerId for. When a
  // new one would exceed it, the longest-idle eighth are forgotten: a message to a
  // forgotten PeerId is dropped (counted), and a forgotten peer that sends again gets a new
  // PeerId. Bounds the routing table whatever strangers do.
  int max_peers = 65536;
  // The job's CURVE keys (docs/security.md). Set: the listening socket is a CURVE server
  // whose clients must prove they hold these keys (the context's ZapHandler checks their
  // public key), and every connection opened is a CURVE client that accepts only a server
  // holding them. Unset: connections are plain, and the first tcp:// or ipc:// endpoint of
  // the context's transports logs that traffic is not encrypted (once per context: the
  // nodes of one process's job share one). inproc:// endpoints never use CURVE: ZeroMQ
  // applies no security mechanism to them, and they never leave the process.
  std::optional<CurveKeys> keys;
  // The level and sink of the transport's log (refused handshakes, the notice above):
  // the node's (NodeOptions::log_level, log_sink; common/logging.h makes the logger).
  LogLevel log_level = LogLevel::kWarning;
  LogSink log_sink;
  // How long the I/O thread, out of work, keeps polling its sockets and queue without
  // waiting before it sleeps, where time moves by itself (never on virtual time). A
  // spin that finds work saves the wake-up of a sleeping thread; spins that find nothing back
  // off (transport/idle_spin.h). Zero: the thread sleeps at once. Never past the next tick.
  absl::Duration idle_spin = absl::ZeroDuration();
  // Asked on the I/O thread each time it runs out of work, when idle_spin is positive:
  // false sleeps at once this time (not counted as a spin, nor as a miss). Null: always.
  std::function<bool()> spin_wanted;
  // Whether small messages sent together to one peer travel as one frame (a BATCH,
  // wire/one_frame.h): sends on the I/O thread are handed to ZeroMQ when the step that made
  // them ends (the queued commands, the handlers of one received message, the batch
  // handler), a peer's small ones in one frame. Off: each message leaves as it is sent.
  // Ordering per peer is the same.
  bool batch_messages = true;
  // Latency added to every message sent (NodeOptions::send_delay): positive, MakeTransport
  // wraps the transport in a DelayedTransport (transport/delayed_transport.h). Zero: not
  // wrapped, so the send path is untouched.
  absl::Duration send_delay = absl::ZeroDuration();
};

// Called on the I/O thread for each well-formed message.
using MessageHandler = std::function<void(PeerId from, Message&& message)>;
// Called on the I/O thread for each message that failed to decode, with its header when
// the header itself parsed (null otherwise); the node may answer the peer with an error
// (Send works from inside handlers) or count the drop.
using MalformedHandler =
    std::function<void(PeerId from, const absl::Status& why, const wire::Header* header)>;
// Called on the I/O thread every tick_period with the current time.
using TickHandler = std::function<void(absl::Time now)>;
// Called on the I/O thread, at most once per connection, when a connection opened by
// Connect failed its security handshake for good: the peer refused this node's CURVE keys,
// or one side uses CURVE and the other does not. `why` is Unauthenticated and its message
// starts with the peer's endpoint ("tcp://10.0.0.1:7000 refused this node's CURVE keys
// ..."). The transport then stops reconnecting (ZeroMQ would retry forever), and later
// sends to `peer` are dropped and counted.
using ConnectErrorHandler = std::function<void(PeerId peer, const absl::Status& why)>;

// How work reached the I/O thread through its queue (Send from another thread, Post): the
// commands queued, and the wake-ups of the I/O thread (eventfd writes, Stop's included). A
// command queued while the I/O thread is awake (or spinning: TransportOptions::idle_spin)
// rides on its current round without a wake-up; the tests of the pipelined paths read them.
// `spins`: the idle spins begun; `spins_found`: those that found work before their end;
// `ran_here`: functions run on their caller's thread instead (Transport::RunHere);
// `waited_here`: waits done on the caller's thread, as the I/O thread (Transport::WaitHere).
struct HandOffCounts {
  uint64_t enqueued = 0;
  uint64_t wakes = 0;
  uint64_t spins = 0;
  uint64_t spins_found = 0;
  uint64_t ran_here = 0;
  uint64_t waited_here = 0;
};

// What crossed a transport's sockets: whole messages, each counted as its frames' bytes
// (the header and the payloads as they travelled, encoded where a table compresses), without
// the routing frame, ZeroMQ's framing or TCP's. A malformed message received counts too.
struct TrafficCounts {
  uint64_t messages_sent = 0;
  uint64_t bytes_sent = 0;
  uint64_t messages_received = 0;
  uint64_t bytes_received = 0;
};

// Thread-safety: every method is safe to call from any thread, including from inside the
// handlers (which run on the I/O thread). Listen and Start are called once.
class Transport {
 public:
  virtual ~Transport() = default;

  // Binds a listening endpoint ("tcp://host:port", port "*" or "0" for an OS-chosen one,
  // "ipc://path", "inproc://name") and returns it with the port filled in.
  // Unavailable when the address is taken or cannot be bound, or when the transport has
  // stopped (also when Stop ends the I/O thread before it got to this call).
  virtual absl::StatusOr<std::string> Listen(const std::string& endpoint) = 0;
  // Opens a connection to `endpoint` (connections are established in the background).
  // Unavailable when the transport has stopped, as for Listen.
  virtual absl::StatusOr<PeerId> Connect(const std::string& endpoint) = 0;
  // Starts the I/O thread.
  virtual void Start(MessageHandler on_message, MalformedHandler on_malformed,
                     TickHandler on_tick) = 0;
  // Sets the handler of connections whose security handshake failed (ConnectErrorHandler).
  // Optional; called before Start.
  virtual void SetConnectErrorHandler(ConnectErrorHandler on_connect_error) = 0;
  // Sets a handler that runs on the I/O thread after each pass over the sockets (a bounded
  // number of messages handled per socket), so that a node that holds what its handlers
  // decided acts on a pass's messages at once (the coordinator writes its kept state once
  // for many of them). False where the transport has no such passes (the fakes hand
  // messages over one at a time): the node then acts after each message. Optional; called
  // before Start.
  virtual bool SetBatchHandler(std::function<void()> /*on_batch*/) { return false; }
  // Queues `message` for `to`. A message to an unknown or vanished peer is dropped and
  // counted (a node learns of dead peers through heartbeats, not sends).
  virtual void Send(PeerId to, Message message) = 0;
  // Runs `fn` on the I/O thread.
  virtual void Post(std::function<void()> fn) = 0;
  // Runs `fn` at once on the calling thread, as the I/O thread's work, when the I/O thread
  // has none (it waits for messages or commands): the commands queued before run first;
  // then `fn`; then the messages its sends may have brought to the sockets are received
  // (their handlers run here too), unless the I/O thread is parked (see WaitHere): the
  // next to do its work receives them. OnIoThread() is true on this thread meanwhile, and
  // `role`, when given, is bound to it (ThreadChecker::Bind) and unbound at the end. The
  // I/O thread runs nothing in the meantime, and keeps off the sockets for a lease after
  // (as after WaitHere). False, without running `fn`, when the I/O thread is busy, not
  // running, or on virtual time: the caller Posts `fn` instead. What it saves: the hand-off
  // of `fn` to the I/O thread (a wake-up of a sleeping thread, or the spin of one waiting
  // for work). Not supported by default.
  virtual bool RunHere(absl::FunctionRef<void()> fn, ThreadChecker* role) { return false; }
  // Waits on the calling thread until `done()` is true or `until` (real time) passes, doing
  // the I/O thread's work meanwhile, when the I/O thread has none: it polls the sockets and
  // the queue itself and runs their handlers (and the tick when due) here, as RunHere does,
  // while the I/O thread stays off the sockets; until `spin_until` it polls without sleeping
  // (yielding the core now and then). `done` is called here, between messages.
  // Once `done()`, the I/O thread keeps off the sockets a little longer (a lease of
  // kWaitHereLease), as the caller is likely to wait again soon: messages that arrive
  // meanwhile wait for the next WaitHere, RunHere or the end of the lease, and anything
  // queued from another thread ends the lease at once. False, without waiting, when the I/O
  // thread is busy, not running, or on virtual time (the lease then ends): the caller waits
  // for the I/O thread instead. What it saves: for each wait, the wake-up of the I/O thread
  // by the answer and of the caller by the I/O thread; one wake-up of the caller instead.
  // Not supported by default.
  virtual bool WaitHere(absl::FunctionRef<bool()> done, absl::Time until, absl::Time spin_until,
                        ThreadChecker* role) {
    return false;
  }
  static constexpr absl::Duration kWaitHereLease = absl::Milliseconds(1);
  // Stops the I/O thread and closes the sockets; messages still queued, and those sent
  // later, are discarded and counted as dropped; functions posted later never run.
  // Idempotent. Must not be called from the I/O thread.
  virtual void Stop() = 0;
  // True when called on this transport's I/O thread.
  virtual bool OnIoThread() const = 0;

  // The address a remote peer's connection to the listening endpoint came from, as this
  // host's kernel saw it ("10.0.0.2", "::1"): known once the peer sent a message over tcp://,
  // empty otherwise (ipc://, inproc://, a peer not seen or forgotten). The coordinator uses
  // it to advertise a server listening on a wildcard address (docs/multi_host.md). Call on
  // the I/O thread (from a handler or a posted function).
  virtual std::string PeerAddress(PeerId /*peer*/) const { return std::string(); }
  // False while a connection opened by Connect has not completed its handshake with the
  // peer (nothing listens there yet, or the address cannot be reached); inproc:// and
  // transports that cannot tell are always true. Call on the I/O thread.
  virtual bool Connected(PeerId /*peer*/) const { return true; }

  // Messages dropped: undeliverable sends and malformed receives.
  virtual uint64_t dropped() const = 0;
  // Incoming peers forgotten to keep the routing table within max_peers.
  virtual uint64_t peers_forgotten() const { return 0; }
  // Connections to the listening endpoint whose security handshake failed: a client
  // without the job's CURVE keys (or with CURVE at a node without keys), and clients that
  // closed the connection during the handshake. Each attempt counts (ZeroMQ clients retry).
  virtual uint64_t handshakes_refused() const = 0;
  // Zero for transports that do not count them (the fakes run everything at once).
  virtual HandOffCounts hand_offs() const { return {}; }
  // What crossed the sockets so far (TrafficCounts); zeros where the transport has none.
  virtual TrafficCounts traffic() const { return {}; }
};

// The ZeroMQ implementation: a ROUTER socket for the listening endpoint and one DEALER
// socket per connection. InvalidArgument when options.keys fail CheckCurveKeys.
absl::StatusOr<std::unique_ptr<Transport>> MakeZmqTransport(const TransportOptions& options);

// Makes the node's transport: a factory's (options' transport_factory) when given, else
// MakeZmqTransport; wrapped in a DelayedTransport when options.send_delay is positive.
// InvalidArgument when send_delay is negative.
absl::StatusOr<std::unique_ptr<Transport>> MakeTransport(const TransportOptions& options,
                                                         TransportFactory* factory);

// Turns "tcp://host:0" into ZeroMQ's "tcp://host:*"; other endpoints are unchanged.
std::string NormalizeEndpoint(const std::string& endpoint);

}  // namespace kairos::internal

namespace kairos {

// What NodeOptions::transport_factory points to (declared in kairos/options.h): makes each
// transport a node asks for, in place of MakeZmqTransport. A node calls Make once, in its
// Create, with the options it would give MakeZmqTransport (options.name says which kind of
// node: "coordinator", "server" or "worker"). Thread-safety: Make may be called from
// several threads at once (LocalCluster creates its workers in parallel).
class TransportFactory {
 public:
  virtual ~TransportFactory() = default;
  virtual absl::StatusOr<std::unique_ptr<internal::Transport>> Make(
      const internal::TransportOptions& options) = 0;
};

}  // namespace kairos

#endif  // KAIROS_TRANSPORT_TRANSPORT_H_
