// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The encodings of compressed tables (wire/encoding.h): exact where a value is representable,
// rounding to nearest even, the documented bound elsewhere, saturation, non-finite values
// kept, padding and sizes, a malformed payload refused, and error feedback keeping the sum of
// many pushes within one rounding step of the truth.

#include "wire/encoding.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Bytes(const Buffer& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size_bytes());
}

std::vector<float> RoundTrip(Compression c, const std::vector<float>& values) {
  const Buffer encoded = Encode(c, values);
  EXPECT_EQ(encoded.size_bytes(), *EncodedBytes(c, values.size()));
  absl::StatusOr<Buffer> decoded = DecodeValues(c, encoded.data(), encoded.size_bytes());
  EXPECT_TRUE(decoded.ok()) << decoded.status();
  if (!decoded.ok()) return {};
  std::vector<float> out(decoded->span().begin(), decoded->span().end());
  // Error feedback encodes the same bytes and keeps what the receiver does not get.
  std::vector<float> rest = values;
  EXPECT_EQ(Bytes(EncodeKeepingRest(c, rest)), Bytes(encoded));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const float left = values[i] - out[i];
    EXPECT_EQ(rest[i], std::isfinite(left) ? left : 0.0f) << i;
  }
  return out;
}

TEST(EncodingTest, SizesArePaddedToWholeFloatsAndCountTheHeader) {
  EXPECT_EQ(*EncodedBytes(Compression::kFp16, 0), 4u);
  EXPECT_EQ(*EncodedBytes(Compression::kFp16, 3), 12u);     // 4 + 6, padded
  EXPECT_EQ(*EncodedBytes(Compression::kBf16, 4), 12u);     // 4 + 8
  EXPECT_EQ(*EncodedBytes(Compression::kInt8, 300), 312u);  // 4 + 2 scales + 300
  EXPECT_EQ(*EncodedBytes(Compression::kInt8, 1), 12u);     // 4 + 4 + 1, padded
  EXPECT_TRUE(EncodedBytes(Compression::kInt8, UINT32_MAX).has_value());
  EXPECT_FALSE(EncodedBytes(Compression::kInt8, uint64_t{UINT32_MAX} + 1).has_value());
}

TEST(EncodingTest, Fp16IsExactWhereRepresentableAndRoundsToNearestEven) {
  const float max = 65504.0f, tiny = std::ldexp(1.0f, -24);
  EXPECT_THAT(RoundTrip(Compression::kFp16, {0.0f, -0.0f, 1.0f, -2.5f, max, tiny, 0.0625f}),
              ElementsAre(0.0f, -0.0f, 1.0f, -2.5f, max, tiny, 0.0625f));
  const float ulp = std::ldexp(1.0f, -10);  // of [1, 2)
  EXPECT_THAT(
      RoundTrip(Compression::kFp16, {1.0f + ulp / 2, 1.0f + 3 * ulp / 2, 1.0f + ulp / 4, tiny / 2}),
      ElementsAre(1.0f, 1.0f + 2 * ulp, 1.0f, 0.0f));
}

TEST(EncodingTest, Fp16SaturatesFiniteValuesAndKeepsNonFiniteOnes) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> out =
      RoundTrip(Compression::kFp16, {70000.0f, -1e30f, inf, -inf, std::nanf("")});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0], 65504.0f);
  EXPECT_EQ(out[1], -65504.0f);
  EXPECT_EQ(out[2], inf);
  EXPECT_EQ(out[3], -inf);
  EXPECT_TRUE(std::isnan(out[4]));
}

TEST(EncodingTest, HalfAndBfloatStayWithinTheirRelativeBound) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> exponent(-12.0f, 14.0f);
  std::vector<float> values;
  for (int i = 0; i < 10000; ++i) {
    values.push_back((i % 2 ? 1.0f : -1.0f) * std::exp2(exponent(rng)));
  }
  for (auto [c, bound] : {std::pair{Compression::kFp16, std::ldexp(1.0, -11)},
                          std::pair{Compression::kBf16, std::ldexp(1.0, -8)}}) {
    const std::vector<float> out = RoundTrip(c, values);
    ASSERT_EQ(out.size(), values.size());
    double worst = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      worst = std::max(worst, std::fabs(double{out[i]} - values[i]) / std::fabs(values[i]));
    }
    EXPECT_LE(worst, bound) << CompressionName(c);
    EXPECT_GT(worst, bound / 4) << CompressionName(c);  // it does round
  }
}

TEST(EncodingTest, Bf16SaturatesAndKeepsNonFiniteValues) {
  const float big = std::numeric_limits<float>::max();
  const std::vector<float> out =
      RoundTrip(Compression::kBf16, {big, -big, 1.0f, std::nanf(""), -0.0f});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_TRUE(std::isfinite(out[0]));
  EXPECT_GT(out[0], 3.3e38f);
  EXPECT_LT(out[1], -3.3e38f);
  EXPECT_EQ(out[2], 1.0f);
  EXPECT_TRUE(std::isnan(out[3]));
  EXPECT_EQ(out[4], 0.0f);
  EXPECT_TRUE(std::signbit(out[4]));
}

