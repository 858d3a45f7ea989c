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

// The library's write access to a ConstBuffer's storage. Used only where the library has
// checked that the storage is its to write (IsPrivateAllocation: memory no other Buffer
// shares, such as the caller's own Buffer::Allocate handed over for a pull to join into).
class ConstBufferAccess {
 public:
  static Buffer& Storage(ConstBuffer& b) { return b.buffer_; }
};

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_BUFFER_INTERNAL_H_
