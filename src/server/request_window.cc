// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "server/request_window.h"

namespace kairos::internal {

RequestWindow::Verdict RequestWindow::Take(uint64_t id) {
  if (id > highest_) {
    // Forget the ids that slide out of the window: (highest_, id] become unseen.
    if (id - highest_ >= kWidth) {
      seen_.reset();
    } else {
      for (uint64_t i = highest_ + 1; i <= id; ++i) seen_.reset(i % kWidth);
    }
    highest_ = id;
    seen_.set(id % kWidth);
    return Verdict::kNew;
  }
  if (highest_ - id >= kWidth) return Verdict::kTooOld;
  if (seen_.test(id % kWidth)) return Verdict::kDuplicate;
  seen_.set(id % kWidth);
  return Verdict::kNew;
}

}  // namespace kairos::internal
