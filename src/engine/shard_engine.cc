// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ShardEngine (see shard_engine.h): the checks, the policy decisions and the waiting reads
// of one shard. The float work goes through ChunkWork (chunk_work.h).

#include "engine/shard_engine.h"

#include <algorithm>
#include <cmath>
#include <new>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/limits.h"
#include "kairos/eigen.h"
#include "kairos/status.h"

namespace kairos::internal {

using policy::MemberState;
using policy::StragglerDecision;

std::string Describe(const EngineRequest& r) {
  static constexpr const char* kNames[] = {"PUSH",   "PULL",   "CLOCK",
                                           "FINISH", "ASSIGN", "SET_LEARNING_RATE",
                                           "PUSH_SPARSE", "PULL_SPARSE"};
  std::string s = absl::StrFormat("%s #%d from node %d", kNames[static_cast<int>(r.kind)],
                                  r.request_id, r.sender);
  switch (r.kind) {
    case EngineRequest::Kind::kPush:
    case EngineRequest::Kind::kPull:
    case EngineRequest::Kind::kAssign:
      absl::StrAppendFormat(&s, " (table %d [%d, %d))", r.table, r.offset, r.offset + r.length);
      break;
    case EngineRequest::Kind::kSetLearningRate:
      absl::StrAppendFormat(&s, " (table %d)", r.table);
      break;
    case EngineRequest::Kind::kPushSparse:
    case EngineRequest::Kind::kPullSparse:
      absl::StrAppendFormat(&s, " (table %d, %d keys)", r.table, r.length);
      break;
    default:
      break;
  }
  return s;
}

ShardEngine::ShardEngine(const EngineOptions& options, int num_workers, EngineHost* host)
    : options_(options),
      num_workers_(num_workers),
      host_(host),
      work_(std::make_unique<ChunkWork>(host)) {}

ShardEngine::~ShardEngine() = default;

absl::StatusOr<std::unique_ptr<ShardEngine>> ShardEngine::Create(
    const JobConfig& job, const policy::PolicySpec& spec, int shard, int num_shards,
    int num_workers, const EngineOptions& options, EngineHost* host) {
  bool sparse = false;
  for (const TableSpec& t : job.tables) sparse = sparse || t.sparse();
  if (sparse && spec.weighting.kind == policy::WeightingSpec::Kind::kValue) {
    return absl::InvalidArgumentError(
        "value-staleness weighting (VSGD) is not supported on sparse tables yet: the job has "
        "a sparse table (docs/sparse.md)");
  }
  if (sparse && spec.aggregation.kind != policy::AggregationSpec::Kind::kImmediate &&
      spec.aggregation.kind != policy::AggregationSpec::Kind::kRoundAverage) {
    return absl::InvalidArgumentError(
        "only immediate and round-average (BSP) aggregation support sparse tables: the "
        "job's policy aggregates otherwise and has a sparse table (docs/sparse.md)");
  }
  std::unique_ptr<ShardEngine> e(new ShardEngine(options, num_workers, host));
  e->num_shards_ = num_shards;
  e->job_ = job;
  absl::StatusOr<std::unique_ptr<Shard>> built =
      Shard::Create(job, shard, num_shards, num_workers, options.updater_factory,
                    options.inline_apply_bytes);
  if (!built.ok()) return built.status();
  try {
    e->shard_ = *std::move(built);
    e->clock_only_policy_ =
        spec.gate.kind == policy::GateSpec::Kind::kSsp &&
        spec.aggregation.kind != policy::AggregationSpec::Kind::kRegistered &&
        spec.weighting.kind == policy::WeightingSpec::Kind::kConstant &&
        spec.pull.kind != policy::PullSpec::Kind::kRegistered &&
        spec.straggler.kind == policy::StragglerSpec::Kind::kNone;
    e->gate_ = policy::MakeGate(spec, num_workers);
    e->straggler_ = policy::MakeStragglerPolicy(spec, num_workers);
    e->waiting_of_rank_.assign(num_workers, 0);
    for (ShardTable& t : e->shard_->tables()) {
      for (ShardChunk& c : t.chunks) c.version_read.assign(num_workers, 0);
      if (t.sparse) t.sparse->lane.version_read.assign(num_workers, 0);
    }
    absl::MutexLock lock(&e->metrics_mu_);
    e->metrics_.resize(num_workers);
    for (int r = 0; r < num_workers; ++r) e->metrics_[r].rank = r;
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "shard %d: out of memory while allocating the bookkeeping of %d workers", shard,
        num_workers));
  }
  return e;
}

// ------------------------------------------------------------------------ checks

void ShardEngine::Count(uint64_t RefusalCounts::*counter) {
  absl::MutexLock lock(&metrics_mu_);
  ++(refused_.*counter);
}

void ShardEngine::Refuse(const EngineRequest& r, uint64_t RefusalCounts::*counter,
                         const absl::Status& status) {
  Count(counter);
  EngineAnswer a;
  a.kind = EngineAnswer::Kind::kError;
  a.request = r;
  a.status = status;
  host_->Answer(std::move(a));
}

bool ShardEngine::Active(const EngineRequest& r) {
  if (r.rank >= 0 && r.rank < num_workers_ && gate_->clocks().active(r.rank)) return true;
  Refuse(r, &RefusalCounts::not_active,
         absl::FailedPreconditionError(absl::StrFormat(
             "worker %d has left the job (finished or declared dead)", r.rank)));
  return false;
}

