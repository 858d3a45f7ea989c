// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// libtorch and kairos (docs/pytorch.md). Header-only and optional: kairos itself never
// includes it, and CMake builds its tests and example only where libtorch is found. It holds:
//
//  - Pushes and pulls of float32 CPU tensors. A contiguous tensor is read (push) or written
//    (pull) in place, without a copy; any other is gathered into, or scattered from, a
//    contiguous temporary. The elements of a tensor are its contiguous (row-major) order.
//
//      kairos::Push(worker, "w", gradient_tensor);
//      kairos::Pull(worker, "w", param_tensor);          // written in place
//
//  - A layout of a torch::nn::Module's parameters (ModuleLayout): each named parameter a
//    vector of numel() elements in a table (by default every parameter in one table), and
//    the calls that move all of them in one go: PullParameters writes the module's
//    parameters in place, PushGradients pushes their .grad(), AssignParameters writes the
//    module's values to the servers (rank 0's initial values, as torch.distributed
//    broadcasts rank 0's).
//
//  - TorchTrainer, the training loop's kairos part: Init (rank 0's initial parameters on
//    the servers, a barrier, every worker pulls them), then Step(fn) per iteration: pull the
//    parameters, zero the gradients, run fn (forward and backward), push the gradients,
//    advance the clock. The servers' optimizer (TableSpec::updater) does the update. With
//    Mode::kWorkerOptimizer the program keeps its torch::optim optimizer: fn also steps it,
//    and what is pushed is the change it made to the parameters (new - pulled), which the
//    servers add (the tables' updater must be "add").
//
// Thread-safety: as Worker's calls; a tensor or module a call reads or writes must not be
// touched by another thread until it returns.

#ifndef KAIROS_TORCH_H_
#define KAIROS_TORCH_H_

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kairos/options.h"
#include "kairos/parameter_layout.h"
#include "kairos/status.h"
#include "kairos/worker.h"

namespace kairos {

namespace torch_internal {

inline std::string Describe(const ::torch::Tensor& t) {
  if (!t.defined()) return "an undefined tensor";
  std::string sizes;
  for (int64_t s : t.sizes()) sizes += (sizes.empty() ? "" : " x ") + std::to_string(s);
  return std::string(c10::toString(t.scalar_type())) + " tensor of " +
         (sizes.empty() ? std::string("one element") : sizes) + " on " + t.device().str();
}

// OK for a defined float32 tensor on the CPU, else InvalidArgument saying what it is.
inline absl::Status CheckTensor(std::string_view what, const ::torch::Tensor& t) {
  if (t.defined() && t.scalar_type() == ::torch::kFloat32 && t.device().is_cpu()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(std::string(what) +
                                    ": kairos tables hold float32 on the CPU, but this is " +
                                    Describe(t) + " (use .to(torch::kFloat32).cpu())");
}

inline std::span<const float> ConstSpan(const ::torch::Tensor& t) {
  return {t.data_ptr<float>(), static_cast<size_t>(t.numel())};
}
inline std::span<float> Span(const ::torch::Tensor& t) {
  return {t.data_ptr<float>(), static_cast<size_t>(t.numel())};
}

}  // namespace torch_internal

// ---------------------------------------------------------------------------- one tensor

// Pushes `gradient` (float32, CPU; read in place when contiguous) as the gradient of table
// elements [offset, offset + numel). Waits until every shard accepted it (Worker::Push).
inline absl::Status Push(Worker& worker, std::string_view table, uint64_t offset,
                         const ::torch::Tensor& gradient, const CallOptions& options = {}) {
  KAIROS_RETURN_IF_ERROR(torch_internal::CheckTensor("Push", gradient));
  const ::torch::Tensor c = gradient.contiguous();  // itself when already contiguous
  return worker.Push(table, offset, torch_internal::ConstSpan(c), options);
}

// Pushes `gradient` as the gradient of the whole table (numel must be its size).
inline absl::Status Push(Worker& worker, std::string_view table, const ::torch::Tensor& gradient,
                         const CallOptions& options = {}) {
  KAIROS_RETURN_IF_ERROR(torch_internal::CheckTensor("Push", gradient));
  const ::torch::Tensor c = gradient.contiguous();
  return worker.Push(table, torch_internal::ConstSpan(c), options);
}

// Fills `out` (float32, CPU; written in place when contiguous, keeping its shape) with
// table elements [offset, offset + numel), as the gate allows.
inline absl::Status Pull(Worker& worker, std::string_view table, uint64_t offset,
                         const ::torch::Tensor& out, const CallOptions& options = {}) {
  KAIROS_RETURN_IF_ERROR(torch_internal::CheckTensor("Pull", out));
  ::torch::NoGradGuard no_grad;
  if (out.is_contiguous()) return worker.Pull(table, offset, torch_internal::Span(out), options);
  ::torch::Tensor staging = ::torch::empty(out.sizes(), out.options());
  KAIROS_RETURN_IF_ERROR(worker.Pull(table, offset, torch_internal::Span(staging), options));
  out.copy_(staging);
  return absl::OkStatus();
}

// Fills `out` with the whole table (numel must be its size).
inline absl::Status Pull(Worker& worker, std::string_view table, const ::torch::Tensor& out,
                         const CallOptions& options = {}) {
  KAIROS_RETURN_IF_ERROR(torch_internal::CheckTensor("Pull", out));
  ::torch::NoGradGuard no_grad;
  if (out.is_contiguous()) return worker.Pull(table, torch_internal::Span(out), options);
  ::torch::Tensor staging = ::torch::empty(out.sizes(), out.options());
  KAIROS_RETURN_IF_ERROR(worker.Pull(table, torch_internal::Span(staging), options));
  out.copy_(staging);
  return absl::OkStatus();
}

// ------------------------------------------------------------------------------ a module

// Where a module's parameters live in the job's tables. Build it from the module (the same
// on every worker: the same module class and constructor arguments), declare its tables in
// the job, then move all parameters with one call.
class ModuleLayout {
 public:
  // Which table holds parameter `name` (a named_parameters() name such as "conv1.weight").
  using TableOf = std::function<std::string(const std::string& name)>;

