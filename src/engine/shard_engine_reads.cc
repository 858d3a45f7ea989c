// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ShardEngine (see shard_engine.h): reads, which wait until the gate admits them, the
// workers' clocks and membership, and what happens with time (deadlines, the gate's
// timers).

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/shard_engine.h"

namespace kairos::internal {

using policy::MemberState;

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
  if (GateOf(r.table).Admits(r.rank, r.clock)) return ServeRead(read, now);
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
    PlainMutexLock lock(&metrics_mu_);
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
  chunk->OnRead(r.rank, read.eager);
  pulls_.fetch_add(1, std::memory_order_relaxed);
  const policy::Tick min = clocks().MinActiveClock();
  {
    PlainMutexLock lock(&metrics_mu_);
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
  a.min_clock = min == policy::kUnbounded ? r.clock : min;
  if (read.eager) {
    a.eager = true;
    a.dropped = read.dropped;
    a.refresh = read.refresh;
    const policy::WorkerClocks& all = clocks();
    a.clocks.reserve(all.num_workers());
    for (int w = 0; w < all.num_workers(); ++w) a.clocks.push_back(all.clock(w));
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
    table->ResetDrift(*chunk, ar.rank, ar.offset, ar.length, a.eager);
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
    if (t.sparse) ApplyReadySparse(t, now);
  }
  std::deque<WaitingRead> still;
  for (WaitingRead& read : waiting_) {
    if (GateOf(read.request.table).Admits(read.request.rank, read.request.clock)) {
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
  if (r.clock < clocks().clock(r.rank)) {
    return Refuse(
        r, &RefusalCounts::bad_clock,
        absl::InvalidArgumentError(absl::StrFormat("clock %d of worker %d goes back from %d",
                                                   r.clock, r.rank, clocks().clock(r.rank))));
  }
  if (!ClockInWindow(r)) return;
  // One clock a worker's iteration, whatever the tables' policies: every gate hears it.
  policy::GateCounts counts;
  for (const std::unique_ptr<policy::Gate>& gate : gates_) {
    gate->OnClock(r.rank, r.clock, now);
    // A clock is where a gate's controller decides (DSSP), for the clocking worker only.
    const policy::GateCounts c = gate->counts(r.rank);
    counts.controller_calls += c.controller_calls;
    counts.zero_answers += c.zero_answers;
    counts.grants += c.grants;
    counts.granted_reads += c.granted_reads;
  }
  {
    PlainMutexLock lock(&metrics_mu_);
    WorkerMetrics& wm = metrics_[r.rank];
    wm.controller_calls = counts.controller_calls;
    wm.zero_answers = counts.zero_answers;
    wm.grants = counts.grants;
    wm.granted_reads = counts.granted_reads;
  }
  Reevaluate(now);
  SweepSparse(now);
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
  if (rank < 0 || rank >= num_workers_ || !clocks().active(rank)) return;
  for (const std::unique_ptr<policy::Gate>& gate : gates_) gate->OnLeave(rank, why);
  // Reads of a worker that left have nobody to answer; their wait ends now.
  DropWaitingOf(rank, now);
  Reevaluate(now);
}

int64_t ShardEngine::OnRejoin(int rank, absl::Time now) {
  if (rank < 0 || rank >= num_workers_) return -1;
  const policy::WorkerClocks& all = clocks();
  // The old incarnation's waiting reads have nobody to answer: their wait ends now.
  DropWaitingOf(rank, now);
  if (all.active(rank)) {
    Reevaluate(now);
    return all.clock(rank);
  }
  const policy::Tick min = all.MinActiveClock();
  const policy::Tick clock =
      min == policy::kUnbounded ? all.clock(rank) : std::max(all.clock(rank), min);
  for (const std::unique_ptr<policy::Gate>& gate : gates_) gate->OnRejoin(rank, clock, now);
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
    PlainMutexLock lock(&metrics_mu_);
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
      PlainMutexLock lock(&metrics_mu_);
      metrics_[r.rank].blocked_time += now - read.arrived;
    }
    std::vector<std::string> who;
    for (int w : GateOf(r.table).Blockers(r.rank, r.clock)) {
      who.push_back(absl::StrFormat("worker %d (clock %d)", w, clocks().clock(w)));
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
  PlainMutexLock lock(&metrics_mu_);
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
    for (int b : GateOf(r.table).Blockers(r.rank, r.clock)) {
      who.push_back(absl::StrFormat("%d (clock %d)", b, clocks().clock(b)));
    }
    reads.push_back(absl::StrFormat("worker %d's read at clock %d waits for workers [%s]",
                                    r.rank, r.clock, absl::StrJoin(who, ", ")));
  }
  return absl::StrJoin(reads, "; ");
}

}  // namespace kairos::internal