std::optional<std::pair<ShardTable*, ShardChunk*>> ShardEngine::Locate(const EngineRequest& r) {
  auto located = shard_->Locate(r.table, r.offset, r.length);
  if (!located.ok()) {
    Refuse(r, &RefusalCounts::bad_range, located.status());
    return std::nullopt;
  }
  return *located;
}

// A request's clock is at least 0 and at most max_clock_lead ahead of the worker's clock
// (so clock + 1 and clock - min never overflow, and BSP opens no far-future round).
bool ShardEngine::ClockInWindow(const EngineRequest& r) {
  const int64_t known = gate_->clocks().clock(r.rank);
  const int64_t lead = std::max<int64_t>(0, options_.max_clock_lead);
  if (r.clock >= 0 && r.clock - known <= lead) return true;
  Refuse(r, &RefusalCounts::bad_clock,
         absl::OutOfRangeError(absl::StrFormat(
             "clock %d of worker %d is outside [0, %d] (its clock %d plus max_clock_lead %d)",
             r.clock, r.rank, known + lead, known, lead)));
  return false;
}

// ------------------------------------------------------------------------ pushes

void ShardEngine::OnPush(const EngineRequest& r, Buffer gradient, absl::Time now) {
  if (!Active(r)) return;
  const auto located = Locate(r);
  if (!located.has_value()) return;
  auto [table, chunk] = *located;
  if (!ClockInWindow(r)) return;
  if (!(std::isfinite(r.worker_scale) && r.worker_scale >= 0)) {
    return Refuse(r, &RefusalCounts::bad_scale,
                  absl::InvalidArgumentError(absl::StrFormat(
                      "worker_scale %g is not a finite number > 0", r.worker_scale)));
  }
  if (const std::size_t bad = FirstNonFinite(gradient.span()); bad < gradient.size()) {
    return NonFinitePush(r, *table, r.offset + bad, gradient[bad], now);
  }
  pushes_.fetch_add(1, std::memory_order_relaxed);
  bytes_in_.fetch_add(r.length * sizeof(float), std::memory_order_relaxed);

  const policy::StalenessInfo info{r.clock, chunk->version_read[r.rank], chunk->version};
  const StragglerDecision verdict = straggler_->OnPush(r.rank, info);
  const bool drop = verdict.action == StragglerDecision::Action::kDrop;
  RecordPush(r.rank, info, verdict);
  gate_->OnPush(r.rank, r.clock, now);
  // The answer is "pushed", or under eager pull the read that follows the push.
  std::optional<EngineAnswer> answer;
  if (!r.pull_after) {
    answer.emplace();
    answer->kind = EngineAnswer::Kind::kPushed;
    answer->request = r;
    answer->dropped = drop;
    answer->refresh = verdict.refresh;
    answer->version = chunk->version;
  }
  if (!drop) {
    float extra = r.worker_scale > 0 ? r.worker_scale : 1.0f;
    if (verdict.action == StragglerDecision::Action::kDownWeight) extra *= verdict.weight;
    Contribute(*table, *chunk, r, info, extra, std::move(gradient), std::move(answer));
  } else {
    LogPush(r.rank, PushRecord{r.clock, r.offset, info.iteration_staleness(), 0.0, 0.0f,
                               /*dropped=*/true});
    if (answer.has_value()) host_->Answer(*std::move(answer));
  }
  if (r.pull_after) QueueEagerRead(r, drop, verdict.refresh, now);
}

// A push holding NaN or Inf at element `at`: never applied. Refused, or under
// NonFinitePolicy::kSkip answered as if applied (and its eager read still served).
void ShardEngine::NonFinitePush(const EngineRequest& r, const ShardTable& table, uint64_t at,
                                float value, absl::Time now) {
  {
    absl::MutexLock lock(&metrics_mu_);
    ++metrics_[r.rank].nonfinite;
  }
  if (table.spec.nonfinite == NonFinitePolicy::kRefuse) {
    return Refuse(r, &RefusalCounts::nonfinite,
                  absl::InvalidArgumentError(absl::StrFormat(
                      "the gradient holds %g at element %d of table '%s'; nothing was "
                      "applied (the table refuses non-finite pushes)",
                      value, at, table.spec.name)));
  }
  Count(&RefusalCounts::nonfinite_skipped);
  if (r.pull_after) return QueueEagerRead(r, false, false, now);
  EngineAnswer a;
  a.kind = EngineAnswer::Kind::kPushed;
  a.request = r;
  host_->Answer(std::move(a));
}

void ShardEngine::RecordPush(int rank, const policy::StalenessInfo& info,
                             const StragglerDecision& verdict) {
  absl::MutexLock lock(&metrics_mu_);
  WorkerMetrics& wm = metrics_[rank];
  ++wm.pushes;
  wm.staleness.Add(info.iteration_staleness());
  if (verdict.action == StragglerDecision::Action::kDrop) ++wm.dropped;
  if (verdict.action == StragglerDecision::Action::kDownWeight) ++wm.downweighted;
  if (verdict.refresh) ++wm.refreshes;
  stragglers_ = straggler_->Stragglers();
}

void ShardEngine::LogPush(int rank, const PushRecord& record) {
  if (options_.push_log_size <= 0) return;
  absl::MutexLock lock(&metrics_mu_);
  std::vector<PushRecord>& log = metrics_[rank].push_log;
  if (static_cast<int>(log.size()) >= options_.push_log_size) log.erase(log.begin());
  log.push_back(record);
}

