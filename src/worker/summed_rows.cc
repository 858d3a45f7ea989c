// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "worker/summed_rows.h"

#include <algorithm>

#include "worker/sparse_routing.h"

namespace kairos::internal {

void SummedRows::Add(std::span<const uint64_t> keys, std::span<const float> rows) {
  const uint32_t w = width_;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const float* row = rows.data() + i * w;
    auto [it, added] = row_of_.try_emplace(keys[i], static_cast<uint32_t>(keys_.size()));
    if (added) {
      keys_.push_back(keys[i]);
      values_.insert(values_.end(), row, row + w);
      continue;
    }
    float* to = values_.data() + std::size_t{it->second} * w;
    for (uint32_t c = 0; c < w; ++c) to[c] += row[c];
  }
}

void SummedRows::Add(const Buffer& keys, const Buffer& rows) { Add(KeysOf(keys), rows.span()); }

SummedRows SummedRows::Take(std::span<const uint64_t> keys) {
  SummedRows taken(width_);
  const uint32_t w = width_;
  for (uint64_t key : keys) {
    auto row = row_of_.find(key);
    if (row == row_of_.end()) continue;
    const uint32_t at = row->second;
    taken.Add(std::span<const uint64_t>(&key, 1),
              std::span<const float>(values_.data() + std::size_t{at} * w, w));
    const auto last = static_cast<uint32_t>(keys_.size() - 1);
    if (at != last) {
      keys_[at] = keys_[last];
      std::copy_n(values_.begin() + std::size_t{last} * w, w,
                  values_.begin() + std::size_t{at} * w);
      row_of_[keys_[at]] = at;
    }
    keys_.pop_back();
    values_.resize(keys_.size() * w);
    row_of_.erase(key);
  }
  return taken;
}

Buffer SummedRows::KeysPayload() const { return internal::KeysPayload(keys_); }

Buffer SummedRows::RowsPayload() const { return Buffer::CopyOf(values_); }

}  // namespace kairos::internal
