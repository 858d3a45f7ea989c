// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The worker: the public calls (kairos::Worker) on the caller's thread. A push or pull
// checks its arguments (IssueRange), cuts its range into one message per chunk
// (RouteRange, worker/routing.h) and hands them to the node's I/O thread
// (WorkerNode::Post, worker/worker_node.h), which registers and sends them through the
// per-shard flow control (worker/flow_control.h) and completes the request as the answers
// arrive (worker/outstanding.h); the caller waits on the request (worker/request_state.h).
// A push then reaches the server's handler, which runs it through the shard's policy and
// updater (docs/design.md, "Requests and the policy seams").

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/env.h"
#include "common/logging.h"
#include "kairos/job.h"
#include "kairos/status.h"
#include "kairos/worker.h"
#include "worker/request_state.h"
#include "worker/routing.h"
#include "worker/sparse_routing.h"
#include "worker/worker_internal.h"
#include "worker/worker_node.h"

namespace kairos {
namespace internal {
namespace {

// Requests up to this size are usually answered within tens of microseconds: their waiters
// spin before sleeping when no other request of the worker was open (see WaitTuning).
constexpr uint64_t kSpinMaxBytes = 64 << 10;
// The longest WorkerOptions::io_spin: beyond it a spin that finds nothing wastes more than
// the sleep it would save.
constexpr absl::Duration kMaxIoSpin = absl::Milliseconds(1);

// Where a pull's values go: caller memory (`out`) or a read-only buffer (`gather`).
struct PullTarget {
  float* out = nullptr;
  ConstBuffer* gather = nullptr;
};

// A push, pull or assign as the caller asked for it (an eager push+pull is a push with
// `eager`).
struct RangeCall {
  wire::Kind kind = wire::PUSH;  // PUSH, PULL or ASSIGN
  std::string_view table;
  uint64_t offset = 0;
  uint64_t length = 0;
  Buffer payload{};                // a push's or assign's values
  PullTarget target{};             // a pull's (or an eager push's) destination
  PushPullReply* eager = nullptr;  // an eager push+pull: the shards' report
  float scale = 1.0f;              // an eager push+pull: the worker's scale of its update
};

class WorkerImpl {
 public:
  explicit WorkerImpl(const WorkerOptions& options) : options_(options), node_(options) {}

  ~WorkerImpl() {
    if (node_.joined() && !finished_.load() && node_.EndStatus().ok()) {
      CallOptions o;
      o.deadline = EnvOf(options_).Now() + options_.destructor_shutdown_timeout;
      if (absl::Status s = Shutdown(o); !s.ok()) {
        MakeLogger(options_)->warn("worker {}: shutdown at destruction failed: {}", rank(),
                                   std::string(s.message()));
      }
    }
    // node_'s destructor stops the transport and fails what is still outstanding.
  }

  absl::Status Init() {
    KAIROS_RETURN_IF_ERROR(ValidateJobConfig(options_.job));
    if (options_.deadline_grace < absl::ZeroDuration()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "WorkerOptions.deadline_grace is negative (",
          absl::FormatDuration(options_.deadline_grace), ")"));
    }
    if (options_.destructor_shutdown_timeout <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat("WorkerOptions.destructor_shutdown_timeout must be positive (it is ",
                       absl::FormatDuration(options_.destructor_shutdown_timeout), ")"));
    }
    if (options_.io_spin < absl::ZeroDuration() || options_.io_spin > kMaxIoSpin) {
      return absl::InvalidArgumentError(absl::StrCat(
          "WorkerOptions.io_spin must be between 0 and ", absl::FormatDuration(kMaxIoSpin),
          " (it is ", absl::FormatDuration(options_.io_spin), ")"));
    }
    KAIROS_RETURN_IF_ERROR(node_.Join());
    clock_.store(node_.start_clock());  // a rejoined worker continues from its clock
    return absl::OkStatus();
  }

  int rank() const { return node_.rank(); }
  int num_workers() const { return node_.num_workers(); }
  int num_servers() const { return node_.num_servers(); }
  int64_t clock() const { return clock_.load(); }
  const JobConfig& job() const { return node_.job(); }
  WorkerStats stats() const { return node_.stats(); }

