// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The server node's bring-up, dispatch, authentication and de-duplication
// (server/server_impl.h).

#include "server/server_impl.h"

#include <algorithm>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/logging.h"
#include "kairos/status.h"
#include "metrics/prometheus.h"
#include "server/engine_messages.h"
#include "server/server_internal.h"
#include "server/start_checks.h"
#include "wire/convert.h"

namespace kairos {
namespace internal {
namespace {

// The peer of an event replayed from the update log: its answer goes nowhere.
constexpr PeerId kReplayPeer = ~PeerId{0};

int DefaultApplyThreads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hw, 1u, 4u));
}

Checkpointer::Options CheckpointerOptionsOf(const ServerOptions& o) {
  Checkpointer::Options c;
  c.dir = o.checkpoint_dir;
  c.sync = o.checkpoint_sync;
  c.every_clocks = o.checkpoint_every_clocks;
  c.every = o.checkpoint_every;
  c.at_end = o.checkpoint_at_end;
  c.deltas = o.checkpoint_deltas;
  return c;
}

Journal::Options JournalOptionsOf(const ServerOptions& o) {
  Journal::Options j;
  j.state_dir = o.state_dir;
  j.sync = o.log_sync == ServerOptions::LogSync::kMachine ? LogSync::kMachine : LogSync::kProcess;
  j.rebase_bytes = o.log_rebase_bytes;
  return j;
}

}  // namespace

ServerImpl::ServerImpl(const ServerOptions& options)
    : options_(options),
      log_(MakeLogger(options)),
      created_(EnvOf(options_).Now()),
      pool_(EnvOf(options_),
            options.apply_threads > 0 ? options.apply_threads : DefaultApplyThreads()),
      checkpointer_(
          EnvOf(options_), CheckpointerOptionsOf(options),
          [this](std::function<void()> task) { transport_->Post(std::move(task)); }, log_),
      journal_(EnvOf(options_), JournalOptionsOf(options), this, log_) {}

ServerImpl::~ServerImpl() {
  if (metrics_ != nullptr) metrics_->Stop();  // its threads read the state below
  Shutdown();  // nothing posted runs after this; the checkpointer and the journal join their
               // writers when they go
  pool_.Stop();
  engine_view_.store(nullptr);
  engine_.reset();
}

absl::Status ServerImpl::Init() {
  KAIROS_ASSIGN_OR_RETURN(transport_, MakeTransport(NodeTransportOptions(options_, "server"),
                                                    options_.transport_factory.get()));
  // The coordinator refused this server's handshake (CURVE keys): Wait returns why at once.
  transport_->SetConnectErrorHandler([this](PeerId, const absl::Status& why) {
    KAIROS_DCHECK_ON_IO_THREAD(io_thread_);
    End(absl::Status(why.code(), absl::StrCat("server: the coordinator at ", why.message())));
  });
  KAIROS_ASSIGN_OR_RETURN(std::string bound, transport_->Listen(options_.listen));
  endpoint_ = Advertise(bound, options_.advertise_host);
  // Before the join: a metrics address that cannot be bound fails Create, and the job
  // never counts this server.
  if (!options_.metrics_listen.empty()) {
    KAIROS_ASSIGN_OR_RETURN(metrics_, MetricsExporter::Start(options_.metrics_listen,
                                                             [this] { return RenderMetrics(); }));
  }
  KAIROS_RETURN_IF_ERROR(link_.Connect(*transport_));
  coordinator_ = link_.peer();
  StartOnIoThread(
      *transport_, io_thread_, [this](PeerId from, Message&& m) { OnMessage(from, std::move(m)); },
      [this](PeerId from, const absl::Status& why, const wire::Header* h) {
        OnMalformed(from, why, h);
      },
      [this](absl::Time now) { OnTick(now); });
  join_deadline_ = Now() + options_.join_timeout;
  SendJoin();
  return absl::OkStatus();
}

absl::Status ServerImpl::Wait(absl::Duration timeout) {
  return end_.Wait(timeout, absl::StrCat("server ", endpoint_));
}

