// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// MetricsExporter: a small HTTP server (cpp-httplib) that answers GET /metrics with the text
// a render function returns, and 404 for any other path. The node that owns it starts it
// with the address of ServerOptions/CoordinatorOptions::metrics_listen and stops it before
// the state the render function reads goes away.
//
// Its resources are bounded: `threads` threads answer requests, one request per connection
// (the reply says "Connection: close"), each read and write has `io_timeout`, and at most
// `max_queued_connections` accepted connections wait for a thread; beyond that the accept
// thread waits too, so further connections wait in the kernel's listen backlog. The socket
// is bound with SO_REUSEADDR only (not httplib's default SO_REUSEPORT, which would let two
// nodes share a port silently).
//
// Thread-safety: Start, address and Stop from any thread; `render` runs on the exporter's
// threads, possibly on several at once.

#ifndef KAIROS_METRICS_EXPORTER_H_
#define KAIROS_METRICS_EXPORTER_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kairos::internal {

struct ExporterOptions {
  int threads = 2;
  int max_queued_connections = 64;
  // Each wait for a request's bytes, and each write of the reply. Stop may wait this long
  // (twice, for a request being read and its reply) for a scrape in progress.
  absl::Duration io_timeout = absl::Seconds(2);
};

// HOST and PORT of "HOST:PORT" ("[v6-address]:PORT" for an IPv6 address).
struct HostPort {
  std::string host;
  int port = 0;
};
// Parses `address`; InvalidArgument naming `what` (e.g. "metrics_listen") and the address
// when it is not HOST:PORT with a PORT in [0, 65535].
absl::StatusOr<HostPort> ParseHostPort(std::string_view address, std::string_view what);

class MetricsExporter {
 public:
  using Render = std::function<std::string()>;

  // Binds `address` (HOST:PORT, port 0: a free port) and serves. Errors: InvalidArgument
  // for an address that is not HOST:PORT; Unavailable naming the address and the reason
  // ("Address already in use") when it cannot be bound.
  static absl::StatusOr<std::unique_ptr<MetricsExporter>> Start(std::string_view address,
                                                                Render render,
                                                                ExporterOptions options = {});

  // Stops (see Stop).
  ~MetricsExporter();
  MetricsExporter(const MetricsExporter&) = delete;
  MetricsExporter& operator=(const MetricsExporter&) = delete;

  // "HOST:PORT" as bound (the port filled in).
  const std::string& address() const { return address_; }

  // Closes the listening socket and waits for the requests in progress (bounded by the
  // options' io_timeout); afterwards `render` is not called any more. Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit MetricsExporter(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
  std::string address_;
};

}  // namespace kairos::internal

#endif  // KAIROS_METRICS_EXPORTER_H_
