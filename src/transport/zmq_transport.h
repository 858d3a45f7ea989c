// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ZeroMQ transport. One I/O thread owns the sockets: a ROUTER for the listening endpoint
// and one DEALER per outgoing connection. Other threads enqueue work and, when the I/O
// thread sleeps, wake it through an eventfd that it polls beside the sockets' ZMQ_FD
// descriptors (Loop), so nobody polls on a timer; out of work, it may first poll without
// waiting for a few microseconds (TransportOptions::idle_spin). Payloads go to ZeroMQ by
// reference (zmq_msg_init_data with a callback that drops the Buffer's reference) and arrive
// as Buffers that keep the received message alive.
//
// Security (docs/security.md): with keys the ROUTER is a CURVE server in a ZAP domain of its
// own, in which the context's ZapHandler accepts only the job's public key, and each DEALER
// is a CURVE client. A socket monitor (a PAIR socket polled beside the others) reports failed
// handshakes: on the ROUTER they are counted and logged (rate-limited); on a DEALER, until
// its first successful handshake, a definite refusal ends the connection and is reported to
// the node (ConnectErrorHandler).
//
// Made by MakeZmqTransport (transport.h); nothing outside src/transport/ names the class.
// Its parts: zmq_transport.cc holds the public methods, the command queue and the I/O loop;
// zmq_connections.cc opening and closing the sockets (Listen, Connect) and their handshake
// events; zmq_messages.cc sending and receiving messages, and the table of incoming peers;
// make_transport.cc the TransportContext and the factories (MakeZmqTransport, MakeTransport).
//
// Thread-safety: as Transport (every public method from any thread, handlers included).
// The queue and the loop's state are guarded by mu_, the counters are atomic, and the
// sockets and peer tables (below "Owned by the I/O thread") are the I/O thread's: before
// Start, Listen and Connect run on the calling thread, and Start hands the sockets over to
// the I/O thread after a full barrier. While the I/O thread waits, a caller of RunHere or
// WaitHere may play it, holding token_ (which the I/O thread holds whenever it works); from
// then until shortly after (a lease) the I/O thread, out of work, waits off the sockets
// (Park), so that a message wakes one thread, not two.

#ifndef KAIROS_TRANSPORT_ZMQ_TRANSPORT_H_
#define KAIROS_TRANSPORT_ZMQ_TRANSPORT_H_

#include <poll.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/plain_mutex.h"
#include "kairos/buffer.h"
#include "kairos/env.h"
#include "kairos/transport_context.h"
#include "spdlog/logger.h"
#include "transport/curve_keys.h"
#include "transport/idle_spin.h"
#include "transport/transport.h"
#include "wire/message.h"
#include "wire/one_frame.h"
#include "zmq.h"

namespace kairos::internal {

class ZapHandler;  // transport/zap_handler.h

class ZmqTransport final : public Transport {
 public:
  // `wake_fd`: the eventfd that wakes the I/O thread; the transport closes it.
  ZmqTransport(const TransportOptions& options, std::shared_ptr<TransportContext> context,
               int wake_fd);
  ~ZmqTransport() override;

  absl::StatusOr<std::string> Listen(const std::string& endpoint) override;
  absl::StatusOr<PeerId> Connect(const std::string& endpoint) override;
  void SetConnectErrorHandler(ConnectErrorHandler on_connect_error) override {
    on_connect_error_ = std::move(on_connect_error);
  }
  // Runs after each DrainSockets pass (Loop).
  bool SetBatchHandler(std::function<void()> on_batch) override {
    on_batch_ = std::move(on_batch);
    return true;
  }
  void Start(MessageHandler on_message, MalformedHandler on_malformed,
             TickHandler on_tick) override;
  void Send(PeerId to, Message message) override;
  void Post(std::function<void()> fn) override { Enqueue(std::move(fn)); }
  bool RunHere(absl::FunctionRef<void()> fn, ThreadChecker* role) override;
  bool WaitHere(absl::FunctionRef<bool()> done, absl::Time until, absl::Time spin_until,
                ThreadChecker* role) override;
  void Stop() override;
  bool OnIoThread() const override { return io_thread_id_.load() == std::this_thread::get_id(); }
  std::string PeerAddress(PeerId peer) const override;
  bool Connected(PeerId peer) const override;
  uint64_t dropped() const override { return dropped_.load(); }
  uint64_t peers_forgotten() const override { return peers_forgotten_.load(); }
  uint64_t handshakes_refused() const override { return handshakes_refused_.load(); }
  HandOffCounts hand_offs() const override;
  TrafficCounts traffic() const override;

