// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// EagerSchedule: the worker side of eager pull (PS+, docs/policies.md). A step sends the
// gradient and, in the same request, asks for the parameters as they will be once that push
// is applied; the step then returns at once with the parameters for the next step, computed
// locally as
//
//     next = W_prev - lr0 * scale * gradient
//
// where W_prev is what the previous step's request fetched (the global parameters after this
// worker's previous update) and scale is the worker-side learning-rate modulation from the
// clocks that request carried. A step waits only for the previous step's request, never for
// its own push, so communication overlaps the next computation.
//
//   auto eager = kairos::EagerSchedule::Start(worker, "w", params);
//   for (...) {
//     Gradient(params, grad);
//     KAIROS_RETURN_IF_ERROR((*eager)->Step(grad, params));   // params: the next step's
//   }
//   KAIROS_RETURN_IF_ERROR((*eager)->Finish(params));        // params: the global ones
//
// The local correction assumes the servers apply exactly lr0 * scale * gradient (the table's
// SGD learning rate, constant weighting, immediate aggregation), as the `eager` preset does.
// Thread-safety: one EagerSchedule per thread; the Worker may be shared.

#ifndef KAIROS_EAGER_H_
#define KAIROS_EAGER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kairos/export.h"
#include "kairos/worker.h"

namespace kairos {

class KAIROS_EXPORT EagerSchedule {
 public:
  // Reads the whole table into `params` (REQUIRES: params.size() == the table's size).
  static absl::StatusOr<std::unique_ptr<EagerSchedule>> Start(Worker& worker,
                                                               std::string_view table,
                                                               std::span<float> params);

  // `gradient` was computed on `params`; sends it (ending the iteration) and overwrites
  // `params` with the next step's parameters (see the file comment). When the previous
  // request reports that a shard dropped this worker's push as too stale (SaPS), `params`
  // become the fetched global parameters without the local correction (a refresh).
  absl::Status Step(std::span<const float> gradient, std::span<float> params);
  // Waits for the last request and sets `params` to the global parameters it fetched.
  absl::Status Finish(std::span<float> params);

  // The global parameters the previous request fetched (W_prev of the last Step).
  std::span<const float> fetched() const { return fetched_[prev_]; }
  // The multiplier the last Step gave its update, and the updates of other workers it saw
  // between its two latest reads.
  float last_scale() const { return last_scale_; }
  int64_t last_foreign_updates() const { return last_foreign_; }
  bool last_refreshed() const { return last_refreshed_; }

 private:
  EagerSchedule(Worker& worker, std::string table, uint64_t size, float learning_rate,
                bool modulate);

  Worker& worker_;
  const std::string table_;
  const float learning_rate_;
  const bool modulate_;
  std::vector<float> fetched_[2];
  PushPullReply replies_[2];
  std::vector<int64_t> seen_clocks_;
  Request pending_;  // the previous step's request; completed before the first step
  int cur_ = 0;      // the buffer pending_ fills
  int prev_ = 0;
  float last_scale_ = 1.0f;
  int64_t last_foreign_ = 0;
  bool last_refreshed_ = false;
};

}  // namespace kairos

#endif  // KAIROS_EAGER_H_
