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

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <new>
#include <optional>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/logging.h"
#include "transport/curve_keys.h"
#include "transport/delayed_transport.h"
#include "transport/endpoint.h"
#include "transport/idle_spin.h"
#include "transport/transport.h"
#include "transport/zap_handler.h"
#include "zmq.h"

namespace kairos {

std::shared_ptr<TransportContext> TransportContext::Create(int io_threads) {
  void* ctx = zmq_ctx_new();
  zmq_ctx_set(ctx, ZMQ_IO_THREADS, io_threads < 1 ? 1 : io_threads);
  // Sockets are closed with ZMQ_LINGER set, so termination never waits forever.
  return std::shared_ptr<TransportContext>(new TransportContext(ctx));
}

TransportContext::TransportContext(void* handle)
    : handle_(handle), internals_(std::make_unique<Internals>()) {}

// The ZAP handler's socket is closed first: zmq_ctx_term waits for every socket.
TransportContext::~TransportContext() {
  internals_.reset();
  zmq_ctx_term(handle_);
}

}  // namespace kairos

namespace kairos::internal {
namespace {

constexpr PeerId kIncomingBit = PeerId{1} << 63;
constexpr int kMaxMessagesPerWake = 256;  // per socket, before looking at the others
constexpr int kLingerMs = 1000;           // how long Stop lets queued sends go out
// A connection whose handshake the peer closed this many times in a row, without ever
// succeeding, is refused (the peer closes at once when it cannot decrypt our CURVE hello).
constexpr int kHandshakeAttempts = 3;
// At most one log line per this period about refused incoming handshakes.
constexpr absl::Duration kRefusalLogPeriod = absl::Seconds(10);
constexpr int kListenerEvents = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                                ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
constexpr int kDealerEvents = kListenerEvents | ZMQ_EVENT_HANDSHAKE_SUCCEEDED;

// Names of monitor and ZAP endpoints: unique in the process.
std::atomic<uint64_t> transport_serial{0};

bool IsInproc(const std::string& endpoint) { return absl::StartsWith(endpoint, "inproc://"); }

// What a failed handshake event says, from the listening side.
std::string RefusalReason(uint16_t event, uint32_t value, bool with_keys) {
  switch (event) {
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
      return absl::StrFormat("its CURVE key is not the job's (ZAP status %d)", value);
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
      if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
        return with_keys ? "it has no CURVE keys" : "it uses CURVE and this node has no keys";
      }
      if (value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC) {
        return "its CURVE handshake does not decrypt with the job's keys (other keys)";
      }
      return absl::StrFormat("ZeroMQ protocol error 0x%x in the handshake", value);
    default:
      return "it closed the connection during the handshake";
  }
}

void ReleaseBuffer(void* /*data*/, void* hint) { delete static_cast<Buffer*>(hint); }

// A received frame, kept alive by the buffers of the Message that point into it.
struct ReceivedFrame {
  ReceivedFrame() { zmq_msg_init(&msg); }
  ~ReceivedFrame() { zmq_msg_close(&msg); }
  ReceivedFrame(const ReceivedFrame&) = delete;
  ReceivedFrame& operator=(const ReceivedFrame&) = delete;
  zmq_msg_t msg;
};

struct Outgoing {
  PeerId to;
  Message message;
};
using Command = std::variant<Outgoing, std::function<void()>>;

class ZmqTransport final : public Transport {
 public:
  ZmqTransport(const TransportOptions& options, std::shared_ptr<TransportContext> context,
               int wake_fd)
      : options_(options),
        context_(std::move(context)),
        wake_fd_(wake_fd),
        clock_(options.clock != nullptr ? *options.clock : RealClock::Get()),
        log_(GetLogger(options.logger)) {
    if (options_.keys.has_value()) curve_ = DecodeCurveKeys(*options_.keys);
  }

  ~ZmqTransport() override {
    Stop();
    CloseSockets();
    ::close(wake_fd_);
  }

  absl::StatusOr<std::string> Listen(const std::string& endpoint) override {
    absl::StatusOr<std::string> result = Stopped("listen at " + endpoint);
    RunOnIo([&] { result = ListenNow(endpoint); });
    return result;
  }

  absl::StatusOr<PeerId> Connect(const std::string& endpoint) override {
    absl::StatusOr<PeerId> result = Stopped("connect to " + endpoint);
    RunOnIo([&] { result = ConnectNow(endpoint); });
    return result;
  }

  void SetConnectErrorHandler(ConnectErrorHandler on_connect_error) override {
    on_connect_error_ = std::move(on_connect_error);
  }

  void Start(MessageHandler on_message, MalformedHandler on_malformed,
             TickHandler on_tick) override {
    on_message_ = std::move(on_message);
    on_malformed_ = std::move(on_malformed);
    on_tick_ = std::move(on_tick);
    {
      absl::MutexLock lock(&mu_);
      loop_ = LoopState::kRunning;  // commands queued from now on are the loop's to run
    }
    // A virtual clock: a tick when the loop starts (a move just before the watch would
    // otherwise go unseen), then one each time it moves (the watcher only flags it and
    // wakes the loop; the tick runs on the I/O thread).
    if (clock_.IsVirtual()) {
      watch_id_ = clock_.Watch([this] {
        clock_moved_.store(true);
        Wake();
      });
      clock_moved_.store(true);
    }
    absl::Notification started;
    io_thread_ = std::thread([this, &started] {
      pthread_setname_np(pthread_self(), "kairos-io");  // as seen by top and perf
      io_thread_id_.store(std::this_thread::get_id());
      started.Notify();
      Loop();
    });
    started.WaitForNotification();
  }

