// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// CRC-32C: the published check values, and the CPU's instruction equal to the table for
// every length and alignment, whole or extended piece by piece.

#include "common/crc32c.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

TEST(Crc32cTest, CheckValues) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xe3069283u);                  // RFC 3720's check
  EXPECT_EQ(Crc32cExtendPortable(0, "123456789", 9), 0xe3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  const std::vector<unsigned char> zeros(32, 0);
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8a9136aau);  // RFC 3720 B.4: 32 zeros
  const std::vector<unsigned char> ones(32, 0xff);
  EXPECT_EQ(Crc32c(ones.data(), ones.size()), 0x62a8ab43u);    // 32 bytes of 0xff
}

TEST(Crc32cTest, HardwareEqualsTheTableAtEveryLengthAndAlignment) {
  std::mt19937 rng(5);
  std::vector<unsigned char> data(4096 + 64);
  for (auto& b : data) b = static_cast<unsigned char>(rng());
  for (std::size_t offset = 0; offset < 9; ++offset) {
    for (std::size_t n : {0, 1, 7, 8, 9, 31, 32, 33, 63, 100, 1000, 4096}) {
      const unsigned char* p = data.data() + offset;
      const uint32_t whole = Crc32c(p, n);
      EXPECT_EQ(whole, Crc32cExtendPortable(0, p, n)) << offset << " " << n;
      const std::size_t cut = n / 3;
      EXPECT_EQ(Crc32cExtend(Crc32cExtend(0, p, cut), p + cut, n - cut), whole)
          << offset << " " << n;
    }
  }
}

}  // namespace
}  // namespace kairos::internal
