// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Making a node's transport (transport.h): the TransportContext that ZeroMQ transports
// share, MakeZmqTransport (the keys checked, the wake-up eventfd opened), MakeTransport (a
// factory's transport or ZeroMQ's, wrapped in a DelayedTransport for a send delay), and
// NormalizeEndpoint.

#include <sys/eventfd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "kairos/keys.h"
#include "kairos/transport_context.h"
#include "transport/delayed_transport.h"
#include "transport/transport.h"
#include "transport/zap_handler.h"
#include "transport/zmq_transport.h"
#include "zmq.h"

namespace kairos {

std::shared_ptr<TransportContext> TransportContext::Create(const TransportContextOptions& options) {
  void* ctx = zmq_ctx_new();
  zmq_ctx_set(ctx, ZMQ_IO_THREADS, std::max(1, options.io_threads));
  zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS,
              std::clamp(options.max_sockets, 1, zmq_ctx_get(ctx, ZMQ_SOCKET_LIMIT)));
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

absl::StatusOr<std::unique_ptr<Transport>> MakeTransport(const TransportOptions& options,
                                                         TransportFactory* factory) {
  if (options.send_delay < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(options.name, ": send_delay is negative (",
                                                   absl::FormatDuration(options.send_delay), ")"));
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
      options.context != nullptr ? options.context : TransportContext::Create();
  const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat(options.name, ": eventfd failed: ", std::strerror(errno)));
  }
  return std::make_unique<ZmqTransport>(options, std::move(context), fd);
}

}  // namespace kairos::internal
