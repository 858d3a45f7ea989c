// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "engine/sparse_rows.h"

#include <algorithm>
#include <stdexcept>

#include "common/partition.h"
#include "engine/initializer.h"

namespace kairos::internal {
namespace {

// Blocks of about 64 KiB (at least one row, at most 4096): small enough that a shard with
// few rows holds little, large enough that allocations are rare.
uint32_t RowsPerBlock(std::size_t stride) {
  const std::size_t row_bytes = stride * sizeof(float) + sizeof(uint64_t);
  return static_cast<uint32_t>(std::clamp<std::size_t>((64 << 10) / row_bytes, 1, 4096));
}

}  // namespace

void FillSparseRow(const Initializer& init, uint64_t key, std::span<float> out) {
  const uint64_t base = Mix64(key);
  for (std::size_t c = 0; c < out.size(); ++c) out[c] = InitialValue(init, base + c);
}

SparseRows::SparseRows(uint32_t width, std::size_t state_per_element, bool track)
    : width_(width),
      state_floats_(std::size_t{width} * state_per_element),
      stride_(width + state_floats_),
      rows_per_block_(RowsPerBlock(stride_)),
      track_(track) {
  UpdateBytes();
}

void SparseRows::UpdateBytes() {
  const uint64_t block = uint64_t{rows_per_block_} * (stride_ * sizeof(float) + sizeof(uint64_t) +
                                                      (track_ ? sizeof(RowTrack) : 0));
  const uint64_t map = index_.capacity() * (sizeof(std::pair<uint64_t, uint32_t>) + 1);
  bytes_.store(blocks_.size() * block + map + free_.capacity() * sizeof(uint32_t) +
                   (changed_.capacity() + removed_.capacity()) * sizeof(uint64_t),
               std::memory_order_relaxed);
}

void SparseRows::KeepChanges() {
  keep_changes_ = true;
  changed_.assign((used_ + 63) / 64, 0);
}

void SparseRows::ClearChanges() {
  std::fill(changed_.begin(), changed_.end(), 0);
  removed_.clear();
  removed_.shrink_to_fit();  // a burst of evictions does not hold its list for ever
  UpdateBytes();
}

uint32_t SparseRows::FindOrCreate(uint64_t key, const Initializer& init) {
  if (auto it = index_.find(key); it != index_.end()) return it->second;
  const bool reuse = !free_.empty();
  if (!reuse && used_ == UINT32_MAX) {
    throw std::length_error("a shard holds at most 2^32 - 1 rows of a table");
  }
  const uint32_t slot = reuse ? free_.back() : used_;
  if (!reuse && slot / rows_per_block_ == blocks_.size()) {
    // Room for the new block's pointers first (so the push_backs cannot throw), growing
    // geometrically: reserving one more each time reallocated both vectors for every block,
    // copying O(blocks^2) pointers and leaving a trail of freed arrays between the blocks
    // that the allocator could not reuse (about 120 MiB of 700 at a million rows of 64
    // floats with adagrad, kairos_sparse_bench).
    if (blocks_.size() == blocks_.capacity()) blocks_.reserve(2 * blocks_.size() + 1);
    if (steps_.size() == steps_.capacity()) steps_.reserve(2 * steps_.size() + 1);
    if (track_ && tracks_.size() == tracks_.capacity()) tracks_.reserve(2 * tracks_.size() + 1);
    auto block = std::make_unique<float[]>(std::size_t{rows_per_block_} * stride_);
    auto steps = std::make_unique<uint64_t[]>(rows_per_block_);
    auto tracks = track_ ? std::make_unique<RowTrack[]>(rows_per_block_) : nullptr;
    blocks_.push_back(std::move(block));
    steps_.push_back(std::move(steps));
    if (track_) tracks_.push_back(std::move(tracks));
  }
  if (keep_changes_ && slot / 64 >= changed_.size()) changed_.resize(slot / 64 + 1, 0);
  index_.emplace(key, slot);  // may throw: nothing else changed yet but a spare block
  if (reuse) {
    free_.pop_back();
  } else {
    ++used_;
  }
  float* row = Row(slot);
  FillSparseRow(init, key, {row, width_});
  std::fill_n(row + width_, state_floats_, 0.0f);
  step(slot) = 0;
  if (track_) Track(slot) = RowTrack{0, key};
  if (keep_changes_) changed_[slot / 64] |= uint64_t{1} << (slot % 64);
  rows_.store(index_.size(), std::memory_order_relaxed);
  UpdateBytes();
  return slot;
}

bool SparseRows::Erase(uint64_t key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  if (free_.size() == free_.capacity()) free_.reserve(2 * free_.size() + 16);
  if (keep_changes_) removed_.push_back(key);  // may throw: nothing changed yet
  free_.push_back(it->second);
  if (track_) Track(it->second).touched = kFreeSlot;
  index_.erase(it);
  rows_.store(index_.size(), std::memory_order_relaxed);
  UpdateBytes();
  return true;
}

void SparseBucket::Add(int rank, const Buffer& keys, const Buffer& rows, uint32_t width,
                       float scale) {
  const std::size_t n = KeyCount(keys);
  for (std::size_t i = 0; i < n; ++i) {
    const uint64_t key = KeyAt(keys, i);
    auto [it, fresh] = index.try_emplace(key, static_cast<uint32_t>(this->keys.size()));
    if (fresh) {
      this->keys.push_back(key);
      sums.resize(sums.size() + width, 0.0f);
      workers.emplace_back();
    }
    const std::size_t j = it->second;
    float* sum = sums.data() + j * width;
    const float* g = rows.data() + i * width;
    for (uint32_t c = 0; c < width; ++c) sum[c] += scale * g[c];
    auto& who = workers[j];
    if (std::find(who.begin(), who.end(), rank) == who.end()) who.push_back(rank);
  }
}

}  // namespace kairos::internal