// The multiplier of an accepted push: the chunk's weighting (VSGD reads ||D_i|| here,
// which is why this runs where the chunk's work runs) times `extra` (the straggler
// policy's down-weight and the worker's own eager-pull scale). Records it.
float ShardEngine::PushScale(ShardTable& table, ShardChunk& chunk, const EngineRequest& r,
                             policy::StalenessInfo info, float extra) {
  if (table.track_drift) info.value_staleness = table.ValueStaleness(chunk, r.rank);
  const float scale = chunk.weighting->Scale(r.rank, info) * extra;
  {
    absl::MutexLock lock(&metrics_mu_);
    WorkerMetrics& wm = metrics_[r.rank];
    wm.scale.Add(scale);
    if (table.track_drift) wm.value_staleness.Add(info.value_staleness);
  }
  LogPush(r.rank, PushRecord{r.clock, r.offset, info.iteration_staleness(),
                             info.value_staleness, scale, false});
  return scale;
}

void ShardEngine::Contribute(ShardTable& table, ShardChunk& chunk, const EngineRequest& r,
                             const policy::StalenessInfo& info, float extra, Buffer gradient,
                             std::optional<EngineAnswer> answer) {
  const policy::AggregateDecision d = chunk.aggregation->OnPush(r.rank, r.clock);
  EngineHost* host = host_;
  auto send = [host](std::optional<EngineAnswer>& a) {
    if (a.has_value()) host->Answer(*std::move(a));
  };
  if (d.kind == policy::AggregateDecision::Kind::kApplyNow) {
    const uint64_t step = ++chunk.version;  // the update's step, for the updater
    version_.fetch_add(1, std::memory_order_relaxed);
    if (answer.has_value()) answer->version = chunk.version;
    if (!chunk.apply_inline && !table.track_drift) {
      // Through the chunk's queue, where it may be applied together with others.
      PendingApply p;
      p.offset = r.offset;
      p.gradient = std::move(gradient);
      p.t = r.clock;
      p.step = step;
      p.scale = [this, &table, &chunk, r, info, extra] {
        return PushScale(table, chunk, r, info, extra);
      };
      p.done = [send, answer = std::move(answer)]() mutable { send(answer); };
      return work_->Apply(table, chunk, std::move(p));
    }
    work_->Run(chunk, [this, &table, &chunk, gradient, r, info, extra, step, send,
                       answer = std::move(answer)]() mutable {
      const float scale = PushScale(table, chunk, r, info, extra);
      table.ApplyTracked(chunk, r.offset,
                         table.MakeUpdate(chunk, gradient.span(), 1.0f, scale, r.clock, step));
      gradient = Buffer();  // release the received message before answering
      send(answer);
    });
    return;
  }
  Buffer& sum = chunk.buckets[d.bucket];
  if (sum.empty()) sum = Buffer::Zeros(chunk.chunk.size());
  Buffer part = sum.Slice(r.offset - chunk.chunk.begin, r.length);
  work_->Run(chunk, [this, &table, &chunk, part, gradient, r, info, extra, send,
                     answer = std::move(answer)]() mutable {
    const float scale = PushScale(table, chunk, r, info, extra);
    AsEigen(part) += scale * AsEigen(std::span<const float>(gradient.span()));
    gradient = Buffer();
    send(answer);
  });
  ApplyReadyBuckets(table, chunk);
}

// Applies the buckets of `c` that are complete.
void ShardEngine::ApplyReadyBuckets(ShardTable& t, ShardChunk& c) {
  for (const policy::ReadyBucket& ready : c.aggregation->TakeReady(gate_->clocks())) {
    auto it = c.buckets.find(ready.bucket);
    if (it == c.buckets.end()) continue;
    Buffer sum = std::move(it->second);
    c.buckets.erase(it);
    const uint64_t step = ++c.version;
    version_.fetch_add(1, std::memory_order_relaxed);
    // The round's average: 1 / divisor scales the summed gradient; the schedule's t is the
    // round (the bucket).
    const float scale = ready.divisor > 0 ? 1.0f / ready.divisor : 1.0f;
    const int64_t round = ready.bucket;
    work_->Run(c, [&t, &c, sum, scale, round, step] {
      t.ApplyTracked(c, c.chunk.begin, t.MakeUpdate(c, sum.span(), scale, 1.0f, round, step));
    });
  }
}

// ------------------------------------------------------------------------ sparse tables

ShardTable* ShardEngine::LocateSparse(const EngineRequest& r) {
  std::vector<ShardTable>& tables = shard_->tables();
  if (r.table >= tables.size()) {
    Refuse(r, &RefusalCounts::bad_range,
           absl::NotFoundError(absl::StrFormat("unknown table id %d (the job has %d tables)",
                                               r.table, tables.size())));
    return nullptr;
  }
  ShardTable& t = tables[r.table];
  if (!t.sparse) {
    Refuse(r, &RefusalCounts::bad_range,
           absl::InvalidArgumentError(absl::StrFormat(
               "table '%s' is dense: it has ranges, not rows by key (use Push / Pull)",
               t.spec.name)));
    return nullptr;
  }
  const uint64_t n = KeyCount(r.keys);
  const uint64_t width = t.spec.row_width;
  // n <= kMaxSparseKeys and width <= kMaxRowWidth: the product cannot overflow.
  if (n != r.length || n == 0 || n > kMaxSparseKeys || n * width > kMaxChunkElements) {
    Refuse(r, &RefusalCounts::malformed,
           absl::InvalidArgumentError(absl::StrFormat(
               "%d keys (header: %d) of table '%s' (rows of %d): a sparse request carries 1 "
               "to %d keys and at most %d values",
               n, r.length, t.spec.name, width, kMaxSparseKeys, kMaxChunkElements)));
    return nullptr;
  }
  const int num_shards = num_shards_;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t key = KeyAt(r.keys, i);
    if (ShardOfKey(key, num_shards) != shard_->index()) {
      Refuse(r, &RefusalCounts::bad_range,
             absl::InvalidArgumentError(absl::StrFormat(
                 "key %d of table '%s' belongs to shard %d, not shard %d", key, t.spec.name,
                 ShardOfKey(key, num_shards), shard_->index())));
      return nullptr;
    }
  }
  return &t;
}

