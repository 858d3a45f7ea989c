// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The built-in updaters (docs/optimizers.md): PyTorch's torch.optim update rules and
// defaults, with the policy's two factors entering as docs/optimizers.md says: the
// gradient is multiplied by Update::gradient_scale before the optimizer sees it, and the
// step size (the learning rate) by Update::step_scale.

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kairos/updater.h"
#include "policy/optimizer_spec.h"

namespace kairos {
namespace {

using Update = Updater::Update;

// y += a * x. The update is memory-bound, and wider vectors halve its instruction count: GCC
// compiles one AVX2 version and one baseline version and picks at load time (the library is
// built without -march so that it runs on any x86-64).
#if defined(__x86_64__) && defined(__GNUC__)
#define KAIROS_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define KAIROS_AVX2_CLONES
#endif
KAIROS_AVX2_CLONES
void Axpy(float a, const float* __restrict x, float* __restrict y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] += a * x[i];
}

// The optimizers' loops, AVX2 and baseline clones like Axpy. Neither clone fuses a multiply
// and an add (AVX2 does not imply FMA), and square roots and divisions are correctly rounded
// in both, so the clone the machine picks does not change a bit of the result.
KAIROS_AVX2_CLONES
void MomentumLoop(float* __restrict w, float* __restrict v, const float* __restrict g,
                  std::size_t n, float gs, float lr, float mu, float wd, bool nesterov) {
  for (std::size_t i = 0; i < n; ++i) {
    const float gi = gs * g[i] + wd * w[i];
    v[i] = mu * v[i] + gi;
    w[i] -= lr * (nesterov ? gi + mu * v[i] : v[i]);
  }
}

KAIROS_AVX2_CLONES
void AdagradLoop(float* __restrict w, float* __restrict s, const float* __restrict g,
                 std::size_t n, float gs, float clr, float eps, float wd) {
  for (std::size_t i = 0; i < n; ++i) {
    const float gi = gs * g[i] + wd * w[i];
    s[i] += gi * gi;
    w[i] -= clr * gi / (std::sqrt(s[i]) + eps);
  }
}

// State interleaved per element: s[2i] = m, s[2i + 1] = v.
KAIROS_AVX2_CLONES
void AdamLoop(float* __restrict w, float* __restrict s, const float* __restrict g, std::size_t n,
              float gs, float step_size, float bc2_sqrt, float decay, float beta1, float beta2,
              float eps, float l2, bool decoupled) {
  for (std::size_t i = 0; i < n; ++i) {
    if (decoupled) w[i] *= decay;
    const float gi = gs * g[i] + l2 * w[i];
    float& m = s[2 * i];
    float& v = s[2 * i + 1];
    m = beta1 * m + (1.0f - beta1) * gi;
    v = beta2 * v + (1.0f - beta2) * gi * gi;
    w[i] -= step_size * (m / (std::sqrt(v) / bc2_sqrt + eps));
  }
}

// Elements per block of ApplyMany: 16 KiB of values, which stay in the L1 cache while
// every update's slice of the block is applied.
constexpr std::size_t kBlock = 4096;

// An updater whose update of element i reads and writes only element i (its value and its
// state): Derived::Prepare(update) computes the update's constants once, and
// Derived::Kernel(w, s, g, n, prepared) updates n elements. ApplyMany works block by block,
// each update in turn, so every element gets the same operations in the same order as with
// one Apply per update (bit-identical) while the values are read and written once.
template <typename Derived>
class Elementwise : public Updater {
 public:
  void Apply(std::span<float> values, std::span<float> state, const Update& u) const final {
    const Derived& self = static_cast<const Derived&>(*this);
    self.Kernel(values.data(), state.data(), u.gradient.data(), values.size(), self.Prepare(u));
  }