  absl::StatusOr<TableInfo> table(std::string_view name) const {
    KAIROS_ASSIGN_OR_RETURN(const TableEntry* t, node_.Table(name));
    return t->info;
  }

  Request PushAsync(std::string_view table, uint64_t offset, std::span<const float> gradient,
                    const CallOptions& options) {
    return PushAsync(table, offset, Buffer::CopyOf(gradient), options);
  }

  Request PushAsync(std::string_view table, uint64_t offset, Buffer gradient,
                    const CallOptions& options) {
    const uint64_t length = gradient.size();
    return AsRequest(IssueRange(
        RangeCall{.kind = wire::PUSH,
                  .table = table,
                  .offset = offset,
                  .length = length,
                  .payload = std::move(gradient)},
        options));
  }

  Request PullAsync(std::string_view table, uint64_t offset, std::span<float> out,
                    const CallOptions& options) {
    return AsRequest(IssueRange(RangeCall{.kind = wire::PULL,
                                          .table = table,
                                          .offset = offset,
                                          .length = out.size(),
                                          .target = {.out = out.data()}},
                                options));
  }

  Request PullAsync(std::string_view table, uint64_t offset, uint64_t length, ConstBuffer* out,
                    const CallOptions& options) {
    if (out == nullptr) {
      return Request(RequestState::Failed(absl::InvalidArgumentError(
          absl::StrFormat("pull of table '%s': no ConstBuffer to pull into", table))));
    }
    return AsRequest(IssueRange(RangeCall{.kind = wire::PULL,
                                          .table = table,
                                          .offset = offset,
                                          .length = length,
                                          .target = {.gather = out}},
                                options));
  }

  Request PushPullAsync(PushPullPart part, PushPullReply* reply, const PushPullOptions& options) {
    const std::string_view table = part.table;
    const uint64_t offset = part.offset;
    Buffer gradient = std::move(part.gradient);
    const std::span<float> out = part.out;
    const float scale = options.scale;
    if (out.size() != gradient.size() || reply == nullptr || !(scale > 0.0f)) {
      return Request(RequestState::Failed(absl::InvalidArgumentError(absl::StrFormat(
          "push-pull of table '%s': needs out.size() == gradient.size() (%d vs %d), a "
          "reply, and scale > 0 (%g)",
          table, out.size(), gradient.size(), scale))));
    }
    *reply = PushPullReply();
    reply->clocks.assign(num_workers(), 0);
    const uint64_t length = gradient.size();
    absl::StatusOr<Request> request = IssueRange(RangeCall{.kind = wire::PUSH,
                                                           .table = table,
                                                           .offset = offset,
                                                           .length = length,
                                                           .payload = std::move(gradient),
                                                           .target = {.out = out.data()},
                                                           .eager = reply,
                                                           .scale = scale},
                                                 options);
    if (!request.ok()) return AsRequest(std::move(request));  // refused: nothing was sent
    if (absl::Status s = AdvanceClock(); !s.ok()) return Request(RequestState::Failed(s));
    return *std::move(request);
  }

  std::vector<Request> PushPullAsync(std::span<PushPullPart> parts, PushPullReply* reply,
                                     const PushPullOptions& options) {
    const float scale = options.scale;
    const auto failed = [&](const absl::Status& s) {
      return std::vector<Request>(parts.size(), Request(RequestState::Failed(s)));
    };
    if (reply == nullptr || !(scale > 0.0f)) {
      return failed(absl::InvalidArgumentError(absl::StrFormat(
          "push-pull of %d tables: needs a reply and scale > 0 (%g)", parts.size(), scale)));
    }
    if (absl::Status s = Usable(); !s.ok()) return failed(s);
    // Everything IssueRange could refuse, checked before the first part is sent.
    for (const PushPullPart& part : parts) {
      if (part.out.size() != part.gradient.size()) {
        return failed(absl::InvalidArgumentError(absl::StrFormat(
            "push-pull of table '%s': needs out.size() == gradient.size() (%d vs %d)",
            part.table, part.out.size(), part.gradient.size())));
      }
      absl::StatusOr<const TableEntry*> t = node_.Table(part.table);
      if (!t.ok()) {
        return failed(absl::Status(t.status().code(),
                                   absl::StrCat("push-pull: ", t.status().message())));
      }
      if ((*t)->info.sparse) {
        return failed(absl::InvalidArgumentError(absl::StrFormat(
            "push-pull of table '%s': the table is sparse", part.table)));
      }
      if (absl::Status s =
              CheckRange("push-pull", (*t)->info, part.offset, part.gradient.size());
          !s.ok()) {
        return failed(s);
      }
    }
    *reply = PushPullReply();
    reply->clocks.assign(num_workers(), 0);
    // Every part's report is merged into `reply` by the worker's one I/O thread.
    std::vector<Request> requests;
    requests.reserve(parts.size());
    for (PushPullPart& part : parts) {
      const uint64_t length = part.gradient.size();
      requests.push_back(AsRequest(IssueRange(RangeCall{.kind = wire::PUSH,
                                                        .table = part.table,
                                                        .offset = part.offset,
                                                        .length = length,
                                                        .payload = std::move(part.gradient),
                                                        .target = {.out = part.out.data()},
                                                        .eager = reply,
                                                        .scale = scale},
                                              options)));
    }
    if (absl::Status s = AdvanceClock(); !s.ok()) return failed(s);
    return requests;
  }