void ServerImpl::Shutdown() {
  End(absl::CancelledError("server stopped"));
  if (transport_ != nullptr) transport_->Stop();
}

ServerStats ServerImpl::stats() const {
  ServerStats s;
  s.shard = shard_index_.load();
  s.errors_replied = errors_replied_.load();
  s.dropped = dropped_.load() + (transport_ ? transport_->dropped() : 0);
  s.handshakes_refused = transport_ ? transport_->handshakes_refused() : 0;
  if (transport_ != nullptr) {
    const TrafficCounts t = transport_->traffic();
    s.wire_bytes_in = t.bytes_received;
    s.wire_bytes_out = t.bytes_sent;
  }
  {
    absl::MutexLock lock(&refused_mu_);
    s.refused = refused_;
  }
  if (const ShardEngine* engine = engine_view_.load(std::memory_order_acquire)) {
    const EngineCounters c = engine->counters();
    s.pushes = c.pushes;
    s.pulls = c.pulls;
    s.bytes_in = c.bytes_in;
    s.bytes_out = c.bytes_out;
    s.version = c.version;
    s.coalesced = c.coalesced;
    s.sparse_rows = c.sparse_rows;
    s.sparse_bytes = c.sparse_bytes;
    s.sparse_tables = c.sparse_tables;
    s.refused += engine->refused();
    s.workers = engine->metrics();
    s.stragglers = engine->stragglers();
  }
  const Checkpointer::Counters c = checkpointer_.counters();
  s.checkpoints_written = c.written;
  s.checkpoints_failed = c.failed;
  s.checkpoints_skipped = c.skipped;
  s.checkpoint_deltas_written = c.deltas_written;
  s.last_checkpoint_clock = c.last_clock;
  s.restored_clock = restored_clock_.load();
  const Journal::Counters j = journal_.counters();
  s.log_records = j.records;
  s.log_bytes = j.bytes;
  s.log_commits = j.commits;
  s.log_syncs = j.syncs;
  s.log_replayed = j.replayed;
  s.log_torn_bytes = j.torn_bytes;
  s.retries_answered = retries_answered_.load();
  s.log_rebases = j.rebases;
  return s;
}

absl::StatusOr<std::string> ServerImpl::Checkpoint(absl::Duration timeout) {
  struct Result {
    absl::Notification done;
    absl::StatusOr<std::string> path;
  };
  auto result = std::make_shared<Result>();
  transport_->Post([this, result] {
    checkpointer_.Request([result](absl::StatusOr<std::string> path) {
      result->path = std::move(path);
      result->done.Notify();
    });
  });
  if (!result->done.WaitForNotificationWithTimeout(timeout)) {
    return absl::DeadlineExceededError(
        absl::StrFormat("server %d: the checkpoint was not written within %s (it goes on)",
                        shard_index_.load(), absl::FormatDuration(timeout)));
  }
  return result->path;
}

void ServerImpl::RequestCheckpoint() {
  transport_->Post([this] {
    checkpointer_.Request([this](const absl::StatusOr<std::string>& path) {
      if (!path.ok()) {
        log_->error("server {}: requested checkpoint: {}", shard_index_.load(),
                    std::string(path.status().message()));
      }
    });
  });
}

std::string ServerImpl::RenderMetrics() const {
  PrometheusWriter out;
  RenderNodeMetrics(BuildInfo(Now() - created_), out);
  RenderServerMetrics(stats(), out);
  return out.Take();
}

void ServerImpl::End(absl::Status status) { end_.End(std::move(status)); }

void ServerImpl::Fail(absl::Status status) {
  KAIROS_DCHECK_ON_IO_THREAD(io_thread_);
  if (!end_.End(status) || node_id_.load() == 0) return;
  Message failed;
  failed.header.set_kind(wire::FAILED);
  failed.header.set_sender(node_id_.load());
  ToWire(status, failed.header.mutable_status());
  transport_->Send(coordinator_, std::move(failed));
}

