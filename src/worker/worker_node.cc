// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "worker/worker_node.h"

#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kairos/job.h"
#include "kairos/status.h"
#include "policy/optimizer_spec.h"
#include "policy/policy.h"
#include "wire/convert.h"
#include "wire/start_nodes.h"

namespace kairos::internal {
namespace {

// How long after START a server may stay unconnected before the worker says so in its log.
constexpr absl::Duration kUnreachableWarning = absl::Seconds(5);

// A request's messages on their way to the I/O thread. The transport discards what is
// still queued when it stops (a crash, or a request racing the worker's end); the requests
// of a batch that never reached the I/O thread are then failed here at once instead of
// waiting for their deadline.
class PostedBatch {
 public:
  // `what` ("push", "barrier", ...) names the request in the error; a string literal.
  PostedBatch(Batch batch, int rank, const char* what)
      : batch_(std::move(batch)), rank_(rank), what_(what) {}
  ~PostedBatch() {
    if (taken_) return;
    const absl::Status why = absl::UnavailableError(
        absl::StrFormat("worker %d stopped before the %s was sent", rank_, what_));
    for (auto& [part, message] : batch_) part.state->Fail(why);
  }
  PostedBatch(const PostedBatch&) = delete;
  PostedBatch& operator=(const PostedBatch&) = delete;
  // On the I/O thread: the messages to send; the batch is then the sender's concern.
  Batch& Take() {
    taken_ = true;
    return batch_;
  }

