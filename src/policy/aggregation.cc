// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The aggregations: immediate (apply every push), round-average (BSP, docs/references.md
// SA-ASGD-1: average the round's gradients and apply them once) and n-softsync (SA-ASGD,
// docs/references.md SA-ASGD-2: average every c pushes, from any workers).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "policy/policy.h"
#include "policy/registry.h"

namespace kairos::policy {
namespace {

// Every push is applied at once. Not thread-safe (see policy.h).
class ImmediateAggregation final : public Aggregation {
 public:
  AggregateDecision OnPush(WorkerId w, Tick clock) override { return {}; }
  std::vector<ReadyBucket> TakeReady(const WorkerClocks& clocks) override { return {}; }
};

// A push at clock c goes to bucket c (round c). Bucket c is ready once every active worker
// has completed iteration c + 1 (MinActiveClock() > c), and is applied as sum / divisor
// with divisor = the number of distinct workers that pushed into it. With W workers that
// each push once per round that is the mean of the W gradients, so after round r the
// parameters equal r sequential steps on the round means; a worker that pushes twice in a
// round (e.g. two calls before its AdvanceClock()) is counted once, so its pushes add up as one
// contribution instead of diluting the others'. A push that arrives for a round already
// taken (possible only from a worker that is not active) opens that bucket again; it is
// ready at the next TakeReady and applied alone. Not thread-safe (see policy.h).
class RoundAverageAggregation final : public Aggregation {
 public:
  AggregateDecision OnPush(WorkerId w, Tick clock) override {
    Bucket& bucket = pending_[clock];
    ++bucket.contributions;
    const auto it = std::lower_bound(bucket.workers.begin(), bucket.workers.end(), w);
    if (it == bucket.workers.end() || *it != w) bucket.workers.insert(it, w);
    return {.kind = AggregateDecision::Kind::kAccumulate, .bucket = clock};
  }

  std::vector<ReadyBucket> TakeReady(const WorkerClocks& clocks) override {
    const Tick min = clocks.MinActiveClock();  // kUnbounded when none is active: all ready
    std::vector<ReadyBucket> ready;
    auto it = pending_.begin();
    for (; it != pending_.end() && it->first < min; ++it) {
      ready.push_back({.bucket = it->first,
                       .contributions = it->second.contributions,
                       .divisor = static_cast<float>(it->second.workers.size())});
    }
    pending_.erase(pending_.begin(), it);
    return ready;
  }

  int num_pending() const override { return static_cast<int>(pending_.size()); }

 private:
  struct Bucket {
    int contributions = 0;
    std::vector<WorkerId> workers;  // distinct pushers, sorted
  };
  std::map<int64_t, Bucket> pending_;  // by bucket (round)
};

// n-softsync (Zhang et al. 2016): pushes from any workers fill the open bucket, numbered
// 0, 1, 2, ... per chunk; a bucket is closed (ready) when it holds c = max(1, floor(A / n))
// pushes and is applied as sum / its count. A = num_workers until the first TakeReady, then
// the number of active workers in the clocks TakeReady last saw, so that when workers leave
// a bucket still fills (and with none active, c = 1 flushes a partial bucket). Workers never
// wait for a bucket, whatever the gate: the gate decides reads from the clocks alone. Not
// thread-safe (see policy.h).
class SoftSyncAggregation final : public Aggregation {
 public:
  // REQUIRES: n >= 1.
  SoftSyncAggregation(int num_workers, int n) : n_(n), c_(BucketSize(num_workers)) {}

  AggregateDecision OnPush(WorkerId w, Tick clock) override {
    const AggregateDecision decision{.kind = AggregateDecision::Kind::kAccumulate,
                                     .bucket = open_};
    ++open_count_;
    if (open_count_ >= c_) Close();
    return decision;
  }

  std::vector<ReadyBucket> TakeReady(const WorkerClocks& clocks) override {
    c_ = BucketSize(clocks.num_active());
    if (open_count_ > 0 && open_count_ >= c_) Close();
    return std::exchange(ready_, {});
  }

  int num_pending() const override {
    return static_cast<int>(ready_.size()) + (open_count_ > 0 ? 1 : 0);
  }

 private:
  int BucketSize(int workers) const { return std::max(1, workers / n_); }

  void Close() {
    ready_.push_back({.bucket = open_,
                      .contributions = open_count_,
                      .divisor = static_cast<float>(open_count_)});
    ++open_;
    open_count_ = 0;
  }

  const int n_;
  int c_;                            // pushes per bucket now
  int64_t open_ = 0;                 // the bucket pushes go to
  int open_count_ = 0;               // pushes in it
  std::vector<ReadyBucket> ready_;   // closed, not yet taken, in bucket order
};

}  // namespace

namespace internal {

PolicyDef ImmediateAggregationPolicy() {
  return {
      .name = "immediate",
      .kind = KindOf(AggregationSpec::Kind::kImmediate),
      .help = "apply every push at once",
      .make = AggregationFactory([](const PolicySpec&, int) -> std::unique_ptr<Aggregation> {
        return std::make_unique<ImmediateAggregation>();
      }),
  };
}

PolicyDef RoundAggregationPolicy() {
  return {
      .name = "round",
      .kind = KindOf(AggregationSpec::Kind::kRoundAverage),
      .help = "BSP rounds: apply round c once, as the average of its pushes, when every "
              "active worker has finished it; needs gate=bsp",
      // Under SSP(s > 0) or ASP a worker may read ahead of the slowest and would not see its
      // own pushes still held in a bucket (read-my-writes), so only the BSP gate goes.
      .check_spec = [](const PolicySpec& spec, const Registry& registry) -> absl::Status {
        const std::string gate = registry.SeamValue(spec, Seam::kGate);
        if (gate == "bsp") return absl::OkStatus();
        return absl::InvalidArgumentError(absl::StrCat(
            "agg=round needs gate=bsp, got gate=", gate,
            ": a round is applied only when every worker has finished it, so a worker allowed "
            "to read ahead of the slowest would not see its own earlier pushes"));
      },
      .make = AggregationFactory([](const PolicySpec&, int) -> std::unique_ptr<Aggregation> {
        return std::make_unique<RoundAverageAggregation>();
      }),
  };
}

PolicyDef SoftSyncAggregationPolicy() {
  return {
      .name = "softsync",
      .kind = KindOf(AggregationSpec::Kind::kSoftSync),
      .help = "n-softsync (SA-ASGD, Zhang et al. 2016): apply the average of every "
              "c = max(1, floor(W / n)) pushes",
      .params = {{.key = "n",
                  .help = "a bucket holds floor(W / n) pushes",
                  .min = 1,
                  .max = std::numeric_limits<int>::max(),
                  .required = true,
                  .example = "4",
                  .binding = Field(&AggregationSpec::n, "n")}},
      .presets = {{"sa-asgd", "gate=asp+agg=softsync+weight=staleness", Seam::kAggregation,
                   "SA-ASGD: ASP, n-softsync and the lr/staleness weighting"}},
      .make = AggregationFactory(
          [](const PolicySpec& spec, int num_workers) -> std::unique_ptr<Aggregation> {
            return std::make_unique<SoftSyncAggregation>(num_workers,
                                                         std::max(1, spec.aggregation.n));
          }),
  };
}

}  // namespace internal
}  // namespace kairos::policy