  void Send(PeerId to, Message message) override {
    if (OnIoThread()) {
      SendNow(to, message);
      return;
    }
    Enqueue(Outgoing{to, std::move(message)});
  }

  void Post(std::function<void()> fn) override { Enqueue(std::move(fn)); }

  void Stop() override {
    if (watch_id_ != 0) {
      clock_.Unwatch(watch_id_);
      watch_id_ = 0;
    }
    if (!io_thread_.joinable()) return;
    stop_.store(true);
    Wake();
    io_thread_.join();
  }

  bool OnIoThread() const override {
    return io_thread_id_.load() == std::this_thread::get_id();
  }

  std::string PeerAddress(PeerId peer) const override {
    auto it = routing_id_of_peer_.find(peer);
    return it == routing_id_of_peer_.end() ? std::string() : it->second.address;
  }

  bool Connected(PeerId peer) const override {
    if (peer & kIncomingBit) return routing_id_of_peer_.contains(peer);
    return peer < dealers_.size() && dealers_[peer].connected;
  }

  uint64_t dropped() const override { return dropped_.load(); }
  uint64_t peers_forgotten() const override { return peers_forgotten_.load(); }
  uint64_t handshakes_refused() const override { return handshakes_refused_.load(); }
  HandOffCounts hand_offs() const override {
    return {enqueued_.load(std::memory_order_relaxed), wakes_.load(std::memory_order_relaxed),
            spins_.load(std::memory_order_relaxed), spins_found_.load(std::memory_order_relaxed)};
  }

 private:
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

  absl::Status Stopped(const std::string& what) const {
    return absl::UnavailableError(
        absl::StrFormat("%s: cannot %s: the transport is stopped", options_.name, what));
  }

  // Runs fn on the I/O thread and waits until it ran or was discarded; runs it here before
  // Start (the sockets are then handed over to the I/O thread at Start, after a full
  // barrier) and on the I/O thread itself. Once the loop has ended fn never runs, so the
  // caller's result keeps the error it was initialised with. The wait is bounded by the
  // loop: it runs queued commands at once, and when it ends it discards the rest.
  void RunOnIo(std::function<void()> fn) {
    if (OnIoThread()) return fn();
    bool started;
    {
      absl::MutexLock lock(&mu_);
      started = loop_ != LoopState::kNotStarted;
    }
    if (!started) return fn();
    auto call = std::make_shared<IoCall>();
    auto notifier = std::make_shared<Notifier>(call);
    Enqueue([fn = std::move(fn), notifier = std::move(notifier)] {
      fn();
      notifier->call->ran = true;
    });
    call->done.WaitForNotification();
  }

  // The eventfd is written only when the I/O thread sleeps, or is about to, in the poll
  // (sleeping_, set under mu_ once the loop found the queue empty): a loop that is awake
  // takes the queue before it polls again, so a command posted meanwhile needs no
  // wake-up, and of the commands posted while it sleeps only the first writes (one syscall
  // per batch, and none while the thread is busy, e.g. handling the answers that make a
  // caller issue its next requests). Once the loop has ended a command is discarded here:
  // a message is counted as dropped, a function is destroyed unrun.
  void Enqueue(Command command) {
    bool queued = false;
    bool wake = false;
    {
      absl::MutexLock lock(&mu_);
      if (loop_ != LoopState::kEnded) {
        queue_.push_back(std::move(command));
        queued = true;
        commands_queued_.store(true, std::memory_order_release);
        wake = std::exchange(sleeping_, false);
      }
    }
    if (!queued) return Discard(command);
    enqueued_.fetch_add(1, std::memory_order_relaxed);
    if (wake) Wake();
  }

  // A message that will never be sent is counted; a function is destroyed unrun by the
  // caller (its captures, and with them a RunOnIo waiter's Notifier, go with it).
  void Discard(const Command& command) {
    if (std::holds_alternative<Outgoing>(command)) Drop();
  }

  void Wake() {
    wakes_.fetch_add(1, std::memory_order_relaxed);
    uint64_t one = 1;
    // A full counter (impossible in practice) still leaves the fd readable: ignore EAGAIN.
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
  }

  // Starts a monitor of `s`'s `events` and returns the PAIR socket that receives them
  // (connected before anything happens on `s`, so no event is missed), or null.
  void* Monitor(void* s, int events) {
    const std::string endpoint =
        absl::StrCat("inproc://kairos-monitor-", transport_serial.fetch_add(1));
    if (zmq_socket_monitor(s, endpoint.c_str(), events) != 0) return nullptr;
    void* pair = zmq_socket(context_->native_handle(), ZMQ_PAIR);
    if (pair != nullptr) {
      int linger = 0;
      zmq_setsockopt(pair, ZMQ_LINGER, &linger, sizeof(linger));
      if (zmq_connect(pair, endpoint.c_str()) == 0) return pair;
      zmq_close(pair);
    }
    zmq_socket_monitor(s, nullptr, 0);
    return nullptr;
  }

  static void StopMonitor(void* s, void*& monitor) {
    if (monitor == nullptr) return;
    zmq_socket_monitor(s, nullptr, 0);
    zmq_close(monitor);
    monitor = nullptr;
  }

  // Once per transport, for the first endpoint that leaves the process without keys.
  void NoticePlain(const std::string& endpoint) {
    if (curve_.has_value() || IsInproc(endpoint) || plain_noticed_) return;
    plain_noticed_ = true;
    log_->warn("{}: traffic is not encrypted (no CURVE keys; see docs/security.md): {}",
               options_.name, endpoint);
  }

