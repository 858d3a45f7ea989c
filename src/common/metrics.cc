// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "kairos/metrics.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace kairos {

int Histogram::BucketOf(uint64_t value) {
  return value == 0 ? 0 : static_cast<int>(std::bit_width(value));
}

void Histogram::Add(uint64_t value) {
  const int b = BucketOf(value);
  if (static_cast<int>(buckets_.size()) <= b) buckets_.resize(b + 1, 0);
  ++buckets_[b];
  ++count_;
  sum_ += value;
  max_ = std::max(max_, value);
}

void Histogram::Merge(const Histogram& other) {
  if (buckets_.size() < other.buckets_.size()) buckets_.resize(other.buckets_.size(), 0);
  for (std::size_t i = 0; i < other.buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
}

int RealHistogram::BucketOf(double value) {
  if (!(value >= 0x1.0p-31)) return 0;  // also NaN and negatives
  if (value >= 0x1.0p32) return kBuckets - 1;
  int exponent = 0;
  std::frexp(value, &exponent);  // value = m * 2^exponent, m in [0.5, 1)
  return std::clamp(exponent + 31, 1, kBuckets - 1);
}

void RealHistogram::Add(double value) {
  const int b = BucketOf(value);
  if (static_cast<int>(buckets_.size()) <= b) buckets_.resize(b + 1, 0);
  ++buckets_[b];
  ++count_;
  sum_ += value;
  max_ = std::max(max_, value);
}

}  // namespace kairos