  // Every parameter of `module` (named_parameters(), recursively, in its order) as a
  // vector of numel() elements of table `table`, or of TableOf(name) when given.
  // InvalidArgument when a parameter is not float32 on the CPU, or ParameterLayout::Add
  // refuses one (a table name too long, a table too large).
  static absl::StatusOr<ModuleLayout> Of(const ::torch::nn::Module& module,
                                         std::string_view table = "model",
                                         const TableOf& table_of = nullptr) {
    ModuleLayout out;
    for (const auto& item : module.named_parameters(/*recurse=*/true)) {
      const ::torch::Tensor& p = item.value();
      KAIROS_RETURN_IF_ERROR(torch_internal::CheckTensor("parameter '" + item.key() + "'", p));
      const std::string t = table_of ? table_of(item.key()) : std::string(table);
      KAIROS_RETURN_IF_ERROR(out.layout_.Add(item.key(), t, p.numel()));
    }
    if (out.layout_.num_tensors() == 0) {
      return absl::InvalidArgumentError("ModuleLayout::Of: the module has no parameters");
    }
    return out;
  }

  const ParameterLayout& layout() const { return layout_; }
  const std::vector<std::string>& tables() const { return layout_.tables(); }

  // The declarations of the layout's tables for JobConfig::tables, each with `updater`
  // and zeros as initial values (AssignParameters, or TorchTrainer::Init, then writes the
  // module's own initial values).
  absl::StatusOr<std::vector<TableSpec>> Tables(const UpdaterSpec& updater) const {
    std::vector<TableSpec> out;
    for (const std::string& t : layout_.tables()) {
      absl::StatusOr<TableSpec> spec = layout_.Table(t, Initializer::Zeros(), updater);
      if (!spec.ok()) return spec.status();
      out.push_back(*std::move(spec));
    }
    return out;
  }

