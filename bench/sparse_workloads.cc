// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "bench/sparse_workloads.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <random>
#include <span>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "kairos/status.h"
#include "kairos/worker.h"

namespace kairos::bench {
namespace {

KeyThroughput MakeKeyThroughput(uint64_t keys, double seconds, double cpu_seconds) {
  KeyThroughput t;
  t.keys = keys;
  t.seconds = seconds;
  t.keys_per_s = seconds > 0 ? static_cast<double>(keys) / seconds : 0;
  t.cpu_ns_per_key = keys > 0 ? cpu_seconds * 1e9 / static_cast<double>(keys) : 0;
  return t;
}

// The local ceiling's table: a hash map from key to row slot and the rows side by side.
class LocalTable {
 public:
  LocalTable(uint32_t width, uint64_t key_space) : width_(width) {
    index_.reserve(key_space);
    rows_.assign(key_space * width, 0.0f);
    for (uint64_t i = 0; i < key_space; ++i) index_.emplace(SparseKey(i), i);
  }

  void Pull(std::span<const uint64_t> keys, float* out) const {
    for (const uint64_t k : keys) {
      const auto it = index_.find(k);
      const float* row = rows_.data() + it->second * width_;
      std::memcpy(out, row, width_ * sizeof(float));
      out += width_;
    }
  }

  void Push(std::span<const uint64_t> keys, const float* gradients) {
    for (const uint64_t k : keys) {
      const auto [it, inserted] = index_.try_emplace(k, rows_.size() / width_);
      if (inserted) rows_.resize(rows_.size() + width_, 0.0f);
      float* row = rows_.data() + it->second * width_;
      for (uint32_t c = 0; c < width_; ++c) row[c] -= 0.01f * gradients[c];
      gradients += width_;
    }
  }

