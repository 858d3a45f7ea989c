// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Copying large float arrays into memory that is not about to be read.

#ifndef KAIROS_COMMON_COPY_H_
#define KAIROS_COMMON_COPY_H_

#include <cstddef>

namespace kairos::internal {

// Copies n floats from `src` to `dst` (which must not overlap). With `stream` (and AVX2) the
// stores bypass the caches (non-temporal): when a copy is larger than the caches, its
// destination will not be in them when it is read anyway, and fetching every destination
// line before writing it (what a normal store does) would only add memory traffic.
// n == 0 copies nothing, and then either pointer may be null.
void CopyFloats(float* dst, const float* src, std::size_t n, bool stream);

// Copies of this many bytes and more, all parts of one request together, stream: twice a
// typical per-core L2 cache.
inline constexpr std::size_t kStreamCopyMinBytes = std::size_t{4} << 20;

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_COPY_H_
