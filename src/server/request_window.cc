// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "server/request_window.h"

#include <cstring>

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

void RequestWindow::AppendBytes(std::string* out) const {
  const char* h = reinterpret_cast<const char*>(&highest_);
  out->append(h, sizeof(highest_));
  for (std::size_t byte = 0; byte < kWidth / 8; ++byte) {
    unsigned char b = 0;
    for (int bit = 0; bit < 8; ++bit) {
      if (seen_.test(byte * 8 + bit)) b |= static_cast<unsigned char>(1u << bit);
    }
    out->push_back(static_cast<char>(b));
  }
}

RequestWindow RequestWindow::FromBytes(const char* bytes) {
  RequestWindow w;
  std::memcpy(&w.highest_, bytes, sizeof(w.highest_));
  for (std::size_t byte = 0; byte < kWidth / 8; ++byte) {
    const auto b = static_cast<unsigned char>(bytes[8 + byte]);
    for (int bit = 0; bit < 8; ++bit) {
      if (b & (1u << bit)) w.seen_.set(byte * 8 + bit);
    }
  }
  return w;
}

}  // namespace kairos::internal
