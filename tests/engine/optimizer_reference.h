// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Reference optimizers for the tests: PyTorch's torch.optim update rules written as plain
// loops in double precision, one element at a time. `g` is the gradient as the optimizer
// sees it (the policy's gradient_scale already applied) and `lr` the update's learning
// rate (the schedule's times the step scale), as docs/optimizers.md says.

#ifndef KAIROS_TESTS_ENGINE_OPTIMIZER_REFERENCE_H_
#define KAIROS_TESTS_ENGINE_OPTIMIZER_REFERENCE_H_

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kairos::reference {

struct RefParams {
  double mu = 0.9, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, wd = 0, lr_decay = 0;
  double l1 = 0, l2 = 0, beta = 1;  // ftrl
};

// One update of one element: its value `w`, its state `s` (2 doubles, zero at first).
using RefStep =
    std::function<void(double& w, std::vector<double>& s, double g, double lr, uint64_t step)>;

// `kind`: sgd, momentum, nesterov, adagrad, adam, adamw, add, ftrl.
inline RefStep Reference(const std::string& kind, const RefParams& p) {
  if (kind == "ftrl") {  // FTRL-Proximal (McMahan et al., KDD 2013), s[0] = z, s[1] = n
    return [p](double& w, std::vector<double>& s, double g, double lr, uint64_t) {
      if (!(lr > 0)) return;
      const double sigma = (std::sqrt(s[1] + g * g) - std::sqrt(s[1])) / lr;
      s[0] += g - sigma * w;
      s[1] += g * g;
      w = std::abs(s[0]) <= p.l1
              ? 0.0
              : -(s[0] - (s[0] < 0 ? -p.l1 : p.l1)) / ((p.beta + std::sqrt(s[1])) / lr + p.l2);
    };
  }
  if (kind == "sgd") {
    return [p](double& w, std::vector<double>&, double g, double lr, uint64_t) {
      w -= lr * (g + p.wd * w);
    };
  }
  if (kind == "add") {
    return [](double& w, std::vector<double>&, double g, double, uint64_t) { w += g; };
  }
  if (kind == "momentum" || kind == "nesterov") {
    const bool nesterov = kind == "nesterov";
    return [p, nesterov](double& w, std::vector<double>& s, double g, double lr, uint64_t) {
      g += p.wd * w;
      s[0] = p.mu * s[0] + g;  // torch: buf = g at the first step, = mu * 0 + g
      w -= lr * (nesterov ? g + p.mu * s[0] : s[0]);
    };
  }
  if (kind == "adagrad") {
    return [p](double& w, std::vector<double>& s, double g, double lr, uint64_t step) {
      g += p.wd * w;
      const double clr = lr / (1 + static_cast<double>(step - 1) * p.lr_decay);
      s[0] += g * g;
      w -= clr * g / (std::sqrt(s[0]) + p.eps);
    };
  }
  const bool decoupled = kind == "adamw";
  return [p, decoupled](double& w, std::vector<double>& s, double g, double lr, uint64_t step) {
    if (decoupled) {
      w *= 1 - lr * p.wd;
    } else {
      g += p.wd * w;
    }
    s[0] = p.beta1 * s[0] + (1 - p.beta1) * g;
    s[1] = p.beta2 * s[1] + (1 - p.beta2) * g * g;
    const double bc1 = 1 - std::pow(p.beta1, static_cast<double>(step));
    const double bc2 = 1 - std::pow(p.beta2, static_cast<double>(step));
    w -= lr / bc1 * s[0] / (std::sqrt(s[1]) / std::sqrt(bc2) + p.eps);
  };
}

}  // namespace kairos::reference

#endif  // KAIROS_TESTS_ENGINE_OPTIMIZER_REFERENCE_H_