  // Servers refuse non-finite values too; checking them here first keeps a range over
  // several chunks from being assigned in part. The span form checks before it copies.
  Request AssignAsync(std::string_view table, uint64_t offset, std::span<const float> values,
                      const CallOptions& options) {
    if (absl::Status s = CheckFinite(table, offset, values); !s.ok()) {
      return Request(RequestState::Failed(s));
    }
    return IssueAssign(table, offset, Buffer::CopyOf(values), options);
  }

  Request AssignAsync(std::string_view table, uint64_t offset, Buffer values,
                      const CallOptions& options) {
    if (absl::Status s = CheckFinite(table, offset, values.span()); !s.ok()) {
      return Request(RequestState::Failed(s));
    }
    return IssueAssign(table, offset, std::move(values), options);
  }

  absl::Status SetLearningRate(std::string_view table, float learning_rate,
                               const CallOptions& options) {
    KAIROS_RETURN_IF_ERROR(Usable());
    absl::StatusOr<const TableEntry*> t = node_.Table(table);
    if (!t.ok()) {
      return absl::Status(t.status().code(),
                          absl::StrCat("set learning rate: ", t.status().message()));
    }
    const TableInfo& info = (*t)->info;
    if (!(std::isfinite(learning_rate) && learning_rate >= 0.0f)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "set learning rate of table '%s': %g is not a finite number >= 0", info.name,
          learning_rate));
    }
    // Only the servers that own part of the table (a table smaller than the number of
    // servers leaves some without any).
    std::vector<int> shards;
    for (int s = 0; s < num_servers(); ++s) {
      if (info.sparse || !(*t)->partition.shard_chunks(s).empty()) shards.push_back(s);
    }
    const absl::Time deadline = DeadlineOf(options);
    const int parts = static_cast<int>(shards.size());
    auto state = std::make_shared<RequestState>(
        RequestLabel{"set learning rate", info.name, 0, info.size},
        deadline + options_.deadline_grace, parts, /*spin=*/false, nullptr, EnvOf(options_));
    const Stamp stamp{.sender = node_.node_id(),
                      .clock = clock_.load(),
                      .timeout_ms = TimeoutMs(deadline),
                      .first_id = node_.ReserveIds(parts)};
    node_.Post(RouteLearningRate(info.id, learning_rate, shards, stamp, state),
               "learning rate change");
    return Request(state).Wait();
  }

  Request PushSparseAsync(std::string_view table, std::span<const uint64_t> keys,
                          std::span<const float> gradients, const CallOptions& options) {
    return AsRequest(IssueSparse(wire::PUSH_SPARSE, table, keys, gradients, {}, options));
  }
  Request PullSparseAsync(std::string_view table, std::span<const uint64_t> keys,
                          std::span<float> out, const CallOptions& options) {
    return AsRequest(IssueSparse(wire::PULL_SPARSE, table, keys, {}, out, options));
  }

  absl::Status AdvanceClock() {
    KAIROS_RETURN_IF_ERROR(Usable());
    node_.PostClock(clock_.fetch_add(1) + 1);
    return absl::OkStatus();
  }

  absl::Status Barrier(const CallOptions& options) {
    KAIROS_RETURN_IF_ERROR(Usable());
    return Control(wire::BARRIER, "barrier", /*to_servers=*/false, options).Wait();
  }

  absl::Status Shutdown(const CallOptions& options) {
    if (finished_.exchange(true)) return crashed_.load() ? node_.EndStatus() : absl::OkStatus();
    KAIROS_RETURN_IF_ERROR(node_.EndStatus());
    // Servers first (in order after this worker's pushes), then the coordinator.
    KAIROS_RETURN_IF_ERROR(Control(wire::FINISH, "finish", /*to_servers=*/true, options).Wait());
    return Control(wire::FINISH, "finish", /*to_servers=*/false, options).Wait();
  }

  // See CrashWorker.
  void Crash() {
    crashed_.store(true);
    finished_.store(true);
    node_.Crash();
  }

  // Push, Pull, Assign and their asynchronous forms address the whole table: the span
  // must have exactly its size.
  absl::Status CheckWholeTable(const char* verb, std::string_view table, size_t n) const {
    absl::StatusOr<const TableEntry*> t = node_.Table(table);
    // IssueRange: NotFound, or a sparse table.
    if (!t.ok() || (*t)->info.size == n || (*t)->info.sparse) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s of table '%s': %d values given for a table of %d elements (give an offset for "
        "a part)",
        verb, table, n, (*t)->info.size));
  }

 private:
  static Request AsRequest(absl::StatusOr<Request> issued) {
    if (!issued.ok()) return Request(RequestState::Failed(issued.status()));
    return *std::move(issued);
  }

  absl::Status Usable() const {
    KAIROS_RETURN_IF_ERROR(node_.EndStatus());
    if (finished_.load()) {
      return absl::FailedPreconditionError(
          absl::StrFormat("worker %d has finished; no more requests", rank()));
    }
    return absl::OkStatus();
  }

  absl::Time DeadlineOf(const CallOptions& options) const {
    return options.deadline.value_or(EnvOf(options_).Now() + options_.request_timeout);
  }

  // How long a server may hold a read or a control request: until the call's deadline
  // (at least 1 ms, as 0 means the server's own limit).
  uint64_t TimeoutMs(absl::Time deadline) const {
    return static_cast<uint64_t>(
        std::max<int64_t>(1, absl::ToInt64Milliseconds(deadline - EnvOf(options_).Now())));
  }

  // An assign whose values were checked.
  Request IssueAssign(std::string_view table, uint64_t offset, Buffer values,
                      const CallOptions& options) {
    const uint64_t length = values.size();
    return AsRequest(IssueRange(RangeCall{.kind = wire::ASSIGN,
                                          .table = table,
                                          .offset = offset,
                                          .length = length,
                                          .payload = std::move(values)},
                                options));
  }

  // An assign's values must all be finite: InvalidArgument naming the first that is not.
  static absl::Status CheckFinite(std::string_view table, uint64_t offset,
                                  std::span<const float> values) {
    const auto bad = std::find_if(values.begin(), values.end(),
                                  [](float v) { return !std::isfinite(v); });
    if (bad == values.end()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrFormat(
        "assign of table '%s': the values hold %g at element %d; nothing was sent", table,
        *bad, offset + static_cast<uint64_t>(bad - values.begin())));
  }

  // Checks a push, pull or assign, slices its range into one message per chunk and posts
  // them to the I/O thread. An error: the call was refused, and nothing was sent.
  absl::StatusOr<Request> IssueRange(RangeCall call, const CallOptions& options) {
    const char* verb = call.kind == wire::PUSH     ? "push"
                       : call.kind == wire::ASSIGN ? "assign"
                                                   : "pull";
    KAIROS_RETURN_IF_ERROR(Usable());
    absl::StatusOr<const TableEntry*> t = node_.Table(call.table);
    if (!t.ok()) {
      return absl::Status(t.status().code(), absl::StrCat(verb, ": ", t.status().message()));
    }
    const TableInfo& info = (*t)->info;
    if (info.sparse) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s of table '%s': the table is sparse (use PushSparse / PullSparse)", verb,
          info.name));
    }
    KAIROS_RETURN_IF_ERROR(CheckRange(verb, info, call.offset, call.length));
    const absl::Time deadline = DeadlineOf(options);
    std::span<const Chunk> chunks =
        (*t)->partition.Overlapping(call.offset, call.offset + call.length);
    const int parts = static_cast<int>(chunks.size());
    auto state = std::make_shared<RequestState>(
        RequestLabel{verb, info.name, call.offset, call.offset + call.length},
        deadline + options_.deadline_grace, parts,
        /*spin=*/call.length * sizeof(float) <= kSpinMaxBytes, node_.wait_tuning(),
        EnvOf(options_));
    if (call.target.gather != nullptr) state->GatherInto(call.target.gather, call.length);
    if (call.target.out != nullptr) state->ReceiveInto(call.target.out);
    const Stamp stamp{.sender = node_.node_id(),
                      .clock = clock_.load(),
                      .timeout_ms = TimeoutMs(deadline),
                      .first_id = node_.ReserveIds(parts)};
    node_.Post(RouteRange(RangeRoute{.kind = call.kind,
                                     .table = info.id,
                                     .offset = call.offset,
                                     .length = call.length,
                                     .payload = std::move(call.payload),
                                     .eager = call.eager,
                                     .scale = call.scale,
                                     // Encoded here, or by the I/O thread as it leaves.
                                     .residual = call.kind == wire::PUSH && !(*t)->encode_on_send
                                                     ? (*t)->residual.get()
                                                     : nullptr},
                          chunks, stamp, state),
               verb);
    return Request(state);
  }

  // A sparse push (`rows`) or pull (into `out`): checked, keys deduplicated and grouped by
  // shard (worker/sparse_routing.h), one message per shard. An error: refused, nothing sent.
  absl::StatusOr<Request> IssueSparse(wire::Kind kind, std::string_view table,
                                      std::span<const uint64_t> keys,
                                      std::span<const float> rows, std::span<float> out,
                                      const CallOptions& options) {
    const bool push = kind == wire::PUSH_SPARSE;
    const char* verb = push ? "sparse push" : "sparse pull";
    KAIROS_RETURN_IF_ERROR(Usable());
    absl::StatusOr<const TableEntry*> t = node_.Table(table);
    if (!t.ok()) {
      return absl::Status(t.status().code(), absl::StrCat(verb, ": ", t.status().message()));
    }
    const TableInfo& info = (*t)->info;
    if (!info.sparse) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s of table '%s': the table is dense (use Push / Pull)", verb, info.name));
    }
    const uint64_t width = info.row_width;
    if (keys.size() > kMaxSparseKeys || keys.size() * width > kMaxChunkElements) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s of table '%s': %d keys of rows of %d; one call carries at most %d keys "
          "(kMaxSparseKeys) and %d values (kMaxChunkElements)",
          verb, info.name, keys.size(), width, kMaxSparseKeys, kMaxChunkElements));
    }
    if (keys.size() * width * sizeof(float) > static_cast<uint64_t>(options_.max_message_bytes)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s of table '%s': %d keys of rows of %d make a message larger than "
          "max_message_bytes (%d)",
          verb, info.name, keys.size(), width, options_.max_message_bytes));
    }
    const uint64_t given = push ? rows.size() : out.size();
    if (given != keys.size() * width) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s of table '%s': %d values for %d keys of rows of %d (want %d)", verb, info.name,
          given, keys.size(), width, keys.size() * width));
    }
    if (keys.empty()) return Request();
    SparsePlan plan = PlanSparse(keys, num_servers());
    const Buffer summed = push ? SumRows(plan, rows, info.row_width) : Buffer();
    const absl::Time deadline = DeadlineOf(options);
    const int parts = static_cast<int>(plan.groups.size());
    const uint64_t values = plan.distinct.size() * width;
    auto state = std::make_shared<RequestState>(
        RequestLabel{verb, info.name, 0, keys.size()}, deadline + options_.deadline_grace, parts,
        /*spin=*/values * sizeof(float) <= kSpinMaxBytes, node_.wait_tuning(), EnvOf(options_));
    if (!push) {
      // The rows arrive in plan order into `gathered`; Wait then copies each caller key's
      // row into place.
      struct Scatter {
        ConstBuffer gathered;
        std::vector<uint32_t> position;
      };
      auto scatter = std::make_shared<Scatter>();
      scatter->position = std::move(plan.position);
      state->GatherInto(&scatter->gathered, values);
      state->AfterDelivery([scatter, out, width] {
        const float* from = scatter->gathered.data();
        for (std::size_t i = 0; i < scatter->position.size(); ++i) {
          std::copy_n(from + std::size_t{scatter->position[i]} * width, width,
                      out.data() + i * width);
        }
      });
    }
    const Stamp stamp{.sender = node_.node_id(),
                      .clock = clock_.load(),
                      .timeout_ms = TimeoutMs(deadline),
                      .first_id = node_.ReserveIds(parts)};
    Batch batch = RouteSparse(kind, info.id, info.row_width, plan, summed, stamp, state);
    if (push && !(*t)->encode_on_send) EncodeSparseRows(info.compression, batch);
    node_.Post(std::move(batch), verb);
    return Request(state);
  }

  // A FINISH or BARRIER to every server or to the coordinator, tracked as one request.
  Request Control(wire::Kind kind, const char* what, bool to_servers,
                  const CallOptions& options) {
    const absl::Time deadline = DeadlineOf(options);
    const int n = to_servers ? num_servers() : 1;
    auto state = std::make_shared<RequestState>(RequestLabel{what, "", 0, 0, rank()},
                                                deadline + options_.deadline_grace, n,
                                                /*spin=*/false, nullptr, EnvOf(options_));
    const Stamp stamp{.sender = node_.node_id(),
                      .clock = clock_.load(),
                      .timeout_ms = TimeoutMs(deadline),
                      .first_id = node_.ReserveIds(n)};
    node_.Post(RouteControl(kind, to_servers ? n : 0, stamp, state), what);
    return Request(state);
  }

  const WorkerOptions options_;
  WorkerNode node_;
  std::atomic<int64_t> clock_{0};
  std::atomic<bool> finished_{false};
  std::atomic<bool> crashed_{false};
};

}  // namespace
}  // namespace internal

