// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "kairos/buffer.h"

#include <cassert>
#include <cstring>
#include <new>

#include "common/buffer_internal.h"

namespace kairos {
namespace {

struct AlignedDeleter {
  void operator()(float* p) const {
    ::operator delete[](p, std::align_val_t{kBufferAlignment});
  }
};

}  // namespace

Buffer Buffer::Allocate(std::size_t count) {
  if (count == 0) return Buffer();
  // Round the allocation up to a whole number of cache lines.
  std::size_t bytes = (count * sizeof(float) + kBufferAlignment - 1) & ~(kBufferAlignment - 1);
  auto* p = static_cast<float*>(::operator new[](bytes, std::align_val_t{kBufferAlignment}));
  std::shared_ptr<float> owner(p, AlignedDeleter());
  return Buffer(std::shared_ptr<void>(owner, p), p, count);
}

Buffer Buffer::Zeros(std::size_t count) {
  Buffer b = Allocate(count);
  if (count > 0) std::memset(b.data(), 0, count * sizeof(float));
  return b;
}

Buffer Buffer::CopyOf(std::span<const float> values) {
  Buffer b = Allocate(values.size());
  if (!values.empty()) std::memcpy(b.data(), values.data(), values.size_bytes());
  return b;
}

Buffer Buffer::Adopt(std::shared_ptr<void> owner, float* data, std::size_t count) {
  return Buffer(std::move(owner), data, count);
}

Buffer Buffer::Slice(std::size_t offset, std::size_t count) const {
  assert(offset + count <= size_);
  return Buffer(owner_, data_ + offset, count);
}

namespace internal {

bool IsPrivateAllocation(const Buffer& b) {
  return !b.empty() && b.use_count() == 1 &&
         std::get_deleter<AlignedDeleter>(b.owner()) != nullptr;
}

}  // namespace internal
}  // namespace kairos