void ServerImpl::Answer(EngineAnswer a) {
  const PeerId to = a.request.peer;
  if (to == kReplayPeer) return;  // an event replayed from the update log: answered before
  if (a.kind == EngineAnswer::Kind::kError) {
    return ReplyError(to, RequestHeader(a.request), a.status);
  }
  const uint32_t table = a.request.table;
  Message reply = ToMessage(std::move(a), node_id_.load(std::memory_order_relaxed));
  const std::vector<TableSpec>& tables = engine_->job().tables;
  if (table < tables.size()) EncodeReplyValues(tables[table].compression, reply);
  transport_->Send(to, std::move(reply));
}

void ServerImpl::OnMessage(PeerId from, Message&& m) {
  const wire::Header& h = m.header;
  if (from == coordinator_) {
    link_.Heard(Now());
    return OnCoordinatorMessage(m);
  }
  switch (h.kind()) {
    case wire::PUSH:
    case wire::PULL:
    case wire::CLOCK:
    case wire::FINISH:
    case wire::ASSIGN:
    case wire::SET_LEARNING_RATE:
    case wire::PUSH_SPARSE:
    case wire::PULL_SPARSE:
      return OnWorkerRequest(from, m);
    default:
      return Refuse(from, h, &RefusalCounts::wrong_kind,
                    absl::InvalidArgumentError(
                        absl::StrCat("a server does not accept ", wire::Kind_Name(h.kind()))));
  }
}

void ServerImpl::OnWorkerRequest(PeerId from, Message& m) {
  const wire::Header& h = m.header;
  const std::optional<int> rank = Authenticate(from, h);
  if (!rank.has_value() || !FirstDelivery(from, h, *rank, m)) return;
  LogAndDispatch(from, *rank, std::move(m), Now());
}

void ServerImpl::LogAndDispatch(PeerId from, int rank, Message m, absl::Time now) {
  journal_.AppendRequest(rank, m.header, m.payloads, now);
  Buffer values;
  EngineRequest r = TakeRequest(from, m, rank, &values);
  journal_.AfterLog([this, r = std::move(r), values = std::move(values), now]() mutable {
    Dispatch(r, std::move(values), now);
  });
}

void ServerImpl::Dispatch(const EngineRequest& r, Buffer values, absl::Time now) {
  switch (r.kind) {
    case EngineRequest::Kind::kPush:
      return engine_->OnPush(r, std::move(values), now);
    case EngineRequest::Kind::kPull:
      return engine_->OnPull(r, now);
    case EngineRequest::Kind::kClock:
      engine_->OnClock(r, now);
      return MaybeCheckpoint();
    case EngineRequest::Kind::kFinish:
      engine_->OnFinish(r, now);
      return MaybeCheckpoint();
    case EngineRequest::Kind::kAssign:
      return engine_->OnAssign(r, std::move(values), now);
    case EngineRequest::Kind::kSetLearningRate:
      return engine_->OnSetLearningRate(r, now);
    case EngineRequest::Kind::kPushSparse:
      return engine_->OnPushSparse(r, std::move(values), now);
    case EngineRequest::Kind::kPullSparse:
      return engine_->OnPullSparse(r, now);
  }
}

absl::Status ServerImpl::LoadBase(const std::string& path, const JournalBase& base) {
  KAIROS_RETURN_IF_ERROR(engine_->Rebase(EnvOf(options_), path, base.clocks));
  window_of_rank_ = base.windows;
  return absl::OkStatus();
}

