// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// What the library may know about a Buffer's storage beyond the public interface.

#ifndef KAIROS_COMMON_BUFFER_INTERNAL_H_
#define KAIROS_COMMON_BUFFER_INTERNAL_H_

#include "kairos/buffer.h"

namespace kairos::internal {

// True when `b` views memory from Buffer::Allocate (or Zeros, CopyOf) that no other Buffer
// shares: the library may write into it. False for adopted memory, such as a received
// message, which in one process may be another node's memory.
bool IsPrivateAllocation(const Buffer& b);

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_BUFFER_INTERNAL_H_