void ShardEngine::OnPushSparse(const EngineRequest& r, Buffer rows, absl::Time now) {
  if (!Active(r)) return;
  ShardTable* table = LocateSparse(r);
  if (table == nullptr) return;
  const uint64_t width = table->spec.row_width;
  if (rows.size() != r.length * width) {
    return Refuse(r, &RefusalCounts::malformed,
                  absl::InvalidArgumentError(absl::StrFormat(
                      "%d values for %d keys of table '%s' with rows of %d (want %d)",
                      rows.size(), r.length, table->spec.name, width, r.length * width)));
  }
  if (r.pull_after) {
    return Refuse(r, &RefusalCounts::malformed,
                  absl::InvalidArgumentError("a sparse push cannot ask for an eager pull"));
  }
  if (!ClockInWindow(r)) return;
  if (!(std::isfinite(r.worker_scale) && r.worker_scale >= 0)) {
    return Refuse(r, &RefusalCounts::bad_scale,
                  absl::InvalidArgumentError(absl::StrFormat(
                      "worker_scale %g is not a finite number > 0", r.worker_scale)));
  }
  if (const std::size_t bad = FirstNonFinite(rows.span()); bad < rows.size()) {
    return NonFinitePush(r, *table, bad, rows[bad], now);
  }
  pushes_.fetch_add(1, std::memory_order_relaxed);
  bytes_in_.fetch_add(rows.size_bytes() + r.keys.size_bytes(), std::memory_order_relaxed);
  ShardChunk& lane = table->sparse->lane;
  const policy::StalenessInfo info{r.clock, lane.version_read[r.rank], lane.version};
  const StragglerDecision verdict = straggler_->OnPush(r.rank, info);
  const bool drop = verdict.action == StragglerDecision::Action::kDrop;
  RecordPush(r.rank, info, verdict);
  gate_->OnPush(r.rank, r.clock, now);
  std::optional<EngineAnswer> answer;
  answer.emplace();
  answer->kind = EngineAnswer::Kind::kPushed;
  answer->request = r;
  answer->request.keys = Buffer();  // the answer does not need them
  answer->dropped = drop;
  answer->refresh = verdict.refresh;
  answer->version = lane.version;
  if (drop) {
    LogPush(r.rank, PushRecord{r.clock, 0, info.iteration_staleness(), 0.0, 0.0f, true});
    return host_->Answer(*std::move(answer));
  }
  float extra = r.worker_scale > 0 ? r.worker_scale : 1.0f;
  if (verdict.action == StragglerDecision::Action::kDownWeight) extra *= verdict.weight;
  ContributeSparse(*table, r, info, extra, std::move(rows), std::move(answer));
}

void ShardEngine::ContributeSparse(ShardTable& table, const EngineRequest& r,
                                   const policy::StalenessInfo& info, float extra, Buffer rows,
                                   std::optional<EngineAnswer> answer) {
  ShardChunk& lane = table.sparse->lane;
  const policy::AggregateDecision d = lane.aggregation->OnPush(r.rank, r.clock);
  EngineHost* host = host_;
  if (d.kind == policy::AggregateDecision::Kind::kApplyNow) {
    ++lane.version;
    version_.fetch_add(1, std::memory_order_relaxed);
    answer->version = lane.version;
    work_->Run(lane, [this, host, &table, &lane, r, info, extra, rows = std::move(rows),
                      answer = std::move(answer)]() mutable {
      const float scale = PushScale(table, lane, r, info, extra);
      const uint64_t budget = options_.sparse_budget_bytes;
      const uint64_t used = shard_->sparse_bytes();
      const uint64_t room = budget == 0 ? UINT64_MAX : budget - std::min(budget, used);
      const absl::Status s = table.ApplySparse(r.keys, rows, scale, r.clock, room);
      rows = Buffer();
      if (!s.ok()) {
        answer->kind = EngineAnswer::Kind::kError;
        answer->status = s;
      }
      host->Answer(*std::move(answer));
    });
    return;
  }
  std::shared_ptr<SparseBucket>& bucket = table.sparse->buckets[d.bucket];
  if (bucket == nullptr) bucket = std::make_shared<SparseBucket>();
  work_->Run(lane, [this, host, &table, &lane, bucket, r, info, extra, rows = std::move(rows),
                    answer = std::move(answer)]() mutable {
    const float scale = PushScale(table, lane, r, info, extra);
    try {
      bucket->Add(r.rank, r.keys, rows, table.spec.row_width, scale);
    } catch (const std::bad_alloc&) {
      answer->kind = EngineAnswer::Kind::kError;
      answer->status = absl::ResourceExhaustedError(absl::StrFormat(
          "table '%s': out of memory while summing the round's rows", table.spec.name));
    }
    rows = Buffer();
    host->Answer(*std::move(answer));
  });
  ApplyReadySparse(table);
}

