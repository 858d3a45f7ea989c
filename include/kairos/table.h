// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Declarations of the tables a job shares: a dense table is a named float32 vector with an
// initialiser and a server-side updater. Tables are part of the job configuration that the
// coordinator checks at every join.

#ifndef KAIROS_TABLE_H_
#define KAIROS_TABLE_H_

#include <cstdint>
#include <string>

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

// The server-side optimizer of a table. Built in: "sgd" (w -= learning_rate * scale * g,
// where scale comes from the policy's aggregation and weighting). An embedded server may
// register more names through ServerOptions::updater_factory.
struct UpdaterSpec {
  std::string name = "sgd";
  float learning_rate = 0.01f;
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

struct TableSpec {
  std::string name;       // unique within the job; 1..128 printable characters
  uint64_t size = 0;      // number of float32 elements; 1..kMaxTableElements (job.h)
  Initializer init;
  UpdaterSpec updater;
  NonFinitePolicy nonfinite = NonFinitePolicy::kRefuse;
  friend bool operator==(const TableSpec&, const TableSpec&) = default;
};

}  // namespace kairos

#endif  // KAIROS_TABLE_H_