TEST(EncodingTest, Int8ScalesEachBlockByItsLargestMagnitude) {
  // Block 0: values up to 127 (scale 1: exact integers); block 1: tiny values, which keep
  // their own precision however large block 0's are.
  std::vector<float> values(kInt8Block + 3);
  for (std::size_t i = 0; i < kInt8Block; ++i) values[i] = static_cast<float>(i % 255) - 127.0f;
  values[kInt8Block] = 0.001f;
  values[kInt8Block + 1] = -0.0005f;
  values[kInt8Block + 2] = 0.0f;
  const std::vector<float> out = RoundTrip(Compression::kInt8, values);
  ASSERT_EQ(out.size(), values.size());
  for (std::size_t i = 0; i < kInt8Block; ++i) EXPECT_EQ(out[i], values[i]) << i;
  const float scale = 0.001f / 127.0f;
  EXPECT_NEAR(out[kInt8Block], 0.001f, 1e-9f);
  EXPECT_LE(std::fabs(out[kInt8Block + 1] + 0.0005f), scale / 2 + 1e-12f);
  EXPECT_EQ(out[kInt8Block + 2], 0.0f);
}

TEST(EncodingTest, Int8MakesABlockWithANonFiniteValueNaNAndNoOther) {
  std::vector<float> values(2 * kInt8Block, 1.0f);
  values[3] = std::numeric_limits<float>::infinity();
  const std::vector<float> out = RoundTrip(Compression::kInt8, values);
  ASSERT_EQ(out.size(), values.size());
  for (std::size_t i = 0; i < kInt8Block; ++i) EXPECT_TRUE(std::isnan(out[i])) << i;
  for (std::size_t i = kInt8Block; i < out.size(); ++i) EXPECT_EQ(out[i], 1.0f) << i;
  EXPECT_THAT(RoundTrip(Compression::kInt8, {0.0f, 0.0f}), ElementsAre(0.0f, 0.0f));
  // A block too small for a scale (it underflows) decodes as zeros, and nothing is undefined.
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_THAT(RoundTrip(Compression::kInt8, {0.0f, tiny, -tiny}), ElementsAre(0.0f, 0.0f, 0.0f));
}

TEST(EncodingTest, AMalformedPayloadIsRefusedSayingWhy) {
  const Buffer good = Encode(Compression::kFp16, std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f, 5.0f});
  std::string bytes(reinterpret_cast<const char*>(good.data()), good.size_bytes());
  EXPECT_TRUE(DecodeValues(Compression::kFp16, bytes.data(), bytes.size()).ok());
  EXPECT_THAT(DecodeValues(Compression::kFp16, bytes.data(), 2).status().message(),
              HasSubstr("has no count"));
  std::string wrong_count = bytes;
  wrong_count[0] = 9;
  EXPECT_THAT(
      DecodeValues(Compression::kFp16, wrong_count.data(), wrong_count.size()).status().message(),
      HasSubstr("says it holds 9 values"));
  std::string huge = bytes;
  std::memset(huge.data(), 0xff, 4);
  EXPECT_THAT(DecodeValues(Compression::kFp16, huge.data(), huge.size()).status().message(),
              HasSubstr("a message carries at most 268435456"));
  std::string padding = bytes;
  padding.back() = 1;
  EXPECT_THAT(DecodeValues(Compression::kFp16, padding.data(), padding.size()).status().message(),
              HasSubstr("padding"));
  // The same bytes under another encoding: its padding (bytes 13-15) holds fp16 data.
  EXPECT_FALSE(DecodeValues(Compression::kInt8, bytes.data(), bytes.size()).ok());
}

// Error feedback: pushing 0.1 a thousand times, the server's sum of what it decoded stays
// within one rounding step of 100; without the residual every push loses the same amount
// and the sum drifts by a thousand of them (the positive control).
TEST(PushResidualTest, TheSumOfManyPushesStaysWithinOneRoundingStep) {
  for (Compression c : {Compression::kFp16, Compression::kBf16, Compression::kInt8}) {
    PushResidual residual(c);
    const std::vector<float> g = {0.1f, 0.1f, 0.3f};
    double with = 0, without = 0;
    for (int i = 0; i < 1000; ++i) {
      const Buffer sent = residual.Encode(/*chunk_begin=*/2, /*chunk_end=*/10, /*offset=*/4, g);
      absl::StatusOr<Buffer> got = DecodeValues(c, sent.data(), sent.size_bytes());
      ASSERT_TRUE(got.ok());
      with += got->span()[0];
      const Buffer plain = Encode(c, g);
      without += DecodeValues(c, plain.data(), plain.size_bytes())->span()[0];
    }
    // One rounding step of the encoding at about 0.1-0.3: fp16 2^-14, bf16 2^-10, int8 the
    // block's 0.3 / 127 / 2.
    const double step = c == Compression::kFp16 ? 1e-4 : c == Compression::kBf16 ? 2e-3 : 2e-3;
    EXPECT_NEAR(with, 100.0, step) << CompressionName(c);
    EXPECT_GT(std::fabs(without - 100.0), 10 * step) << CompressionName(c);
  }
}

}  // namespace
}  // namespace kairos::internal
