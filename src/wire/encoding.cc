// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "wire/encoding.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "absl/strings/str_format.h"
#include "kairos/job.h"

namespace kairos::internal {

namespace {

constexpr uint64_t kMaxCount = UINT32_MAX;  // the payload's count is a u32

uint64_t Blocks(uint64_t count) { return (count + kInt8Block - 1) / kInt8Block; }

uint64_t BodyBytes(Compression c, uint64_t count) {
  switch (c) {
    case Compression::kFp16:
    case Compression::kBf16:
      return 2 * count;
    case Compression::kInt8:
      return 4 * Blocks(count) + count;
    case Compression::kNone:
      break;
  }
  return 4 * count;
}

// IEEE 754 binary16, rounded to nearest even. A finite value beyond the largest half
// (65504) saturates to it, so that a large finite gradient stays finite; infinities and
// NaN stay what they are (the server's non-finite policy must still see them).
uint16_t ToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x0200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7bffu);  // rounds past 65504
  if (abs < 0x38800000u) {               // below the smallest normal half: a subnormal or zero
    if (abs < 0x33000000u) return sign;  // under half the smallest subnormal: zero
    const uint32_t mantissa = (abs & 0x007fffffu) | 0x00800000u;
    const int shift = 126 - static_cast<int>(abs >> 23);  // 14..24
    const uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t midpoint = 1u << (shift - 1);
    const uint32_t rounded = half + ((rest > midpoint || (rest == midpoint && (half & 1))) ? 1 : 0);
    return static_cast<uint16_t>(sign | rounded);
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped mantissa bits.
  const uint32_t biased = abs - 0x38000000u;
  const uint32_t half = biased >> 13;
  const uint32_t rest = biased & 0x1fffu;
  const uint32_t rounded = half + ((rest > 0x1000u || (rest == 0x1000u && (half & 1))) ? 1 : 0);
  return static_cast<uint16_t>(sign | rounded);
}

float FromHalf(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) {
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  }
  if (exponent == 0) {  // zero or subnormal: mantissa x 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// bfloat16: the top half of the float, rounded to nearest even; a finite value that would
// round to infinity saturates to the largest bfloat16; NaN stays NaN.
uint16_t ToBf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);
  if ((x & 0x7fffffffu) == 0x7f800000u) return static_cast<uint16_t>(x >> 16);
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  if ((rounded & 0x7fffu) == 0x7f80u) return static_cast<uint16_t>((x >> 16 & 0x8000u) | 0x7f7fu);
  return static_cast<uint16_t>(rounded);
}

float FromBf16(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

// The bodies (wire/encoding.h) of n values. x86-64 processors with F16C convert 8 halves
// at a time (a finite value is clamped to +-65504 first, which the hardware would round to
// infinity); the rest, and other processors, go through ToHalf and FromHalf.
#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) std::size_t ToHalfF16c(const float* in, std::size_t n,
                                                           unsigned char* out) {
  const __m256 max = _mm256_set1_ps(65504.0f), min = _mm256_set1_ps(-65504.0f);
  const __m256 inf = _mm256_set1_ps(std::numeric_limits<float>::infinity());
  const __m256 sign = _mm256_set1_ps(-0.0f);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(in + i);
    const __m256 finite = _mm256_cmp_ps(_mm256_andnot_ps(sign, v), inf, _CMP_LT_OQ);
    const __m256 clamped = _mm256_min_ps(_mm256_max_ps(v, min), max);
    const __m128i h = _mm256_cvtps_ph(_mm256_blendv_ps(v, clamped, finite),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), h);
  }
  return i;
}

__attribute__((target("avx,f16c"))) std::size_t FromHalfF16c(const unsigned char* in, std::size_t n,
                                                             float* out) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  return i;
}

