// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "common/copy.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KAIROS_STREAM_COPY 1
#endif

namespace kairos::internal {
namespace {

#ifdef KAIROS_STREAM_COPY
// 32-byte non-temporal stores from a 32-byte aligned `dst`, four vectors per step.
__attribute__((target("avx2"))) void StreamCopyAligned(float* dst, const float* src,
                                                       std::size_t n) {
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256 a = _mm256_loadu_ps(src + i);
    const __m256 b = _mm256_loadu_ps(src + i + 8);
    const __m256 c = _mm256_loadu_ps(src + i + 16);
    const __m256 d = _mm256_loadu_ps(src + i + 24);
    _mm256_stream_ps(dst + i, a);
    _mm256_stream_ps(dst + i + 8, b);
    _mm256_stream_ps(dst + i + 16, c);
    _mm256_stream_ps(dst + i + 24, d);
  }
  _mm_sfence();  // order the streamed stores before anything that follows
  if (i < n) std::memcpy(dst + i, src + i, (n - i) * sizeof(float));
}
#endif

}  // namespace

void CopyFloats(float* dst, const float* src, std::size_t n, bool stream) {
  // memcpy's pointers must be valid even for 0 bytes; an empty range may have none.
  if (n == 0) return;
#ifdef KAIROS_STREAM_COPY
  if (stream && n >= 64 && __builtin_cpu_supports("avx2") &&
      reinterpret_cast<std::uintptr_t>(dst) % sizeof(float) == 0) {
    // Align the destination to 32 bytes with a short head copy.
    const std::size_t misaligned = reinterpret_cast<std::uintptr_t>(dst) % 32;
    const std::size_t head = misaligned == 0 ? 0 : (32 - misaligned) / sizeof(float);
    std::memcpy(dst, src, head * sizeof(float));
    StreamCopyAligned(dst + head, src + head, n - head);
    return;
  }
#endif
  std::memcpy(dst, src, n * sizeof(float));
}

}  // namespace kairos::internal
