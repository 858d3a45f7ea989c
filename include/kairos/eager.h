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
// A model whose parameters span several tables runs one schedule over all of them: `params`
// and the gradient are then the tables' values one after the other, in the order given, and
// each step is one multi-table Worker::PushPullAsync, so that it ends one iteration.
//
// The local correction assumes the servers apply exactly lr(t) * scale * gradient: lr(t) is
// the table's SGD learning rate times its schedule's factor at the step's clock t (the
// job's TableSpec), with constant weighting and immediate aggregation, as the `eager` preset
// does. Under another weighting (VSGD), updater or aggregation the correction is that
// approximation; the global parameters are always the servers'.
// Thread-safety: one EagerSchedule per thread; the Worker may be shared.

#ifndef KAIROS_EAGER_H_
#define KAIROS_EAGER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kairos/export.h"
#include "kairos/worker.h"

namespace kairos {

// Whether a policy spec (docs/policies.md) pulls eagerly (`pull=eager`, the `eager` preset,
// `vsgd+pull=eager`, ...): its workers should then run an EagerSchedule. InvalidArgument
// for a spec that does not parse.
KAIROS_EXPORT absl::StatusOr<bool> PullsEagerly(std::string_view policy);

class KAIROS_EXPORT EagerSchedule {
 public:
  // Reads the whole table into `params` (REQUIRES: params.size() == the table's size).
  static absl::StatusOr<std::unique_ptr<EagerSchedule>> Start(Worker& worker,
                                                               std::string_view table,
                                                               std::span<float> params);
  // Over several tables (the file comment): reads each whole table into its place in
  // `params`, whose size must be the sum of the tables' sizes. InvalidArgument for no
  // table, a repeated one or a sparse one; NotFound for an unknown one.
  static absl::StatusOr<std::unique_ptr<EagerSchedule>> Start(
      Worker& worker, std::span<const std::string> tables, std::span<float> params);

  // Waits for the last step's requests (their replies are written into this object).
  ~EagerSchedule();
  EagerSchedule(const EagerSchedule&) = delete;
  EagerSchedule& operator=(const EagerSchedule&) = delete;

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
  // How long the last Step waited for the previous step's reply (zero when the reply was
  // back: the communication was hidden behind the computation), and whether it waited.
  absl::Duration last_wait() const { return last_wait_; }
  bool last_waited() const { return last_waited_; }

 private:
  // One table of the schedule: [begin, begin + size) of the flat parameters.
  struct Part {
    std::string table;
    uint64_t begin = 0;
    uint64_t size = 0;
    float learning_rate = 0.0f;
    std::function<double(int64_t)> schedule;  // the factor at a clock
  };

  EagerSchedule(Worker& worker, std::vector<Part> parts, uint64_t size, bool modulate);
  absl::Status WaitPending();

  Worker& worker_;
  const std::vector<Part> parts_;
  const bool modulate_;
  std::vector<float> fetched_[2];
  PushPullReply replies_[2];
  std::vector<int64_t> seen_clocks_;
  std::vector<Request> pending_;  // the previous step's requests; complete before the first
  int cur_ = 0;                   // the buffer pending_ fills
  int prev_ = 0;
  float last_scale_ = 1.0f;
  int64_t last_foreign_ = 0;
  bool last_refreshed_ = false;
  absl::Duration last_wait_;
  bool last_waited_ = false;
};

}  // namespace kairos

#endif  // KAIROS_EAGER_H_
