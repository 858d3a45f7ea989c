// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "common/limits.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>

namespace kairos::internal {

std::size_t FirstNonFinite(std::span<const float> values) {
  // A float is NaN or infinite exactly when its exponent bits are all ones. Blocks of 1024
  // values are tested without a branch per value (the loop vectorises to compares and
  // ORs); only a block that holds one is searched for its index.
  constexpr std::size_t kBlock = 1024;
  constexpr uint32_t kExponent = 0x7f800000u;
  const std::size_t n = values.size();
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    const std::size_t end = std::min(n, begin + kBlock);
    uint32_t any = 0;
    for (std::size_t i = begin; i < end; ++i) {
      uint32_t bits;
      std::memcpy(&bits, &values[i], sizeof(bits));
      any |= static_cast<uint32_t>((bits & kExponent) == kExponent);
    }
    if (any == 0) continue;
    for (std::size_t i = begin; i < end; ++i) {
      uint32_t bits;
      std::memcpy(&bits, &values[i], sizeof(bits));
      if ((bits & kExponent) == kExponent) return i;
    }
  }
  return n;
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