 private:
  Batch batch_;
  const int rank_;
  const char* const what_;
  bool taken_ = false;
};

}  // namespace

WorkerNode::WorkerNode(const WorkerOptions& options, std::unique_ptr<Transport> transport)
    : options_(WithTransport(options, std::move(transport))), log_(MakeLogger(options)) {}

WorkerNode::~WorkerNode() {
  if (transport_ != nullptr) transport_->Stop();
  wait_tuning_->ClearWaitHere();  // its requests may outlive the node
  parts_.FailAll(absl::CancelledError("worker destroyed"));
  if (merger_.has_value()) merger_->FailAll(absl::CancelledError("worker destroyed"));
}

absl::Status WorkerNode::Join() {
  KAIROS_RETURN_IF_ERROR(SendJoin());
  return AwaitStart();
}

absl::Status WorkerNode::SendJoin() {
  // A fresh random number per Worker: a JOIN for a rank the coordinator counts active is
  // a new incarnation of it only when this differs (docs/design.md, "Failures").
  absl::StatusOr<Credential> nonce = NewCredential();
  incarnation_ = nonce.ok() ? nonce->hi ^ nonce->lo
                            : (static_cast<uint64_t>(::getpid()) << 32) ^
                                  static_cast<uint64_t>(absl::ToUnixNanos(absl::Now()));
  TransportOptions t = NodeTransportOptions(options_, "worker");
  t.idle_spin = options_.io_spin;
  // Not while exactly one request is open: the caller of a small one spins for the answer
  // itself (two spinning threads took the cores the server needed, and synchronous calls
  // ran slower). Not while a large one is open: its messages keep this thread busy, and a
  // spin between them took a core from the threads moving the bytes. With none open the
  // spin catches the caller's next request; with several small ones, the next answer.
  t.spin_wanted = [tuning = wait_tuning_] {
    return tuning->open.load(std::memory_order_relaxed) != 1 &&
           tuning->open_large.load(std::memory_order_relaxed) == 0;
  };
  KAIROS_ASSIGN_OR_RETURN(transport_, MakeTransport(t, options_.transport_factory.get()));
  // A connection refused at its handshake (CURVE keys) ends the worker at once, so Create
  // and every request fail with why instead of waiting for their deadlines.
  transport_->SetConnectErrorHandler([this](PeerId peer, const absl::Status& why) {
    std::string who = "coordinator";
    for (int s = 0; peer != coordinator_ && s < num_servers_; ++s) {
      if (servers_[s] == peer) who = absl::StrCat("server ", s);
    }
    End(absl::Status(why.code(), absl::StrCat("worker: the ", who, " at ", why.message())));
  });
  // Pushes that wait to be merged leave at the end of each pass over the sockets.
  batched_ = transport_->SetBatchHandler([this] {
    KAIROS_DCHECK_ON_IO_THREAD(io_thread_);
    ReleaseAllMerged();
  });
  KAIROS_RETURN_IF_ERROR(link_.Connect(*transport_));
  coordinator_ = link_.peer();
  join_deadline_ = EnvOf(options_).Now() + options_.join_timeout;
  StartOnIoThread(
      *transport_, io_thread_, [this](PeerId from, Message&& m) { OnMessage(from, std::move(m)); },
      [this](PeerId, const absl::Status& why, const wire::Header*) {
        log_->warn("worker {}: dropped a malformed message: {}", rank_, std::string(why.message()));
      },
      [this](absl::Time now) { OnTick(now); });
  wait_tuning_->SetWaitHere(
      [this](absl::FunctionRef<bool()> done, absl::Time until, absl::Time spin_until) {
        return transport_->WaitHere(done, until, spin_until, &io_thread_);
      });
  SendJoinMessage();
  return absl::OkStatus();
}

// From SendJoin, then (a JOIN to send again) from the I/O thread's tick.
void WorkerNode::SendJoinMessage() { transport_->Send(coordinator_, JoinMessage()); }

Message WorkerNode::JoinMessage() {
  Message join;
  join.header.set_kind(wire::JOIN);
  join.header.set_request_id(ReserveIds(1));
  wire::Join* j = join.header.mutable_join();
  j->set_role(wire::WORKER);
  j->set_requested_rank(node_id_ != 0 ? rank_ : options_.rank);
  j->set_pid(static_cast<uint32_t>(::getpid()));
  j->set_incarnation(incarnation_);
  // Taken back by a restarted coordinator: this worker's node id in the job.
  j->set_resume_node_id(node_id_);
  ToWire(options_.job, j->mutable_job());
  return join;
}

void WorkerNode::HandleResumeReply(const wire::Header& h) {
  if (absl::Status s = StatusOf(h); !s.ok()) {
    if (absl::IsUnavailable(s)) return;  // asked again at the next tick
    return End(absl::Status(
        s.code(), absl::StrFormat("worker %d: the restarted coordinator did not take it back: %s",
                                  rank_, s.message())));
  }
  link_.Resumed();
  // What the coordinator had not answered (a barrier call, a finish) may have been lost
  // with the old process: sent again, in order. A barrier it released is released again.
  for (const auto& [id, message] : to_coordinator_) transport_->Send(coordinator_, message);
  const std::size_t sent = to_coordinator_.size();
  log_->info("worker {}: bound to the coordinator again; sent it again {} requests", rank_, sent);
}

absl::Status WorkerNode::AwaitStart() {
  // The tick ends the wait at join_deadline_ in the node's time; the real-time wait is the
  // same bound where time moves by itself and a backstop on virtual time.
  if (!started_.WaitForNotificationWithTimeout(options_.join_timeout)) return JoinTimedOut();
  return EndStatus();
}

absl::Status WorkerNode::JoinTimedOut() const {
  return absl::DeadlineExceededError(absl::StrFormat(
      "worker: the job at %s did not start within %s (are all servers and workers up?)",
      options_.coordinator, absl::FormatDuration(options_.join_timeout)));
}

absl::StatusOr<const TableEntry*> WorkerNode::Table(std::string_view name) const {
  auto it = tables_.find(name);
  if (it == tables_.end()) {
    std::vector<std::string> names;
    for (const auto& [n, t] : tables_) names.push_back(n);
    return absl::NotFoundError(absl::StrFormat("unknown table '%s'; the job has: %s", name,
                                               absl::StrJoin(names, ", ")));
  }
  return &it->second;
}

absl::Status WorkerNode::EndStatus() const { return end_.status(); }

WorkerStats WorkerNode::stats() const {
  const TrafficCounts t = transport_ != nullptr ? transport_->traffic() : TrafficCounts{};
  return {.messages_sent = t.messages_sent,
          .bytes_sent = t.bytes_sent,
          .messages_received = t.messages_received,
          .bytes_received = t.bytes_received,
          .pushes_merged = pushes_merged_.load(std::memory_order_relaxed) +
                           pushes_held_.load(std::memory_order_relaxed),
          .reads_cached = reads_cached_.load(std::memory_order_relaxed),
          .rows_cached = rows_cached_.load(std::memory_order_relaxed)};
}

void WorkerNode::Post(Batch batch, const char* what) {
  // With a few requests open the I/O thread mostly waits between them: the requests leave
  // from here, without a hand-off (Transport::RunHere), and their caller takes the answers
  // when it waits (Transport::WaitHere). With more, they go through the I/O thread, where
  // those issued while it works leave as one batch.
  const int open = wait_tuning_->open.load(std::memory_order_relaxed);
  if (open <= kSendHereMaxOpen && transport_->RunHere([&] { Dispatch(batch); }, &io_thread_)) {
    return;
  }
  auto posted = std::make_shared<PostedBatch>(std::move(batch), rank_, what);
  transport_->Post([this, posted] {
    KAIROS_DCHECK_ON_IO_THREAD(io_thread_);
    Dispatch(posted->Take());
  });
}

void WorkerNode::PostClock(int64_t clock) {
  transport_->Post([this, clock] {
    KAIROS_DCHECK_ON_IO_THREAD(io_thread_);
    clock_posted_ = clock;
    if (write_back_.has_value()) {
      if (const std::optional<int64_t> due = write_back_->due(); due.has_value() && *due <= clock) {
        SendAllHeld();
      }
    }
    ReportClock(clock);
  });
}

void WorkerNode::ReportClock(int64_t clock) {
  if (write_back_.has_value()) {
    if (const std::optional<int64_t> oldest = write_back_->oldest()) {
      clock = std::min(clock, *oldest);
    }
    if (clock <= clock_reported_) return;
  }
  clock_reported_ = clock;
  for (int s = 0; s < num_servers_; ++s) {
    Message m;
    m.header.set_kind(wire::CLOCK);
    m.header.set_sender(node_id_);
    m.header.set_clock(clock);
    ReleaseMerged(s);
    flow_->Submit(s, std::move(m), /*bytes=*/0);  // behind the pushes it ends
  }
}

void WorkerNode::Crash() {
  end_.End(absl::UnavailableError(absl::StrFormat("worker %d was killed", rank_)));
  transport_->Stop();
  parts_.FailAll(EndStatus());
  if (merger_.has_value()) merger_->FailAll(EndStatus());
}

// ------------------------------------------------------------------------ I/O thread

// Registers the parts and sends their messages: to the coordinator at once, to a shard
// through its flow control; a push of a merging table waits in the merger until the end of
// the pass (or of this batch, without passes), anything else to a shard sends the shard's
// waiting pushes first.
void WorkerNode::Dispatch(Batch& batch) {
  for (auto& [part, message] : batch) {
    if (part.shard < 0) {
      // A barrier may wait for workers that wait for this one's clock.
      if (message.header.kind() == wire::BARRIER && write_back_.has_value()) {
        SendAllHeld();
        ReportClock(clock_posted_);
      }
      // Kept until answered, to be sent again to a restarted coordinator.
      if (link_.resumable()) to_coordinator_[message.header.request_id()] = message;
      parts_.Add(message.header.request_id(), std::move(part));
      transport_->Send(coordinator_, std::move(message));
    } else if (ThroughCache(part, message) || HoldBack(part, message)) {
      continue;
    } else if (merger_.has_value() && PushMerger::Mergeable(part, message) &&
               message.header.table() < merges_pushes_.size() &&
               merges_pushes_[message.header.table()]) {
      merger_->Hold(std::move(part), std::move(message), Submitter());
      pushes_merged_.store(merger_->merged(), std::memory_order_relaxed);
    } else {
      SendHeldBefore(part.shard, message);
      ReleaseMerged(part.shard);
      SubmitToShard(std::move(part), std::move(message));
    }
  }
  if (!batched_) ReleaseAllMerged();
}

void WorkerNode::SubmitToShard(Part part, Message message) {
  const wire::Kind kind = message.header.kind();
  if ((kind == wire::PUSH || kind == wire::PUSH_SPARSE) && message.header.encoding() == 0) {
    EncodeOnSend(part, message);
  }
  const int shard = part.shard;
  const uint64_t bytes = part.bytes;
  parts_.Add(message.header.request_id(), std::move(part));
  flow_->Submit(shard, std::move(message), bytes);
}

void WorkerNode::ReleaseMerged(int shard) {
  if (merger_.has_value() && !merger_->empty()) merger_->Release(shard, Submitter());
}

void WorkerNode::ReleaseAllMerged() {
  if (merger_.has_value() && !merger_->empty()) merger_->ReleaseAll(Submitter());
}

void WorkerNode::OnMessage(PeerId from, Message&& m) {
  const wire::Header& h = m.header;
  if (from == coordinator_) {
    link_.Heard(EnvOf(options_).Now());
    switch (h.kind()) {
      case wire::JOIN_REPLY:
        if (link_.resuming()) return HandleResumeReply(h);
        return HandleJoinReply(h);
      case wire::START:
        return HandleStart(h.start());
      case wire::SHUTDOWN:
        return End(StatusOf(h).ok() ? absl::CancelledError("the job has ended") : StatusOf(h));
      case wire::HEARTBEAT:
        return;
      case wire::MEMBERSHIP:
        if (h.has_membership() && h.membership().role() == wire::SERVER) {
          return HandleServerMembership(h.membership());
        }
        return;
      case wire::ERROR:
        // A coordinator that keeps its state refuses a stranger: it restarted and has not
        // bound this worker yet. The request is sent again once it has.
        if (link_.resumable() && StatusOf(h).code() == absl::StatusCode::kPermissionDenied) {
          return link_.Lost();
        }
        break;
      default:
        break;
    }
  }
  const Part* sent = parts_.Find(h.request_id());
  if (sent == nullptr) {
    if (h.kind() == wire::ERROR) {
      log_->warn("worker {}: {}", rank_, std::string(StatusOf(h).message()));
    }
    return;  // a reply after its request's deadline
  }
  // Only the node a part was sent to answers it.
  if (from != (sent->shard < 0 ? coordinator_ : servers_[sent->shard])) return;
  Part part = parts_.Take(h.request_id());
  if (part.cached_read) KeepCopy(part, m);
  if (part.rows_cached != nullptr) KeepRows(part, m);
  if (part.shard >= 0) {
    flow_->Complete(h.request_id());
    ForgetSent(part.shard, h.request_id());
  } else {
    to_coordinator_.erase(h.request_id());
  }
  CompletePart(part, m);
  // A held push: nobody waits for it to learn it failed.
  if (const absl::Status s = StatusOf(h); part.held && !s.ok()) {
    // The others learn why this worker stops (FAILED to the coordinator).
    Fail(absl::Status(s.code(), absl::StrFormat("a held push (write_back_clocks) to server %d "
                                                "failed: %s",
                                                part.shard, s.message())));
  }
}

void WorkerNode::ForgetSent(int shard, uint64_t id) {
  if (keep_sent_ && shard >= 0 && shard < static_cast<int>(sent_.size())) sent_[shard].erase(id);
}

void WorkerNode::HandleServerMembership(const wire::Membership& m) {
  const int shard = m.rank();
  if (!started_.HasBeenNotified() || shard < 0 || shard >= num_servers_ || !keep_sent_) return;
  if (m.state() != wire::Membership::ACTIVE) {
    server_away_[shard] = true;
    log_->warn("worker {}: server {} (node {}) was declared dead; its requests wait for its "
               "restart (until their deadlines)",
               rank_, shard, m.node_id());
    return;
  }
  server_away_[shard] = false;
  if (m.endpoint() != server_endpoints_[shard]) {
    absl::StatusOr<PeerId> peer = transport_->Connect(m.endpoint());
    if (!peer.ok()) return Fail(peer.status());
    servers_[shard] = *peer;
    server_endpoints_[shard] = m.endpoint();
  }
  // Everything it may not have taken, in the order first sent: the replay of its update
  // log took some of it, and answers those without applying them again.
  for (const auto& [id, message] : sent_[shard]) {
    transport_->Send(servers_[shard], message);
  }
  if (last_clock_sent_[shard] > 0) {
    Message c;
    c.header.set_kind(wire::CLOCK);
    c.header.set_sender(node_id_);
    c.header.set_clock(last_clock_sent_[shard]);
    SetCredential(credential_, &c.header);
    transport_->Send(servers_[shard], std::move(c));
  }
  log_->info("worker {}: server {} restarted at {} (node {}); sent it again {} requests",
             rank_, shard, m.endpoint(), m.node_id(), sent_[shard].size());
}

void WorkerNode::HandleJoinReply(const wire::Header& h) {
  if (started_.HasBeenNotified() || node_id_ != 0) return;  // a late or repeated answer
  if (absl::Status s = StatusOf(h); !s.ok()) {
    if (absl::IsUnavailable(s)) {
      // Not now (the rank's old incarnation was heard too recently, or another one is
      // rejoining): ask again at the next tick, until the join deadline.
      if (!join_retry_) {
        log_->info("worker {}: the job asks this worker to join again later: {}",
                   options_.rank, std::string(s.message()));
      }
      join_retry_ = true;
      return;
    }
    return End(
        absl::Status(s.code(), absl::StrCat("the job refused this worker: ", s.message())));
  }
  node_id_ = h.join_reply().node_id();
  rank_ = h.join_reply().rank();
  credential_ = Credential{h.join_reply().token_hi(), h.join_reply().token_lo()};
  start_clock_ = std::max<int64_t>(0, h.join_reply().clock());
}

void WorkerNode::HandleStart(const wire::Start& start) {
  // The worker already ended (its join deadline passed at a tick): too late to start.
  if (started_.HasBeenNotified()) return;
  if (start.num_servers() < 1 || start.num_servers() > kMaxNodes || start.num_workers() < 1 ||
      start.num_workers() > kMaxNodes) {
    return Fail(absl::InvalidArgumentError(absl::StrFormat(
        "START names %d servers and %d workers", start.num_servers(), start.num_workers())));
  }
  const uint64_t chunk_bytes = start.job().chunk_elements() * sizeof(float);
  if (start.job().chunk_elements() > kMaxChunkElements ||
      chunk_bytes > static_cast<uint64_t>(options_.max_message_bytes)) {
    return Fail(absl::InvalidArgumentError(
        absl::StrFormat("a chunk of %d elements is more than this worker accepts in one message "
                        "(max_message_bytes %d)",
                        start.job().chunk_elements(), options_.max_message_bytes)));
  }
  // The job the worker will address: the coordinator checked it, but a START is read like
  // any other message (a table of size 0 or a chunk of 0 elements would break the
  // partitions below).
  if (absl::Status s = ValidateJobConfig(FromWire(start.job())); !s.ok()) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("START carries a job this worker cannot address: ", s.message())));
  }
  // Every shard is named by exactly one server node: a shard without one would leave its
  // requests addressed to no server (or to the coordinator's connection).
  absl::StatusOr<std::vector<const wire::Node*>> by_shard =
      NodesByRank(start, wire::SERVER, start.num_servers());
  if (!by_shard.ok()) return Fail(by_shard.status());
  const std::vector<const wire::Node*>& shard_nodes = *by_shard;
  for (int s = 0; s < start.num_servers(); ++s) {
    if (shard_nodes[s] == nullptr) {
      return Fail(absl::InvalidArgumentError(
          absl::StrFormat("START names no server for shard %d of %d", s, start.num_servers())));
    }
  }
  num_servers_ = start.num_servers();
  num_workers_ = start.num_workers();
  link_.SetRestartWait(CoordinatorRestartWait(start), [this] { return JoinMessage(); });
  servers_.assign(num_servers_, 0);
  server_endpoints_.assign(num_servers_, std::string());
  keep_sent_ = start.server_restart_timeout_ms() > 0;
  sent_.assign(num_servers_, {});
  last_clock_sent_.assign(num_servers_, 0);
  server_away_.assign(num_servers_, false);
  flow_.emplace(num_servers_, options_.max_bytes_in_flight_per_server,
                [this](int shard, Message m) {
                  SetCredential(credential_, &m.header);  // proves to the server who sends
                  if (keep_sent_) {
                    if (m.header.request_id() != 0) {
                      sent_[shard][m.header.request_id()] = m;  // the payloads are shared
                    } else if (m.header.kind() == wire::CLOCK) {
                      last_clock_sent_[shard] = m.header.clock();
                    }
                  }
                  transport_->Send(servers_[shard], std::move(m));
                });
  for (int s = 0; s < num_servers_; ++s) {
    absl::StatusOr<PeerId> peer = transport_->Connect(shard_nodes[s]->endpoint());
    if (!peer.ok()) return Fail(peer.status());
    servers_[s] = *peer;
    server_endpoints_[s] = shard_nodes[s]->endpoint();
  }
  started_at_ = EnvOf(options_).Now();
  // A worker that rejoined the running job continues from start_clock_; every shard learns
  // it before any request (a shard that re-admitted it at a lower clock raises it).
  if (start_clock_ > 0) {
    for (int s = 0; s < num_servers_; ++s) {
      Message m;
      m.header.set_kind(wire::CLOCK);
      m.header.set_sender(node_id_);
      m.header.set_clock(start_clock_);
      flow_->Submit(s, std::move(m), /*bytes=*/0);
    }
  }
  job_ = FromWire(start.job());
  merges_pushes_.assign(job_.tables.size(), false);
  table_by_id_.clear();
  write_back_clocks_.assign(job_.tables.size(), 0);
  // The job's straggler policy (which a table's own spec cannot name) may drop or
  // down-weight a push: no cache then holds the worker's pushes as written.
  const absl::StatusOr<policy::PolicySpec> job_spec = policy::ParsePolicySpec(job_.policy);
  const bool straggler_acts =
      !job_spec.ok() || job_spec->straggler.kind != policy::StragglerSpec::Kind::kNone;
  clock_posted_ = clock_reported_ = start_clock_;
  for (uint32_t id = 0; id < job_.tables.size(); ++id) {
    const TableSpec& ts = job_.tables[id];
    if (ts.merge_pushes) {
      merges_pushes_[id] = true;
      if (!merger_.has_value()) merger_.emplace(num_servers_);
    }
    if (ts.write_back_clocks > 0) {
      write_back_clocks_[id] = ts.write_back_clocks;
      if (!write_back_.has_value()) write_back_.emplace(num_servers_);
    }
    if (ts.cache_clocks > 0) {
      const std::string& policy = ts.policy.empty() ? job_.policy : ts.policy;
      const policy::CacheBound bound{ts.cache_clocks, policy::GateStaleness(policy)};
      absl::StatusOr<policy::ScheduleSpec> schedule = policy::ParseSchedule(ts.updater.schedule);
      const bool through = schedule.ok() && !straggler_acts;
      if (ts.sparse()) {
        rows_.SetTable(id, ts.row_width, ts.cache_rows, bound);
        if (through && RowCache::WritesThrough(ts, policy)) {
          rows_.SetWriteThrough(id, ts.updater.learning_rate, *schedule);
        }
      } else {
        cache_.SetBound(id, bound);
        if (through && ReadCache::WritesThrough(ts, policy)) {
          cache_.SetWriteThrough(id, ts.updater.learning_rate, *schedule);
        }
      }
    }
    tables_.emplace(
        ts.name,
        TableEntry{
            TableInfo{id, ts.name, ts.size, ts.updater.learning_rate, ts.sparse(), ts.row_width,
                      ts.compression, ts.merge_pushes, ts.cache_clocks, ts.cache_rows},
            // A sparse table has no ranges; its partition is unused.
            TablePartition(ts.sparse() ? 1 : ts.size, num_servers_, job_.chunk_elements),
            ts.compression != Compression::kNone && !ts.sparse()
                ? std::make_shared<PushResidual>(ts.compression)
                : nullptr,
            ts.compression != Compression::kNone &&
                (ts.merge_pushes || ts.write_back_clocks > 0 || ts.cache_clocks > 0)});
    table_by_id_.push_back(&tables_.find(ts.name)->second);
  }
  started_.Notify();
}