 private:
  // The bit that marks a PeerId as a remote peer of the listening endpoint; without it a
  // PeerId is the index of its DEALER in dealers_.
  static constexpr PeerId kIncomingBit = PeerId{1} << 63;
  static constexpr int kMaxMessagesPerWake = 256;  // per socket, before looking at the others

  // An outgoing connection. `monitor` reads the DEALER's handshake events until the first
  // handshake succeeds or the connection is refused (then `monitor_done`; the monitor is
  // closed when the poll set is rebuilt, never while a poll result may still name it).
  struct Dealer {
    void* socket = nullptr;
    std::string endpoint;
    void* monitor = nullptr;
    bool monitor_done = false;
    int failed_handshakes = 0;  // in a row, without detail (the peer closed)
    bool refused = false;       // disconnected for good; sends are dropped
    bool connected = false;     // a handshake with the peer succeeded (inproc: at once)
    bool sent = false;          // sent on since it was last drained (see Loop)
  };

  // A remote peer of the listening endpoint.
  struct Incoming {
    std::string routing_id;
    uint64_t last_active = 0;  // activity_ when it last sent
    std::string address;       // where its connection came from (tcp only), else empty
    bool address_known = false;
  };

  // What other threads hand the I/O thread: a message to send, or a function to run.
  struct Outgoing {
    PeerId to;
    Message message;
  };
  using Command = std::variant<Outgoing, std::function<void()>>;

  enum class LoopState { kNotStarted, kRunning, kEnded };

  // What a caller of RunOnIo waits on. The posted command holds the only Notifier, so the
  // wait ends when the command is destroyed: after it ran, or unrun when Stop discards it.
  struct IoCall {
    absl::Notification done;
    bool ran = false;  // written before `done` is notified
  };
  struct Notifier {
    explicit Notifier(std::shared_ptr<IoCall> c) : call(std::move(c)) {}
    ~Notifier() { call->done.Notify(); }
    Notifier(const Notifier&) = delete;
    Notifier& operator=(const Notifier&) = delete;
    std::shared_ptr<IoCall> call;
  };

  // ------------------------------------------- the queue and the loop (zmq_transport.cc)
  absl::Status Stopped(const std::string& what) const;

  // Runs fn on the I/O thread and waits until it ran or was discarded; runs it here before
  // Start (the sockets are then handed over to the I/O thread at Start, after a full
  // barrier) and on the I/O thread itself. Once the loop has ended fn never runs, so the
  // caller's result keeps the error it was initialised with. The wait is bounded by the
  // loop: it runs queued commands at once, and when it ends it discards the rest.
  void RunOnIo(std::function<void()> fn);

  // The eventfd is written only when the I/O thread sleeps, or is about to, in the poll
  // (sleeping_, set under mu_ once the loop found the queue empty): a loop that is awake
  // takes the queue before it polls again, so a command posted meanwhile needs no
  // wake-up, and of the commands posted while it sleeps only the first writes (one syscall
  // per batch, and none while the thread is busy, e.g. handling the answers that make a
  // caller issue its next requests). Once the loop has ended a command is discarded here:
  // a message is counted as dropped, a function is destroyed unrun.
  void Enqueue(Command command);

  // A message that will never be sent is counted; a function is destroyed unrun by the
  // caller (its captures, and with them a RunOnIo waiter's Notifier, go with it).
  void Discard(const Command& command);