 private:
  const uint32_t width_;
  absl::flat_hash_map<uint64_t, uint64_t> index_;
  std::vector<float> rows_;
};

void SparseLoop(Worker& worker, SparseOp op, uint32_t width,
                const std::vector<std::vector<uint64_t>>& batches, std::size_t first,
                int window, SteadyClock::time_point measure_begin, SteadyClock::time_point end,
                WorkerTally& tally) {
  std::size_t max_batch = 0;
  for (const auto& b : batches) max_batch = std::max(max_batch, b.size());
  // Slot i % window is the gradient or destination of request i; request i - window has
  // completed before request i is issued.
  std::vector<std::vector<float>> slots(static_cast<std::size_t>(window),
                                        std::vector<float>(max_batch * width, 1e-6f));
  struct InFlight {
    Request request;
    uint64_t keys;
  };
  std::deque<InFlight> in_flight;
  auto complete_oldest = [&] {
    absl::Status s = in_flight.front().request.Wait();
    const uint64_t keys = in_flight.front().keys;
    in_flight.pop_front();
    tally.Complete(s, keys, measure_begin, end);
  };
  std::vector<std::vector<uint64_t>> fresh(static_cast<std::size_t>(window));
  for (uint64_t issued = 0; SteadyClock::now() < end && tally.status.ok(); ++issued) {
    if (in_flight.size() == static_cast<std::size_t>(window)) complete_oldest();
    const std::vector<uint64_t>* batch = &batches[(first + issued) % batches.size()];
    if (op == SparseOp::kPushNew) {
      // Request n of worker w: the batch's keys plus (n x workers + w) x 2^40, new keys.
      std::vector<uint64_t>& keys = fresh[issued % window];
      const uint64_t shift = (issued * 64 + first) << 40;
      keys.resize(batch->size());
      for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = (*batch)[i] + shift;
      batch = &keys;
    }
    const std::vector<uint64_t>& keys = *batch;
    std::vector<float>& slot = slots[issued % window];
    const std::span<float> rows(slot.data(), keys.size() * width);
    if (op == SparseOp::kPull) {
      in_flight.push_back({worker.PullSparseAsync(kTable, keys, rows), keys.size()});
    } else {
      in_flight.push_back(
          {worker.PushSparseAsync(kTable, keys, std::span<const float>(rows)), keys.size()});
    }
  }
  while (!in_flight.empty()) complete_oldest();
}

}  // namespace

std::vector<std::vector<uint64_t>> MakeKeyBatches(uint64_t key_space, uint32_t batch, int count,
                                                  uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint64_t> index(0, key_space - 1);
  std::vector<std::vector<uint64_t>> batches(static_cast<std::size_t>(count));
  for (std::vector<uint64_t>& b : batches) {
    absl::flat_hash_set<uint64_t> seen;
    seen.reserve(batch);
    b.reserve(batch);
    while (b.size() < batch) {
      const uint64_t key = SparseKey(index(rng));
      if (seen.insert(key).second) b.push_back(key);
    }
  }
  return batches;
}

const char* SparseOpName(SparseOp op) {
  return op == SparseOp::kPush ? "push" : op == SparseOp::kPull ? "pull" : "push_new";
}

KeyThroughput RunLocalCeiling(SparseOp op, uint32_t width, uint64_t key_space,
                              const std::vector<std::vector<uint64_t>>& batches,
                              const Budget& budget) {
  LocalTable table(width, key_space);
  std::size_t max_batch = 0;
  for (const auto& b : batches) max_batch = std::max(max_batch, b.size());
  std::vector<float> rows(max_batch * width, 1e-6f);
  auto run_batch = [&](const std::vector<uint64_t>& keys) {
    if (op == SparseOp::kPull) {
      table.Pull(keys, rows.data());
    } else {
      table.Push(keys, rows.data());
    }
  };
  const SteadyClock::time_point warm_end = After(SteadyClock::now(), budget.warmup_s);
  std::size_t next = 0;
  while (SteadyClock::now() < warm_end) run_batch(batches[next++ % batches.size()]);
  const ProcessUsage used_before = ReadProcessUsage();
  const SteadyClock::time_point begin = SteadyClock::now();
  const SteadyClock::time_point end = After(begin, budget.seconds);
  uint64_t keys = 0;
  SteadyClock::time_point now = begin;
  while (now < end) {
    const std::vector<uint64_t>& b = batches[next++ % batches.size()];
    run_batch(b);
    keys += b.size();
    now = SteadyClock::now();
  }
  const double seconds = std::chrono::duration<double>(now - begin).count();
  return MakeKeyThroughput(keys, seconds, UsageSince(used_before).cpu_seconds);
}

absl::Status PopulateSparseTable(BenchCluster& cluster, uint32_t width, uint64_t key_space) {
  constexpr uint64_t kBatch = 16384;
  Worker& worker = cluster.worker(0);
  std::vector<uint64_t> keys;
  std::vector<float> zeros(kBatch * width, 0.0f);
  std::deque<Request> in_flight;
  for (uint64_t first = 0; first < key_space; first += kBatch) {
    keys.clear();
    for (uint64_t i = first; i < std::min(key_space, first + kBatch); ++i) {
      keys.push_back(SparseKey(i));
    }
    // The call copies the keys and gradients, so `keys` may be refilled at once.
    in_flight.push_back(worker.PushSparseAsync(
        kTable, keys, std::span<const float>(zeros.data(), keys.size() * width)));
    if (in_flight.size() == 8) {
      KAIROS_RETURN_IF_ERROR(in_flight.front().Wait());
      in_flight.pop_front();
    }
  }
  for (Request& r : in_flight) KAIROS_RETURN_IF_ERROR(r.Wait());
  return absl::OkStatus();
}

absl::StatusOr<KeyThroughput> RunSparsePipelined(BenchCluster& cluster, SparseOp op,
                                                 uint32_t width,
                                                 const std::vector<std::vector<uint64_t>>& batches,
                                                 int window, const Budget& budget) {
  KAIROS_ASSIGN_OR_RETURN(
      MeasuredRun run,
      RunOnWorkerThreads(cluster, budget,
                         [&](int i, SteadyClock::time_point measure_begin,
                             SteadyClock::time_point end, WorkerTally& tally) {
                           SparseLoop(cluster.worker(i), op, width, batches,
                                      static_cast<std::size_t>(i), window, measure_begin, end,
                                      tally);
                         }));
  return MakeKeyThroughput(run.count, budget.seconds, run.usage.cpu_seconds);
}

}  // namespace kairos::bench
