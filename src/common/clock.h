// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The time seam inside the library: the public clocks (kairos/clock.h) under their
// internal names, and the clock a node's options choose.

#ifndef KAIROS_COMMON_CLOCK_H_
#define KAIROS_COMMON_CLOCK_H_

#include "kairos/clock.h"

namespace kairos {
struct NodeOptions;
}  // namespace kairos

namespace kairos::internal {

using ::kairos::Clock;
using ::kairos::ManualClock;
using ::kairos::RealClock;

// The clock of a node: options.clock, or RealClock::Get() when it is null. The reference
// lives as long as the options (or forever, for the real clock).
// Every node's options derive from NodeOptions.
const Clock& ClockOf(const NodeOptions& options);

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_CLOCK_H_
