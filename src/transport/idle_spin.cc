// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "transport/idle_spin.h"

#include <algorithm>

namespace kairos::internal {

absl::Duration IdleSpin::Next() {
  if (limit_ <= absl::ZeroDuration()) return absl::ZeroDuration();
  if (skip_ > 0) {
    --skip_;
    return absl::ZeroDuration();
  }
  return limit_;
}

void IdleSpin::Ended(bool found) {
  if (found) {
    misses_ = 0;
    skip_ = 0;
    return;
  }
  misses_ = std::min(misses_ + 1, kMaxBackoff + 1);
  skip_ = (1 << (misses_ - 1)) - 1;
}

}  // namespace kairos::internal
