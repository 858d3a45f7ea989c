// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The server-side updater (optimizer) interface. kairos ships sgd, momentum, nesterov,
// adagrad, adam, adamw, add and ftrl (docs/optimizers.md); a program that embeds its own server
// adds updaters through ServerOptions::updater_factory, and kairos-server loads them from
// plugins (--updater-plugin, KAIROS_UPDATER_PLUGIN below).

#ifndef KAIROS_UPDATER_H_
#define KAIROS_UPDATER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

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
  // One update of a chunk's elements, as the server's policy decided it
  // (docs/optimizers.md, "How the policy's factors enter"):
  struct Update {
    std::span<const float> gradient;
    // Multiplies the gradient before the optimizer sees it: the aggregation's 1 / divisor
    // that averages a round's sum (BSP, n-softsync); 1 for a push applied on its own.
    float gradient_scale = 1.0f;
    // Multiplies this update's step size (its learning rate): the policy's weighting
    // (SA-ASGD's lr / tau, VSGD), the worker's eager-pull scale, SaPS's down-weight; 1 for
    // a round's sum.
    float step_scale = 1.0f;
    // The schedule's learning rate for this update: the table's base learning rate times
    // the schedule's factor.
    float learning_rate = 0.0f;
    // 1-based count of the updates applied to this chunk, this one included (Adam's bias
    // correction, Adagrad's lr_decay).
    uint64_t step = 1;
  };

  virtual ~Updater() = default;

  // Extra float32 state per table element (e.g. 1 for momentum); 0 for plain SGD. Element
  // i's state is state[i * state_per_element(), (i + 1) * state_per_element()).
  virtual std::size_t state_per_element() const { return 0; }

  // Applies `u` to `values`. `state` has values.size() * state_per_element() floats, zero
  // at first. REQUIRES: u.gradient.size() == values.size().
  virtual void Apply(std::span<float> values, std::span<float> state, const Update& u) const = 0;

  // Applies several updates of the same elements, in order: the result must equal calling
  // Apply for each in turn. A server that finds several pushes of a chunk waiting applies
  // them with one call. The default calls Apply for each; the built-in updaters work block
  // by block, so that each element sees the same operations in the same order, bit for
  // bit, while the values are read and written once.
  // REQUIRES: every gradient has values.size() floats.
  virtual void ApplyMany(std::span<float> values, std::span<float> state,
                         std::span<const Update> updates) const;
};

// Builds the updater named by `spec` (its name; UpdaterSpec::learning_rate and ::schedule
// are the server's), or InvalidArgument for a name it does not know.
using UpdaterFactory =
    std::function<absl::StatusOr<std::unique_ptr<Updater>>(const UpdaterSpec& spec)>;

// The built-in factory: sgd, momentum, nesterov, adagrad, adam, adamw, add, ftrl, each with
// optional parameters ("adam:beta1=0.9,eps=1e-7"; docs/optimizers.md). InvalidArgument
// names an unknown optimizer (listing the built-ins), an unknown parameter (listing the
// optimizer's) or a value out of range (giving the range).
KAIROS_EXPORT absl::StatusOr<std::unique_ptr<Updater>> MakeBuiltinUpdater(
    const UpdaterSpec& spec);

}  // namespace kairos

// The entry point of an updater plugin, a shared object that kairos-server loads with
// --updater-plugin PATH.so: in one source file of the plugin,
//
//   absl::StatusOr<std::unique_ptr<kairos::Updater>> MyFactory(const kairos::UpdaterSpec&);
//   KAIROS_UPDATER_PLUGIN(MyFactory)
//
// The server consults the plugins' factories, in the order given, before the built-ins; a
// factory answers InvalidArgument for names it does not know. The symbol's version suffix
// changes whenever the Updater interface does, so an out-of-date plugin is refused by name.
#define KAIROS_UPDATER_PLUGIN_SYMBOL "kairos_updater_plugin_v1"
#define KAIROS_UPDATER_PLUGIN(factory)                                              \
  extern "C" __attribute__((visibility("default"))) const ::kairos::UpdaterFactory* \
  kairos_updater_plugin_v1() {                                                      \
    static const ::kairos::UpdaterFactory f = (factory);                            \
    return &f;                                                                      \
  }

#endif  // KAIROS_UPDATER_H_