  // Writes every parameter of `module` in place with the servers' values, as the gate
  // allows (all pulls in flight together).
  absl::Status PullParameters(Worker& worker, ::torch::nn::Module& module,
                              const CallOptions& options = {}) const {
    std::vector<::torch::Tensor> params;
    KAIROS_RETURN_IF_ERROR(Match("PullParameters", module, &params));
    ::torch::NoGradGuard no_grad;
    std::vector<Request> requests;
    std::vector<std::pair<::torch::Tensor, ::torch::Tensor>> staged;  // (param, staging)
    for (size_t i = 0; i < params.size(); ++i) {
      const ParameterLayout::Tensor& t = layout_.tensors()[i];
      ::torch::Tensor dst = params[i];
      if (!dst.is_contiguous()) {
        staged.emplace_back(dst, ::torch::empty(dst.sizes(), dst.options()));
        dst = staged.back().second;
      }
      requests.push_back(worker.PullAsync(t.table, t.offset, torch_internal::Span(dst), options));
    }
    KAIROS_RETURN_IF_ERROR(WaitAll(requests));
    for (auto& [param, staging] : staged) param.copy_(staging);
    return absl::OkStatus();
  }

  // Pushes the .grad() of every parameter of `module` (all pushes in flight together). A
  // parameter without a gradient (undefined: not used by the loss) pushes nothing.
  absl::Status PushGradients(Worker& worker, const ::torch::nn::Module& module,
                             const CallOptions& options = {}) const {
    std::vector<::torch::Tensor> params;
    KAIROS_RETURN_IF_ERROR(Match("PushGradients", module, &params));
    std::vector<::torch::Tensor> grads;
    for (const ::torch::Tensor& p : params) grads.push_back(p.grad());  // PushAll checks them
    return PushAll(worker, grads, options);
  }

  // Pushes one tensor per parameter, in the layout's order (undefined ones push nothing):
  // what TorchTrainer's worker-optimizer mode pushes (the change to each parameter).
  absl::Status PushAll(Worker& worker, const std::vector<::torch::Tensor>& values,
                       const CallOptions& options = {}) const {
    if (values.size() != layout_.tensors().size()) {
      return absl::InvalidArgumentError("PushAll: " + std::to_string(values.size()) +
                                        " tensors for a layout of " +
                                        std::to_string(layout_.tensors().size()));
    }
    std::vector<::torch::Tensor> held;  // contiguous copies live until the pushes are done
    std::vector<Request> requests;
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i].defined()) continue;
      const ParameterLayout::Tensor& t = layout_.tensors()[i];
      KAIROS_RETURN_IF_ERROR(torch_internal::CheckTensor("PushAll", values[i]));
      if (static_cast<uint64_t>(values[i].numel()) != t.size()) {
        return absl::InvalidArgumentError("PushAll: tensor '" + t.name + "' has " +
                                          std::to_string(t.size()) + " elements, the value " +
                                          torch_internal::Describe(values[i]));
      }
      held.push_back(values[i].contiguous());
      requests.push_back(
          worker.PushAsync(t.table, t.offset, torch_internal::ConstSpan(held.back()), options));
    }
    return WaitAll(requests);
  }

  // Writes `module`'s parameters to the servers (Worker::Assign): rank 0's initial values.
  absl::Status AssignParameters(Worker& worker, const ::torch::nn::Module& module,
                                const CallOptions& options = {}) const {
    std::vector<::torch::Tensor> params;
    KAIROS_RETURN_IF_ERROR(Match("AssignParameters", module, &params));
    std::vector<::torch::Tensor> held;
    std::vector<Request> requests;
    for (size_t i = 0; i < params.size(); ++i) {
      const ParameterLayout::Tensor& t = layout_.tensors()[i];
      held.push_back(params[i].detach().contiguous());
      requests.push_back(
          worker.AssignAsync(t.table, t.offset, torch_internal::ConstSpan(held.back()), options));
    }
    return WaitAll(requests);
  }

 private:
  // The module's parameters in the layout's order, checked against it: the same names, in
  // the same order, of the same sizes, float32 on the CPU.
  absl::Status Match(std::string_view what, const ::torch::nn::Module& module,
                     std::vector<::torch::Tensor>* out) const {
    const auto named = module.named_parameters(/*recurse=*/true);
    if (named.size() != layout_.tensors().size()) {
      return absl::InvalidArgumentError(std::string(what) + ": the module has " +
                                        std::to_string(named.size()) + " parameters, the layout " +
                                        std::to_string(layout_.tensors().size()) +
                                        ": build the layout from the same module");
    }
    size_t i = 0;
    for (const auto& item : named) {
      const ParameterLayout::Tensor& t = layout_.tensors()[i++];
      const ::torch::Tensor& p = item.value();
      if (item.key() != t.name || static_cast<uint64_t>(p.numel()) != t.size()) {
        return absl::InvalidArgumentError(
            std::string(what) + ": the module's parameter '" + item.key() + "' (" +
            std::to_string(p.numel()) + " elements) is not the layout's '" + t.name + "' (" +
            std::to_string(t.size()) + "): build the layout from the same module");
      }
      KAIROS_RETURN_IF_ERROR(torch_internal::CheckTensor(what, p));
      out->push_back(p);
    }
    return absl::OkStatus();
  }

  ParameterLayout layout_;
};

