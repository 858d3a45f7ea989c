// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The worker node. A call slices its range over the chunks that hold it (one message per
// chunk, to the chunk's shard), registers the parts and sends them from the I/O thread, and
// the I/O thread completes the parts as replies arrive (copying pulled values into the
// caller's memory). Requests past their deadline are failed by the I/O thread's tick, so a
// late reply never writes into memory the caller has been told it may reuse.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/partition.h"
#include "kairos/status.h"
#include "kairos/worker.h"
#include "transport/coordinator_link.h"
#include "transport/transport.h"
#include "wire/convert.h"
#include "wire/credential.h"
#include "worker/request_state.h"
#include "worker/worker_internal.h"

namespace kairos {
namespace internal {
namespace {

// Replies of the servers arrive a little after a server-side deadline; the worker's own
// deadline waits this much longer so that the server's error (which names the workers it
// waited for) is what the caller sees.
constexpr absl::Duration kDeadlineGrace = absl::Milliseconds(250);
// Requests up to this size are usually answered within tens of microseconds: their waiters
// spin before sleeping when no other request of the worker was open (see WaitTuning).
constexpr uint64_t kSpinMaxBytes = 64 << 10;

// One message of a request, as the I/O thread tracks it.
struct Part {
  std::shared_ptr<RequestState> state;
  int shard = -1;          // -1: the coordinator
  uint64_t length = 0;
  PushPullReply* eager = nullptr;  // eager push+pull: where the shard's report goes
  uint64_t bytes = 0;      // payload bytes it moves (push and reply), for flow control
  bool sent = false;       // left the worker (counted in its shard's bytes in flight)
  bool reads = false;      // the reply carries values: elements [at, at + length) of the
  uint64_t at = 0;         // request's result (RequestState::PartDone)
};

using Batch = std::vector<std::pair<Part, Message>>;

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

// Messages to one shard, in order: those not sent yet wait here while the bytes in flight
// to the shard are at the cap. Clocks and finishes queue behind pushes, so a shard never
// sees a worker's clock before the pushes it ends.
struct ShardQueue {
  std::deque<Message> waiting;
  uint64_t in_flight = 0;
};

struct TableEntry {
  TableInfo info;
  TablePartition partition;
};

class WorkerImpl final : public Worker {
 public:
  explicit WorkerImpl(const WorkerOptions& options)
      : options_(options), log_(GetLogger(options.logger)) {}

  ~WorkerImpl() override {
    if (started_.HasBeenNotified() && !finished_.load() && EndStatus().ok()) {
      CallOptions o;
      o.deadline = ClockOf(options_).Now() + absl::Seconds(5);
      if (absl::Status s = Finish(o); !s.ok()) {
        log_->warn("worker {}: finish at destruction failed: {}", rank_,
                   std::string(s.message()));
      }
    }
    if (transport_ != nullptr) transport_->Stop();
    for (auto& [id, part] : parts_) part.state->Fail(absl::CancelledError("worker destroyed"));
  }

  absl::Status Init() {
    KAIROS_RETURN_IF_ERROR(ValidateJobConfig(options_.job));
    TransportOptions t;
    t.context = options_.context;
    t.max_message_bytes = options_.max_message_bytes;
    t.name = "worker";
    t.keys = options_.keys;
    t.logger = options_.logger;
    t.clock = options_.clock;
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
    KAIROS_RETURN_IF_ERROR(link_.Connect(*transport_));
    coordinator_ = link_.peer();
    join_deadline_ = ClockOf(options_).Now() + options_.join_timeout;
    transport_->Start([this](PeerId from, Message m) { OnMessage(from, std::move(m)); },
                      [this](PeerId, const absl::Status& why, const wire::Header*) {
                        log_->warn("worker {}: dropped a malformed message: {}", rank_,
                                   std::string(why.message()));
                      },
                      [this](absl::Time now) { OnTick(now); });
    Message join;
    join.header.set_kind(wire::JOIN);
    join.header.set_request_id(NextId());
    wire::Join* j = join.header.mutable_join();
    j->set_role(wire::WORKER);
    j->set_requested_rank(options_.rank);
    j->set_pid(static_cast<uint32_t>(::getpid()));
    ToWire(options_.job, j->mutable_job());
    transport_->Send(coordinator_, std::move(join));
    // The tick ends the wait at join_deadline_ on the node's clock; the real-time wait is
    // the same bound on a real clock and a backstop on a virtual one.
    if (!started_.WaitForNotificationWithTimeout(options_.join_timeout)) return JoinTimedOut();
    return EndStatus();
  }

