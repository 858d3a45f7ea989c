// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ZmqTransport's sockets (zmq_transport.h), on the I/O thread: opening the listening
// ROUTER (ListenNow, with its CURVE server and ZAP domain) and the DEALERs (ConnectNow),
// closing them, and the socket monitors that report their security handshakes: refusals
// at the listener are counted and logged, and a DEALER's definite refusal ends the
// connection (Refuse).

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "transport/endpoint.h"
#include "transport/transport.h"
#include "transport/zap_handler.h"
#include "transport/zmq_transport.h"
#include "zmq.h"

namespace kairos::internal {
namespace {

constexpr int kLingerMs = 1000;  // how long Stop lets queued sends go out
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

void Configure(void* s, int64_t max_message_bytes) {
  int zero = 0;
  int linger = kLingerMs;
  zmq_setsockopt(s, ZMQ_SNDHWM, &zero, sizeof(zero));
  zmq_setsockopt(s, ZMQ_RCVHWM, &zero, sizeof(zero));
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
  zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &max_message_bytes, sizeof(max_message_bytes));
}

// Reads one event from a monitor socket; false when none is waiting.
bool NextEvent(void* monitor, uint16_t* event, uint32_t* value) {
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

}  // namespace

void* ZmqTransport::Monitor(void* s, int events) {
  const std::string endpoint =
      absl::StrCat("inproc://kairos-monitor-", transport_serial.fetch_add(1));
  if (zmq_socket_monitor(s, endpoint.c_str(), events) != 0) return nullptr;
  void* pair = zmq_socket(TransportContextAccess::NativeHandle(*context_), ZMQ_PAIR);
  if (pair != nullptr) {
    int linger = 0;
    zmq_setsockopt(pair, ZMQ_LINGER, &linger, sizeof(linger));
    if (zmq_connect(pair, endpoint.c_str()) == 0) return pair;
    zmq_close(pair);
  }
  zmq_socket_monitor(s, nullptr, 0);
  return nullptr;
}

void ZmqTransport::StopMonitor(void* s, void*& monitor) {
  if (monitor == nullptr) return;
  zmq_socket_monitor(s, nullptr, 0);
  zmq_close(monitor);
  monitor = nullptr;
}

void ZmqTransport::NoticePlain(const std::string& endpoint) {
  if (curve_.has_value() || IsInproc(endpoint)) return;
  if (TransportContextAccess::InternalsOf(*context_).plain_noticed.exchange(true)) return;
  log_->warn("{}: traffic is not encrypted (no CURVE keys; see docs/security.md): {}",
             options_.name, endpoint);
}

absl::StatusOr<std::string> ZmqTransport::ListenNow(const std::string& endpoint) {
  if (listener_ != nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(options_.name, ": already listening at ", listen_endpoint_));
  }
  void* s = zmq_socket(TransportContextAccess::NativeHandle(*context_), ZMQ_ROUTER);
  if (s == nullptr) {
    return absl::InternalError(
        absl::StrCat(options_.name, ": cannot create a socket: ", zmq_strerror(zmq_errno())));
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

absl::Status ZmqTransport::Bind(void* s, const std::string& endpoint,
                                const std::string& normalized) {
  absl::StatusOr<std::optional<PortRange>> range = ParsePortRange(endpoint);
  if (!range.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: cannot listen at %s: %s", options_.name,
                                                      endpoint, range.status().message()));
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
      return absl::UnavailableError(
          absl::StrFormat("%s: cannot listen at %s: %s", options_.name, one, zmq_strerror(err)));
    }
  }
  return absl::UnavailableError(
      absl::StrFormat("%s: cannot listen at %s: every port of %d-%d on %s is in use", options_.name,
                      endpoint, r.first, r.last, r.host));
}

absl::StatusOr<PeerId> ZmqTransport::ConnectNow(const std::string& endpoint) {
  void* s = zmq_socket(TransportContextAccess::NativeHandle(*context_), ZMQ_DEALER);
  if (s == nullptr) {
    return absl::InternalError(
        absl::StrCat(options_.name, ": cannot create a socket: ", zmq_strerror(zmq_errno())));
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
    return absl::InvalidArgumentError(absl::StrFormat("%s: cannot connect to %s: %s", options_.name,
                                                      endpoint, zmq_strerror(err)));
  }
  dealers_.push_back(std::move(dealer));
  poll_dirty_ = true;
  NoticePlain(endpoint);
  return static_cast<PeerId>(dealers_.size() - 1);
}

void ZmqTransport::CloseSockets() {
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

// ---------------------------------------------------------- handshakes (I/O thread)
bool ZmqTransport::MonitorEvents(void* monitor) {
  if (monitor == listener_monitor_) return ListenerEvents();
  for (size_t i = 0; i < dealers_.size(); ++i) {
    if (dealers_[i].monitor == monitor) return DealerEvents(i);
  }
  return false;
}

bool ZmqTransport::ListenerEvents() {
  uint16_t event;
  uint32_t value;
  for (int i = 0; i < kMaxMessagesPerWake; ++i) {
    if (!NextEvent(listener_monitor_, &event, &value)) return false;
    const uint64_t refused = handshakes_refused_.fetch_add(1) + 1;
    const absl::Time now = env_.Now();
    if (now - last_refusal_log_ < kRefusalLogPeriod) continue;
    last_refusal_log_ = now;
    log_->warn(
        "{}: refused a connection at {}: {} ({} refused so far; at most one such line every "
        "{})",
        options_.name, listen_endpoint_, RefusalReason(event, value, curve_.has_value()), refused,
        absl::FormatDuration(kRefusalLogPeriod));
  }
  return true;
}

bool ZmqTransport::DealerEvents(size_t index) {
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

std::string ZmqTransport::ProtocolFailure(const std::string& endpoint, uint32_t value) const {
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

std::string ZmqTransport::ClosedFailure(const std::string& endpoint) const {
  return curve_.has_value() ? absl::StrFormat(
                                  "%s refused this node's CURVE keys: it closed the connection "
                                  "during the handshake %d times in a row (the peer holds "
                                  "another job's keys, or none)",
                                  endpoint, kHandshakeAttempts)
                            : absl::StrFormat(
                                  "%s closed the connection during the handshake %d times in a "
                                  "row: it most likely requires CURVE and this node has no keys "
                                  "(give it the job's keys: the keys option, --keys or "
                                  "KAIROS_KEYS)",
                                  endpoint, kHandshakeAttempts);
}

void ZmqTransport::Refuse(size_t index, const std::string& why) {
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

}  // namespace kairos::internal
