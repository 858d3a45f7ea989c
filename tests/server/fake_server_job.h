// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// FakeServerJob: one kairos::Server over a FakeTransport, with the test playing the
// coordinator and the workers. Start() answers the server's JOIN and sends it START, as
// the coordinator would; then the test delivers requests from the workers' peers and reads
// the replies from the transport, all on its own thread. No socket, no sleep.
//
// Node ids follow the coordinator's numbering: the coordinator is 0, servers 1 .. S in
// shard order, workers S + 1 .. S + W in rank order. Worker r sends from
// FakeTransport::IncomingPeer(r).

#ifndef KAIROS_TESTS_SERVER_FAKE_SERVER_JOB_H_
#define KAIROS_TESTS_SERVER_FAKE_SERVER_JOB_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kairos/job.h"
#include "kairos/options.h"
#include "kairos/server.h"
#include "kairos/table.h"
#include "server/server_internal.h"
#include "fakes/fake_transport.h"
#include "wire/convert.h"
#include "wire/credential.h"

namespace kairos::testing {

struct FakeJobOptions {
  JobConfig job;
  int num_servers = 1;
  int shard = 0;  // this server's shard index
  int num_workers = 2;
};

// The small job of the server's tests under `policy`: "w", 8 elements in chunks of 4,
// starting at zero, SGD with learning rate 1; two workers.
inline FakeJobOptions SmallSgdJob(const std::string& policy) {
  FakeJobOptions o;
  o.job.policy = policy;
  o.job.chunk_elements = 4;
  o.job.tables.push_back({"w", 8, Initializer::Zeros(), {"sgd", 1.0f}});
  o.num_workers = 2;
  return o;
}

// `so` with one apply thread and every chunk's float work done on the calling thread
// (inline_apply_bytes larger than every chunk): a test sees each reply as soon as the
// delivery returns.
inline ServerOptions InlineApply(ServerOptions so = {}) {
  so.apply_threads = 1;
  so.inline_apply_bytes = int64_t{1} << 30;
  return so;
}

class FakeServerJob {
 public:
  // `server` is used as given except coordinator and listen, which are set to fake names.
  explicit FakeServerJob(FakeJobOptions options, ServerOptions server = {})
      : options_(std::move(options)), server_options_(std::move(server)) {
    server_options_.coordinator = "fake://coordinator";
    server_options_.listen = "fake://server";
  }

  ~FakeServerJob() {
    if (server_ != nullptr) server_->Shutdown();
  }

  // Creates the server, answers its JOIN with its node id and shard, and sends START
  // (StartMessage(), changed by `edit` when given). Returns the error of any step, or the
  // status of the server's READY.
  absl::Status Start(const std::function<void(wire::Start&)>& edit = nullptr) {
    auto transport = std::make_unique<internal::FakeTransport>("server");
    transport_ = transport.get();
    absl::StatusOr<std::unique_ptr<Server>> server =
        internal::CreateServerWithTransport(server_options_, std::move(transport));
    if (!server.ok()) return server.status();
    server_ = *std::move(server);
    std::vector<internal::FakeTransport::Sent> sent = transport_->TakeSent();
    if (sent.size() != 1 || sent[0].message.header.kind() != wire::JOIN) {
      return absl::InternalError("the server did not send exactly one JOIN");
    }
    coordinator_ = sent[0].to;
    internal::Message reply;
    reply.header.set_kind(wire::JOIN_REPLY);
    reply.header.set_request_id(sent[0].message.header.request_id());
    reply.header.mutable_join_reply()->set_node_id(server_node(options_.shard));
    reply.header.mutable_join_reply()->set_rank(options_.shard);
    if (absl::Status s = FromCoordinator(std::move(reply)); !s.ok()) return s;
    internal::Message start = StartMessage();
    if (edit) edit(*start.header.mutable_start());
    if (absl::Status s = FromCoordinator(std::move(start)); !s.ok()) return s;
    for (internal::FakeTransport::Sent& s : transport_->TakeSent()) {
      if (s.message.header.kind() == wire::READY) return internal::StatusOf(s.message.header);
    }
    return absl::InternalError("the server did not answer START with READY");
  }

  // The START the coordinator sends for this job.
  internal::Message StartMessage() const {
    internal::Message start;
    start.header.set_kind(wire::START);
    wire::Start* body = start.header.mutable_start();
    internal::ToWire(options_.job, body->mutable_job());
    body->set_num_servers(options_.num_servers);
    body->set_num_workers(options_.num_workers);
    for (int s = 0; s < options_.num_servers; ++s) {
      wire::Node* n = body->add_nodes();
      n->set_node_id(server_node(s));
      n->set_role(wire::SERVER);
      n->set_rank(s);
      n->set_endpoint(absl::StrCat("fake://server-", s));
    }
    for (int r = 0; r < options_.num_workers; ++r) {
      wire::Node* n = body->add_nodes();
      n->set_node_id(worker_node(r));
      n->set_role(wire::WORKER);
      n->set_rank(r);
      n->set_token_hi(credential(r).hi);
      n->set_token_lo(credential(r).lo);
    }
    return start;
  }

  absl::Status FromCoordinator(internal::Message m) {
    return transport_->Deliver(coordinator_, std::move(m));
  }

  // A request of worker `rank`, with its node id, its credential and a fresh request id.
  internal::Message Request(wire::Kind kind, int rank, uint32_t table, uint64_t offset,
                            uint64_t length, int64_t clock) {
    internal::Message m;
    m.header.set_kind(kind);
    m.header.set_request_id(next_request_id_++);
    m.header.set_sender(worker_node(rank));
    internal::SetCredential(credential(rank), &m.header);
    m.header.set_table(table);
    m.header.set_offset(offset);
    m.header.set_length(length);
    m.header.set_clock(clock);
    return m;
  }
  internal::Message Push(int rank, uint32_t table, uint64_t offset, std::vector<float> grad,
                         int64_t clock) {
    internal::Message m = Request(wire::PUSH, rank, table, offset, grad.size(), clock);
    m.payloads.push_back(Buffer::CopyOf(grad));
    return m;
  }

  absl::Status FromWorker(int rank, internal::Message m) {
    return transport_->Deliver(worker_peer(rank), std::move(m));
  }

  uint32_t server_node(int shard) const { return 1 + static_cast<uint32_t>(shard); }
  // Worker `rank`'s credential, as the coordinator would have drawn it (fixed here).
  static internal::Credential credential(int rank) {
    return {0x6b6169726f730000ull + static_cast<uint64_t>(rank), 0x0123456789abcdefull};
  }
  uint32_t worker_node(int rank) const {
    return 1 + static_cast<uint32_t>(options_.num_servers + rank);
  }
  static internal::PeerId worker_peer(int rank) {
    return internal::FakeTransport::IncomingPeer(static_cast<uint64_t>(rank));
  }
  internal::PeerId coordinator() const { return coordinator_; }
  internal::FakeTransport& transport() { return *transport_; }
  Server& server() { return *server_; }
  const FakeJobOptions& options() const { return options_; }

 private:
  FakeJobOptions options_;
  ServerOptions server_options_;
  std::unique_ptr<Server> server_;
  internal::FakeTransport* transport_ = nullptr;  // owned by server_
  internal::PeerId coordinator_ = 0;
  uint64_t next_request_id_ = 1;
};

}  // namespace kairos::testing

#endif  // KAIROS_TESTS_SERVER_FAKE_SERVER_JOB_H_