  absl::Status JoinTimedOut() const {
    return absl::DeadlineExceededError(absl::StrFormat(
        "worker: the job at %s did not start within %s (are all servers and workers "
        "up?)",
        options_.coordinator, absl::FormatDuration(options_.join_timeout)));
  }

  int rank() const override { return rank_; }
  int num_workers() const override { return num_workers_; }
  int num_servers() const override { return num_servers_; }
  int64_t clock() const override { return clock_.load(); }
  const JobConfig& job() const override { return job_; }

  absl::StatusOr<TableInfo> table(std::string_view name) const override {
    KAIROS_ASSIGN_OR_RETURN(const TableEntry* t, Find(name));
    return t->info;
  }

  absl::Status Push(std::string_view table, std::span<const float> gradient,
                    const CallOptions& options) override {
    KAIROS_RETURN_IF_ERROR(CheckWholeTable("push", table, gradient.size()));
    return PushAsync(table, 0, gradient, options).Wait();
  }
  absl::Status PushRange(std::string_view table, uint64_t offset,
                         std::span<const float> gradient, const CallOptions& options) override {
    return PushAsync(table, offset, gradient, options).Wait();
  }
  absl::Status Pull(std::string_view table, std::span<float> out,
                    const CallOptions& options) override {
    KAIROS_RETURN_IF_ERROR(CheckWholeTable("pull", table, out.size()));
    return PullAsync(table, 0, out, options).Wait();
  }
  absl::Status PullRange(std::string_view table, uint64_t offset, std::span<float> out,
                         const CallOptions& options) override {
    return PullAsync(table, offset, out, options).Wait();
  }

  Request PushAsync(std::string_view table, uint64_t offset, std::span<const float> gradient,
                    const CallOptions& options) override {
    return PushAsync(table, offset, Buffer::CopyOf(gradient), options);
  }

  Request PushAsync(std::string_view table, uint64_t offset, Buffer gradient,
                    const CallOptions& options) override {
    return Issue(wire::PUSH, table, offset, gradient.size(), gradient, PullTarget{}, options);
  }

  Request PullAsync(std::string_view table, uint64_t offset, std::span<float> out,
                    const CallOptions& options) override {
    return Issue(wire::PULL, table, offset, out.size(), Buffer(), PullTarget{out.data()},
                 options);
  }

  Request PullAsync(std::string_view table, uint64_t offset, uint64_t length, Buffer* out,
                    const CallOptions& options) override {
    if (out == nullptr) {
      return Request(RequestState::Failed(absl::InvalidArgumentError(
          absl::StrFormat("pull of table '%s': no Buffer to pull into", table))));
    }
    return Issue(wire::PULL, table, offset, length, Buffer(), PullTarget{nullptr, out},
                 options);
  }

  Request PushPullAsync(std::string_view table, uint64_t offset, Buffer gradient,
                        std::span<float> out, PushPullReply* reply, float scale,
                        const CallOptions& options) override {
    if (out.size() != gradient.size() || reply == nullptr || !(scale > 0.0f)) {
      return Request(RequestState::Failed(absl::InvalidArgumentError(absl::StrFormat(
          "push-pull of table '%s': needs out.size() == gradient.size() (%d vs %d), a "
          "reply, and scale > 0 (%g)",
          table, out.size(), gradient.size(), scale))));
    }
    *reply = PushPullReply();
    reply->clocks.assign(num_workers_, 0);
    bool sent = false;
    Request request = Issue(wire::PUSH, table, offset, gradient.size(), gradient,
                            PullTarget{out.data()}, options, reply, scale, &sent);
    if (!sent) return request;  // refused before anything was sent
    if (absl::Status s = Clock(); !s.ok()) return Request(RequestState::Failed(s));
    return request;
  }

  absl::Status Clock() override {
    KAIROS_RETURN_IF_ERROR(Usable());
    const int64_t clock = clock_.fetch_add(1) + 1;
    transport_->Post([this, clock] {
      for (int s = 0; s < num_servers_; ++s) {
        Message m;
        m.header.set_kind(wire::CLOCK);
        m.header.set_sender(node_id_);
        m.header.set_clock(clock);
        ToShard(s, std::move(m));
      }
    });
    return absl::OkStatus();
  }