  void ApplyMany(std::span<float> values, std::span<float> state,
                 std::span<const Update> updates) const final {
    const Derived& self = static_cast<const Derived&>(*this);
    using Prepared = decltype(self.Prepare(updates[0]));
    std::vector<Prepared> prepared;
    prepared.reserve(updates.size());
    for (const Update& u : updates) prepared.push_back(self.Prepare(u));
    const std::size_t per = state_per_element();
    for (std::size_t begin = 0; begin < values.size(); begin += kBlock) {
      const std::size_t n = std::min(kBlock, values.size() - begin);
      float* s = per == 0 ? state.data() : state.data() + begin * per;
      for (std::size_t k = 0; k < updates.size(); ++k) {
        self.Kernel(values.data() + begin, s, updates[k].gradient.data() + begin, n, prepared[k]);
      }
    }
  }
};

// The learning rate of one update: the schedule's, times the policy's step scale.
float StepSize(const Update& u) { return u.learning_rate * u.step_scale; }

// w -= lr * (g + wd * w). Without weight decay exactly the arithmetic kairos always did,
// w += -(lr * scale) * g with scale the one factor that is not 1, so that results (the
// simulator's outputs, exact tests) stay bit for bit the same.
class Sgd final : public Elementwise<Sgd> {
 public:
  explicit Sgd(float wd) : wd_(wd) {}
  struct Prepared {
    float a;   // wd == 0: -(lr * gradient_scale * step_scale)
    float gs;  // wd != 0: the gradient's factor and the step size
    float lr;
  };
  Prepared Prepare(const Update& u) const {
    return {-(u.learning_rate * (u.gradient_scale * u.step_scale)), u.gradient_scale, StepSize(u)};
  }
  void Kernel(float* __restrict w, float* /*s*/, const float* __restrict g, std::size_t n,
              const Prepared& p) const {
    if (wd_ == 0.0f) return Axpy(p.a, g, w, n);
    for (std::size_t i = 0; i < n; ++i) w[i] -= p.lr * (p.gs * g[i] + wd_ * w[i]);
  }

 private:
  const float wd_;
};

// v = mu v + g; w -= lr * v (nesterov: w -= lr * (g + mu v)), g = gradient_scale * g +
// wd * w. PyTorch's SGD with momentum and dampening 0 (its first step sets v = g, which is
// what mu * 0 + g is).
class Momentum final : public Elementwise<Momentum> {
 public:
  Momentum(float mu, float wd, bool nesterov) : mu_(mu), wd_(wd), nesterov_(nesterov) {}
  std::size_t state_per_element() const override { return 1; }
  struct Prepared {
    float gs;
    float lr;
  };
  Prepared Prepare(const Update& u) const { return {u.gradient_scale, StepSize(u)}; }
  void Kernel(float* w, float* v, const float* g, std::size_t n, const Prepared& p) const {
    MomentumLoop(w, v, g, n, p.gs, p.lr, mu_, wd_, nesterov_);
  }

 private:
  const float mu_;
  const float wd_;
  const bool nesterov_;
};

// s += g^2; w -= clr * g / (sqrt(s) + eps), clr = lr / (1 + (step - 1) lr_decay).
class Adagrad final : public Elementwise<Adagrad> {
 public:
  Adagrad(float eps, float lr_decay, float wd) : eps_(eps), lr_decay_(lr_decay), wd_(wd) {}
  std::size_t state_per_element() const override { return 1; }
  struct Prepared {
    float gs;
    float clr;
  };
  Prepared Prepare(const Update& u) const {
    const double decay = 1.0 + static_cast<double>(u.step - 1) * lr_decay_;
    return {u.gradient_scale, static_cast<float>(StepSize(u) / decay)};
  }
  void Kernel(float* w, float* s, const float* g, std::size_t n, const Prepared& p) const {
    AdagradLoop(w, s, g, n, p.gs, p.clr, eps_, wd_);
  }

 private:
  const float eps_;
  const float lr_decay_;
  const float wd_;
};

// Adam with bias correction; AdamW's decoupled decay w -= lr * wd * w comes first, Adam's
// L2 decay is added to the gradient. State per element: m, v.
class Adam final : public Elementwise<Adam> {
 public:
  Adam(float beta1, float beta2, float eps, float wd, bool decoupled)
      : beta1_(beta1), beta2_(beta2), eps_(eps), wd_(wd), decoupled_(decoupled) {}
  std::size_t state_per_element() const override { return 2; }
  struct Prepared {
    float gs;
    float step_size;  // lr / (1 - beta1^step)
    float bc2_sqrt;   // sqrt(1 - beta2^step)
    float decay;      // adamw: 1 - lr * wd
  };
  Prepared Prepare(const Update& u) const {
    const double t = static_cast<double>(u.step);
    const double bc1 = 1.0 - std::pow(static_cast<double>(beta1_), t);
    const double bc2 = 1.0 - std::pow(static_cast<double>(beta2_), t);
    const float lr = StepSize(u);
    return {u.gradient_scale, static_cast<float>(lr / bc1), static_cast<float>(std::sqrt(bc2)),
            1.0f - lr * wd_};
  }
  void Kernel(float* w, float* s, const float* g, std::size_t n, const Prepared& p) const {
    AdamLoop(w, s, g, n, p.gs, p.step_size, p.bc2_sqrt, p.decay, beta1_, beta2_, eps_,
             decoupled_ ? 0.0f : wd_, decoupled_);
  }

