// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ZapHandler: the ZeroMQ authentication handler (ZAP, RFC 27) of one TransportContext.
// libzmq asks it about every CURVE handshake that a listening socket of the context accepts:
// it is a REP socket bound at "inproc://zeromq.zap.01" inside the context, answered on a
// thread of its own. Each CURVE listener registers a ZAP domain of its own with the one
// client key it accepts (the job's public key), so nodes of several jobs, with different
// keys, can share one context. A request is accepted (200) when its domain is registered,
// its mechanism is CURVE and the client's long-term public key is the domain's; everything
// else is refused (400), and libzmq then closes the connection before any message passes.
//
// Lifetime: started by the first CURVE listener of a context (ZapHandlerOf) and destroyed
// with the context, before zmq_ctx_term, so its socket never keeps the context from
// terminating; the destructor wakes the thread through an eventfd and joins it.
//
// Thread-safety: Register and Unregister may be called from any thread.

#ifndef KAIROS_TRANSPORT_ZAP_HANDLER_H_
#define KAIROS_TRANSPORT_ZAP_HANDLER_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kairos/transport_context.h"

namespace kairos::internal {

class ZapHandler {
 public:
  // Binds the handler's socket in `context` (a ZeroMQ context) and starts its thread.
  // Unavailable when the ZAP endpoint is already bound in that context (by another handler).
  static absl::StatusOr<std::unique_ptr<ZapHandler>> Start(void* context);
  ~ZapHandler();
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  // Accept clients of listeners in `domain` whose public key is `client_key` (32 bytes).
  void Register(const std::string& domain, const std::string& client_key);
  void Unregister(const std::string& domain);

  // Requests answered, and those refused, since the start (for tests and logs).
  uint64_t accepted() const;
  uint64_t refused() const;

 private:
  ZapHandler(void* socket, int stop_fd);
  void Loop();
  // Answers every request waiting on the socket.
  void AnswerAll();
  bool Accepts(const std::string& domain, const std::string& mechanism,
               const std::string& key) const;

  void* const socket_;  // the REP socket; used by the thread only once it runs
  const int stop_fd_;   // eventfd: written by the destructor
  std::thread thread_;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::string> keys_ ABSL_GUARDED_BY(mu_);
  uint64_t accepted_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t refused_ ABSL_GUARDED_BY(mu_) = 0;
};

// The handler of `context`, started on the first call; it lives as long as the context.
absl::StatusOr<ZapHandler*> ZapHandlerOf(TransportContext& context);

}  // namespace kairos::internal

namespace kairos {

struct TransportContext::Internals {
  absl::Mutex mu;
  std::unique_ptr<internal::ZapHandler> zap ABSL_GUARDED_BY(mu);
  // Whether a transport of this context logged that its traffic is not encrypted: the
  // notice is given once per context (a job's nodes in one process share one), not once
  // per node.
  std::atomic<bool> plain_noticed{false};
};

namespace internal {

// What the transport reaches of a TransportContext (its friend).
class TransportContextAccess {
 public:
  static void* NativeHandle(const TransportContext& context) { return context.handle_; }
  static TransportContext::Internals& InternalsOf(const TransportContext& context) {
    return *context.internals_;
  }
};

}  // namespace internal
}  // namespace kairos

#endif  // KAIROS_TRANSPORT_ZAP_HANDLER_H_