void WorkerNode::End(const absl::Status& status) {
  if (!end_.End(status)) return;
  parts_.FailAll(status);
  if (merger_.has_value()) merger_->FailAll(status);
  // Nothing queued is sent any more: its request has just failed.
  if (flow_.has_value()) flow_->Clear();
  for (auto& kept : sent_) kept.clear();
  to_coordinator_.clear();
  if (!started_.HasBeenNotified()) started_.Notify();
}

void WorkerNode::Fail(const absl::Status& status) {
  const absl::Status named(status.code(),
                           absl::StrFormat("worker %d: %s", rank_, status.message()));
  if (!end_.ended() && node_id_ != 0) {
    Message failed;
    failed.header.set_kind(wire::FAILED);
    failed.header.set_sender(node_id_);
    ToWire(named, failed.header.mutable_status());
    transport_->Send(coordinator_, std::move(failed));
  }
  End(named);
}

void WorkerNode::OnTick(absl::Time now) {
  if (!started_.HasBeenNotified() && now >= join_deadline_) return End(JoinTimedOut());
  if (join_retry_ && !started_.HasBeenNotified()) {
    join_retry_ = false;
    SendJoinMessage();
  }
  if (absl::Status s = link_.Tick(*transport_, node_id_, now); !s.ok()) End(s);
  WarnUnreachable(now);
  int held_expired = -1;  // a held push's shard
  parts_.Expire(
      now,
      [this, &held_expired](uint64_t id, const Part& part) {
        if (part.held) held_expired = part.shard;
        if (part.shard >= 0) {
          flow_->Complete(id);
          ForgetSent(part.shard, id);
        } else {
          to_coordinator_.erase(id);
        }
      },
      [this](int shard) { return DescribeServer(shard); });
  if (held_expired >= 0) {
    Fail(absl::DeadlineExceededError(
        absl::StrFormat("a held push (write_back_clocks) to %s was not answered within the "
                        "request timeout",
                        DescribeServer(held_expired))));
  }
}

