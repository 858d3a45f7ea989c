// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// When a worker's copy of parameters may answer a read instead of a message to the shard
// (TableSpec::cache_clocks, docs/performance.md "The read cache"): the rule shared by the
// worker's cache and the simulator's.
//
// A copy is kept with the clock of the read that brought it (read_clock) and the smallest
// clock of an active worker when the shard served it (min_clock): it holds every update of
// the clocks before min_clock. A read at `clock` may take it when
//
//   clock - read_clock <= cache_clocks   (the table's own limit), and
//   clock - min_clock  <= staleness      (the staleness bound of the table's gate: SSP's s,
//                                         0 under BSP, DSSP's lower bound s_L, PSP's s;
//                                         kUnbounded under ASP),
//
// the second being the rule the SSP gate applies to a read at `clock`, so that a read the
// copy answers is never staler than one the gate would let the shard serve.
//
// Pure functions. Thread-safe.

#ifndef KAIROS_POLICY_CACHE_BOUND_H_
#define KAIROS_POLICY_CACHE_BOUND_H_

#include <cstdint>
#include <string_view>

#include "policy/policy.h"

namespace kairos::policy {

struct CacheBound {
  uint32_t cache_clocks = 0;  // 0: nothing is served from a copy
  Tick staleness = 0;         // kUnbounded: no gate bound (ASP)

  // REQUIRES: 0 <= min_clock <= read_clock; clocks far below 2^62.
  bool Serves(Tick clock, Tick read_clock, Tick min_clock) const {
    if (cache_clocks == 0 || clock < read_clock) return false;
    if (clock - read_clock > static_cast<Tick>(cache_clocks)) return false;
    return staleness == kUnbounded || clock - min_clock <= staleness;
  }
};

// Whether the servers apply each push under `spec` as it came, w -= lr(t) * g with no
// scale: immediate aggregation, constant weighting and no straggler policy (which may drop
// or down-weight a push). Where it holds, a worker's copy may take its own pushes as the
// servers do (write-through; the updater must be plain sgd too, which the caller checks).
bool AppliesPushesAsIssued(const PolicySpec& spec);

// The staleness bound of a parsed policy's gate (SSP's s, BSP's 0, DSSP's s_L, PSP's s,
// kUnbounded under ASP); 0 for a registered gate kairos does not know, whose reads a copy
// answers only at the clock they were read.
Tick GateStaleness(const PolicySpec& spec);
// The same of a spec string; 0 when it does not parse.
Tick GateStaleness(std::string_view policy);

}  // namespace kairos::policy

#endif  // KAIROS_POLICY_CACHE_BOUND_H_