  static void Configure(void* s, int64_t max_message_bytes) {
    int zero = 0;
    int linger = kLingerMs;
    zmq_setsockopt(s, ZMQ_SNDHWM, &zero, sizeof(zero));
    zmq_setsockopt(s, ZMQ_RCVHWM, &zero, sizeof(zero));
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
    zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &max_message_bytes, sizeof(max_message_bytes));
  }

  absl::StatusOr<std::string> ListenNow(const std::string& endpoint) {
    if (listener_ != nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat(options_.name, ": already listening at ", listen_endpoint_));
    }
    void* s = zmq_socket(context_->native_handle(), ZMQ_ROUTER);
    if (s == nullptr) {
      return absl::InternalError(absl::StrCat(options_.name, ": cannot create a socket: ",
                                              zmq_strerror(zmq_errno())));
    }
    Configure(s, options_.max_message_bytes);
    int mandatory = 1;  // unroutable sends fail (and are counted) instead of vanishing
    zmq_setsockopt(s, ZMQ_ROUTER_MANDATORY, &mandatory, sizeof(mandatory));
    const std::string normalized = NormalizeEndpoint(endpoint);
    std::string domain;
    ZapHandler* zap = nullptr;
    if (curve_.has_value() && !IsInproc(endpoint)) {
      absl::StatusOr<ZapHandler*> handler = ZapHandlerOf(*context_);
      if (!handler.ok()) {
        zmq_close(s);
        return absl::Status(handler.status().code(),
                            absl::StrCat(options_.name, ": cannot listen at ", endpoint, ": ",
                                         handler.status().message()));
      }
      zap = *handler;
      domain = absl::StrCat("kairos-", transport_serial.fetch_add(1));
      zap->Register(domain, curve_->public_key);
      int server = 1;
      zmq_setsockopt(s, ZMQ_CURVE_SERVER, &server, sizeof(server));
      zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, curve_->secret_key.data(), curve_->secret_key.size());
      zmq_setsockopt(s, ZMQ_ZAP_DOMAIN, domain.data(), domain.size());
    }
    void* monitor = IsInproc(endpoint) ? nullptr : Monitor(s, kListenerEvents);
    if (absl::Status bound = Bind(s, endpoint, normalized); !bound.ok()) {
      StopMonitor(s, monitor);
      zmq_close(s);
      if (zap != nullptr) zap->Unregister(domain);
      return bound;
    }
    zap_ = zap;
    zap_domain_ = domain;
    listener_monitor_ = monitor;
    char bound[1024];
    size_t len = sizeof(bound);
    zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, bound, &len);
    listener_ = s;
    listen_endpoint_ = bound;
    poll_dirty_ = true;
    NoticePlain(listen_endpoint_);
    return listen_endpoint_;
  }

  // Binds `s` to `endpoint` (`normalized`: with port 0 written "*"), or to the first free
  // port of a "tcp://HOST:FIRST-LAST" range: a port in use moves on to the next, any other
  // error ends the attempt.
  absl::Status Bind(void* s, const std::string& endpoint, const std::string& normalized) {
    absl::StatusOr<std::optional<PortRange>> range = ParsePortRange(endpoint);
    if (!range.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: cannot listen at %s: %s",
                                                        options_.name, endpoint,
                                                        range.status().message()));
    }
    if (!range->has_value()) {
      if (zmq_bind(s, normalized.c_str()) == 0) return absl::OkStatus();
      return absl::UnavailableError(absl::StrFormat("%s: cannot listen at %s: %s", options_.name,
                                                    endpoint, zmq_strerror(zmq_errno())));
    }
    const PortRange& r = **range;
    for (int port = r.first; port <= r.last; ++port) {
      const std::string one = absl::StrCat("tcp://", r.host, ":", port);
      if (zmq_bind(s, one.c_str()) == 0) return absl::OkStatus();
      const int err = zmq_errno();
      if (err != EADDRINUSE) {
        return absl::UnavailableError(absl::StrFormat("%s: cannot listen at %s: %s",
                                                      options_.name, one, zmq_strerror(err)));
      }
    }
    return absl::UnavailableError(absl::StrFormat(
        "%s: cannot listen at %s: every port of %d-%d on %s is in use", options_.name, endpoint,
        r.first, r.last, r.host));
  }

  absl::StatusOr<PeerId> ConnectNow(const std::string& endpoint) {
    void* s = zmq_socket(context_->native_handle(), ZMQ_DEALER);
    if (s == nullptr) {
      return absl::InternalError(absl::StrCat(options_.name, ": cannot create a socket: ",
                                              zmq_strerror(zmq_errno())));
    }
    Configure(s, options_.max_message_bytes);
    if (curve_.has_value() && !IsInproc(endpoint)) {
      zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, curve_->public_key.data(), curve_->public_key.size());
      zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, curve_->public_key.data(), curve_->public_key.size());
      zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, curve_->secret_key.data(), curve_->secret_key.size());
    }
    Dealer dealer;
    dealer.socket = s;
    dealer.endpoint = endpoint;
    dealer.monitor = IsInproc(endpoint) ? nullptr : Monitor(s, kDealerEvents);
    dealer.connected = dealer.monitor == nullptr;
    if (zmq_connect(s, endpoint.c_str()) != 0) {
      const int err = zmq_errno();
      StopMonitor(s, dealer.monitor);
      zmq_close(s);
      return absl::InvalidArgumentError(absl::StrFormat("%s: cannot connect to %s: %s",
                                                        options_.name, endpoint,
                                                        zmq_strerror(err)));
    }
    dealers_.push_back(std::move(dealer));
    poll_dirty_ = true;
    NoticePlain(endpoint);
    return static_cast<PeerId>(dealers_.size() - 1);
  }

  void CloseSockets() {
    if (listener_ != nullptr) {
      StopMonitor(listener_, listener_monitor_);
      zmq_close(listener_);
    }
    listener_ = nullptr;
    if (zap_ != nullptr) zap_->Unregister(zap_domain_);
    zap_ = nullptr;
    for (Dealer& d : dealers_) {
      StopMonitor(d.socket, d.monitor);
      zmq_close(d.socket);
    }
    dealers_.clear();
  }

  // ---------------------------------------------------------------- sending (I/O thread)
  // Never blocks: with unlimited high-water marks a send fails only when the socket has no
  // pipe at all, which a DEALER comes to when ZeroMQ ends its session for good (a security
  // handshake that failed on a protocol error); a blocking send would then hang the I/O
  // thread. The message is dropped and counted instead.
  bool SendFrame(void* s, zmq_msg_t* msg, bool more) {
    if (zmq_msg_send(msg, s, (more ? ZMQ_SNDMORE : 0) | ZMQ_DONTWAIT) >= 0) return true;
    zmq_msg_close(msg);
    return false;
  }

  bool SendBytes(void* s, const void* data, size_t size, bool more) {
    zmq_msg_t msg;
    zmq_msg_init_size(&msg, size);
    if (size > 0) std::memcpy(zmq_msg_data(&msg), data, size);
    return SendFrame(s, &msg, more);
  }

  bool SendPayload(void* s, const Buffer& payload, bool more) {
    if (static_cast<int64_t>(payload.size_bytes()) < options_.zero_copy_min_bytes) {
      return SendBytes(s, payload.data(), payload.size_bytes(), more);
    }
    zmq_msg_t msg;
    auto* ref = new Buffer(payload);  // released by ZeroMQ through ReleaseBuffer
    zmq_msg_init_data(&msg, payload.data(), payload.size_bytes(), &ReleaseBuffer, ref);
    return SendFrame(s, &msg, more);
  }

  void SendNow(PeerId to, Message& message) {
    void* s = nullptr;
    const std::string* routing_id = nullptr;
    if (to & kIncomingBit) {
      auto it = routing_id_of_peer_.find(to);
      if (listener_ == nullptr || it == routing_id_of_peer_.end()) return Drop();
      s = listener_;
      routing_id = &it->second.routing_id;
      listener_sent_ = true;
    } else {
      // A refused connection has no pipe left: a send on it would block.
      if (to >= dealers_.size() || dealers_[to].refused) return Drop();
      s = dealers_[to].socket;
      dealers_[to].sent = true;
    }
    const bool has_payloads = !message.payloads.empty();
    bool ok = true;
    if (routing_id != nullptr) {
      ok = SendBytes(s, routing_id->data(), routing_id->size(), /*more=*/true);
    }
    // With ROUTER_MANDATORY a vanished peer fails on the first frame, before anything of
    // the message is queued, so a partial message is never left behind.
    if (!ok) return Drop();
    // The header is serialized straight into ZeroMQ's message (no string in between).
    const std::size_t header_size = PrepareHeader(message);
    zmq_msg_t header;
    zmq_msg_init_size(&header, header_size);
    if (header_size > 0) EncodeHeaderTo(message, zmq_msg_data(&header));
    ok = SendFrame(s, &header, has_payloads);
    for (size_t i = 0; ok && i < message.payloads.size(); ++i) {
      ok = SendPayload(s, message.payloads[i], i + 1 < message.payloads.size());
    }
    if (!ok) Drop();
  }

  void Drop() { dropped_.fetch_add(1); }

  // -------------------------------------------------------------- receiving (I/O thread)
  // Receives every waiting message on `s`, up to a batch: false when it stopped at an
  // empty socket (its last call was the receive that found it empty), true when it stopped
  // at the batch's end with messages possibly left. `dealer`: the PeerId of a DEALER `s`
  // (unused for the listening ROUTER, whose messages name their peer).
  bool Drain(void* s, bool router, PeerId dealer) {
    for (int i = 0; i < kMaxMessagesPerWake; ++i) {
      // Each frame is received into `part` on the stack, so the receive that finds the
      // socket empty (the end of every drain) allocates nothing; a frame that is kept
      // moves into one heap object that the message's buffers share.
      zmq_msg_t part;
      zmq_msg_init(&part);
      if (zmq_msg_recv(&part, s, ZMQ_DONTWAIT) < 0) {  // empty
        zmq_msg_close(&part);
        return false;
      }
      bool more = zmq_msg_more(&part) != 0;
      PeerId from = 0;
      bool have = true;  // `part` holds a frame not yet used
      if (router) {      // the routing id
        from = PeerFor(std::string(static_cast<const char*>(zmq_msg_data(&part)),
                                   zmq_msg_size(&part)));
        zmq_msg_close(&part);
        have = false;
      }
      std::vector<RawFrame> frames;
      frames.reserve(3);  // the header and up to two payloads without a reallocation
      while (have || more) {
        if (!have) {
          zmq_msg_init(&part);
          if (zmq_msg_recv(&part, s, 0) < 0) {
            zmq_msg_close(&part);
            return false;
          }
          more = zmq_msg_more(&part) != 0;
        }
        have = false;
        if (router && frames.empty()) NotePeerAddress(from, &part);
        auto kept = std::make_shared<ReceivedFrame>();
        zmq_msg_move(&kept->msg, &part);
        zmq_msg_close(&part);
        RawFrame frame;
        frame.data = zmq_msg_data(&kept->msg);  // inside kept for a very small message
        frame.size = zmq_msg_size(&kept->msg);
        frame.owner = std::move(kept);
        frames.push_back(std::move(frame));
      }
      if (!router) from = dealer;
      std::optional<wire::Header> header;
      absl::StatusOr<Message> message = Decode(std::move(frames), &header);
      if (message.ok()) {
        // Out of memory while handling one message drops that message (counted), not the
        // node: its sender's request ends at its deadline.
        try {
          on_message_(from, *std::move(message));
        } catch (const std::bad_alloc&) {
          Drop();
        }
      } else {
        Drop();
        if (on_malformed_) {
          on_malformed_(from, message.status(), header.has_value() ? &*header : nullptr);
        }
      }
    }
    return true;
  }

  // The PeerId of a routing id (a new one for a connection not seen, or forgotten).
  PeerId PeerFor(const std::string& routing_id) {
    ++activity_;
    if (auto it = peer_by_routing_id_.find(routing_id); it != peer_by_routing_id_.end()) {
      routing_id_of_peer_[it->second].last_active = activity_;
      return it->second;
    }
    if (static_cast<int64_t>(peer_by_routing_id_.size()) >=
        std::max<int64_t>(1, options_.max_peers)) {
      ForgetIdlePeers();
    }
    const PeerId peer = kIncomingBit | next_incoming_++;
    peer_by_routing_id_.emplace(routing_id, peer);
    routing_id_of_peer_.emplace(peer, Incoming{routing_id, activity_, std::string(), false});
    return peer;
  }

  // Forgets the longest-idle eighth of the incoming peers (at least one): one pass over
  // the table per max_peers / 8 new connections, so a flood costs O(1) per connection.
  void ForgetIdlePeers() {
    std::vector<uint64_t> ages;
    ages.reserve(routing_id_of_peer_.size());
    for (const auto& [peer, in] : routing_id_of_peer_) ages.push_back(in.last_active);
    const std::size_t forget = std::max<std::size_t>(1, ages.size() / 8);
    std::nth_element(ages.begin(), ages.begin() + (forget - 1), ages.end());
    const uint64_t cutoff = ages[forget - 1];
    std::size_t forgotten = 0;
    for (auto it = routing_id_of_peer_.begin();
         it != routing_id_of_peer_.end() && forgotten < forget;) {
      if (it->second.last_active <= cutoff) {
        peer_by_routing_id_.erase(it->second.routing_id);
        routing_id_of_peer_.erase(it++);
        ++forgotten;
      } else {
        ++it;
      }
    }
    peers_forgotten_.fetch_add(forgotten);
  }

  // Keeps the address an incoming peer's connection came from (ZeroMQ's "Peer-Address"
  // property of its messages: the TCP peer's IP), read from its first message only.
  void NotePeerAddress(PeerId from, zmq_msg_t* msg) {
    auto it = routing_id_of_peer_.find(from);
    if (it == routing_id_of_peer_.end() || it->second.address_known) return;
    it->second.address_known = true;
    const char* address = zmq_msg_gets(msg, "Peer-Address");
    if (address != nullptr) it->second.address = address;
  }

  // ---------------------------------------------------------- handshakes (I/O thread)
  // Reads one event from a monitor socket; false when none is waiting.
  static bool NextEvent(void* monitor, uint16_t* event, uint32_t* value) {
    zmq_msg_t head;
    zmq_msg_init(&head);
    if (zmq_msg_recv(&head, monitor, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&head);
      return false;
    }
    *event = 0;
    *value = 0;
    if (zmq_msg_size(&head) >= sizeof(*event) + sizeof(*value)) {
      const char* data = static_cast<const char*>(zmq_msg_data(&head));
      std::memcpy(event, data, sizeof(*event));
      std::memcpy(value, data + sizeof(*event), sizeof(*value));
    }
    bool more = zmq_msg_more(&head) != 0;
    zmq_msg_close(&head);
    while (more) {  // the endpoint frame: the same for every event of the socket
      zmq_msg_t frame;
      zmq_msg_init(&frame);
      more = zmq_msg_recv(&frame, monitor, 0) >= 0 && zmq_msg_more(&frame) != 0;
      zmq_msg_close(&frame);
    }
    return true;
  }

  // The monitors' readers return as Drain does: true when they stopped at the batch's end.
  bool ListenerEvents() {
    uint16_t event;
    uint32_t value;
    for (int i = 0; i < kMaxMessagesPerWake; ++i) {
      if (!NextEvent(listener_monitor_, &event, &value)) return false;
      const uint64_t refused = handshakes_refused_.fetch_add(1) + 1;
      const absl::Time now = clock_.Now();
      if (now - last_refusal_log_ < kRefusalLogPeriod) continue;
      last_refusal_log_ = now;
      log_->warn(
          "{}: refused a connection at {}: {} ({} refused so far; at most one such line every "
          "{})",
          options_.name, listen_endpoint_, RefusalReason(event, value, curve_.has_value()),
          refused, absl::FormatDuration(kRefusalLogPeriod));
    }
    return true;
  }

  bool DealerEvents(size_t index) {
    uint16_t event;
    uint32_t value;
    for (int i = 0; i < kMaxMessagesPerWake; ++i) {
      Dealer& d = dealers_[index];
      if (d.monitor_done || !NextEvent(d.monitor, &event, &value)) return false;
      switch (event) {
        case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
          d.failed_handshakes = 0;
          d.connected = true;
          d.monitor_done = true;  // the connection is what it should be: stop watching
          poll_dirty_ = true;
          break;
        case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
          Refuse(index, absl::StrFormat("%s refused this node's CURVE keys: they are not the "
                                        "job's keys (ZAP status %d)",
                                        d.endpoint, value));
          break;
        case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
          Refuse(index, ProtocolFailure(d.endpoint, value));
          break;
        default:  // ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
          if (++d.failed_handshakes >= kHandshakeAttempts) {
            Refuse(index, ClosedFailure(d.endpoint));
          }
          break;
      }
    }
    return true;
  }

  std::string ProtocolFailure(const std::string& endpoint, uint32_t value) const {
    if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
      return curve_.has_value()
                 ? absl::StrCat(endpoint,
                                " does not use CURVE: the peer has no keys and this node has "
                                "(every node of a job needs the job's keys, or none has any)")
                 : absl::StrCat(endpoint,
                                " requires CURVE and this node has no keys (give it the job's "
                                "keys: the keys option, --keys or KAIROS_KEYS)");
    }
    return absl::StrFormat(
        "%s: the security handshake failed (ZeroMQ protocol error 0x%x): the peer is not a "
        "node of this job with the same keys",
        endpoint, value);
  }

  std::string ClosedFailure(const std::string& endpoint) const {
    return curve_.has_value()
               ? absl::StrFormat("%s refused this node's CURVE keys: it closed the connection "
                                 "during the handshake %d times in a row (the peer holds "
                                 "another job's keys, or none)",
                                 endpoint, kHandshakeAttempts)
               : absl::StrFormat("%s closed the connection during the handshake %d times in a "
                                 "row: it most likely requires CURVE and this node has no keys "
                                 "(give it the job's keys: the keys option, --keys or "
                                 "KAIROS_KEYS)",
                                 endpoint, kHandshakeAttempts);
  }

  // Ends the connection for good and tells the node.
  void Refuse(size_t index, const std::string& why) {
    Dealer& d = dealers_[index];
    if (d.refused) return;
    d.refused = true;
    d.monitor_done = true;
    poll_dirty_ = true;
    // What is queued for the peer never goes: without linger, closing does not wait for it.
    int linger = 0;
    zmq_setsockopt(d.socket, ZMQ_LINGER, &linger, sizeof(linger));
    zmq_disconnect(d.socket, d.endpoint.c_str());  // no more reconnection attempts
    d.sent = true;  // the disconnect used the socket: drain it before sleeping (see Loop)
    log_->warn("{}: {}", options_.name, why);
    if (on_connect_error_) {
      on_connect_error_(static_cast<PeerId>(index), absl::UnauthenticatedError(why));
    }
  }

  // ------------------------------------------------------------------- the I/O loop
  // The loop polls file descriptors itself, not through zmq_poll: the eventfd, and each
  // socket's ZMQ_FD, which ZeroMQ makes readable when commands reach the socket (a pipe
  // that got messages, among others). zmq_poll costs a poll syscall with timeout 0 before
  // each blocking one and a ZMQ_EVENTS query per socket on each pass (each a syscall of its
  // own), which made up most of the system calls of a small request. ZMQ_FD is edge
  // triggered: a socket's state may change without the descriptor saying so once the
  // socket was used (a send may take the command that announced a message). So a socket is
  // drained (received from until it is empty) whenever its descriptor was readable, it was
  // sent on since its last drain, or its last drain stopped at the batch's end, and the
  // loop sleeps only once every socket's last call was a receive that found it empty. The
  // tick drains every socket as well, a backstop that costs one receive per socket.
  //
  // The poll set: the wake-up fd, the data sockets, then the monitors (from first_monitor_
  // on); items_ holds the sockets, fds_ their descriptors, pending_ whether to drain them.
  void RebuildPollItems() {
    for (Dealer& d : dealers_) {
      if (d.monitor_done) StopMonitor(d.socket, d.monitor);
    }
    items_.clear();
    items_.push_back({nullptr, wake_fd_, ZMQ_POLLIN, 0});
    if (listener_ != nullptr) items_.push_back({listener_, 0, ZMQ_POLLIN, 0});
    first_dealer_ = items_.size();
    for (const Dealer& d : dealers_) items_.push_back({d.socket, 0, ZMQ_POLLIN, 0});
    first_monitor_ = items_.size();
    if (listener_monitor_ != nullptr) items_.push_back({listener_monitor_, 0, ZMQ_POLLIN, 0});
    for (const Dealer& d : dealers_) {
      if (d.monitor != nullptr) items_.push_back({d.monitor, 0, ZMQ_POLLIN, 0});
    }
    fds_.assign(items_.size(), pollfd{wake_fd_, POLLIN, 0});
    for (size_t i = 1; i < items_.size(); ++i) {
      int fd = -1;
      size_t size = sizeof(fd);
      zmq_getsockopt(items_[i].socket, ZMQ_FD, &fd, &size);
      fds_[i].fd = fd;
    }
    pending_.assign(items_.size(), 1);  // a new poll set starts from a drain of each
    poll_dirty_ = false;
  }

  // A monitor to drain: the listener's or a dealer's (still open: monitors are closed only
  // by RebuildPollItems). True when it stopped at the batch's end.
  bool MonitorEvents(void* monitor) {
    if (monitor == listener_monitor_) return ListenerEvents();
    for (size_t i = 0; i < dealers_.size(); ++i) {
      if (dealers_[i].monitor == monitor) return DealerEvents(i);
    }
    return false;
  }

  // Drains the sockets that need it (see above); true when one stopped at the batch's end
  // or was sent on after its drain (the loop then polls without waiting).
  bool DrainSockets() {
    bool more = false;
    for (size_t i = 1; i < items_.size(); ++i) {
      void* socket = items_[i].socket;
      if (i < first_monitor_) {
        // The socket's "sent" flag, by index: the dealers sit in items_ in their order from
        // first_dealer_ on, and keep their index when a handler adds one (ConnectNow).
        const bool listener = i < first_dealer_;
        const size_t d = listener ? 0 : i - first_dealer_;
        if (!(pending_[i] || (listener ? listener_sent_ : dealers_[d].sent))) continue;
        // Cleared after the drain: a send from a handler during it comes before the
        // receive that ends it, which leaves the socket's state known again.
        pending_[i] = Drain(socket, listener, static_cast<PeerId>(d)) ? 1 : 0;
        (listener ? listener_sent_ : dealers_[d].sent) = false;
      } else if (pending_[i]) {
        pending_[i] = MonitorEvents(socket) ? 1 : 0;
      }
      more = more || pending_[i];
    }
    // A handler's send on a socket drained earlier in this pass.
    more = more || listener_sent_;
    for (const Dealer& d : dealers_) more = more || d.sent;
    return more;
  }

  // Runs every queued command (those posted meanwhile wait for the next round). False
  // when the queue was empty.
  bool RunCommands() {
    std::deque<Command> batch;
    {
      absl::MutexLock lock(&mu_);
      batch.swap(queue_);
      commands_queued_.store(false, std::memory_order_relaxed);
    }
    if (batch.empty()) return false;
    while (!batch.empty()) {
      // Each command is destroyed once done, so a RunOnIo waiter wakes without waiting for
      // the rest of the batch.
      Command c = std::move(batch.front());
      batch.pop_front();
      if (auto* out = std::get_if<Outgoing>(&c)) {
        SendNow(out->to, out->message);
      } else {
        std::get<std::function<void()>>(c)();
      }
    }
    return true;
  }

  // Whether the poll may block: true when the queue is empty, and then sleeping_ is set
  // under the same lock, so a command queued from now on writes the eventfd (Enqueue).
  bool MaySleep() {
    absl::MutexLock lock(&mu_);
    if (!queue_.empty()) return false;
    sleeping_ = true;
    return true;
  }

  // Out of work, before sleeping: unless the node does not want it now (spin_wanted), polls
  // without waiting, for as long as idle_spin_ allows and never past `next_tick`, until a
  // descriptor is ready or a command is queued (a command queued meanwhile finds sleeping_
  // false and writes no eventfd). Returns the last poll's count, its revents set, when a
  // descriptor was ready; 0 otherwise.
  int SpinBeforeSleep(absl::Time next_tick) {
    if (options_.idle_spin <= absl::ZeroDuration()) return 0;
    if (options_.spin_wanted && !options_.spin_wanted()) return 0;
    const absl::Duration budget = idle_spin_.Next();
    if (budget <= absl::ZeroDuration()) return 0;
    spins_.fetch_add(1, std::memory_order_relaxed);
    const absl::Time until = std::min(absl::Now() + budget, next_tick);
    int ready = 0;
    bool found = false;
    do {
      for (pollfd& p : fds_) p.revents = 0;
      ready = ::poll(fds_.data(), fds_.size(), 0);
      found = ready > 0 || commands_queued_.load(std::memory_order_acquire);
    } while (!found && absl::Now() < until);
    idle_spin_.Ended(found);
    if (found) spins_found_.fetch_add(1, std::memory_order_relaxed);
    return ready > 0 ? ready : 0;
  }

  // The poll waits in real time. On a clock that moves by itself the tick runs every
  // tick_period of real time, with the clock's time; on a virtual clock it runs once after
  // each move of the clock (clock_moved_), and the poll waits for messages only.
  void Loop() {
    const bool virtual_time = clock_.IsVirtual();
    absl::Time next_tick = absl::Now() + options_.tick_period;
    while (!stop_.load()) {
      // The queue first, every round: commands posted while the loop was busy (answers
      // being handled) are sent before it polls, without a wake-up of their own.
      RunCommands();
      // Handlers may open connections (ConnectNow), which changes the poll set: rebuilt
      // here only, so the set stays put while DrainSockets walks it.
      if (poll_dirty_) RebuildPollItems();
      const bool more = DrainSockets();
      if (poll_dirty_) continue;  // a handler changed the poll set: drain the new one first
      const absl::Duration wait = next_tick - absl::Now();
      // A move of a virtual clock flags clock_moved_ before it wakes the loop, so a flag
      // seen here is never waited out; one set later wakes the poll.
      int timeout_ms = wait <= absl::ZeroDuration()
                           ? 0
                           : static_cast<int>(std::min<int64_t>(
                                 absl::ToInt64Milliseconds(wait) + 1, 1 << 30));
      if (virtual_time) timeout_ms = clock_moved_.load() ? 0 : -1;
      // A socket with messages left, or commands queued since RunCommands: look without
      // waiting. Otherwise sleeping_ is set, and the next command wakes the poll.
      if (more) timeout_ms = 0;
      // Out of work on a real clock: first a spin, which may find the next work itself.
      int ready = timeout_ms != 0 && !virtual_time ? SpinBeforeSleep(next_tick) : 0;
      if (ready > 0) timeout_ms = 0;
      if (timeout_ms != 0 && !MaySleep()) timeout_ms = 0;
      if (ready == 0) {
        for (pollfd& p : fds_) p.revents = 0;
        ready = ::poll(fds_.data(), fds_.size(), timeout_ms);
      }
      if (timeout_ms != 0) {
        absl::MutexLock lock(&mu_);
        sleeping_ = false;
      }
      if (ready > 0) {
        if (fds_[0].revents & POLLIN) {
          uint64_t count;
          [[maybe_unused]] ssize_t n = ::read(wake_fd_, &count, sizeof(count));
        }
        for (size_t i = 1; i < fds_.size(); ++i) {
          if (fds_[i].revents != 0) pending_[i] = 1;
        }
      }
      if (virtual_time) {
        if (clock_moved_.exchange(false) && on_tick_) {
          std::fill(pending_.begin(), pending_.end(), 1);
          on_tick_(clock_.Now());
        }
        continue;
      }
      const absl::Time real_now = absl::Now();
      if (real_now >= next_tick) {
        next_tick = real_now + options_.tick_period;
        std::fill(pending_.begin(), pending_.end(), 1);  // the backstop (see above)
        if (on_tick_) on_tick_(clock_.Now());
      }
    }
    CloseSockets();
    std::deque<Command> discarded;
    {
      absl::MutexLock lock(&mu_);
      loop_ = LoopState::kEnded;
      discarded.swap(queue_);
    }
    for (const Command& c : discarded) Discard(c);
  }

  const TransportOptions options_;
  const std::shared_ptr<TransportContext> context_;
  const int wake_fd_;
  const Clock& clock_;  // options_.clock keeps it alive
  uint64_t watch_id_ = 0;  // the virtual clock's watcher (Start to Stop)
  std::atomic<bool> clock_moved_{false};

  const std::shared_ptr<spdlog::logger> log_;
  std::optional<BinaryCurveKeys> curve_;

  MessageHandler on_message_;
  MalformedHandler on_malformed_;
  TickHandler on_tick_;
  ConnectErrorHandler on_connect_error_;

  absl::Mutex mu_;
  std::deque<Command> queue_ ABSL_GUARDED_BY(mu_);
  // The I/O thread waits, or is about to wait, in the poll: the next Enqueue wakes it.
  bool sleeping_ ABSL_GUARDED_BY(mu_) = false;
  LoopState loop_ ABSL_GUARDED_BY(mu_) = LoopState::kNotStarted;

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

  // Owned by the I/O thread (or by the creating thread before Start).
  void* listener_ = nullptr;
  void* listener_monitor_ = nullptr;
  std::string listen_endpoint_;
  struct Incoming {
    std::string routing_id;
    uint64_t last_active = 0;  // activity_ when it last sent
    std::string address;       // where its connection came from (tcp only), else empty
    bool address_known = false;
  };
  ZapHandler* zap_ = nullptr;  // the context's, which outlives this transport
  std::string zap_domain_;
  absl::Time last_refusal_log_ = absl::InfinitePast();
  bool plain_noticed_ = false;
  std::vector<Dealer> dealers_;
  absl::flat_hash_map<std::string, PeerId> peer_by_routing_id_;
  absl::flat_hash_map<PeerId, Incoming> routing_id_of_peer_;
  uint64_t next_incoming_ = 0;
  uint64_t activity_ = 0;  // messages received from incoming peers, as a clock
  std::vector<zmq_pollitem_t> items_;
  std::vector<pollfd> fds_;        // items_'s descriptors: the eventfd, then each ZMQ_FD
  std::vector<uint8_t> pending_;   // items_ to drain before the loop may sleep
  bool listener_sent_ = false;     // sent on since its last drain
  size_t first_dealer_ = 1;   // index in items_ of the first DEALER (after the ROUTER)
  size_t first_monitor_ = 1;  // index in items_ of the first monitor socket
  bool poll_dirty_ = true;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Transport>> MakeTransport(const TransportOptions& options,
                                                         TransportFactory* factory) {
  if (options.send_delay < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(options.name, ": send_delay is negative (",
                                                   absl::FormatDuration(options.send_delay),
                                                   ")"));
  }
  absl::StatusOr<std::unique_ptr<Transport>> transport =
      factory != nullptr ? factory->Make(options) : MakeZmqTransport(options);
  if (!transport.ok() || options.send_delay == absl::ZeroDuration()) return transport;
  return std::make_unique<DelayedTransport>(*std::move(transport), options.send_delay);
}

std::string NormalizeEndpoint(const std::string& endpoint) {
  if (absl::StartsWith(endpoint, "tcp://") && absl::EndsWith(endpoint, ":0")) {
    return endpoint.substr(0, endpoint.size() - 1) + "*";
  }
  return endpoint;
}

absl::StatusOr<std::unique_ptr<Transport>> MakeZmqTransport(const TransportOptions& options) {
  if (options.keys.has_value()) {
    if (absl::Status s = CheckCurveKeys(*options.keys); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(options.name, ": CURVE keys: ", s.message()));
    }
  }
  std::shared_ptr<TransportContext> context =
      options.context != nullptr ? options.context : TransportContext::Create(1);
  const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat(options.name, ": eventfd failed: ", std::strerror(errno)));
  }
  return std::make_unique<ZmqTransport>(options, std::move(context), fd);
}

}  // namespace kairos::internal