  absl::Status Barrier(const CallOptions& options) override {
    KAIROS_RETURN_IF_ERROR(Usable());
    return Control(wire::BARRIER, "barrier", /*to_servers=*/false, options).Wait();
  }

  // See CrashWorker.
  void Crash() {
    crashed_.store(true);
    finished_.store(true);
    {
      absl::MutexLock lock(&mu_);
      if (end_status_.ok()) {
        end_status_ = absl::UnavailableError(absl::StrFormat("worker %d was killed", rank_));
      }
    }
    transport_->Stop();
    for (auto& [id, part] : parts_) part.state->Fail(EndStatus());
    parts_.clear();
  }

  absl::Status Finish(const CallOptions& options) override {
    if (finished_.exchange(true)) return crashed_.load() ? EndStatus() : absl::OkStatus();
    KAIROS_RETURN_IF_ERROR(EndStatus());
    // Servers first (in order after this worker's pushes), then the coordinator.
    KAIROS_RETURN_IF_ERROR(Control(wire::FINISH, "finish", /*to_servers=*/true, options).Wait());
    return Control(wire::FINISH, "finish", /*to_servers=*/false, options).Wait();
  }

 private:
  uint64_t NextId() { return next_id_.fetch_add(1); }

  absl::Status EndStatus() const {
    absl::MutexLock lock(&mu_);
    return end_status_;
  }

