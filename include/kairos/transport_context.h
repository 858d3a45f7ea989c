// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// TransportContext: the messaging context that nodes share. Nodes that talk over
// "inproc://" endpoints must share one context (LocalCluster does this for you); nodes in
// different contexts can still talk over tcp:// and ipc://. Several contexts, and so several
// independent clusters, can live in one process.
//
// Thread-safety: safe to share between threads; it outlives every node that holds it.

#ifndef KAIROS_TRANSPORT_CONTEXT_H_
#define KAIROS_TRANSPORT_CONTEXT_H_

#include <memory>

namespace kairos {

class TransportContext {
 public:
  // `io_threads`: the transport's background I/O threads (1 suits most nodes).
  static std::shared_ptr<TransportContext> Create(int io_threads = 1);
  ~TransportContext();
  TransportContext(const TransportContext&) = delete;
  TransportContext& operator=(const TransportContext&) = delete;

  // The underlying native handle (a ZeroMQ context); for kairos internals.
  void* native_handle() const { return handle_; }

 private:
  explicit TransportContext(void* handle) : handle_(handle) {}
  void* handle_;
};

}  // namespace kairos

#endif  // KAIROS_TRANSPORT_CONTEXT_H_
