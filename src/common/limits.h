// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Helpers for checking what arrives from the network before it is used: overflow-safe
// arithmetic on sizes, a scan for non-finite floats, the machine's memory, and a bounded
// "log this peer once" set.

#ifndef KAIROS_COMMON_LIMITS_H_
#define KAIROS_COMMON_LIMITS_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "absl/container/flat_hash_set.h"

namespace kairos::internal {

// a + b and a * b, saturating at UINT64_MAX instead of wrapping.
inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}
inline uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}

// The index of the first NaN or infinity in `values`, or values.size() when every value is
// finite. Reads the values once at memory speed (it is vectorised; no branch per value).
std::size_t FirstNonFinite(std::span<const float> values);

// Physical memory of the machine, or the cgroup's memory limit when that is lower.
uint64_t UsableMemoryBytes();

// The default memory budget of a server: 80 % of UsableMemoryBytes().
uint64_t DefaultMemoryBudget();

// Remembers which peers were already logged, up to `capacity` of them: ShouldLog(p) is
// true the first time p is seen, and, once `capacity` peers were seen, true exactly once
// more (so the log can say that further peers are not logged). Bounded memory whatever
// the peers do. Not thread-safe.
class LogOnce {
 public:
  explicit LogOnce(std::size_t capacity = 1024) : capacity_(capacity) {}
  enum class Verdict { kLog, kLogLast, kQuiet };
  Verdict Check(uint64_t peer);

 private:
  const std::size_t capacity_;
  absl::flat_hash_set<uint64_t> seen_;
  bool full_reported_ = false;
};

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_LIMITS_H_