void ShardEngine::ApplyReadySparse(ShardTable& t) {
  ShardChunk& lane = t.sparse->lane;
  for (const policy::ReadyBucket& ready : lane.aggregation->TakeReady(gate_->clocks())) {
    auto it = t.sparse->buckets.find(ready.bucket);
    if (it == t.sparse->buckets.end()) continue;
    std::shared_ptr<SparseBucket> bucket = std::move(it->second);
    t.sparse->buckets.erase(it);
    ++lane.version;
    version_.fetch_add(1, std::memory_order_relaxed);
    const int64_t round = ready.bucket;
    work_->Run(lane, [&t, bucket, round] {
      // The round's pushes were acknowledged when summed, so a row that cannot be allocated
      // here has nobody to tell: it stays unapplied (a shard out of memory; docs/sparse.md).
      (void)t.ApplyBucket(*bucket, round);
    });
  }
}

void ShardEngine::OnPullSparse(const EngineRequest& r, absl::Time now) {
  if (!Active(r)) return;
  if (LocateSparse(r) == nullptr) return;
  if (!ClockInWindow(r)) return;
  WaitingRead read;
  read.request = r;
  Admit(std::move(read), now);
}

// ------------------------------------------------------------------------ assign, learning rate

// Not a gradient: no gate, straggler policy, aggregation or weighting; the values replace
// the range on the chunk's lane, in order with the updates decided before and after it.
void ShardEngine::OnAssign(const EngineRequest& r, Buffer values, absl::Time /*now*/) {
  if (!Active(r)) return;
  const auto located = Locate(r);
  if (!located.has_value()) return;
  auto [table, chunk] = *located;
  if (values.size() != r.length) {
    return Refuse(r, &RefusalCounts::malformed,
                  absl::InvalidArgumentError(absl::StrFormat(
                      "%d values for a range of %d", values.size(), r.length)));
  }
  if (const std::size_t bad = FirstNonFinite(values.span()); bad < values.size()) {
    {
      absl::MutexLock lock(&metrics_mu_);
      ++metrics_[r.rank].nonfinite;
    }
    return Refuse(r, &RefusalCounts::nonfinite,
                  absl::InvalidArgumentError(absl::StrFormat(
                      "the values hold %g at element %d of table '%s'; nothing was assigned "
                      "(an assign refuses non-finite values whatever the table's "
                      "NonFinitePolicy)",
                      values[bad], r.offset + bad, table->spec.name)));
  }
  bytes_in_.fetch_add(r.length * sizeof(float), std::memory_order_relaxed);
  ++chunk->version;
  version_.fetch_add(1, std::memory_order_relaxed);
  EngineAnswer a;
  a.kind = EngineAnswer::Kind::kAssigned;
  a.request = r;
  a.version = chunk->version;
  // Init-captures: clang before 16 cannot capture structured bindings themselves.
  work_->RunInOrder(*table, *chunk, [host = host_, table = table, chunk = chunk,
                                     values = std::move(values), a = std::move(a)]() mutable {
    table->Assign(*chunk, a.request.offset, values.span());
    values = Buffer();  // release the received message before answering
    host->Answer(std::move(a));
  });
}

// Each owned chunk of the table takes the new rate on its lane, in order with its updates;
// the answer goes once the last one has it (lanes run in parallel, hence the atomic count).
void ShardEngine::OnSetLearningRate(const EngineRequest& r, absl::Time /*now*/) {
  if (!Active(r)) return;
  std::vector<ShardTable>& tables = shard_->tables();
  if (r.table >= tables.size()) {
    return Refuse(r, &RefusalCounts::bad_range,
                  absl::NotFoundError(absl::StrFormat(
                      "unknown table id %d (the job has %d tables)", r.table, tables.size())));
  }
  ShardTable& t = tables[r.table];
  const float lr = r.learning_rate;
  std::vector<ShardChunk*> chunks;
  if (t.sparse) chunks.push_back(&t.sparse->lane);
  for (ShardChunk& c : t.chunks) chunks.push_back(&c);
  if (!(std::isfinite(lr) && lr >= 0.0f)) {
    return Refuse(r, &RefusalCounts::bad_scale,
                  absl::InvalidArgumentError(absl::StrFormat(
                      "learning rate %g for table '%s' is not a finite number >= 0", lr,
                      t.spec.name)));
  }
  auto answer = std::make_shared<EngineAnswer>();
  answer->kind = EngineAnswer::Kind::kLearningRateSet;
  answer->request = r;
  if (chunks.empty()) return host_->Answer(std::move(*answer));  // none of it is here
  auto remaining = std::make_shared<std::atomic<std::size_t>>(chunks.size());
  for (ShardChunk* c : chunks) {
    work_->RunInOrder(t, *c, [host = host_, c, lr, remaining, answer] {
      c->learning_rate = lr;
      if (remaining->fetch_sub(1, std::memory_order_acq_rel) == 1) {
        host->Answer(std::move(*answer));
      }
    });
  }
}

// ------------------------------------------------------------------------ reads

void ShardEngine::OnPull(const EngineRequest& r, absl::Time now) {
  if (!Active(r)) return;
  if (!Locate(r).has_value()) return;
  if (!ClockInWindow(r)) return;
  WaitingRead read;
  read.request = r;
  Admit(std::move(read), now);
}

