// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "common/limits.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>

namespace kairos::internal {

namespace {

// A float is NaN or infinite exactly when its exponent bits are all ones: as an int32
// without the sign bit, when it exceeds 0x7f7fffff (the largest finite magnitude).
inline bool NonFiniteBits(int32_t bits) { return (bits & 0x7fffffff) > 0x7f7fffff; }

// Blocks of 1024 values are tested without a branch per value (the inner loop vectorises
// to AND, compare and OR); only a block that holds a bad value is searched for its index.
inline std::size_t FirstNonFiniteBody(const float* values, std::size_t n) {
  constexpr std::size_t kBlock = 1024;
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    const std::size_t end = std::min(n, begin + kBlock);
    int32_t any = 0;
    for (std::size_t i = begin; i < end; ++i) {
      int32_t bits;
      std::memcpy(&bits, &values[i], sizeof(bits));
      any |= NonFiniteBits(bits) ? -1 : 0;
    }
    if (any == 0) continue;
    for (std::size_t i = begin; i < end; ++i) {
      int32_t bits;
      std::memcpy(&bits, &values[i], sizeof(bits));
      if (NonFiniteBits(bits)) return i;
    }
  }
  return n;
}

#if defined(__x86_64__)
// The same loop inlined into an AVX2 function (8 values per instruction): 15 us instead of
// 33 us for a just-received 1 MiB push here (BM_FirstNonFinite).
__attribute__((target("avx2"))) std::size_t FirstNonFiniteAvx2(const float* values,
                                                               std::size_t n) {
  return FirstNonFiniteBody(values, n);
}
#endif

}  // namespace

std::size_t FirstNonFinite(std::span<const float> values) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) return FirstNonFiniteAvx2(values.data(), values.size());
#endif
  return FirstNonFiniteBody(values.data(), values.size());
}

namespace {

// The first number in `path`, or 0 when it cannot be read or is "max".
uint64_t ReadLimit(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text.empty() || text == "max") return 0;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return 0;
    value = SaturatingAdd(SaturatingMul(value, 10), static_cast<uint64_t>(c - '0'));
  }
  return value;
}

}  // namespace

uint64_t UsableMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  uint64_t memory = pages > 0 && page > 0
                        ? SaturatingMul(static_cast<uint64_t>(pages), static_cast<uint64_t>(page))
                        : uint64_t{4} << 30;  // unknown: assume a small machine
  for (const char* path : {"/sys/fs/cgroup/memory.max",                       // cgroup v2
                           "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {  // cgroup v1
    const uint64_t limit = ReadLimit(path);
    if (limit > 0 && limit < memory) memory = limit;
  }
  return memory;
}

uint64_t DefaultMemoryBudget() { return UsableMemoryBytes() / 5 * 4; }

LogOnce::Verdict LogOnce::Check(uint64_t peer) {
  if (seen_.contains(peer)) return Verdict::kQuiet;
  if (seen_.size() < capacity_) {
    seen_.insert(peer);
    return Verdict::kLog;
  }
  if (full_reported_) return Verdict::kQuiet;
  full_reported_ = true;
  return Verdict::kLogLast;
}

}  // namespace kairos::internal
