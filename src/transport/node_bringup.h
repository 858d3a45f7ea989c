// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// What the three nodes (coordinator, server, worker) do alike to come up and to end; what
// each decides on its own (what it listens on, how it joins, what ends it) stays in the node.
//
//   NodeTransportOptions  the transport's options from the node's options (the fields every
//                         node has: context, max_message_bytes, max_peers, keys, logger,
//                         clock, send_delay); the node then calls MakeTransport with the
//                         options' transport_factory (null: ZeroMQ).
//   StartOnIoThread       Transport::Start with handlers that first check they run on the
//                         node's I/O thread (KAIROS_DCHECK_ON_IO_THREAD): the first one to
//                         run binds the node's ThreadChecker, a later one elsewhere aborts in
//                         a debug build.
//   NodeEnd               the status the node's job ended with: the first End wins, and Wait
//                         returns it or says, before a deadline, what did not end.
//
// A node's transport is injected one way: the options' transport_factory, which every node
// asks once, in its Create. A test or a fuzzer that holds a transport of its own (a
// FakeTransport) hands it over with WithTransport, a factory that gives out that one
// transport; CreateServerWithTransport (server/server_internal.h) and WorkerNode's transport
// argument (worker/worker_node.h) are that, kept because the server's and the worker's tests
// and fuzzers build their nodes through them. Given this way a transport is made like any
// other: a positive send_delay wraps it (MakeTransport).

#ifndef KAIROS_TRANSPORT_NODE_BRINGUP_H_
#define KAIROS_TRANSPORT_NODE_BRINGUP_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/thread_checker.h"
#include "kairos/options.h"
#include "transport/transport.h"

namespace kairos::internal {

// The options of a node's transport: the node's own fields of the same names, and `name`
// ("coordinator", "server" or "worker"), which names the node in the transport's errors and
// tells a TransportFactory which kind of node asks. A node adds what is its alone (the
// worker's idle spin).
// Every node's options derive from NodeOptions.
TransportOptions NodeTransportOptions(const NodeOptions& options, std::string name);

// A factory whose first Make returns `transport` and every later one FailedPrecondition.
std::shared_ptr<TransportFactory> OneTransportFactory(std::unique_ptr<Transport> transport);

// `options` (NodeOptions, one of its kinds, or CoordinatorOptions) with their transport
// factory set to OneTransportFactory(transport); unchanged when `transport` is null.
template <typename Options>
Options WithTransport(Options options, std::unique_ptr<Transport> transport) {
  if (transport != nullptr) options.transport_factory = OneTransportFactory(std::move(transport));
  return options;
}

// Starts `transport` with the node's handlers (MessageHandler, MalformedHandler, TickHandler
// in transport.h, or any callables of their signatures), each checked on `io_thread`, the
// node's I/O-thread checker, before it runs. `io_thread` outlives the transport's thread.
template <typename OnMessage, typename OnMalformed, typename OnTick>
void StartOnIoThread(Transport& transport, ThreadChecker& io_thread, OnMessage on_message,
                     OnMalformed on_malformed, OnTick on_tick) {
  transport.Start(
      [&io_thread, on_message = std::move(on_message)](PeerId from, Message&& m) {
        KAIROS_DCHECK_ON_IO_THREAD(io_thread);
        on_message(from, std::move(m));
      },
      [&io_thread, on_malformed = std::move(on_malformed)](PeerId from, const absl::Status& why,
                                                           const wire::Header* header) {
        KAIROS_DCHECK_ON_IO_THREAD(io_thread);
        on_malformed(from, why, header);
      },
      [&io_thread, on_tick = std::move(on_tick)](absl::Time now) {
        KAIROS_DCHECK_ON_IO_THREAD(io_thread);
        on_tick(now);
      });
}

// The end of a node's job: the status it ended with, set once.
//
// Thread-safety: every method may be called from any thread.
class NodeEnd {
 public:
  // Ends the node with `status` unless it has ended already; true when this call ended it.
  bool End(absl::Status status);
  // True once End has been called.
  bool ended() const { return done_.HasBeenNotified(); }
  // OK while the node runs; afterwards the status it ended with.
  absl::Status status() const;
  // The status the node ended with, waiting up to `timeout` (real time) for its end; when it
  // has not ended by then, DeadlineExceeded "<who>: the job did not end within <timeout>"
  // (`who`: "server tcp://10.0.0.2:7001").
  absl::Status Wait(absl::Duration timeout, std::string_view who) const;

 private:
  mutable absl::Mutex mu_;
  absl::Notification done_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kairos::internal

#endif  // KAIROS_TRANSPORT_NODE_BRINGUP_H_