// CPUID leaf 1: F16C, AVX and OSXSAVE; then XGETBV: the system saves the YMM registers.
// (Clang 14's __builtin_cpu_supports does not know "f16c".)
bool HasF16c() {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
    constexpr unsigned kOsxsave = 1u << 27, kAvx = 1u << 28, kF16c = 1u << 29;
    if ((c & (kOsxsave | kAvx | kF16c)) != (kOsxsave | kAvx | kF16c)) return false;
    unsigned lo = 0, hi = 0;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 6u) == 6u;
  }();
  return has;
}
#else
std::size_t ToHalfF16c(const float*, std::size_t, unsigned char*) { return 0; }
std::size_t FromHalfF16c(const unsigned char*, std::size_t, float*) { return 0; }
bool HasF16c() { return false; }
#endif

// Rounds to the nearest integer, ties to even, for |x| < 2^22: adding and subtracting
// 1.5 x 2^23 leaves the float's rounding to do it (and vectorizes, unlike nearbyint).
inline float RoundEven(float x) {
  constexpr float kMagic = 12582912.0f;
  return (x + kMagic) - kMagic;
}

void EncodeBody(Compression c, const float* in, std::size_t n, unsigned char* body) {
  switch (c) {
    case Compression::kFp16: {
      const std::size_t done = HasF16c() ? ToHalfF16c(in, n, body) : 0;
      for (std::size_t i = done; i < n; ++i) {
        const uint16_t v = ToHalf(in[i]);
        std::memcpy(body + 2 * i, &v, 2);
      }
      break;
    }
    case Compression::kBf16:
      for (std::size_t i = 0; i < n; ++i) {
        const uint16_t v = ToBf16(in[i]);
        std::memcpy(body + 2 * i, &v, 2);
      }
      break;
    case Compression::kInt8: {
      const uint64_t blocks = Blocks(n);
      auto* q = reinterpret_cast<int8_t*>(body + 4 * blocks);
      for (uint64_t b = 0; b < blocks; ++b) {
        const std::size_t begin = b * kInt8Block;
        const std::size_t end = std::min<std::size_t>(n, begin + kInt8Block);
        float largest = 0.0f;
        bool finite = true;
        for (std::size_t i = begin; i < end; ++i) {
          finite = finite && std::isfinite(in[i]);
          largest = std::max(largest, std::fabs(in[i]));
        }
        // A block holding a non-finite value decodes as NaN throughout: the server's
        // non-finite policy sees it.
        const float scale = finite ? largest / 127.0f : std::nanf("");
        std::memcpy(body + 4 * b, &scale, 4);
        // Its int8 values stay 0 when the block is not finite (NaN x 0 decodes as NaN), all
        // zero, or so small that its scale underflows (then every value decodes as 0).
        const float inverse = 127.0f / largest;
        if (!finite || !(scale > 0.0f) || !std::isfinite(inverse)) continue;
        for (std::size_t i = begin; i < end; ++i) {
          const float r = RoundEven(in[i] * inverse);
          q[i] = static_cast<int8_t>(std::clamp(r, -127.0f, 127.0f));
        }
      }
      break;
    }
    case Compression::kNone:
      std::memcpy(body, in, 4 * n);
      break;
  }
}

void DecodeBody(Compression c, const unsigned char* body, std::size_t n, float* out) {
  switch (c) {
    case Compression::kFp16: {
      const std::size_t done = HasF16c() ? FromHalfF16c(body, n, out) : 0;
      for (std::size_t i = done; i < n; ++i) {
        uint16_t h = 0;
        std::memcpy(&h, body + 2 * i, 2);
        out[i] = FromHalf(h);
      }
      break;
    }
    case Compression::kBf16:
      for (std::size_t i = 0; i < n; ++i) {
        uint16_t h = 0;
        std::memcpy(&h, body + 2 * i, 2);
        out[i] = FromBf16(h);
      }
      break;
    case Compression::kInt8: {
      const uint64_t blocks = Blocks(n);
      const auto* q = reinterpret_cast<const int8_t*>(body + 4 * blocks);
      for (uint64_t b = 0; b < blocks; ++b) {
        float scale = 0.0f;
        std::memcpy(&scale, body + 4 * b, 4);
        const std::size_t end = std::min<std::size_t>(n, (b + 1) * kInt8Block);
        for (std::size_t i = b * kInt8Block; i < end; ++i)
          out[i] = static_cast<float>(q[i]) * scale;
      }
      break;
    }
    case Compression::kNone:
      std::memcpy(out, body, 4 * n);
      break;
  }
}

