// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos::TuneProcessAllocator: a process-wide setting of the C library's allocator for
// programs that move large messages (docs/performance.md, "The allocator").
//
// Every message ZeroMQ receives is a fresh allocation of the message's size, freed once the
// node is done with it. A server applying a multi-chunk push, or a worker holding the
// answers of pulls nobody has waited for yet, frees many such messages at once; glibc's
// allocator then hands their pages back to the system (trims its heap), and the next
// messages fault them in again, zeroed: one page fault per 4 KiB received, which costs more
// than the copy from the socket on some machines and grows with the bytes in flight. This
// setting makes the allocator keep freed memory for reuse instead.
//
// It is the process's choice, not the library's: kairos never calls it by itself (a library
// must not change its host program's allocator). kairos-server calls it at start (its
// --keep-free-memory-mb flag; 0 leaves the allocator alone). A training program that runs
// servers or pulls large values calls it once at the start of main, before any thread.
//
// Thread-safety: call it before other threads allocate (glibc's settings are not meant to
// change under running threads).

#ifndef KAIROS_ALLOCATOR_H_
#define KAIROS_ALLOCATOR_H_

#include <cstdint>

#include "absl/status/status.h"
#include "kairos/export.h"

namespace kairos {

struct AllocatorTuning {
  // Freed memory at the top of a heap that the allocator keeps for reuse instead of giving
  // it back to the system (glibc's M_TRIM_THRESHOLD). The process's resident memory then
  // stays near its peak: it is not returned when the job goes quiet.
  uint64_t keep_free_bytes = uint64_t{1} << 30;
  // Allocations up to this size come from the allocator's heaps, whose memory is reused,
  // rather than from a mapping of their own, mapped and unmapped each time (glibc's
  // M_MMAP_THRESHOLD; glibc refuses more than 32 MiB on 64-bit systems). Larger
  // messages, such as one whole 64 MiB value, are still mapped each time.
  uint64_t heap_allocation_max_bytes = uint64_t{32} << 20;
  // Extra memory a heap takes each time it grows, and keeps at its top when trimmed
  // (glibc's M_TOP_PAD). A thread's heap holds at most 64 MiB; a burst of messages beyond
  // that spreads over several, and glibc unmaps a heap as soon as it is empty unless the
  // previous one has this much room: without it, every burst of more than 64 MiB faults its
  // pages in again whatever keep_free_bytes says. Address space, not memory: pages are
  // only used once touched.
  uint64_t heap_pad_bytes = uint64_t{64} << 20;
};

// Applies `tuning` to this process's allocator. InvalidArgument when a size is 0 (but the
// pad) or beyond what the allocator accepts (the message names the field); Unimplemented
// where the C library is not glibc, or in a program built with a sanitizer, whose allocator
// replaces glibc's (nothing changes then).
KAIROS_EXPORT absl::Status TuneProcessAllocator(const AllocatorTuning& tuning = {});

}  // namespace kairos

#endif  // KAIROS_ALLOCATOR_H_
