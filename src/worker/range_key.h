// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// RangeKey: the range of one table that one message covers (a chunk, or the part of one a
// call addressed), the key under which the worker's I/O thread keeps what it holds per
// range: pushes waiting to be merged (worker/push_merger.h) and copies of pulled values
// (worker/read_cache.h). A range lies in one chunk, so it names its shard too.

#ifndef KAIROS_WORKER_RANGE_KEY_H_
#define KAIROS_WORKER_RANGE_KEY_H_

#include <cstdint>
#include <utility>

#include "wire/message.h"

namespace kairos::internal {

struct RangeKey {
  uint32_t table = 0;
  uint64_t offset = 0;
  uint64_t length = 0;

  // The range a PUSH, PULL or ASSIGN (or its reply) covers.
  static RangeKey Of(const wire::Header& h) { return {h.table(), h.offset(), h.length()}; }

  friend bool operator==(const RangeKey&, const RangeKey&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const RangeKey& k) {
    return H::combine(std::move(h), k.table, k.offset, k.length);
  }
};

}  // namespace kairos::internal

#endif  // KAIROS_WORKER_RANGE_KEY_H_
