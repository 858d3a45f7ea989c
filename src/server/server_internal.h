// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// What the library's own code and tests may do with a server beyond the public API
// (kairos/server.h): run it over a transport they give, e.g. the in-process FakeTransport,
// so that a test or a fuzzer drives its message handler without sockets.

#ifndef KAIROS_SERVER_SERVER_INTERNAL_H_
#define KAIROS_SERVER_SERVER_INTERNAL_H_

#include <memory>

#include "absl/status/statusor.h"
#include "kairos/options.h"
#include "kairos/server.h"
#include "transport/transport.h"

namespace kairos::internal {

// Server::Create over `transport` instead of a new ZeroMQ transport: listens at
// options.listen, connects to options.coordinator, starts the transport with the server's
// handlers and sends the JOIN, all through `transport`, which the server owns from then on.
// The transport reaches the server the one way every node's does, as the options'
// transport_factory (WithTransport, transport/node_bringup.h), in place of theirs.
// options.context and options.max_message_bytes are the transport's business and unused
// here. Errors: InvalidArgument for an empty options.coordinator; Listen's and Connect's.
absl::StatusOr<std::unique_ptr<Server>> CreateServerWithTransport(
    const ServerOptions& options, std::unique_ptr<Transport> transport);

}  // namespace kairos::internal

#endif  // KAIROS_SERVER_SERVER_INTERNAL_H_
