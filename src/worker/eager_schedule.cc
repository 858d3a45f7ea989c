// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "kairos/eager.h"
#include "kairos/eigen.h"
#include "kairos/status.h"
#include "policy/optimizer_spec.h"
#include "policy/policy.h"

namespace kairos {

absl::StatusOr<bool> PullsEagerly(std::string_view policy) {
  KAIROS_ASSIGN_OR_RETURN(policy::PolicySpec spec, policy::ParsePolicySpec(policy));
  return spec.pull.kind == policy::PullSpec::Kind::kEager;
}

EagerSchedule::EagerSchedule(Worker& worker, std::vector<Part> parts, uint64_t size, bool modulate)
    : worker_(worker),
      parts_(std::move(parts)),
      modulate_(modulate),
      seen_clocks_(worker.num_workers(), 0) {
  fetched_[0].resize(size);
  fetched_[1].resize(size);
}

EagerSchedule::~EagerSchedule() { WaitPending().IgnoreError(); }

absl::StatusOr<std::unique_ptr<EagerSchedule>> EagerSchedule::Start(Worker& worker,
                                                                    std::string_view table,
                                                                    std::span<float> params) {
  const std::string name(table);
  return Start(worker, std::span<const std::string>(&name, 1), params);
}

absl::StatusOr<std::unique_ptr<EagerSchedule>> EagerSchedule::Start(
    Worker& worker, std::span<const std::string> tables, std::span<float> params) {
  if (tables.empty()) return absl::InvalidArgumentError("eager schedule of no table");
  KAIROS_ASSIGN_OR_RETURN(policy::PolicySpec spec, policy::ParsePolicySpec(worker.job().policy));
  std::vector<Part> parts;
  std::set<std::string> seen;
  uint64_t size = 0;
  for (const std::string& table : tables) {
    KAIROS_ASSIGN_OR_RETURN(TableInfo info, worker.table(table));
    if (info.sparse || !seen.insert(info.name).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "eager schedule: table '%s' is %s", info.name, info.sparse ? "sparse" : "repeated"));
    }
    // The servers' schedule (UpdaterSpec::schedule) of the table, from the job's spec.
    std::function<double(int64_t)> schedule = [](int64_t) { return 1.0; };
    for (const TableSpec& t : worker.job().tables) {
      if (t.name != info.name) continue;
      absl::StatusOr<policy::ScheduleSpec> s = policy::ParseSchedule(t.updater.schedule);
      if (s.ok()) {
        schedule = [s = *s](int64_t clock) { return policy::ScheduleFactor(s, clock); };
      }
    }
    parts.push_back(Part{.table = info.name,
                         .begin = size,
                         .size = info.size,
                         .learning_rate = info.learning_rate,
                         .schedule = std::move(schedule)});
    size += info.size;
  }
  if (params.size() != size) {
    return absl::InvalidArgumentError(
        absl::StrFormat("eager schedule of %d table(s) from '%s': %d parameters given for %d",
                        tables.size(), tables[0], params.size(), size));
  }
  std::unique_ptr<EagerSchedule> e(
      new EagerSchedule(worker, std::move(parts), size, spec.pull.modulate_lr));
  std::vector<Request> reads;
  for (const Part& p : e->parts_) {
    reads.push_back(
        worker.PullAsync(p.table, 0, std::span<float>(e->fetched_[0]).subspan(p.begin, p.size)));
  }
  absl::Status status;
  for (const Request& r : reads) status.Update(r.Wait());
  KAIROS_RETURN_IF_ERROR(status);
  std::copy(e->fetched_[0].begin(), e->fetched_[0].end(), params.begin());
  e->replies_[0].clocks.assign(worker.num_workers(), 0);
  return e;
}

absl::Status EagerSchedule::WaitPending() {
  absl::Status status;
  for (const Request& r : pending_) status.Update(r.Wait());
  pending_.clear();
  return status;
}

absl::Status EagerSchedule::Step(std::span<const float> gradient, std::span<float> params) {
  const uint64_t size = fetched_[0].size();
  if (gradient.size() != size || params.size() != size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "eager step of table '%s'%s: gradient and parameters need %d values (got %d, %d)",
        parts_[0].table, parts_.size() > 1 ? " and others" : "", size, gradient.size(),
        params.size()));
  }
  // The previous step's requests, not this one's.
  last_waited_ =
      std::any_of(pending_.begin(), pending_.end(), [](const Request& r) { return !r.done(); });
  const absl::Time wait_start = absl::Now();
  KAIROS_RETURN_IF_ERROR(WaitPending());
  last_wait_ = last_waited_ ? absl::Now() - wait_start : absl::ZeroDuration();
  const PushPullReply& reply = replies_[cur_];
  last_foreign_ = 0;
  for (int w = 0; w < static_cast<int>(seen_clocks_.size()); ++w) {
    if (w != worker_.rank()) last_foreign_ += reply.clocks[w] - seen_clocks_[w];
    seen_clocks_[w] = std::max(seen_clocks_[w], reply.clocks[w]);
  }
  policy::PullSpec spec;
  spec.kind = policy::PullSpec::Kind::kEager;
  spec.modulate_lr = modulate_;
  last_scale_ = policy::EagerLearningRateScale(spec, last_foreign_, worker_.num_workers());
  last_refreshed_ = reply.refresh;
  prev_ = cur_;
  cur_ = 1 - cur_;
  const int64_t clock = worker_.clock();  // the clock the push is made at
  std::vector<PushPullPart> parts;
  parts.reserve(parts_.size());
  for (const Part& p : parts_) {
    parts.push_back(PushPullPart{.table = p.table,
                                 .offset = 0,
                                 .gradient = Buffer::CopyOf(gradient.subspan(p.begin, p.size)),
                                 .out = std::span<float>(fetched_[cur_]).subspan(p.begin, p.size)});
  }
  PushPullOptions options;
  options.scale = last_scale_;
  pending_ = worker_.PushPullAsync(parts, &replies_[cur_], options);
  AsEigen(params) = AsEigen(std::span<const float>(fetched_[prev_]));
  if (!last_refreshed_) {
    for (const Part& p : parts_) {
      const float lr = static_cast<float>(p.learning_rate * p.schedule(clock)) * last_scale_;
      AsEigen(params.subspan(p.begin, p.size)) -= lr * AsEigen(gradient.subspan(p.begin, p.size));
    }
  }
  return absl::OkStatus();
}

absl::Status EagerSchedule::Finish(std::span<float> params) {
  KAIROS_RETURN_IF_ERROR(WaitPending());
  prev_ = cur_;
  std::copy(fetched_[cur_].begin(), fetched_[cur_].end(), params.begin());
  return absl::OkStatus();
}

}  // namespace kairos