  absl::Status Usable() const {
    KAIROS_RETURN_IF_ERROR(EndStatus());
    if (finished_.load()) {
      return absl::FailedPreconditionError(
          absl::StrFormat("worker %d has finished; no more requests", rank_));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<const TableEntry*> Find(std::string_view name) const {
    auto it = tables_.find(name);
    if (it == tables_.end()) {
      std::vector<std::string> names;
      for (const auto& [n, t] : tables_) names.push_back(n);
      return absl::NotFoundError(absl::StrFormat("unknown table '%s'; the job has: %s", name,
                                                 absl::StrJoin(names, ", ")));
    }
    return &it->second;
  }

  // Push and Pull address the whole table: the span must have exactly its size.
  absl::Status CheckWholeTable(const char* verb, std::string_view table, size_t n) const {
    absl::StatusOr<const TableEntry*> t = Find(table);
    if (!t.ok() || (*t)->info.size == n) return absl::OkStatus();  // Issue reports NotFound
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s of table '%s': %d values given for a table of %d elements (use %sRange for a "
        "part)",
        verb, table, n, (*t)->info.size, verb == std::string_view("push") ? "Push" : "Pull"));
  }

  absl::Time DeadlineOf(const CallOptions& options) const {
    return options.deadline.value_or(ClockOf(options_).Now() + options_.request_timeout);
  }

  // Where a pull's values go: caller memory (`out`) or a Buffer (`gather`).
  struct PullTarget {
    float* out = nullptr;
    Buffer* gather = nullptr;
  };

  // Slices [offset, offset + length) of `table` into one message per chunk and sends them.
  // With `eager` (a push): the push carries pull_after and `scale`; `target` receives the
  // read that follows it.
  Request Issue(wire::Kind kind, std::string_view table, uint64_t offset, uint64_t length,
                const Buffer& payload, PullTarget target, const CallOptions& options,
                PushPullReply* eager = nullptr, float scale = 1.0f, bool* sent = nullptr) {
    const char* verb = kind == wire::PUSH ? "push" : "pull";
    if (absl::Status s = Usable(); !s.ok()) return Request(RequestState::Failed(s));
    absl::StatusOr<const TableEntry*> t = Find(table);
    if (!t.ok()) {
      return Request(RequestState::Failed(
          absl::Status(t.status().code(), absl::StrCat(verb, ": ", t.status().message()))));
    }
    const TableInfo& info = (*t)->info;
    if (length == 0 || offset >= info.size || length > info.size - offset) {
      return Request(RequestState::Failed(absl::InvalidArgumentError(absl::StrFormat(
          "%s of table '%s': range [%d, %d) (%d values) does not fit the table's %d "
          "elements",
          verb, info.name, offset, offset + length, length, info.size))));
    }
    const absl::Time deadline = DeadlineOf(options);
    std::span<const Chunk> chunks = (*t)->partition.Overlapping(offset, offset + length);
    auto state = std::make_shared<RequestState>(
        RequestLabel{verb, info.name, offset, offset + length}, deadline + kDeadlineGrace,
        static_cast<int>(chunks.size()), /*spin=*/length * sizeof(float) <= kSpinMaxBytes,
        wait_tuning_, ClockOf(options_));
    if (target.gather != nullptr) state->GatherInto(target.gather, length);
    if (target.out != nullptr) state->ReceiveInto(target.out);
    Batch batch;
    batch.reserve(chunks.size());
    const int64_t clock = clock_.load();
    const uint64_t timeout_ms = static_cast<uint64_t>(
        std::max<int64_t>(1, absl::ToInt64Milliseconds(deadline - ClockOf(options_).Now())));
    for (const Chunk& c : chunks) {
      const uint64_t begin = std::max(offset, c.begin);
      const uint64_t end = std::min(offset + length, c.end);
      Message m;
      m.header.set_kind(kind);
      m.header.set_request_id(NextId());
      m.header.set_sender(node_id_);
      m.header.set_table(info.id);
      m.header.set_offset(begin);
      m.header.set_length(end - begin);
      m.header.set_clock(clock);
      Part part{state, c.shard, end - begin, eager};
      part.bytes = (kind == wire::PUSH ? 1 : 0) * (end - begin) * sizeof(float) +
                   (kind == wire::PULL || eager != nullptr ? 1 : 0) * (end - begin) *
                       sizeof(float);
      if (kind == wire::PUSH) {
        m.payloads.push_back(payload.Slice(begin - offset, end - begin));
      }
      if (kind == wire::PULL || eager != nullptr) {
        m.header.set_timeout_ms(timeout_ms);
        part.reads = true;
        part.at = begin - offset;
      }
      if (eager != nullptr) {
        m.header.set_pull_after(true);
        if (scale != 1.0f) m.header.set_worker_scale(scale);
      }
      batch.emplace_back(std::move(part), std::move(m));
    }
    Post(std::move(batch), verb);
    if (sent != nullptr) *sent = true;
    return Request(state);
  }

  // A FINISH or BARRIER to every server or to the coordinator, tracked as one request.
  Request Control(wire::Kind kind, const char* what, bool to_servers,
                  const CallOptions& options) {
    const absl::Time deadline = DeadlineOf(options);
    const int n = to_servers ? num_servers_ : 1;
    auto state = std::make_shared<RequestState>(RequestLabel{what, "", 0, 0, rank_},
                                                deadline + kDeadlineGrace, n, /*spin=*/false,
                                                nullptr, ClockOf(options_));
    const uint64_t timeout_ms = static_cast<uint64_t>(
        std::max<int64_t>(1, absl::ToInt64Milliseconds(deadline - ClockOf(options_).Now())));
    Batch batch;
    for (int i = 0; i < n; ++i) {
      Message m;
      m.header.set_kind(kind);
      m.header.set_request_id(NextId());
      m.header.set_sender(node_id_);
      m.header.set_clock(clock_.load());
      m.header.set_timeout_ms(timeout_ms);
      batch.emplace_back(Part{state, to_servers ? i : -1}, std::move(m));
    }
    Post(std::move(batch), what);
    return Request(state);
  }

  // Hands a request's messages to the I/O thread (Dispatch).
  void Post(Batch batch, const char* what) {
    auto posted = std::make_shared<PostedBatch>(std::move(batch), rank_, what);
    transport_->Post([this, posted] { Dispatch(posted->Take()); });
  }

  // ------------------------------------------------------- sending (I/O thread)
  // Registers the parts and sends their messages: to the coordinator at once, to a shard
  // through its queue.
  void Dispatch(Batch& batch) {
    for (auto& [part, message] : batch) {
      parts_[message.header.request_id()] = part;
      if (part.shard < 0) {
        transport_->Send(coordinator_, std::move(message));
      } else {
        ToShard(part.shard, std::move(message));
      }
    }
  }

  void ToShard(int shard, Message message) {
    queues_[shard].waiting.push_back(std::move(message));
    Pump(shard);
  }

  // Sends the shard's waiting messages in order while its bytes in flight stay under the
  // cap (one request always goes, however big). A part that expired while it waited is
  // skipped.
  void Pump(int shard) {
    ShardQueue& q = queues_[shard];
    while (!q.waiting.empty()) {
      Message& m = q.waiting.front();
      const uint64_t id = m.header.request_id();
      auto it = id == 0 ? parts_.end() : parts_.find(id);
      if (id != 0 && it == parts_.end()) {
        q.waiting.pop_front();
        continue;
      }
      const uint64_t bytes = it == parts_.end() ? 0 : it->second.bytes;
      if (q.in_flight > 0 && q.in_flight + bytes > max_in_flight_) break;
      if (it != parts_.end()) it->second.sent = true;
      q.in_flight += bytes;
      SetCredential(credential_, &m.header);  // proves to the server who sends
      transport_->Send(servers_[shard], std::move(m));
      q.waiting.pop_front();
    }
  }

  // A part is over (answered or expired): its bytes no longer count.
  void Release(const Part& part) {
    if (part.shard < 0 || !part.sent) return;
    queues_[part.shard].in_flight -= part.bytes;
    Pump(part.shard);
  }

  // -------------------------------------------------------------------- I/O thread
  void OnMessage(PeerId from, Message m) {
    const wire::Header& h = m.header;
    if (from == coordinator_) {
      link_.Heard(ClockOf(options_).Now());
      switch (h.kind()) {
        case wire::JOIN_REPLY:
          return HandleJoinReply(h);
        case wire::START:
          return HandleStart(h.start());
        case wire::SHUTDOWN:
          return End(StatusOf(h).ok() ? absl::CancelledError("the job has ended")
                                      : StatusOf(h));
        case wire::HEARTBEAT:
          return;
        default:
          break;
      }
    }
    auto it = parts_.find(h.request_id());
    if (it == parts_.end()) {
      if (h.kind() == wire::ERROR) {
        log_->warn("worker {}: {}", rank_, std::string(StatusOf(h).message()));
      }
      return;  // a reply after its request's deadline
    }
    // Only the node a part was sent to answers it.
    if (from != (it->second.shard < 0 ? coordinator_ : servers_[it->second.shard])) return;
    Part part = std::move(it->second);
    parts_.erase(it);
    Release(part);
    if (h.kind() == wire::PULL_REPLY && part.reads) {
      if (m.payloads[0].size() != part.length) {
        return part.state->PartDone(absl::InternalError(absl::StrFormat(
            "shard %d answered %d values for %d", part.shard, m.payloads[0].size(),
            part.length)));
      }
      if (part.eager != nullptr) MergeEagerReport(h, *part.eager);
      return part.state->PartDone(part.at, std::move(m.payloads[0]));
    }
    part.state->PartDone(StatusOf(h));
  }

  // Runs on the I/O thread before the part completes, so the caller sees it after Wait.
  static void MergeEagerReport(const wire::Header& h, PushPullReply& r) {
    for (int w = 0; w < h.clocks_size() && w < static_cast<int>(r.clocks.size()); ++w) {
      r.clocks[w] = std::max(r.clocks[w], h.clocks(w));
    }
    r.dropped = r.dropped || h.dropped();
    r.refresh = r.refresh || h.refresh();
  }

  void HandleJoinReply(const wire::Header& h) {
    if (absl::Status s = StatusOf(h); !s.ok()) {
      return End(absl::Status(s.code(), absl::StrCat("the job refused this worker: ",
                                                     s.message())));
    }
    node_id_ = h.join_reply().node_id();
    rank_ = h.join_reply().rank();
    credential_ = Credential{h.join_reply().token_hi(), h.join_reply().token_lo()};
  }

  void HandleStart(const wire::Start& start) {
    // The worker already ended (its join deadline passed at a tick): too late to start.
    if (started_.HasBeenNotified()) return;
    if (start.num_servers() < 1 || start.num_servers() > kMaxNodes || start.num_workers() < 1 ||
        start.num_workers() > kMaxNodes) {
      return End(absl::InvalidArgumentError(absl::StrFormat(
          "START names %d servers and %d workers", start.num_servers(), start.num_workers())));
    }
    const uint64_t chunk_bytes = start.job().chunk_elements() * sizeof(float);
    if (start.job().chunk_elements() > kMaxChunkElements ||
        chunk_bytes > static_cast<uint64_t>(options_.max_message_bytes)) {
      return End(absl::InvalidArgumentError(absl::StrFormat(
          "a chunk of %d elements is more than this worker accepts in one message "
          "(max_message_bytes %d)",
          start.job().chunk_elements(), options_.max_message_bytes)));
    }
    num_servers_ = start.num_servers();
    num_workers_ = start.num_workers();
    servers_.assign(num_servers_, 0);
    queues_.assign(num_servers_, ShardQueue());
    for (const wire::Node& n : start.nodes()) {
      if (n.role() != wire::SERVER) continue;
      if (n.rank() < 0 || n.rank() >= num_servers_) {
        return End(absl::InvalidArgumentError(
            absl::StrFormat("START gives a server shard %d of %d", n.rank(), num_servers_)));
      }
      absl::StatusOr<PeerId> peer = transport_->Connect(n.endpoint());
      if (!peer.ok()) return End(peer.status());
      servers_[n.rank()] = *peer;
    }
    job_ = FromWire(start.job());
    for (uint32_t id = 0; id < job_.tables.size(); ++id) {
      const TableSpec& ts = job_.tables[id];
      tables_.emplace(ts.name, TableEntry{TableInfo{id, ts.name, ts.size,
                                                    ts.updater.learning_rate},
                                          TablePartition(ts.size, num_servers_,
                                                         job_.chunk_elements)});
    }
    started_.Notify();
  }

  // The job is over for this worker: fail everything outstanding.
  void End(const absl::Status& status) {
    {
      absl::MutexLock lock(&mu_);
      if (!end_status_.ok()) return;
      end_status_ = status;
    }
    for (auto& [id, part] : parts_) part.state->Fail(status);
    parts_.clear();
    if (!started_.HasBeenNotified()) started_.Notify();
  }

  void OnTick(absl::Time now) {
    if (!started_.HasBeenNotified() && now >= join_deadline_) return End(JoinTimedOut());
    if (absl::Status s = link_.Tick(*transport_, node_id_, now); !s.ok()) End(s);
    ExpireParts(now);
  }

  void ExpireParts(absl::Time now) {
    std::map<std::shared_ptr<RequestState>, std::vector<int>> expired;
    for (auto it = parts_.begin(); it != parts_.end();) {
      if (it->second.state->deadline() <= now) {
        expired[it->second.state].push_back(it->second.shard);
        const Part part = it->second;
        parts_.erase(it++);
        Release(part);
      } else {
        ++it;
      }
    }
    for (const auto& [state, shards] : expired) {
      std::vector<std::string> who;
      for (int s : shards) {
        who.push_back(s < 0 ? std::string("the coordinator") : absl::StrCat("server ", s));
      }
      state->Fail(absl::DeadlineExceededError(
          absl::StrCat("no answer before the deadline from ", absl::StrJoin(who, ", "))));
    }
  }

  const WorkerOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<Transport> transport_;
  CoordinatorLink link_{options_.coordinator, options_.heartbeat_interval, ClockOf(options_)};
  PeerId coordinator_ = 0;
  std::atomic<uint64_t> next_id_{1};
  // The worker's open push and pull requests and how fast lone small ones are answered
  // (RequestState keeps both; a lone small request spins in Wait, one behind others sleeps).
  const std::shared_ptr<WaitTuning> wait_tuning_ = std::make_shared<WaitTuning>();
  std::atomic<int64_t> clock_{0};
  std::atomic<bool> finished_{false};
  std::atomic<bool> crashed_{false};

  mutable absl::Mutex mu_;
  absl::Status end_status_ ABSL_GUARDED_BY(mu_);

  // Written by Init before the transport starts; read by the I/O thread.
  absl::Time join_deadline_ = absl::InfiniteFuture();
  // Written by the I/O thread before started_ is notified; read-only afterwards.
  absl::Notification started_;
  uint32_t node_id_ = 0;
  Credential credential_;  // from JOIN_REPLY
  int rank_ = -1;
  int num_servers_ = 0;
  int num_workers_ = 0;
  std::vector<PeerId> servers_;
  JobConfig job_;
  std::map<std::string, TableEntry, std::less<>> tables_;

  // I/O thread only.
  absl::flat_hash_map<uint64_t, Part> parts_;
  std::vector<ShardQueue> queues_;
  const uint64_t max_in_flight_ = static_cast<uint64_t>(
      std::max<int64_t>(1, options_.max_bytes_in_flight_per_server));
};

}  // namespace
}  // namespace internal

namespace internal {

void CrashWorker(Worker& worker) { static_cast<WorkerImpl&>(worker).Crash(); }

}  // namespace internal

absl::StatusOr<std::unique_ptr<Worker>> Worker::Create(const WorkerOptions& options) {
  if (options.coordinator.empty()) {
    return absl::InvalidArgumentError("WorkerOptions.coordinator is empty");
  }
  auto worker = std::make_unique<internal::WorkerImpl>(options);
  KAIROS_RETURN_IF_ERROR(worker->Init());
  return worker;
}

}  // namespace kairos