// ------------------------------------------------------------------------- the training loop

// The kairos side of a data-parallel training loop over a torch::nn::Module:
//
//   kairos::TorchTrainer trainer(worker, layout, model);
//   KAIROS_RETURN_IF_ERROR(trainer.Init());
//   for (...) {
//     KAIROS_RETURN_IF_ERROR(trainer.Step([&] {
//       torch::Tensor loss = torch::nll_loss(model->forward(x), y);
//       loss.backward();
//     }));
//   }
//
// The worker, layout and module must outlive the trainer.
class TorchTrainer {
 public:
  enum class Mode {
    // The servers update the parameters (TableSpec::updater: sgd, momentum, adam, ...);
    // the worker pushes its gradients.
    kServerOptimizer,
    // The program's own torch::optim optimizer updates the parameters inside Step's
    // function; the worker pushes the change it made (parameters after - parameters
    // pulled), which the servers add: the tables' updater must be "add".
    kWorkerOptimizer,
  };

  TorchTrainer(Worker& worker, const ModuleLayout& layout, ::torch::nn::Module& module,
               Mode mode = Mode::kServerOptimizer)
      : worker_(worker), layout_(layout), module_(module), mode_(mode) {}

  // Rank 0 writes the module's own initial parameters to the servers; after a barrier
  // every worker pulls them, so that all start from rank 0's values.
  absl::Status Init(const CallOptions& options = {}) {
    if (worker_.rank() == 0) {
      KAIROS_RETURN_IF_ERROR(layout_.AssignParameters(worker_, module_, options));
    }
    KAIROS_RETURN_IF_ERROR(worker_.Barrier(options));
    return layout_.PullParameters(worker_, module_, options);
  }

  // One iteration: pulls the parameters (as the policy's gate allows), zeroes the
  // gradients, runs `forward_backward`, pushes the gradients (or, kWorkerOptimizer, the
  // change to the parameters), and advances the clock. An error of any request stops the
  // step and is returned; the clock then does not advance.
  absl::Status Step(const std::function<void()>& forward_backward,
                    const CallOptions& options = {}) {
    KAIROS_RETURN_IF_ERROR(layout_.PullParameters(worker_, module_, options));
    std::vector<::torch::Tensor> pulled;
    if (mode_ == Mode::kWorkerOptimizer) {
      for (const ::torch::Tensor& p : module_.parameters()) pulled.push_back(p.detach().clone());
    }
    module_.zero_grad();
    forward_backward();
    if (mode_ == Mode::kServerOptimizer) {
      KAIROS_RETURN_IF_ERROR(layout_.PushGradients(worker_, module_, options));
    } else {
      std::vector<::torch::Tensor> change;
      size_t i = 0;
      for (const ::torch::Tensor& p : module_.parameters()) {
        change.push_back(p.detach() - pulled[i++]);
      }
      KAIROS_RETURN_IF_ERROR(layout_.PushAll(worker_, change, options));
    }
    return worker_.AdvanceClock();
  }

 private:
  Worker& worker_;
  const ModuleLayout& layout_;
  ::torch::nn::Module& module_;
  const Mode mode_;
};

}  // namespace kairos

#endif  // KAIROS_TORCH_H_