// An empty payload of `count` values: the count written, the body and padding zero.
Buffer NewPayload(Compression c, std::size_t count, unsigned char** body) {
  const std::size_t bytes = *EncodedBytes(c, count);
  Buffer out = Buffer::Allocate(bytes / sizeof(float));
  auto* p = reinterpret_cast<unsigned char*>(out.data());
  std::memset(p, 0, bytes);
  const auto count32 = static_cast<uint32_t>(count);
  std::memcpy(p, &count32, 4);
  *body = p + 4;
  return out;
}

}  // namespace

std::optional<std::size_t> EncodedBytes(Compression c, uint64_t count) {
  if (count > kMaxCount) return std::nullopt;
  const uint64_t raw = 4 + BodyBytes(c, count);
  return static_cast<std::size_t>((raw + 3) / 4 * 4);
}

Buffer Encode(Compression c, std::span<const float> values) {
  unsigned char* body = nullptr;
  Buffer out = NewPayload(c, values.size(), &body);
  EncodeBody(c, values.data(), values.size(), body);
  return out;
}

Buffer EncodeKeepingRest(Compression c, std::span<float> values) {
  unsigned char* body = nullptr;
  Buffer out = NewPayload(c, values.size(), &body);
  EncodeBody(c, values.data(), values.size(), body);
  thread_local std::vector<float> sent;
  sent.resize(values.size());
  DecodeBody(c, body, values.size(), sent.data());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float left = values[i] - sent[i];
    // A non-finite push is the server's to refuse; it leaves no residual behind.
    values[i] = std::isfinite(left) ? left : 0.0f;
  }
  return out;
}

absl::StatusOr<Buffer> DecodeValues(Compression c, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t count = 0;
  if (bytes < 4) {
    return absl::InvalidArgumentError(
        absl::StrFormat("a %s payload of %d bytes has no count", CompressionName(c), bytes));
  }
  std::memcpy(&count, p, 4);
  if (count > kMaxChunkElements) {  // what it allocates stays within one message's values
    return absl::InvalidArgumentError(
        absl::StrFormat("a %s payload says it holds %d values; a message carries at most %d",
                        CompressionName(c), count, kMaxChunkElements));
  }
  const std::optional<std::size_t> want = EncodedBytes(c, count);
  if (!want.has_value() || *want != bytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("a %s payload of %d bytes says it holds %d values (%d bytes)",
                        CompressionName(c), bytes, count, want.value_or(0)));
  }
  const std::size_t used = 4 + static_cast<std::size_t>(BodyBytes(c, count));
  if (std::any_of(p + used, p + bytes, [](unsigned char b) { return b != 0; })) {
    return absl::InvalidArgumentError(
        absl::StrFormat("a %s payload's padding is not zero", CompressionName(c)));
  }
  Buffer out = Buffer::Allocate(count);
  DecodeBody(c, p + 4, count, out.data());
  return out;
}

Buffer PushResidual::Encode(uint64_t chunk_begin, uint64_t chunk_end, uint64_t offset,
                            std::span<const float> gradient) {
  absl::MutexLock lock(&mu_);
  std::vector<float>& chunk = residual_[chunk_begin];
  if (chunk.empty()) chunk.assign(chunk_end - chunk_begin, 0.0f);
  const std::span<float> r(chunk.data() + (offset - chunk_begin), gradient.size());
  for (std::size_t i = 0; i < r.size(); ++i) r[i] += gradient[i];
  return EncodeKeepingRest(c_, r);
}

}  // namespace kairos::internal