  void Wake();
  // Ends the lease of a caller that waited here (WaitHere) and wakes the I/O thread,
  // parked or asleep in its poll, to look at everything.
  void WakeAll();
  // Ends the lease; a parked I/O thread wakes.
  void EndLease() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A caller doing the I/O thread's work (RunHere, WaitHere) keeps the I/O thread off the
  // sockets from now on, and at its end (GiveLease) for kWaitHereLease more when `keep`,
  // nothing is queued and nobody ended the lease meanwhile; otherwise the lease ends.
  void TakeLease();
  void GiveLease(bool keep);
  bool IoThreadParked();

  // While a caller waits here or holds a lease (lease_until_ns_ in the future), the I/O
  // thread out of work waits on park_ instead of polling the sockets, until the lease ends,
  // `next_tick`, or Stop. True when it parked (it then watched no socket meanwhile).
  bool Park(absl::Time next_tick);

  // After a poll of the set (fds_, or a leader's copy) found descriptors ready: the
  // eventfd's count is read, and the sockets whose descriptor fired are to be drained.
  void TakeReady(const std::vector<pollfd>& polled);

  // Runs the tick when due (the I/O thread's, or a caller's in WaitHere): every socket is
  // drained next (the backstop, see the loop).
  void TickIfDue();

  // The poll set: the wake-up fd, the data sockets, then the monitors (from first_monitor_
  // on); items_ holds the sockets, fds_ their descriptors, pending_ whether to drain them.
  void RebuildPollItems();

  // Drains the sockets that need it (see the I/O loop, zmq_transport.cc); true when one stopped at
  // the batch's end or was sent on after its drain (the loop then polls without waiting).
  bool DrainSockets();
  // Whether a socket was sent on since its last drain (a handler's or the batch handler's
  // send): it must be drained again before the loop sleeps.
  bool SentSinceDrain() const;

  // Runs every queued command (those posted meanwhile wait for the next round). False
  // when the queue was empty.
  bool RunCommands();

  // Whether the poll may block: true when the queue is empty, and then sleeping_ is set
  // under the same lock, so a command queued from now on writes the eventfd (Enqueue).
  bool MaySleep();

  // A caller in WaitHere, out of work: as MaySleep, for its own poll (leader_sleeping_).
  bool LeaderMaySleep();

  // Out of work, before sleeping: unless the node does not want it now (spin_wanted), polls
  // without waiting, for as long as idle_spin_ allows and never past `next_tick`, until a
  // descriptor is ready or a command is queued (a command queued meanwhile finds sleeping_
  // false and writes no eventfd). Returns the last poll's count, its revents set, when a
  // descriptor was ready; 0 otherwise.
  int SpinBeforeSleep(absl::Time next_tick);

  // The poll waits in real time. On a clock that moves by itself the tick runs every
  // tick_period of real time, with the clock's time; on a virtual clock it runs once after
  // each move of the clock (clock_moved_), and the poll waits for messages only.
  void Loop();

  // ------------------------- sockets and handshakes, I/O thread (zmq_connections.cc)
  // Starts a monitor of `s`'s `events` and returns the PAIR socket that receives them
  // (connected before anything happens on `s`, so no event is missed), or null.
  void* Monitor(void* s, int events);
  static void StopMonitor(void* s, void*& monitor);

  // Once per transport, for the first endpoint that leaves the process without keys.
  void NoticePlain(const std::string& endpoint);

  absl::StatusOr<std::string> ListenNow(const std::string& endpoint);

  // Binds `s` to `endpoint` (`normalized`: with port 0 written "*"), or to the first free
  // port of a "tcp://HOST:FIRST-LAST" range: a port in use moves on to the next, any other
  // error ends the attempt.
  absl::Status Bind(void* s, const std::string& endpoint, const std::string& normalized);

  absl::StatusOr<PeerId> ConnectNow(const std::string& endpoint);
  void CloseSockets();

  // A monitor to drain: the listener's or a dealer's (still open: monitors are closed only
  // by RebuildPollItems). True when it stopped at the batch's end.
  bool MonitorEvents(void* monitor);