std::string WorkerNode::DescribeServer(int shard) const {
  if (shard < 0 || shard >= static_cast<int>(servers_.size())) {
    return absl::StrCat("server ", shard);
  }
  std::string what = absl::StrCat("server ", shard, " at ", server_endpoints_[shard]);
  if (shard < static_cast<int>(server_away_.size()) && server_away_[shard]) {
    absl::StrAppend(&what, " (declared dead; the job waits for its restart)");
    return what;
  }
  if (!transport_->Connected(servers_[shard])) {
    absl::StrAppend(&what, " (never connected: is that address reachable from this host? "
                           "docs/multi_host.md)");
  }
  return what;
}

void WorkerNode::WarnUnreachable(absl::Time now) {
  if (unreachable_warned_ || now < started_at_ + kUnreachableWarning) return;
  unreachable_warned_ = true;
  std::vector<std::string> missing;
  for (int s = 0; s < static_cast<int>(servers_.size()); ++s) {
    if (!transport_->Connected(servers_[s])) {
      missing.push_back(absl::StrCat("server ", s, " at ", server_endpoints_[s]));
    }
  }
  if (missing.empty()) return;
  log_->warn("worker {}: no connection to {} {} after the job started; is the address "
             "reachable from this host? (docs/multi_host.md)",
             rank_, absl::StrJoin(missing, ", "), absl::FormatDuration(kUnreachableWarning));
}

}  // namespace kairos::internal