// Eager pull: the read of the pushed range at the worker's next clock, served (and
// answered with the clocks) once the gate admits it.
void ShardEngine::QueueEagerRead(const EngineRequest& push, bool dropped, bool refresh,
                                 absl::Time now) {
  WaitingRead read;
  read.request = push;
  read.request.kind = EngineRequest::Kind::kPull;
  read.request.clock = push.clock + 1;
  read.request.pull_after = false;
  read.eager = true;
  read.dropped = dropped;
  read.refresh = refresh;
  Admit(std::move(read), now);
}

// Serves `read` if the gate admits it now, else queues it until a clock or membership
// event (at most max_waiting_reads_per_worker of a worker, each for at most max_read_wait).
void ShardEngine::Admit(WaitingRead read, absl::Time now) {
  const EngineRequest& r = read.request;
  read.arrived = now;
  if (gate_->Admits(r.rank, r.clock)) return ServeRead(read, now);
  if (waiting_of_rank_[r.rank] >= options_.max_waiting_reads_per_worker) {
    return Refuse(r, &RefusalCounts::too_many_waiting,
                  absl::ResourceExhaustedError(absl::StrFormat(
                      "worker %d already has %d reads waiting in the gate "
                      "(max_waiting_reads_per_worker)",
                      r.rank, waiting_of_rank_[r.rank])));
  }
  const absl::Duration cap = options_.max_read_wait;
  if (r.timeout_ms > 0 &&
      r.timeout_ms <= static_cast<uint64_t>(absl::ToInt64Milliseconds(cap))) {
    read.deadline = read.arrived + absl::Milliseconds(static_cast<int64_t>(r.timeout_ms));
  } else {
    Count(&RefusalCounts::waits_capped);
    read.deadline = read.arrived + cap;
  }
  read.waited = true;
  {
    absl::MutexLock lock(&metrics_mu_);
    ++metrics_[r.rank].blocked_reads;
  }
  ++waiting_of_rank_[r.rank];
  waiting_.push_back(std::move(read));
}

void ShardEngine::ServeRead(const WaitingRead& read, absl::Time now) {
  const EngineRequest& r = read.request;
  const bool sparse = r.kind == EngineRequest::Kind::kPullSparse;
  ShardTable* table = nullptr;
  ShardChunk* chunk = nullptr;
  if (sparse) {
    table = &shard_->tables()[r.table];
    chunk = &table->sparse->lane;
  } else {
    std::tie(table, chunk) = *shard_->Locate(r.table, r.offset, r.length);
  }
  chunk->version_read[r.rank] = chunk->version;
  pulls_.fetch_add(1, std::memory_order_relaxed);
  {
    const policy::Tick min = gate_->clocks().MinActiveClock();
    absl::MutexLock lock(&metrics_mu_);
    WorkerMetrics& wm = metrics_[r.rank];
    ++wm.pulls;
    if (min != policy::kUnbounded) {
      wm.max_read_lead = std::max<int64_t>(wm.max_read_lead, r.clock - min);
    }
    if (read.waited) wm.blocked_time += now - read.arrived;
  }
  bytes_out_.fetch_add(
      r.length * sizeof(float) * (sparse ? table->spec.row_width : 1), std::memory_order_relaxed);
  EngineAnswer a;
  a.kind = EngineAnswer::Kind::kRead;
  a.request = r;
  a.version = chunk->version;
  if (read.eager) {
    a.eager = true;
    a.dropped = read.dropped;
    a.refresh = read.refresh;
    const policy::WorkerClocks& clocks = gate_->clocks();
    a.clocks.reserve(clocks.num_workers());
    for (int w = 0; w < clocks.num_workers(); ++w) a.clocks.push_back(clocks.clock(w));
  }
  if (sparse) {
    return work_->Read(*chunk, [host = host_, table, a = std::move(a)]() mutable {
      a.values = table->ReadSparse(a.request.keys);
      a.request.keys = Buffer();
      host->Answer(std::move(a));
    });
  }
  work_->Read(*chunk, [host = host_, table = table, chunk = chunk,
                       a = std::move(a)]() mutable {
    const EngineRequest& ar = a.request;
    table->ResetDrift(*chunk, ar.rank, ar.offset, ar.length);
    a.values = ShardTable::Read(*chunk, ar.offset, ar.length);
    host->Answer(std::move(a));
  });
}

// After the clocks or the membership changed: apply what became complete, then serve the
// reads the gate now admits (in arrival order; the apply jobs were queued first on each
// chunk's lane, so the reads see them).
void ShardEngine::Reevaluate(absl::Time now) {
  for (ShardTable& t : shard_->tables()) {
    for (ShardChunk& c : t.chunks) ApplyReadyBuckets(t, c);
    if (t.sparse) ApplyReadySparse(t);
  }
  std::deque<WaitingRead> still;
  for (WaitingRead& read : waiting_) {
    if (gate_->Admits(read.request.rank, read.request.clock)) {
      --waiting_of_rank_[read.request.rank];
      ServeRead(read, now);
    } else {
      still.push_back(std::move(read));
    }
  }
  waiting_.swap(still);
}

// ------------------------------------------------------------------------ clocks, leaving