  // The monitors' readers return as Drain does: true when they stopped at the batch's end.
  bool ListenerEvents();
  bool DealerEvents(size_t index);

  std::string ProtocolFailure(const std::string& endpoint, uint32_t value) const;
  std::string ClosedFailure(const std::string& endpoint) const;

  // Ends the connection for good and tells the node.
  void Refuse(size_t index, const std::string& why);

  // ---------------------------- messages and peers, I/O thread (zmq_messages.cc)
  bool SendPayload(void* s, const Buffer& payload, bool more);
  // Whether a message to `to` can be sent: a known peer of the listening endpoint, or a
  // connection not refused.
  bool Reachable(PeerId to) const;
  // The socket of `to` (and its routing id for a peer of the listening endpoint), marked as
  // sent on; false when `to` is unknown, forgotten or refused.
  bool SocketFor(PeerId to, void*& s, const std::string*& routing_id);
  // Sends `message` on the I/O thread: a one-frame message (wire/one_frame.h) joins the
  // batch of its peer, sent when the step that sent it ends (FlushBatches) or when full;
  // any other is sent at once, after that peer's batch.
  void SendNow(PeerId to, Message& message);
  // Sends each peer's batch: one message alone, several as one BATCH frame.
  void FlushBatches();
  void FlushBatch(PeerId to);
  void SendAlone(PeerId to, Message& message);
  void Drop() { dropped_.fetch_add(1); }

  // Receives every waiting message on `s`, up to a batch: false when it stopped at an
  // empty socket (its last call was the receive that found it empty), true when it stopped
  // at the batch's end with messages possibly left. `dealer`: the PeerId of a DEALER `s`
  // (unused for the listening ROUTER, whose messages name their peer).
  bool Drain(void* s, bool router, PeerId dealer);

  // The PeerId of a routing id (a new one for a connection not seen, or forgotten).
  PeerId PeerFor(const std::string& routing_id);

  // Forgets the longest-idle eighth of the incoming peers (at least one): one pass over
  // the table per max_peers / 8 new connections, so a flood costs O(1) per connection.
  void ForgetIdlePeers();

  // Keeps the address an incoming peer's connection came from (ZeroMQ's "Peer-Address"
  // property of its messages: the TCP peer's IP), read from its first message only.
  void NotePeerAddress(PeerId from, zmq_msg_t* msg);

  const TransportOptions options_;
  const std::shared_ptr<TransportContext> context_;
  const int wake_fd_;
  const Env& env_;         // options_.env keeps it alive
  uint64_t watch_id_ = 0;  // the virtual clock's watcher (Start to Stop)
  std::atomic<bool> clock_moved_{false};

  // Messages sent on the I/O thread and not yet handed to ZeroMQ (SendNow), per peer, and
  // the peers that have some, in the order their batches began.
  struct Batch {
    std::vector<Message> messages;
    std::size_t bytes = 0;
  };
  absl::flat_hash_map<PeerId, Batch> batches_;
  std::vector<PeerId> batched_peers_;
  BatchFrame batch_frame_;

  const std::shared_ptr<spdlog::logger> log_;
  std::optional<BinaryCurveKeys> curve_;

  MessageHandler on_message_;
  MalformedHandler on_malformed_;
  TickHandler on_tick_;
  ConnectErrorHandler on_connect_error_;
  std::function<void()> on_batch_;

  PlainMutex mu_;
  std::deque<Command> queue_ ABSL_GUARDED_BY(mu_);
  // The I/O thread waits, or is about to wait, in the poll: the next Enqueue wakes it.
  bool sleeping_ ABSL_GUARDED_BY(mu_) = false;
  // The I/O thread waits on park_ (see Park).
  bool parked_ ABSL_GUARDED_BY(mu_) = false;
  PlainCondVar park_;
  // A caller is in WaitHere; leader_sleeping_: it waits, or is about to, in its poll (the
  // eventfd among the descriptors): the next Enqueue writes the eventfd.
  bool leading_ ABSL_GUARDED_BY(mu_) = false;
  bool leader_sleeping_ ABSL_GUARDED_BY(mu_) = false;
  LoopState loop_ ABSL_GUARDED_BY(mu_) = LoopState::kNotStarted;

