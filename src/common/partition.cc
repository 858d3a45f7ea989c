// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "common/partition.h"

#include <algorithm>
#include <cassert>

namespace kairos::internal {
namespace {

// floor(size * i / k) without overflowing: size = q*k + r, so size*i/k = q*i + r*i/k,
// and r*i < k*k stays small for any realistic chunk count.
uint64_t Split(uint64_t size, uint64_t i, uint64_t k) {
  return (size / k) * i + (size % k) * i / k;
}

}  // namespace

TablePartition::TablePartition(uint64_t size, int num_shards, uint64_t chunk_elements)
    : size_(size), num_shards_(num_shards) {
  assert(size > 0 && num_shards > 0 && chunk_elements > 0);
  const uint64_t shards = static_cast<uint64_t>(num_shards);
  uint64_t k = (size + chunk_elements - 1) / chunk_elements;
  k = std::max(k, shards);
  k = (k + shards - 1) / shards * shards;  // a whole number of chunks per shard
  k = std::min(k, size);                   // never an empty chunk
  chunks_.reserve(k);
  shard_first_chunk_.resize(shards + 1);
  for (uint64_t i = 0; i < k; ++i) {
    Chunk c;
    c.index = static_cast<uint32_t>(i);
    c.begin = Split(size, i, k);
    c.end = Split(size, i + 1, k);
    c.shard = static_cast<int>(i * shards / k);
    chunks_.push_back(c);
  }
  // Chunk i belongs to shard floor(i*S/k), so shard s starts at chunk ceil(s*k/S).
  for (uint64_t s = 0; s <= shards; ++s) {
    shard_first_chunk_[s] = static_cast<uint32_t>((s * k + shards - 1) / shards);
  }
  shard_begin_.resize(shards + 1);
  for (uint64_t s = 0; s <= shards; ++s) {
    const uint32_t first = shard_first_chunk_[s];
    shard_begin_[s] = first < k ? chunks_[first].begin : size;
  }
}

std::span<const Chunk> TablePartition::shard_chunks(int s) const {
  const uint32_t first = shard_first_chunk_[s];
  const uint32_t last = shard_first_chunk_[s + 1];
  return std::span<const Chunk>(chunks_).subspan(first, last - first);
}

const Chunk& TablePartition::ChunkOf(uint64_t element) const {
  assert(element < size_);
  auto it = std::upper_bound(chunks_.begin(), chunks_.end(), element,
                             [](uint64_t e, const Chunk& c) { return e < c.end; });
  return *it;
}

std::span<const Chunk> TablePartition::Overlapping(uint64_t begin, uint64_t end) const {
  assert(begin < end && end <= size_);
  const uint32_t first = ChunkOf(begin).index;
  const uint32_t last = ChunkOf(end - 1).index;
  return std::span<const Chunk>(chunks_).subspan(first, last - first + 1);
}

}  // namespace kairos::internal
