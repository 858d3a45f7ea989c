// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// CopyFloats: the same bytes as memcpy, streamed or not, for every alignment and a tail.

#include "common/copy.h"

#include <cstddef>
#include <vector>

#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

TEST(CopyFloatsTest, CopiesExactlyForEveryAlignmentAndLength) {
  for (bool stream : {false, true}) {
    for (std::size_t n : {0u, 1u, 31u, 63u, 64u, 65u, 1000u, 4099u}) {
      for (std::size_t dst_shift : {0u, 1u, 3u, 7u}) {
        for (std::size_t src_shift : {0u, 2u}) {
          std::vector<float> src(n + src_shift);
          for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.5f;
          std::vector<float> dst(n + dst_shift + 2, -1.0f);
          CopyFloats(dst.data() + dst_shift, src.data() + src_shift, n, stream);
          for (std::size_t i = 0; i < dst_shift; ++i) ASSERT_EQ(dst[i], -1.0f) << "before";
          for (std::size_t i = 0; i < n; ++i) {
            ASSERT_EQ(dst[dst_shift + i], src[src_shift + i])
                << "stream=" << stream << " n=" << n << " dst+" << dst_shift << " i=" << i;
          }
          ASSERT_EQ(dst[dst_shift + n], -1.0f) << "after";
          ASSERT_EQ(dst[dst_shift + n + 1], -1.0f) << "after";
        }
      }
    }
  }
}

// An empty range may come with null pointers (an empty vector's data()). Passing them to
// memcpy, even for 0 bytes, is undefined behaviour: the ubsan preset failed
// CopiesExactlyForEveryAlignmentAndLength on it ("null pointer passed as argument 2").
TEST(CopyFloatsTest, EmptyCopyWithNullPointersDoesNothing) {
  for (bool stream : {false, true}) {
    CopyFloats(nullptr, nullptr, 0, stream);
    float dst = -1.0f;
    CopyFloats(&dst, nullptr, 0, stream);
    EXPECT_EQ(dst, -1.0f);
  }
}

TEST(CopyFloatsTest, LargeStreamedCopyEqualsTheSource) {
  const std::size_t n = kStreamCopyMinBytes / sizeof(float) + 5;
  std::vector<float> src(n), dst(n, 0.0f);
  for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<float>(i % 1009) - 500.0f;
  CopyFloats(dst.data(), src.data(), n, /*stream=*/true);
  EXPECT_EQ(dst, src);
}

}  // namespace
}  // namespace kairos::internal
