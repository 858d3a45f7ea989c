// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// TransportContext: the messaging context that nodes share. Nodes that talk over
// "inproc://" endpoints must share one context (LocalCluster does this for you); nodes in
// different contexts can still talk over tcp:// and ipc://. Several contexts, and so several
// independent clusters, can live in one process, and nodes of several jobs (with different
// CURVE keys, or none) can share one context.
//
// Thread-safety: safe to share between threads; it outlives every node that holds it.

#ifndef KAIROS_TRANSPORT_CONTEXT_H_
#define KAIROS_TRANSPORT_CONTEXT_H_

#include <memory>

#include "kairos/export.h"

namespace kairos {

namespace internal {
class TransportContextAccess;
}  // namespace internal

struct TransportContextOptions {
  // The transport's background I/O threads (1 suits most nodes).
  int io_threads = 1;
  // Sockets the context may hold at once (ZeroMQ's ZMQ_MAX_SOCKETS): a node holds one per
  // connection, and over tcp:// or ipc:// two more to watch it. LocalCluster sizes its
  // context to the cluster. Values below 1 count as 1, above 65535 (ZeroMQ's limit) as
  // 65535. Default 1023, ZeroMQ's.
  int max_sockets = 1023;
};

class KAIROS_EXPORT TransportContext {
 public:
  static std::shared_ptr<TransportContext> Create(const TransportContextOptions& options = {});
  ~TransportContext();
  TransportContext(const TransportContext&) = delete;
  TransportContext& operator=(const TransportContext&) = delete;

 private:
  // The transport reaches the native handle (a ZeroMQ context) and what it keeps with the
  // context (the handler that authenticates CURVE connections, started on first use;
  // destroyed before the context terminates) through this friend, defined with them in
  // src/transport/zap_handler.h.
  friend class internal::TransportContextAccess;
  struct Internals;

  explicit TransportContext(void* handle);
  void* handle_;
  std::unique_ptr<Internals> internals_;
};

}  // namespace kairos

#endif  // KAIROS_TRANSPORT_CONTEXT_H_
