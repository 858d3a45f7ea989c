// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "kairos/allocator.h"

#include <climits>

#include "absl/strings/str_format.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

// A sanitizer's allocator (ASan, TSan, MSan) replaces glibc's: mallopt reaches nothing.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KAIROS_SANITIZER_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define KAIROS_SANITIZER_ALLOCATOR 1
#endif
#endif

namespace kairos {

absl::Status TuneProcessAllocator(const AllocatorTuning& tuning) {
#if defined(__GLIBC__)
  // glibc's ceiling of M_MMAP_THRESHOLD on 64-bit systems (DEFAULT_MMAP_THRESHOLD_MAX).
  constexpr uint64_t kMaxHeapAllocation = uint64_t{32} << 20;
  if (tuning.heap_allocation_max_bytes == 0 ||
      tuning.heap_allocation_max_bytes > kMaxHeapAllocation) {
    return absl::InvalidArgumentError(
        absl::StrFormat("AllocatorTuning::heap_allocation_max_bytes is %d; it must be 1 to %d (32 "
                        "MiB, glibc's limit)",
                        tuning.heap_allocation_max_bytes, kMaxHeapAllocation));
  }
  if (tuning.keep_free_bytes == 0 || tuning.keep_free_bytes > uint64_t{INT_MAX}) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "AllocatorTuning::keep_free_bytes is %d; it must be 1 to %d (mallopt takes an int)",
        tuning.keep_free_bytes, INT_MAX));
  }
  if (tuning.heap_pad_bytes > uint64_t{INT_MAX}) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "AllocatorTuning::heap_pad_bytes is %d; it must be 0 to %d (mallopt takes an int)",
        tuning.heap_pad_bytes, INT_MAX));
  }
#if defined(KAIROS_SANITIZER_ALLOCATOR)
  return absl::UnimplementedError(
      "this program is built with a sanitizer, whose allocator replaces glibc's: nothing to tune");
#endif
  // Setting either one turns off glibc's own adjustment of both (which raises the mapping
  // threshold to the size of the largest mapped block freed, and the trim threshold to
  // twice that): both are set, the mapping threshold first.
  if (mallopt(M_MMAP_THRESHOLD, static_cast<int>(tuning.heap_allocation_max_bytes)) != 1) {
    return absl::InternalError("mallopt(M_MMAP_THRESHOLD) refused the setting");
  }
  if (mallopt(M_TRIM_THRESHOLD, static_cast<int>(tuning.keep_free_bytes)) != 1) {
    return absl::InternalError("mallopt(M_TRIM_THRESHOLD) refused the setting");
  }
  if (mallopt(M_TOP_PAD, static_cast<int>(tuning.heap_pad_bytes)) != 1) {
    return absl::InternalError("mallopt(M_TOP_PAD) refused the setting");
  }
  return absl::OkStatus();
#else
  (void)tuning;
  return absl::UnimplementedError(
      "TuneProcessAllocator: the C library is not glibc; its allocator is left as it is");
#endif
}

}  // namespace kairos