// The worker's state and calls (internal::WorkerImpl); Worker forwards to it.
class Worker::Impl final : public internal::WorkerImpl {
 public:
  using WorkerImpl::WorkerImpl;
};

namespace internal {

void CrashWorker(Worker& worker) { WorkerAccess::ImplOf(worker).Crash(); }

}  // namespace internal

Worker::Worker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Worker::~Worker() = default;

absl::StatusOr<std::unique_ptr<Worker>> Worker::Create(const WorkerOptions& options) {
  if (options.coordinator.empty()) {
    return absl::InvalidArgumentError("WorkerOptions.coordinator is empty");
  }
  auto impl = std::make_unique<Impl>(options);
  KAIROS_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<Worker>(new Worker(std::move(impl)));
}

int Worker::rank() const { return impl_->rank(); }
int Worker::num_workers() const { return impl_->num_workers(); }
int Worker::num_servers() const { return impl_->num_servers(); }
const JobConfig& Worker::job() const { return impl_->job(); }
WorkerStats Worker::stats() const { return impl_->stats(); }
int64_t Worker::clock() const { return impl_->clock(); }
absl::StatusOr<TableInfo> Worker::table(std::string_view name) const { return impl_->table(name); }

absl::Status Worker::Push(std::string_view table, std::span<const float> gradient,
                          const CallOptions& options) {
  KAIROS_RETURN_IF_ERROR(impl_->CheckWholeTable("push", table, gradient.size()));
  return impl_->PushAsync(table, 0, Buffer::CopyOf(gradient), options).Wait();
}
absl::Status Worker::Push(std::string_view table, uint64_t offset, std::span<const float> gradient,
                          const CallOptions& options) {
  return impl_->PushAsync(table, offset, Buffer::CopyOf(gradient), options).Wait();
}
Request Worker::PushAsync(std::string_view table, std::span<const float> gradient,
                          const CallOptions& options) {
  if (absl::Status s = impl_->CheckWholeTable("push", table, gradient.size()); !s.ok()) {
    return Request(internal::RequestState::Failed(s));
  }
  return impl_->PushAsync(table, 0, Buffer::CopyOf(gradient), options);
}
Request Worker::PushAsync(std::string_view table, uint64_t offset, std::span<const float> gradient,
                          const CallOptions& options) {
  return impl_->PushAsync(table, offset, Buffer::CopyOf(gradient), options);
}
Request Worker::PushAsync(std::string_view table, uint64_t offset, Buffer gradient,
                          const CallOptions& options) {
  return impl_->PushAsync(table, offset, std::move(gradient), options);
}

