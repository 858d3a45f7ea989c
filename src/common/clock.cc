// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "common/clock.h"

namespace kairos::internal {

const RealClock& RealClock::Get() {
  static const RealClock* clock = new RealClock();
  return *clock;
}

}  // namespace kairos::internal
