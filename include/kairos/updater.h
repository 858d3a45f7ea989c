// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The server-side updater (optimizer) interface. kairos ships "sgd"; a program that embeds
// its own server can add updaters through ServerOptions::updater_factory.

#ifndef KAIROS_UPDATER_H_
#define KAIROS_UPDATER_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <span>

#include "absl/status/statusor.h"
#include "kairos/export.h"
#include "kairos/table.h"

namespace kairos {

// Applies gradients to one chunk of a table.
//
// Thread-safety: a server calls Apply or ApplyMany for one chunk from one thread at a time,
// and for different chunks possibly in parallel; an Updater must keep no mutable state
// outside the `state` it is given (it is shared by all chunks of a table).
class KAIROS_EXPORT Updater {
 public:
  virtual ~Updater() = default;

  // Extra float32 state per table element (e.g. 1 for momentum); 0 for plain SGD.
  virtual std::size_t state_per_element() const { return 0; }

  // Applies `gradient`, multiplied by `scale` (the policy's aggregation and weighting
  // factor), to `values`. `state` has values.size() * state_per_element() floats, zero at
  // first. REQUIRES: gradient.size() == values.size().
  virtual void Apply(std::span<float> values, std::span<float> state,
                     std::span<const float> gradient, float scale) const = 0;

  // Applies several gradients of the same elements, in order: the result must equal calling
  // Apply for each in turn. A server that finds several pushes of a chunk waiting applies
  // them with one call. The default calls Apply for each; an elementwise updater overrides
  // it to pass over `values` once (the built-in SGD works block by block, so that each
  // element sees the same operations in the same order, bit for bit).
  // REQUIRES: every gradient has values.size() floats.
  struct Weighted {
    std::span<const float> gradient;
    float scale = 1.0f;
  };
  virtual void ApplyMany(std::span<float> values, std::span<float> state,
                         std::span<const Weighted> gradients) const;
};

// Builds the updater named by `spec`, or InvalidArgument for an unknown name.
using UpdaterFactory =
    std::function<absl::StatusOr<std::unique_ptr<Updater>>(const UpdaterSpec& spec)>;

// The built-in factory: "sgd".
KAIROS_EXPORT absl::StatusOr<std::unique_ptr<Updater>> MakeBuiltinUpdater(
    const UpdaterSpec& spec);

}  // namespace kairos

#endif  // KAIROS_UPDATER_H_