absl::Status Worker::Pull(std::string_view table, std::span<float> out,
                          const CallOptions& options) {
  KAIROS_RETURN_IF_ERROR(impl_->CheckWholeTable("pull", table, out.size()));
  return impl_->PullAsync(table, 0, out, options).Wait();
}
absl::Status Worker::Pull(std::string_view table, uint64_t offset, std::span<float> out,
                          const CallOptions& options) {
  return impl_->PullAsync(table, offset, out, options).Wait();
}
Request Worker::PullAsync(std::string_view table, std::span<float> out,
                          const CallOptions& options) {
  if (absl::Status s = impl_->CheckWholeTable("pull", table, out.size()); !s.ok()) {
    return Request(internal::RequestState::Failed(s));
  }
  return impl_->PullAsync(table, 0, out, options);
}
Request Worker::PullAsync(std::string_view table, uint64_t offset, std::span<float> out,
                          const CallOptions& options) {
  return impl_->PullAsync(table, offset, out, options);
}
Request Worker::PullAsync(std::string_view table, uint64_t offset, uint64_t length,
                          ConstBuffer* out, const CallOptions& options) {
  return impl_->PullAsync(table, offset, length, out, options);
}

absl::Status Worker::Assign(std::string_view table, std::span<const float> values,
                            const CallOptions& options) {
  KAIROS_RETURN_IF_ERROR(impl_->CheckWholeTable("assign", table, values.size()));
  return impl_->AssignAsync(table, 0, values, options).Wait();
}
absl::Status Worker::Assign(std::string_view table, uint64_t offset, std::span<const float> values,
                            const CallOptions& options) {
  return impl_->AssignAsync(table, offset, values, options).Wait();
}
Request Worker::AssignAsync(std::string_view table, std::span<const float> values,
                            const CallOptions& options) {
  if (absl::Status s = impl_->CheckWholeTable("assign", table, values.size()); !s.ok()) {
    return Request(internal::RequestState::Failed(s));
  }
  return impl_->AssignAsync(table, 0, values, options);
}
Request Worker::AssignAsync(std::string_view table, uint64_t offset, std::span<const float> values,
                            const CallOptions& options) {
  return impl_->AssignAsync(table, offset, values, options);
}
Request Worker::AssignAsync(std::string_view table, uint64_t offset, Buffer values,
                            const CallOptions& options) {
  return impl_->AssignAsync(table, offset, std::move(values), options);
}