void ShardEngine::OnClock(const EngineRequest& r, absl::Time now) {
  if (!Active(r)) return;
  if (r.clock < gate_->clocks().clock(r.rank)) {
    return Refuse(r, &RefusalCounts::bad_clock,
                  absl::InvalidArgumentError(absl::StrFormat(
                      "clock %d of worker %d goes back from %d", r.clock, r.rank,
                      gate_->clocks().clock(r.rank))));
  }
  if (!ClockInWindow(r)) return;
  gate_->OnClock(r.rank, r.clock, now);
  {
    // A clock is where the gate's controller decides (DSSP), for the clocking worker only.
    const policy::GateCounts counts = gate_->counts(r.rank);
    absl::MutexLock lock(&metrics_mu_);
    WorkerMetrics& wm = metrics_[r.rank];
    wm.controller_calls = counts.controller_calls;
    wm.zero_answers = counts.zero_answers;
    wm.grants = counts.grants;
    wm.granted_reads = counts.granted_reads;
  }
  Reevaluate(now);
}

void ShardEngine::OnFinish(const EngineRequest& r, absl::Time now) {
  if (!Active(r)) return;
  OnLeave(r.rank, MemberState::kFinished, now);
  EngineAnswer a;
  a.kind = EngineAnswer::Kind::kFinished;
  a.request = r;
  host_->Answer(std::move(a));
}

void ShardEngine::OnLeave(int rank, MemberState why, absl::Time now) {
  if (rank < 0 || rank >= num_workers_ || !gate_->clocks().active(rank)) return;
  gate_->OnLeave(rank, why);
  // Reads of a worker that left have nobody to answer; their wait ends now.
  DropWaitingOf(rank, now);
  Reevaluate(now);
}

int64_t ShardEngine::OnRejoin(int rank, absl::Time now) {
  if (rank < 0 || rank >= num_workers_) return -1;
  const policy::WorkerClocks& clocks = gate_->clocks();
  // The old incarnation's waiting reads have nobody to answer: their wait ends now.
  DropWaitingOf(rank, now);
  if (clocks.active(rank)) {
    Reevaluate(now);
    return clocks.clock(rank);
  }
  const policy::Tick min = clocks.MinActiveClock();
  const policy::Tick clock =
      min == policy::kUnbounded ? clocks.clock(rank) : std::max(clocks.clock(rank), min);
  gate_->OnRejoin(rank, clock, now);
  Reevaluate(now);
  return clock;
}

void ShardEngine::DropWaitingOf(int rank, absl::Time now) {
  absl::Duration waited;
  std::erase_if(waiting_, [&](const WaitingRead& read) {
    if (read.request.rank != rank) return false;
    waited += now - read.arrived;
    return true;
  });
  {
    absl::MutexLock lock(&metrics_mu_);
    metrics_[rank].blocked_time += waited;
  }
  waiting_of_rank_[rank] = 0;
}

// ------------------------------------------------------------------------ time

void ShardEngine::OnTick(absl::Time now) {
  std::deque<WaitingRead> still;
  for (WaitingRead& read : waiting_) {
    if (read.deadline > now) {
      still.push_back(std::move(read));
      continue;
    }
    const EngineRequest& r = read.request;
    --waiting_of_rank_[r.rank];
    {
      absl::MutexLock lock(&metrics_mu_);
      metrics_[r.rank].blocked_time += now - read.arrived;
    }
    std::vector<std::string> who;
    for (int w : gate_->Blockers(r.rank, r.clock)) {
      who.push_back(absl::StrFormat("worker %d (clock %d)", w, gate_->clocks().clock(w)));
    }
    EngineAnswer a;
    a.kind = EngineAnswer::Kind::kError;
    a.request = r;
    a.status = absl::DeadlineExceededError(absl::StrFormat(
        "read at clock %d by worker %d waited %s for %s", r.clock, r.rank,
        absl::FormatDuration(read.deadline - read.arrived),
        who.empty() ? std::string("no one") : absl::StrJoin(who, ", ")));
    host_->Answer(std::move(a));
  }
  waiting_.swap(still);
}

void ShardEngine::DropWaiting(absl::Time now) {
  absl::MutexLock lock(&metrics_mu_);
  for (const WaitingRead& read : waiting_) {
    metrics_[read.request.rank].blocked_time += now - read.arrived;
  }
  waiting_.clear();
  std::fill(waiting_of_rank_.begin(), waiting_of_rank_.end(), 0);
}

std::string ShardEngine::DescribeWaiting() const {
  std::vector<std::string> reads;
  for (const WaitingRead& read : waiting_) {
    const EngineRequest& r = read.request;
    std::vector<std::string> who;
    for (int b : gate_->Blockers(r.rank, r.clock)) {
      who.push_back(absl::StrFormat("%d (clock %d)", b, gate_->clocks().clock(b)));
    }
    reads.push_back(absl::StrFormat("worker %d's read at clock %d waits for workers [%s]",
                                    r.rank, r.clock, absl::StrJoin(who, ", ")));
  }
  return absl::StrJoin(reads, "; ");
}

// ------------------------------------------------------------------------ snapshots

std::vector<WorkerMetrics> ShardEngine::metrics() const {
  absl::MutexLock lock(&metrics_mu_);
  return metrics_;
}

RefusalCounts ShardEngine::refused() const {
  absl::MutexLock lock(&metrics_mu_);
  return refused_;
}

std::vector<int> ShardEngine::stragglers() const {
  absl::MutexLock lock(&metrics_mu_);
  return stragglers_;
}

