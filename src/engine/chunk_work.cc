// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "engine/chunk_work.h"

#include <utility>
#include <vector>

#include "engine/shard_engine.h"

namespace kairos::internal {

void ChunkWork::Run(const ShardChunk& c, std::function<void()> job) {
  if (c.apply_inline) {
    job();
  } else {
    OnLane(c, std::move(job));
  }
}

void ChunkWork::Read(const ShardChunk& c, std::function<void()> job) {
  if (c.apply_inline || c.applies->lane_jobs.load(std::memory_order_acquire) == 0) {
    job();
  } else {
    OnLane(c, std::move(job));
  }
}

void ChunkWork::OnLane(const ShardChunk& c, std::function<void()> job) {
  std::atomic<int>& jobs = c.applies->lane_jobs;
  jobs.fetch_add(1, std::memory_order_relaxed);
  host_->RunOnLane(c.key, [&jobs, job = std::move(job)] {
    // Counted down even when the job throws (ApplyPool catches std::bad_alloc), so that
    // later reads of the chunk are not queued behind a job that is gone.
    struct Done {
      std::atomic<int>& jobs;
      ~Done() { jobs.fetch_sub(1, std::memory_order_release); }
    } done{jobs};
    job();
  });
}

void ChunkWork::Apply(const ShardTable& t, ShardChunk& c, PendingApply p) {
  bool schedule = false;
  {
    absl::MutexLock lock(&c.applies->mu);
    c.applies->items.push_back(std::move(p));
    schedule = !std::exchange(c.applies->scheduled, true);
  }
  if (schedule) OnLane(c, [this, &t, &c] { Drain(t, c); });
}

void ChunkWork::RunInOrder(const ShardTable& t, ShardChunk& c, std::function<void()> job) {
  if (c.apply_inline) return job();
  PendingApply p;
  p.job = std::move(job);
  Apply(t, c, std::move(p));
}

void ChunkWork::Drain(const ShardTable& t, ShardChunk& c) {
  std::vector<PendingApply> items;
  {
    absl::MutexLock lock(&c.applies->mu);
    items.swap(c.applies->items);
    c.applies->scheduled = false;
  }
  std::vector<Updater::Update> batch;
  for (std::size_t i = 0; i < items.size();) {
    if (items[i].job) {
      items[i++].job();
      continue;
    }
    batch.clear();
    std::size_t j = i;
    for (; j < items.size() && !items[j].job && items[j].offset == items[i].offset &&
           items[j].gradient.size() == items[i].gradient.size();
         ++j) {
      const PendingApply& p = items[j];
      batch.push_back(t.MakeUpdate(c, p.gradient.span(), 1.0f, p.scale(), p.t, p.step));
    }
    t.ApplyMany(c, items[i].offset, batch);
    coalesced_.fetch_add(j - i - 1, std::memory_order_relaxed);
    for (std::size_t k = i; k < j; ++k) {
      items[k].gradient = Buffer();  // release the received message before answering
      items[k].done();
    }
    i = j;
  }
}

}  // namespace kairos::internal
