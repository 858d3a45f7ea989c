// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "kairos/eager.h"

#include "absl/strings/str_format.h"
#include "kairos/eigen.h"
#include "kairos/status.h"
#include "policy/policy.h"

namespace kairos {

EagerSchedule::EagerSchedule(Worker& worker, std::string table, uint64_t size,
                             float learning_rate, bool modulate)
    : worker_(worker),
      table_(std::move(table)),
      learning_rate_(learning_rate),
      modulate_(modulate),
      seen_clocks_(worker.num_workers(), 0) {
  fetched_[0].resize(size);
  fetched_[1].resize(size);
}

absl::StatusOr<std::unique_ptr<EagerSchedule>> EagerSchedule::Start(Worker& worker,
                                                                     std::string_view table,
                                                                     std::span<float> params) {
  KAIROS_ASSIGN_OR_RETURN(TableInfo info, worker.table(table));
  KAIROS_ASSIGN_OR_RETURN(policy::PolicySpec spec, policy::ParsePolicySpec(worker.job().policy));
  std::unique_ptr<EagerSchedule> e(new EagerSchedule(worker, info.name, info.size,
                                                     info.learning_rate,
                                                     spec.pull.modulate_lr));
  KAIROS_RETURN_IF_ERROR(worker.Pull(table, e->fetched_[0]));
  if (params.size() != info.size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "eager schedule of table '%s': %d parameters given for %d", info.name, params.size(),
        info.size));
  }
  std::copy(e->fetched_[0].begin(), e->fetched_[0].end(), params.begin());
  e->replies_[0].clocks.assign(worker.num_workers(), 0);
  return e;
}

absl::Status EagerSchedule::Step(std::span<const float> gradient, std::span<float> params) {
  if (gradient.size() != fetched_[0].size() || params.size() != fetched_[0].size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "eager step of table '%s': gradient and parameters need %d values (got %d, %d)",
        table_, fetched_[0].size(), gradient.size(), params.size()));
  }
  KAIROS_RETURN_IF_ERROR(pending_.Wait());  // the previous step's request, not this one
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
  pending_ = worker_.PushPullAsync(table_, 0, Buffer::CopyOf(gradient), fetched_[cur_],
                                   &replies_[cur_], last_scale_);
  AsEigen(params) = AsEigen(std::span<const float>(fetched_[prev_]));
  if (!last_refreshed_) AsEigen(params) -= (learning_rate_ * last_scale_) * AsEigen(gradient);
  return absl::OkStatus();
}

absl::Status EagerSchedule::Finish(std::span<float> params) {
  KAIROS_RETURN_IF_ERROR(pending_.Wait());
  prev_ = cur_;
  std::copy(fetched_[cur_].begin(), fetched_[cur_].end(), params.begin());
  return absl::OkStatus();
}

}  // namespace kairos
