// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "kairos/metrics.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace kairos {

int Histogram::BucketOf(uint64_t value) {
  return value == 0 ? 0 : static_cast<int>(std::bit_width(value));
}

namespace {

// Counts one sample in bucket `b` (growing the buckets as needed) and in the totals.
template <typename T>
void CountSample(std::vector<uint64_t>& buckets, int b, T value, uint64_t& count, T& sum,
                 T& max) {
  if (static_cast<int>(buckets.size()) <= b) buckets.resize(b + 1, 0);
  ++buckets[b];
  ++count;
  sum += value;
  max = std::max(max, value);
}

}  // namespace

void Histogram::Add(uint64_t value) {
  CountSample(buckets_, BucketOf(value), value, count_, sum_, max_);
}

void Histogram::Merge(const Histogram& other) {
  if (buckets_.size() < other.buckets_.size()) buckets_.resize(other.buckets_.size(), 0);
  for (std::size_t i = 0; i < other.buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
}

int RealHistogram::BucketOf(double value) {
  if (!(value > 0x1.0p-31)) return 0;  // also NaN and negatives
  if (value > 0x1.0p32) return kBuckets - 1;
  int exponent = 0;
  // value = m * 2^exponent, m in [0.5, 1); a power of two (m = 0.5) is the upper end of
  // the bucket below, so that each bucket's upper bound is inclusive (Prometheus's `le`).
  const double m = std::frexp(value, &exponent);
  if (m == 0.5) --exponent;
  return std::clamp(exponent + 31, 1, kBuckets - 1);
}

void RealHistogram::Add(double value) {
  CountSample(buckets_, BucketOf(value), value, count_, sum_, max_);
}

}  // namespace kairos