uint64_t ServerImpl::Replay(LogRecord record) {
  const int num_workers = static_cast<int>(window_of_rank_.size());
  switch (record.type) {
    case LogRecord::Type::kHeader:
    case LogRecord::Type::kBase:
      return 0;
    case LogRecord::Type::kLeave:
      engine_->OnLeave(
          record.rank,
          record.why == 1 ? policy::MemberState::kDead : policy::MemberState::kFinished,
          record.time);
      return 0;
    case LogRecord::Type::kRejoin:
      if (record.rank < 0 || record.rank >= num_workers) return 0;
      window_of_rank_[record.rank] = RequestWindow();
      engine_->OnRejoin(record.rank, record.time);
      return 0;
    case LogRecord::Type::kRequest:
      break;
  }
  const int rank = record.rank;
  if (rank < 0 || rank >= num_workers) return 0;
  // The frames as they arrived, decoded and checked as they were the first time.
  std::vector<RawFrame> frames;
  auto header = std::make_shared<std::string>(std::move(record.header));
  frames.push_back(RawFrame{header, header->data(), header->size()});
  for (Buffer& p : record.payloads) {
    auto payload = std::make_shared<Buffer>(std::move(p));
    frames.push_back(RawFrame{payload, payload->data(), payload->size_bytes()});
  }
  absl::StatusOr<Message> m = Decode(std::move(frames));
  if (!m.ok()) {
    log_->warn("server {}: skipped a logged request that does not decode: {}",
               shard_index_.load(), std::string(m.status().message()));
    return 0;
  }
  const uint64_t id = m->header.request_id();
  const bool taken = id != 0 && window_of_rank_[rank].Take(id) == RequestWindow::Verdict::kNew;
  Buffer values;
  EngineRequest r = TakeRequest(kReplayPeer, *m, rank, &values);
  Dispatch(r, std::move(values), record.time);
  return taken ? id : 0;
}

void ServerImpl::AnswerRetry(PeerId from, const wire::Header& h, int rank, Message& m) {
  retries_answered_.fetch_add(1);
  EngineRequest r = ToEngine(from, h, rank);
  EngineAnswer a;
  a.request = r;
  switch (r.kind) {
    case EngineRequest::Kind::kPush:
      // The push is in; the read after an eager one is served as a pull at clock + 1.
      if (r.pull_after) break;
      [[fallthrough]];
    case EngineRequest::Kind::kPushSparse:
      a.kind = EngineAnswer::Kind::kPushed;
      return Answer(std::move(a));
    case EngineRequest::Kind::kFinish:
      a.kind = EngineAnswer::Kind::kFinished;
      return Answer(std::move(a));
    case EngineRequest::Kind::kAssign:
      a.kind = EngineAnswer::Kind::kAssigned;
      return Answer(std::move(a));
    case EngineRequest::Kind::kSetLearningRate:
      a.kind = EngineAnswer::Kind::kLearningRateSet;
      return Answer(std::move(a));
    case EngineRequest::Kind::kClock:
      return;
    case EngineRequest::Kind::kPull:
    case EngineRequest::Kind::kPullSparse:
      return LogAndDispatch(from, rank, std::move(m), Now());
  }
  // The eager push's read, as the pull it stands for. Served as a plain read, so the
  // worker's next eager push counts its staleness from this read rather than the one
  // before it (ShardChunk::ComputedOnReadBefore): short by a read, after a retry only.
  Message pull;
  pull.header = h;
  pull.header.set_kind(wire::PULL);
  pull.header.set_clock(h.clock() + 1);
  pull.header.set_pull_after(false);
  pull.header.set_payload_frames(0);
  LogAndDispatch(from, rank, std::move(pull), Now());
}

void ServerImpl::OnMalformed(PeerId from, const absl::Status& why, const wire::Header* header) {
  Count(&RefusalCounts::malformed);
  if (header != nullptr && header->request_id() != 0) {
    return ReplyError(from, *header, why);
  }
  dropped_.fetch_add(1);
  log_->warn("server {}: dropped a malformed message: {}", shard_index_.load(),
             std::string(why.message()));
}

