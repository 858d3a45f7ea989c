// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// CRC-32C (Castagnoli), the checksum of the update log's records (src/engine/update_log.h):
// with the CPU's crc32 instruction where it has one (x86-64 SSE 4.2: about 10x zlib's
// CRC-32 here, which would otherwise cost more CPU per logged byte than the push itself),
// a table otherwise. Both give the same values (RFC 3720's; "123456789" -> 0xe3069283).

#ifndef KAIROS_COMMON_CRC32C_H_
#define KAIROS_COMMON_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace kairos::internal {

// Extends `crc` (0 to start) over n bytes at p.
uint32_t Crc32cExtend(uint32_t crc, const void* p, std::size_t n);
inline uint32_t Crc32c(const void* p, std::size_t n) { return Crc32cExtend(0, p, n); }

// The table's result, whatever the CPU (tests compare the two).
uint32_t Crc32cExtendPortable(uint32_t crc, const void* p, std::size_t n);

// Whether Crc32cExtend uses the CPU's instruction (for the benchmarks' reports).
bool Crc32cIsHardware();

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_CRC32C_H_