Request Worker::PushPullAsync(PushPullPart part, PushPullReply* reply,
                              const PushPullOptions& options) {
  return impl_->PushPullAsync(std::move(part), reply, options);
}
std::vector<Request> Worker::PushPullAsync(std::span<PushPullPart> parts, PushPullReply* reply,
                                           const PushPullOptions& options) {
  return impl_->PushPullAsync(parts, reply, options);
}

absl::Status Worker::SetLearningRate(std::string_view table, float learning_rate,
                                     const CallOptions& options) {
  return impl_->SetLearningRate(table, learning_rate, options);
}

absl::Status Worker::PushSparse(std::string_view table, std::span<const uint64_t> keys,
                                std::span<const float> gradients, const CallOptions& options) {
  return impl_->PushSparseAsync(table, keys, gradients, options).Wait();
}
absl::Status Worker::PullSparse(std::string_view table, std::span<const uint64_t> keys,
                                std::span<float> out, const CallOptions& options) {
  return impl_->PullSparseAsync(table, keys, out, options).Wait();
}
Request Worker::PushSparseAsync(std::string_view table, std::span<const uint64_t> keys,
                                std::span<const float> gradients, const CallOptions& options) {
  return impl_->PushSparseAsync(table, keys, gradients, options);
}
Request Worker::PullSparseAsync(std::string_view table, std::span<const uint64_t> keys,
                                std::span<float> out, const CallOptions& options) {
  return impl_->PullSparseAsync(table, keys, out, options);
}

absl::Status Worker::AdvanceClock() { return impl_->AdvanceClock(); }
absl::Status Worker::Barrier(const CallOptions& options) { return impl_->Barrier(options); }
absl::Status Worker::Shutdown(const CallOptions& options) { return impl_->Shutdown(options); }

}  // namespace kairos
