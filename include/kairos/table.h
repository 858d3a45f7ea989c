// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Declarations of the tables a job shares: a dense table is a named float32 vector with an
// initialiser and a server-side updater. Tables are part of the job configuration that the
// coordinator checks at every join.

#ifndef KAIROS_TABLE_H_
#define KAIROS_TABLE_H_

#include <cstdint>
#include <string>
#include <utility>

namespace kairos {

// How a table's elements are set when the servers create it. Element i's value depends only
// on (kind, parameters, seed, i), never on the number of servers, so every partitioning of a
// table starts from the same values.
struct Initializer {
  enum class Kind { kZeros, kConstant, kUniform, kNormal };
  Kind kind = Kind::kZeros;
  float a = 0.0f;      // kConstant: the value; kUniform: low; kNormal: mean
  float b = 0.0f;      // kUniform: high; kNormal: standard deviation
  uint64_t seed = 0;   // kUniform, kNormal

  static Initializer Zeros() { return {}; }
  static Initializer Constant(float v) { return {Kind::kConstant, v, 0.0f, 0}; }
  static Initializer Uniform(float lo, float hi, uint64_t seed) {
    return {Kind::kUniform, lo, hi, seed};
  }
  static Initializer Normal(float mean, float stddev, uint64_t seed) {
    return {Kind::kNormal, mean, stddev, seed};
  }
  friend bool operator==(const Initializer&, const Initializer&) = default;
};

// The server-side optimizer of a table and its learning rate (docs/optimizers.md).
//
// `name` is an optimizer spec, "name[:key=value,...]". Built in, with PyTorch's
// torch.optim update rules and defaults: "sgd", "momentum" (mu=0.9), "nesterov" (mu=0.9),
// "adagrad" (eps=1e-10, lr_decay=0), "adam" and "adamw" (beta1=0.9, beta2=0.999,
// eps=1e-8; adamw's decoupled wd=0.01), each with "wd" (L2 weight decay; 0), "add"
// (w += g: pushes are ready-made deltas; the learning rate is ignored) and "ftrl"
// (FTRL-Proximal, l1=0, l2=0, beta=1: the click-model standard, for sparse tables). E.g.
// "adam:beta1=0.8,eps=1e-7", "momentum:mu=0.95,wd=1e-4". The servers build the updater:
// an embedded server may register more names through ServerOptions::updater_factory, and
// kairos-server loads plugins (--updater-plugin); a name no server knows fails the job's
// start with the server's error.
//
// The policy's factors enter every optimizer the same way: a round's 1 / divisor (BSP,
// n-softsync) multiplies the gradient, the policy's weighting (SA-ASGD, VSGD, SaPS, a
// worker's eager-pull scale) the update's learning rate.
//
// `schedule` multiplies `learning_rate` by a factor of t, the pushing worker's clock (a
// round's sum: the round): "constant" (the default; "" means it too),
// "step:every=N,gamma=G" (gamma^floor(t/N); gamma 0.1), "cosine:steps=T,min=F" (from 1 to
// F over T, then F; min 0), "invsqrt:warmup=W" (sqrt(W / max(t, W))), each with
// "warmup=N" (times t / N for t < N).
struct UpdaterSpec {
  std::string name = "sgd";
  float learning_rate = 0.01f;
  std::string schedule = "constant";
  friend bool operator==(const UpdaterSpec&, const UpdaterSpec&) = default;
};

// What a server does with a push whose gradient holds a NaN or an infinity. Such a value is
// never applied silently: one bad worker would otherwise poison every parameter it touches.
enum class NonFinitePolicy {
  // The push is refused: nothing of it is applied, the worker's call fails with
  // InvalidArgument naming the table and the first bad element. The default.
  kRefuse,
  // The push is skipped: nothing of it is applied, the worker's call succeeds, and the server
  // counts it (ServerStats::refused.nonfinite_skipped, WorkerMetrics::nonfinite_skipped).
  kSkip,
};

// A dense table is a float32 vector addressed by element offset, cut into chunks spread
// over the servers. A sparse table (docs/sparse.md) is a set of rows of `row_width` floats
// addressed by uint64_t keys: a row exists on the server that owns its key (a fixed hash
// of the key, whatever the number of workers) from the first push that touches it, with
// the initial value of element c of row k a function of (init, k, c) alone; memory grows
// with the rows pushed, not with the key space.
enum class TableKind { kDense = 0, kSparse = 1 };

struct TableSpec {
  std::string name;       // unique within the job; 1..128 printable characters
  // Dense: number of float32 elements, 1..kMaxTableElements (job.h). Sparse: 0 (every
  // uint64_t key is a row).
  uint64_t size = 0;
  Initializer init;
  UpdaterSpec updater;
  NonFinitePolicy nonfinite = NonFinitePolicy::kRefuse;
  TableKind kind = TableKind::kDense;
  // Sparse: the floats of one row, 1..kMaxRowWidth (job.h). Dense: 0.
  uint32_t row_width = 0;
  // The table's own synchronization policy, a spec string like JobConfig::policy
  // (docs/policies.md, "A policy per table"): its gate, aggregation and weighting, e.g.
  // dense layers under "bsp" and an embedding under "ssp:s=8" in one job. "" (the default):
  // the job's. It may not name a pull schedule or a straggler policy: those act on whole
  // workers and are the job's.
  std::string policy{};

  // A sparse table of rows of `row_width` floats.
  static TableSpec Sparse(std::string name, uint32_t row_width, Initializer init = {},
                          UpdaterSpec updater = {}) {
    TableSpec t;
    t.name = std::move(name);
    t.init = init;
    t.updater = std::move(updater);
    t.kind = TableKind::kSparse;
    t.row_width = row_width;
    return t;
  }
  bool sparse() const { return kind == TableKind::kSparse; }
  friend bool operator==(const TableSpec&, const TableSpec&) = default;
};

}  // namespace kairos

#endif  // KAIROS_TABLE_H_