EngineCounters ShardEngine::counters() const {
  EngineCounters c;
  c.pushes = pushes_.load(std::memory_order_relaxed);
  c.pulls = pulls_.load(std::memory_order_relaxed);
  c.bytes_in = bytes_in_.load(std::memory_order_relaxed);
  c.bytes_out = bytes_out_.load(std::memory_order_relaxed);
  c.version = version_.load(std::memory_order_relaxed);
  c.coalesced = work_->coalesced();
  c.sparse_rows = shard_->sparse_rows();
  c.sparse_bytes = shard_->sparse_bytes();
  return c;
}

int64_t ShardEngine::SnapshotClock() const {
  const policy::WorkerClocks& clocks = gate_->clocks();
  if (clocks.num_active() > 0) return clock_base_ + clocks.MinActiveClock();
  int64_t latest = 0;
  for (int w = 0; w < clocks.num_workers(); ++w) latest = std::max(latest, clocks.clock(w));
  return clock_base_ + latest;
}

void ShardEngine::Snapshot(std::function<void(std::shared_ptr<ShardSnapshot>)> done) {
  auto snap = std::make_shared<ShardSnapshot>();
  snap->shard = shard_->index();
  snap->num_shards = num_shards_;
  snap->clock = SnapshotClock();
  snap->chunk_elements = job_.chunk_elements;
  snap->tables = CheckpointTables(job_, *shard_);
  std::size_t dense = 0, sparse = 0;
  for (const ShardTable& t : shard_->tables()) {
    dense += t.chunks.size();
    sparse += t.sparse != nullptr;
  }
  snap->dense.resize(dense);
  snap->sparse.resize(sparse);
  // One count per part and one for this call, so `done` runs once, after the last part.
  auto pending = std::make_shared<std::atomic<std::size_t>>(dense + sparse + 1);
  auto finish = [snap, pending, done = std::move(done)] {
    if (pending->fetch_sub(1, std::memory_order_acq_rel) == 1) done(snap);
  };
  std::size_t d = 0, p = 0;
  for (ShardTable& t : shard_->tables()) {
    for (ShardChunk& c : t.chunks) {
      ShardSnapshot::Dense* part = &snap->dense[d++];
      part->table = t.id;
      part->begin = c.chunk.begin;
      part->end = c.chunk.end;
      part->version = c.version;  // decided here: the updates before this call
      work_->RunInOrder(t, c, [part, &c, finish] {
        part->values = c.values;  // shared: the chunk's next update copies it first
        part->state.assign(c.state.data(), c.state.data() + c.state.size());
        part->learning_rate = c.learning_rate;
        finish();
      });
    }
    if (t.sparse != nullptr) {
      ShardSnapshot::Sparse* part = &snap->sparse[p++];
      part->table = t.id;
      part->version = t.sparse->lane.version;
      SparseShard* held = t.sparse.get();
      work_->RunInOrder(t, held->lane, [part, held, finish] {
        const SparseRows& rows = held->rows;
        part->stride = static_cast<uint32_t>(rows.stride());
        part->learning_rate = held->lane.learning_rate;
        part->keys.reserve(rows.rows());
        part->steps.reserve(rows.rows());
        part->rows.reserve(rows.rows() * rows.stride());
        rows.ForEach([&](uint64_t key, uint32_t slot) {
          part->keys.push_back(key);
          part->steps.push_back(rows.step(slot));
          const std::span<const float> r = rows.row_and_state(slot);
          part->rows.insert(part->rows.end(), r.begin(), r.end());
        });
        finish();
      });
    }
  }
  finish();
}

absl::StatusOr<int64_t> ShardEngine::Restore(const std::vector<std::string>& files) {
  try {
    absl::StatusOr<int64_t> clock = RestoreShard(*shard_, num_shards_, job_, files);
    if (clock.ok()) clock_base_ = *clock;
    return clock;
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("shard %d: out of memory while restoring a checkpoint", shard_->index()));
  } catch (const std::length_error& e) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("shard %d: restoring a checkpoint: %s", shard_->index(), e.what()));
  }
}

bool ShardEngine::CanRebase() const {
  if (!clock_only_policy_ || !waiting_.empty()) return false;
  for (const ShardTable& t : shard_->tables()) {
    for (const ShardChunk& c : t.chunks) {
      if (c.aggregation != nullptr && c.aggregation->num_pending() > 0) return false;
    }
    if (t.sparse && t.sparse->lane.aggregation != nullptr &&
        t.sparse->lane.aggregation->num_pending() > 0) {
      return false;
    }
  }
  return true;
}

ShardEngine::ClockState ShardEngine::clock_state() const {
  ClockState s;
  const policy::WorkerClocks& clocks = gate_->clocks();
  for (int w = 0; w < num_workers_; ++w) {
    s.clocks.push_back(clocks.clock(w));
    s.states.push_back(clocks.state(w));
  }
  s.clock_base = clock_base_;
  return s;
}

absl::Status ShardEngine::Rebase(const std::string& path, const ClockState& state) {
  if (static_cast<int>(state.clocks.size()) != num_workers_ ||
      state.states.size() != state.clocks.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a base of %d workers for a shard of %d", state.clocks.size(), num_workers_));
  }
  try {
    KAIROS_RETURN_IF_ERROR(RestoreOwnShard(*shard_, num_shards_, job_, path));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("shard %d: out of memory while loading %s", shard_->index(), path));
  }
  clock_base_ = state.clock_base;
  for (int w = 0; w < num_workers_; ++w) {
    gate_->OnClock(w, state.clocks[w], absl::InfinitePast());
    if (state.states[w] != policy::MemberState::kActive) gate_->OnLeave(w, state.states[w]);
  }
  return absl::OkStatus();
}

}  // namespace kairos::internal
