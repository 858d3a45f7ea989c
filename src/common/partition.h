// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// How a dense table is spread over the shards. A table of n elements is cut into K chunks
// of near-equal size (sizes differ by at most one element), where K is the smallest multiple
// of the shard count with n / K <= chunk_elements (but never more chunks than elements).
// Shard s owns the contiguous run of chunks [s*K/S, (s+1)*K/S), so every shard owns one
// contiguous range of the table and the shards' shares differ by at most one chunk's worth
// (one element per chunk when K is a multiple of S). A chunk is the unit of one message and
// of one update on a server.
//
// Workers and servers compute the same partition from the job configuration.
// Thread-safety: immutable after construction.

#ifndef KAIROS_COMMON_PARTITION_H_
#define KAIROS_COMMON_PARTITION_H_

#include <cstdint>
#include <span>
#include <vector>

namespace kairos::internal {

struct Chunk {
  uint32_t index = 0;   // position in the table's chunk list
  uint64_t begin = 0;   // first element (table coordinates)
  uint64_t end = 0;     // one past the last element
  int shard = 0;        // owner
  uint64_t size() const { return end - begin; }
};

class TablePartition {
 public:
  // REQUIRES: size > 0, num_shards > 0, chunk_elements > 0.
  TablePartition(uint64_t size, int num_shards, uint64_t chunk_elements);

  uint64_t size() const { return size_; }
  int num_shards() const { return num_shards_; }
  const std::vector<Chunk>& chunks() const { return chunks_; }

  // The range shard s owns: [shard_begin(s), shard_end(s)); empty when the table has fewer
  // elements than there are shards.
  uint64_t shard_begin(int s) const { return shard_begin_[s]; }
  uint64_t shard_end(int s) const { return shard_begin_[s + 1]; }
  // The chunks shard s owns, in order.
  std::span<const Chunk> shard_chunks(int s) const;

  // The chunks that overlap [begin, end), in order. REQUIRES: begin < end <= size().
  std::span<const Chunk> Overlapping(uint64_t begin, uint64_t end) const;
  // The chunk holding `element`. REQUIRES: element < size().
  const Chunk& ChunkOf(uint64_t element) const;

 private:
  uint64_t size_;
  int num_shards_;
  std::vector<Chunk> chunks_;
  std::vector<uint64_t> shard_begin_;      // num_shards + 1 entries
  std::vector<uint32_t> shard_first_chunk_;  // num_shards + 1 entries
};

// Sparse tables (docs/sparse.md): SplitMix64's finaliser, a fixed bijective 64-bit mix.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The shard that owns row `key` of every sparse table: Mix64(key) mod num_shards. Depends
// on the key and the number of servers only (never on the workers), and is part of the
// protocol: workers and servers compute it alike. REQUIRES: num_shards > 0.
inline int ShardOfKey(uint64_t key, int num_shards) {
  return static_cast<int>(Mix64(key) % static_cast<uint64_t>(num_shards));
}

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_PARTITION_H_