std::optional<int> ServerImpl::Authenticate(PeerId from, const wire::Header& h) {
  if (engine_ == nullptr) {
    if (!options_.state_dir.empty()) {
      // A restarted server at its old address gets what the workers had queued for its
      // predecessor before it has its shard: unanswered, since every worker sends it all
      // again once the coordinator says the server is back (docs/durability.md).
      Count(&RefusalCounts::not_started);
      dropped_.fetch_add(1);
      return std::nullopt;
    }
    Refuse(from, h, &RefusalCounts::not_started,
           absl::UnavailableError("the job has not started yet"));
    return std::nullopt;
  }
  auto it = rank_of_node_.find(h.sender());
  if (it != rank_of_node_.end() &&
      SameCredential(credential_of_rank_[it->second], CredentialOf(h))) {
    return it->second;
  }
  const std::string why =
      it == rank_of_node_.end()
          ? absl::StrFormat("node %d is not a worker of this job", h.sender())
          : absl::StrFormat("the message does not carry node %d's credential", h.sender());
  switch (refusal_log_.Check(from)) {
    case LogOnce::Verdict::kLog:
      log_->warn(
          "server {}: refused {}: {} (further refusals of this connection are not "
          "logged)",
          shard_index_.load(), Describe(h), why);
      break;
    case LogOnce::Verdict::kLogLast:
      log_->warn(
          "server {}: refused {}: {}; refusals of further connections are not "
          "logged",
          shard_index_.load(), Describe(h), why);
      break;
    case LogOnce::Verdict::kQuiet:
      break;
  }
  Refuse(from, h, &RefusalCounts::unauthenticated, absl::PermissionDeniedError(why));
  return std::nullopt;
}

bool ServerImpl::FirstDelivery(PeerId from, const wire::Header& h, int rank, Message& m) {
  if (h.request_id() == 0) return true;
  switch (window_of_rank_[rank].Take(h.request_id())) {
    case RequestWindow::Verdict::kNew:
      return true;
    case RequestWindow::Verdict::kDuplicate:
      if (journal_.TakenBeforeRestart(rank, h.request_id())) {
        AnswerRetry(from, h, rank, m);
        return false;
      }
      Count(&RefusalCounts::duplicates);
      log_->debug("server {}: dropped {}: its request id was taken before", shard_index_.load(),
                  Describe(h));
      return false;
    case RequestWindow::Verdict::kTooOld:
      Refuse(from, h, &RefusalCounts::duplicates,
             absl::OutOfRangeError(absl::StrFormat(
                 "request id %d of worker %d is more than %d below its latest (%d): a "
                 "duplicate cannot be told from a new request",
                 h.request_id(), rank, RequestWindow::kWidth, window_of_rank_[rank].highest())));
      return false;
  }
  return false;
}

void ServerImpl::Count(uint64_t RefusalCounts::*counter) {
  absl::MutexLock lock(&refused_mu_);
  ++(refused_.*counter);
}

void ServerImpl::Refuse(PeerId to, const wire::Header& request, uint64_t RefusalCounts::*counter,
                        const absl::Status& status) {
  Count(counter);
  ReplyError(to, request, status);
}

void ServerImpl::ReplyError(PeerId to, const wire::Header& request, const absl::Status& status) {
  errors_replied_.fetch_add(1);
  log_->debug("server {}: {}: {}", shard_index_.load(), Describe(request),
              std::string(status.message()));
  Message reply;
  reply.header = ReplyHeader(request, wire::ERROR, node_id_.load());
  ToWire(absl::Status(status.code(), absl::StrFormat("server %d: %s: %s", shard_index_.load(),
                                                     Describe(request), status.message())),
         reply.header.mutable_status());
  transport_->Send(to, std::move(reply));
}

absl::StatusOr<std::unique_ptr<Server>> CreateServerWithTransport(
    const ServerOptions& options, std::unique_ptr<Transport> transport) {
  return Server::Create(WithTransport(options, std::move(transport)));
}

}  // namespace internal

absl::StatusOr<std::unique_ptr<Server>> Server::Create(const ServerOptions& options) {
  if (options.coordinator.empty()) {
    return absl::InvalidArgumentError("ServerOptions.coordinator is empty");
  }
  if (options.checkpoint_deltas < 0) {
    return absl::InvalidArgumentError(absl::StrCat("ServerOptions.checkpoint_deltas is ",
                                                   options.checkpoint_deltas, "; 0 or more"));
  }
  auto server = std::make_unique<internal::ServerImpl>(options);
  KAIROS_RETURN_IF_ERROR(server->Init());
  return server;
}

}  // namespace kairos