 private:
  const float beta1_;
  const float beta2_;
  const float eps_;
  const float wd_;
  const bool decoupled_;
};

// w += gradient_scale * step_scale * g: the push is a ready-made delta.
class Add final : public Elementwise<Add> {
 public:
  struct Prepared {
    float a;
  };
  Prepared Prepare(const Update& u) const { return {u.gradient_scale * u.step_scale}; }
  void Kernel(float* __restrict w, float* /*s*/, const float* __restrict g, std::size_t n,
              const Prepared& p) const {
    Axpy(p.a, g, w, n);
  }
};

// FTRL-Proximal (McMahan et al., KDD 2013), per coordinate, alpha the update's learning
// rate: with g the scaled gradient, sigma = (sqrt(n + g^2) - sqrt(n)) / alpha;
// z += g - sigma w; n += g^2; w = 0 when |z| <= l1, else
// -(z - sign(z) l1) / ((beta + sqrt(n)) / alpha + l2). State per element: z, n. A learning
// rate of 0 changes nothing (the table stops moving, as with the other optimizers).
class Ftrl final : public Elementwise<Ftrl> {
 public:
  Ftrl(float l1, float l2, float beta) : l1_(l1), l2_(l2), beta_(beta) {}
  std::size_t state_per_element() const override { return 2; }
  struct Prepared {
    float gs;
    float alpha;
  };
  Prepared Prepare(const Update& u) const { return {u.gradient_scale, StepSize(u)}; }
  void Kernel(float* w, float* s, const float* g, std::size_t n, const Prepared& p) const {
    if (!(p.alpha > 0.0f)) return;
    for (std::size_t i = 0; i < n; ++i) {
      const float gi = p.gs * g[i];
      float& z = s[2 * i];
      float& acc = s[2 * i + 1];
      const float before = std::sqrt(acc);
      acc += gi * gi;
      const float after = std::sqrt(acc);
      z += gi - (after - before) / p.alpha * w[i];
      w[i] = std::abs(z) <= l1_
                 ? 0.0f
                 : -(z - std::copysign(l1_, z)) / ((beta_ + after) / p.alpha + l2_);
    }
  }

 private:
  const float l1_;
  const float l2_;
  const float beta_;
};

}  // namespace

void Updater::ApplyMany(std::span<float> values, std::span<float> state,
                        std::span<const Update> updates) const {
  for (const Update& u : updates) Apply(values, state, u);
}

absl::StatusOr<std::unique_ptr<Updater>> MakeBuiltinUpdater(const UpdaterSpec& spec) {
  absl::StatusOr<policy::OptimizerSpec> parsed = policy::ParseOptimizerSpec(spec.name);
  if (!parsed.ok()) return parsed.status();
  const std::string& name = parsed->def->name;
  if (!(spec.learning_rate >= 0.0f) || !std::isfinite(spec.learning_rate)) {
    return absl::InvalidArgumentError(absl::StrCat("updater '", spec.name,
                                                   "': learning_rate must be finite and >= 0, got ",
                                                   spec.learning_rate));
  }
  auto get = [&](const char* key) { return static_cast<float>(parsed->Get(key)); };
  if (name == "sgd") return std::make_unique<Sgd>(get("wd"));
  if (name == "momentum") return std::make_unique<Momentum>(get("mu"), get("wd"), false);
  if (name == "nesterov") return std::make_unique<Momentum>(get("mu"), get("wd"), true);
  if (name == "adagrad") {
    return std::make_unique<Adagrad>(get("eps"), get("lr_decay"), get("wd"));
  }
  if (name == "adam" || name == "adamw") {
    return std::make_unique<Adam>(get("beta1"), get("beta2"), get("eps"), get("wd"),
                                  name == "adamw");
  }
  if (name == "add") return std::make_unique<Add>();
  if (name == "ftrl") return std::make_unique<Ftrl>(get("l1"), get("l2"), get("beta"));
  return absl::InternalError(absl::StrCat("optimizer '", name, "' has no implementation"));
}

}  // namespace kairos