  // Held by whoever does the I/O thread's work: the I/O thread, except while it spins or
  // waits in the poll, or a caller in RunHere or WaitHere meanwhile. The sockets, the peer tables,
  // the batches and pending_ are touched only under it; fds_ (the poll set) is read by the I/O
  // thread's poll without it, and rebuilt by the I/O thread only. Taken and let go of across the
  // loop's rounds, which the thread-safety analysis does not follow: a plain std::mutex (not an
  // absl::Mutex, for the reason of common/plain_mutex.h).
  std::mutex token_;
  // The loop runs (set and cleared by the I/O thread under token_): RunHere and WaitHere may
  // do its work.
  std::atomic<bool> looping_{false};
  // When the tick runs next (real time): read and written under token_.
  absl::Time next_tick_ = absl::InfinitePast();
  // Until when the I/O thread keeps off the sockets, in Unix ns of real time: kLeading while
  // a caller works (RunHere, WaitHere), then the end of its lease; 0 when none; ended (0) by
  // anything that needs the I/O thread (EndLease).
  static constexpr int64_t kLeading = INT64_MAX;
  std::atomic<int64_t> lease_until_ns_{0};
  // The leader's copy of the poll set (its revents are its own); under token_.
  std::vector<pollfd> lead_fds_;

  std::thread io_thread_;
  std::atomic<std::thread::id> io_thread_id_{};
  std::atomic<bool> stop_{false};
  // queue_ holds a command: set with it under mu_, read without the lock by the spin.
  std::atomic<bool> commands_queued_{false};
  IdleSpin idle_spin_{options_.idle_spin};  // the I/O thread's
  std::atomic<uint64_t> spins_{0};
  std::atomic<uint64_t> spins_found_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> peers_forgotten_{0};
  std::atomic<uint64_t> handshakes_refused_{0};
  std::atomic<uint64_t> enqueued_{0};  // commands queued (HandOffCounts)
  std::atomic<uint64_t> wakes_{0};     // eventfd writes
  std::atomic<uint64_t> ran_here_{0};  // RunHere calls that ran their function
  std::atomic<uint64_t> waited_here_{0};  // WaitHere calls that waited here
  // TrafficCounts: written by the holder of token_ alone (AddTo), read from any thread.
  std::atomic<uint64_t> messages_sent_{0};
  std::atomic<uint64_t> bytes_sent_{0};
  std::atomic<uint64_t> messages_received_{0};
  std::atomic<uint64_t> bytes_received_{0};

  // Owned by the I/O thread (or by the creating thread before Start).
  void* listener_ = nullptr;
  void* listener_monitor_ = nullptr;
  std::string listen_endpoint_;
  ZapHandler* zap_ = nullptr;  // the context's, which outlives this transport
  std::string zap_domain_;
  absl::Time last_refusal_log_ = absl::InfinitePast();
  std::vector<Dealer> dealers_;
  absl::flat_hash_map<std::string, PeerId> peer_by_routing_id_;
  absl::flat_hash_map<PeerId, Incoming> routing_id_of_peer_;
  uint64_t next_incoming_ = 0;
  uint64_t activity_ = 0;  // messages received from incoming peers, as a clock
  std::vector<zmq_pollitem_t> items_;
  std::vector<pollfd> fds_;       // items_'s descriptors: the eventfd, then each ZMQ_FD
  std::vector<uint8_t> pending_;  // items_ to drain before the loop may sleep
  bool listener_sent_ = false;    // sent on since its last drain
  size_t first_dealer_ = 1;       // index in items_ of the first DEALER (after the ROUTER)
  size_t first_monitor_ = 1;      // index in items_ of the first monitor socket
  bool poll_dirty_ = true;
};

}  // namespace kairos::internal

#endif  // KAIROS_TRANSPORT_ZMQ_TRANSPORT_H_
