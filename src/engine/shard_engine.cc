// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ShardEngine (see shard_engine.h): the checks, the policy decisions and the waiting reads
// of one shard. The float work goes through ChunkWork (chunk_work.h).

#include "engine/shard_engine.h"

#include <algorithm>
#include <cmath>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/limits.h"
#include "kairos/eigen.h"
#include "kairos/status.h"
#include "policy/table_policy.h"

namespace kairos::internal {

using policy::StragglerDecision;

namespace {

// Whether a shard under `spec` holds nothing beyond its values, optimizer state, update
// counts and the workers' clocks (CanRebase).
bool ClockOnly(const policy::PolicySpec& spec) {
  return spec.gate.kind == policy::GateSpec::Kind::kSsp &&
         spec.aggregation.kind != policy::AggregationSpec::Kind::kRegistered &&
         spec.weighting.kind == policy::WeightingSpec::Kind::kConstant &&
         spec.pull.kind != policy::PullSpec::Kind::kRegistered &&
         spec.straggler.kind == policy::StragglerSpec::Kind::kNone;
}

}  // namespace

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
  absl::StatusOr<std::vector<policy::PolicySpec>> table_specs = policy::TablePolicies(job, spec);
  if (!table_specs.ok()) return table_specs.status();
  std::unique_ptr<ShardEngine> e(new ShardEngine(options, num_workers, host));
  e->num_shards_ = num_shards;
  e->job_ = job;
  absl::StatusOr<std::unique_ptr<Shard>> built =
      Shard::Create(job, shard, num_shards, num_workers, options.updater_factory,
                    options.inline_apply_bytes);
  if (!built.ok()) return built.status();
  try {
    e->shard_ = *std::move(built);
    // One gate per distinct gate spec: the job's first, then the tables' own.
    std::vector<policy::GateSpec> gate_specs = {spec.gate};
    e->gates_.push_back(policy::MakeGate(spec, num_workers));
    e->clock_only_policy_ = ClockOnly(spec);
    for (const policy::PolicySpec& ts : *table_specs) {
      e->clock_only_policy_ = e->clock_only_policy_ && ClockOnly(ts);
      const auto it = std::find(gate_specs.begin(), gate_specs.end(), ts.gate);
      e->gate_of_table_.push_back(static_cast<int>(it - gate_specs.begin()));
      if (it == gate_specs.end()) {
        gate_specs.push_back(ts.gate);
        e->gates_.push_back(policy::MakeGate(ts, num_workers));
      }
    }
    e->straggler_ = policy::MakeStragglerPolicy(spec, num_workers);
    e->waiting_of_rank_.assign(num_workers, 0);
    for (ShardTable& t : e->shard_->tables()) {
      for (ShardChunk& c : t.chunks) c.ResetReads(num_workers);
      if (!t.sparse) continue;
      t.sparse->lane.ResetReads(num_workers);
      t.sparse->next_sweep = t.spec.eviction.sweep_every;
      // Admission counts and the rows' clocks are not in a snapshot: no rebase.
      const RowEviction& ev = t.spec.eviction;
      if (t.sparse->admitter != nullptr || ev.max_idle_clocks > 0 || ev.max_idle_seconds > 0 ||
          ev.min_norm > 0 || ev.max_bytes > 0) {
        e->clock_only_policy_ = false;
      }
      if (options.on_evicted) {
        t.sparse->on_evicted = [report = options.on_evicted, name = t.spec.name, shard](
                                   EvictionReason reason, std::span<const uint64_t> keys) {
          report(EvictedRows{name, shard, reason, keys});
        };
      }
    }
    PlainMutexLock lock(&e->metrics_mu_);
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
  PlainMutexLock lock(&metrics_mu_);
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
  if (r.rank >= 0 && r.rank < num_workers_ && clocks().active(r.rank)) return true;
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
  const int64_t known = clocks().clock(r.rank);
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
  const std::optional<AdmittedPush> a = AdmitPush(r, *table, *chunk, gradient.span(), r.offset,
                                                  r.length * sizeof(float), now);
  if (!a.has_value()) return;
  // The answer is "pushed", or under eager pull the read that follows the push.
  std::optional<EngineAnswer> answer;
  if (!r.pull_after) answer = PushedAnswer(r, *a, chunk->version);
  if (!a->dropped()) {
    Contribute(*table, *chunk, r, *a, std::move(gradient), std::move(answer));
  } else if (answer.has_value()) {
    host_->Answer(*std::move(answer));
  }
  if (r.pull_after) QueueEagerRead(r, a->dropped(), a->verdict.refresh, now);
}

// Every push, dense or sparse, once its target is known (`target`: the dense chunk, or the
// sparse table's lane): its clock, scale and values checked, then counted, the straggler
// policy's verdict recorded (a dropped push logged as such) and the gate told.
std::optional<ShardEngine::AdmittedPush> ShardEngine::AdmitPush(const EngineRequest& r,
                                                                const ShardTable& table,
                                                                const ShardChunk& target,
                                                                std::span<const float> values,
                                                                uint64_t first, uint64_t bytes,
                                                                absl::Time now) {
  if (!ClockInWindow(r)) return std::nullopt;
  if (!(std::isfinite(r.worker_scale) && r.worker_scale >= 0)) {
    Refuse(r, &RefusalCounts::bad_scale,
           absl::InvalidArgumentError(absl::StrFormat(
               "worker_scale %g is not a finite number >= 0", r.worker_scale)));
    return std::nullopt;
  }
  if (const std::size_t bad = FirstNonFinite(values); bad < values.size()) {
    NonFinitePush(r, table, first + bad, values[bad], now);
    return std::nullopt;
  }
  pushes_.fetch_add(1, std::memory_order_relaxed);
  bytes_in_.fetch_add(bytes, std::memory_order_relaxed);
  AdmittedPush a;
  a.on_read_before = target.ComputedOnReadBefore(r.rank, r.pull_after);
  const uint64_t read = a.on_read_before ? target.version_read_before[r.rank]
                                         : target.version_read[r.rank];
  a.info = policy::StalenessInfo{r.clock, read, target.version};
  a.verdict = straggler_->OnPush(r.rank, a.info);
  RecordPush(r.rank, a.info, a.verdict);
  GateOf(r.table).OnPush(r.rank, r.clock, now);
  a.extra = r.worker_scale > 0 ? r.worker_scale : 1.0f;
  if (a.verdict.action == StragglerDecision::Action::kDownWeight) a.extra *= a.verdict.weight;
  if (a.dropped()) {
    LogPush(r.rank, PushRecord{r.clock, first, a.info.iteration_staleness(), 0.0, 0.0f,
                               /*dropped=*/true});
  }
  return a;
}

EngineAnswer ShardEngine::PushedAnswer(const EngineRequest& r, const AdmittedPush& a,
                                       uint64_t version) {
  EngineAnswer answer;
  answer.kind = EngineAnswer::Kind::kPushed;
  answer.request = r;
  answer.request.keys = Buffer();  // a sparse push's answer does not need them
  answer.dropped = a.dropped();
  answer.refresh = a.verdict.refresh;
  answer.version = version;
  return answer;
}

// Takes the buckets of `lane`'s aggregation that are complete out of `buckets`, each a new
// version of the lane, and hands each to `apply` with what the aggregation says of it.
template <typename Bucket, typename Apply>
void ShardEngine::TakeReady(ShardChunk& lane, std::map<int64_t, Bucket>& buckets,
                            Apply apply) {
  for (const policy::ReadyBucket& ready : lane.aggregation->TakeReady(clocks())) {
    auto it = buckets.find(ready.bucket);
    if (it == buckets.end()) continue;
    Bucket bucket = std::move(it->second);
    buckets.erase(it);
    const uint64_t step = ++lane.version;
    version_.fetch_add(1, std::memory_order_relaxed);
    apply(std::move(bucket), ready, step);
  }
}

// A push holding NaN or Inf at element `at`: never applied. Refused, or under
// NonFinitePolicy::kSkip answered as if applied (and its eager read still served).
void ShardEngine::NonFinitePush(const EngineRequest& r, const ShardTable& table, uint64_t at,
                                float value, absl::Time now) {
  {
    PlainMutexLock lock(&metrics_mu_);
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
  PlainMutexLock lock(&metrics_mu_);
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
  PlainMutexLock lock(&metrics_mu_);
  std::vector<PushRecord>& log = metrics_[rank].push_log;
  if (static_cast<int>(log.size()) >= options_.push_log_size) log.erase(log.begin());
  log.push_back(record);
}

// The multiplier of an accepted push: the chunk's weighting (VSGD reads ||D_i|| here,
// which is why this runs where the chunk's work runs) times `extra` (the straggler
// policy's down-weight and the worker's own eager-pull scale). Records it.
float ShardEngine::PushScale(ShardTable& table, ShardChunk& chunk, const EngineRequest& r,
                             const AdmittedPush& a) {
  policy::StalenessInfo info = a.info;
  if (table.track_drift) {
    info.value_staleness = table.ValueStaleness(chunk, r.rank, a.on_read_before);
  }
  const float scale = chunk.weighting->Scale(r.rank, info) * a.extra;
  {
    PlainMutexLock lock(&metrics_mu_);
    WorkerMetrics& wm = metrics_[r.rank];
    wm.scale.Add(scale);
    if (table.track_drift) wm.value_staleness.Add(info.value_staleness);
  }
  LogPush(r.rank, PushRecord{r.clock, r.offset, info.iteration_staleness(),
                             info.value_staleness, scale, false});
  return scale;
}

void ShardEngine::Contribute(ShardTable& table, ShardChunk& chunk, const EngineRequest& r,
                             const AdmittedPush& a, Buffer gradient,
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
      p.scale = [this, &table, &chunk, r, a] { return PushScale(table, chunk, r, a); };
      p.done = [send, answer = std::move(answer)]() mutable { send(answer); };
      return work_->Apply(table, chunk, std::move(p));
    }
    work_->Run(chunk, [this, &table, &chunk, gradient, r, a, step, send,
                       answer = std::move(answer)]() mutable {
      const float scale = PushScale(table, chunk, r, a);
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
  work_->Run(chunk, [this, &table, &chunk, part, gradient, r, a, send,
                     answer = std::move(answer)]() mutable {
    const float scale = PushScale(table, chunk, r, a);
    AsEigen(part) += scale * AsEigen(std::span<const float>(gradient.span()));
    gradient = Buffer();
    send(answer);
  });
  ApplyReadyBuckets(table, chunk);
}

// Applies the buckets of `c` that are complete.
void ShardEngine::ApplyReadyBuckets(ShardTable& t, ShardChunk& c) {
  TakeReady(c, c.buckets,
            [this, &t, &c](Buffer sum, const policy::ReadyBucket& ready, uint64_t step) {
              // The round's average: 1 / divisor scales the summed gradient; the schedule's
              // t is the round (the bucket).
              const float scale = ready.divisor > 0 ? 1.0f / ready.divisor : 1.0f;
              const int64_t round = ready.bucket;
              work_->Run(c, [&t, &c, sum, scale, round, step] {
                t.ApplyTracked(c, c.chunk.begin,
                               t.MakeUpdate(c, sum.span(), scale, 1.0f, round, step));
              });
            });
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
  ShardChunk& lane = table->sparse->lane;
  const std::optional<AdmittedPush> a = AdmitPush(
      r, *table, lane, rows.span(), 0, rows.size_bytes() + r.keys.size_bytes(), now);
  if (!a.has_value()) return;
  EngineAnswer answer = PushedAnswer(r, *a, lane.version);
  if (a->dropped()) return host_->Answer(std::move(answer));
  ContributeSparse(*table, r, *a, std::move(rows), std::move(answer), now);
}

void ShardEngine::ContributeSparse(ShardTable& table, const EngineRequest& r, const AdmittedPush& a,
                                   Buffer rows, EngineAnswer answer, absl::Time now) {
  ShardChunk& lane = table.sparse->lane;
  const policy::AggregateDecision d = lane.aggregation->OnPush(r.rank, r.clock);
  EngineHost* host = host_;
  if (d.kind == policy::AggregateDecision::Kind::kApplyNow) {
    ++lane.version;
    version_.fetch_add(1, std::memory_order_relaxed);
    answer.version = lane.version;
    work_->Run(lane, [this, host, &table, &lane, r, a, now, rows = std::move(rows),
                      answer = std::move(answer)]() mutable {
      const float scale = PushScale(table, lane, r, a);
      const uint64_t budget = options_.sparse_budget_bytes;
      const uint64_t used = shard_->sparse_bytes();
      const uint64_t room = budget == 0 ? UINT64_MAX : budget - std::min(budget, used);
      const absl::Status s = table.ApplySparse(r.keys, rows, scale, r.clock, now, room);
      rows = Buffer();
      if (!s.ok()) {
        answer.kind = EngineAnswer::Kind::kError;
        answer.status = s;
      }
      host->Answer(std::move(answer));
    });
    return;
  }
  std::shared_ptr<SparseBucket>& bucket = table.sparse->buckets[d.bucket];
  if (bucket == nullptr) bucket = std::make_shared<SparseBucket>();
  work_->Run(lane, [this, host, &table, &lane, bucket, r, a, rows = std::move(rows),
                    answer = std::move(answer)]() mutable {
    const float scale = PushScale(table, lane, r, a);
    try {
      bucket->Add(r.rank, r.keys, rows, table.spec.row_width, scale);
    } catch (const std::bad_alloc&) {
      answer.kind = EngineAnswer::Kind::kError;
      answer.status = absl::ResourceExhaustedError(absl::StrFormat(
          "table '%s': out of memory while summing the round's rows", table.spec.name));
    }
    rows = Buffer();
    host->Answer(std::move(answer));
  });
  ApplyReadySparse(table, now);
}

void ShardEngine::ApplyReadySparse(ShardTable& t, absl::Time now) {
  ShardChunk& lane = t.sparse->lane;
  TakeReady(lane, t.sparse->buckets,
            [this, &t, &lane, now](std::shared_ptr<SparseBucket> bucket,
                                   const policy::ReadyBucket& ready, uint64_t /*step*/) {
              const int64_t round = ready.bucket;
              work_->Run(lane, [&t, bucket, round, now] {
                // The round's pushes were acknowledged when summed, so a row that cannot be
                // allocated here has nobody to tell: it stays unapplied (a shard out of
                // memory; docs/sparse.md).
                (void)t.ApplyBucket(*bucket, round, now);
              });
            });
}

void ShardEngine::SweepSparse(absl::Time now) {
  const policy::Tick min = clocks().MinActiveClock();
  if (min == policy::kUnbounded) return;
  const int64_t now_ns = absl::ToUnixNanos(now);
  for (ShardTable& t : shard_->tables()) {
    if (!t.sparse || min < t.sparse->next_sweep) continue;
    const RowEviction& ev = t.spec.eviction;
    if (ev.max_idle_clocks <= 0 && !(ev.max_idle_seconds > 0) && !(ev.min_norm > 0)) continue;
    t.sparse->next_sweep = min + ev.sweep_every;
    if (t.sparse->first_sweep_ns < 0) t.sparse->first_sweep_ns = now_ns;
    const int64_t since_ns = t.sparse->first_sweep_ns;
    work_->RunInOrder(t, t.sparse->lane,
                      [&t, min, now_ns, since_ns] { t.SweepRows(min, now_ns, since_ns); });
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
      PlainMutexLock lock(&metrics_mu_);
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

}  // namespace kairos::internal
