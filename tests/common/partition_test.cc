// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of TablePartition: exact small cases, then property tests over many
// (size, shards, chunk_elements) triples against the contract in partition.h, with
// Overlapping and ChunkOf checked against a brute-force reference.

#include "common/partition.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

struct Triple {
  uint64_t size;
  int shards;
  uint64_t chunk;
  std::string ToString() const {
    return absl::StrFormat("size=%d shards=%d chunk_elements=%d", size, shards, chunk);
  }
};

std::vector<Triple> Triples() {
  std::vector<Triple> out;
  const std::vector<uint64_t> sizes = {1,  2,  3,  4,  5,  6,  7,  8,   9,   10,   11,   12,
                                       13, 16, 17, 31, 32, 33, 64, 100, 101, 257, 1000, 4099};
  const std::vector<uint64_t> chunks = {1, 2, 3, 4, 5, 7, 8, 10, 16, 33, 100, 1000, 1 << 20};
  for (uint64_t size : sizes) {
    for (int shards = 1; shards <= 9; ++shards) {
      for (uint64_t chunk : chunks) out.push_back({size, shards, chunk});
      out.push_back({size, shards, size});
      out.push_back({size, shards, size + 1});
    }
  }
  for (int shards : {1, 2, 3, 7, 16, 64}) {
    out.push_back({(uint64_t{1} << 20) + 7, shards, uint64_t{1} << 12});
    out.push_back({123457, shards, 999});
  }
  return out;
}

// The smallest number of chunks that is a multiple of `shards` and keeps every chunk at most
// `chunk` elements, capped at one element per chunk (partition.h).
uint64_t ExpectedChunks(const Triple& t) {
  const uint64_t s = static_cast<uint64_t>(t.shards);
  uint64_t k = s;
  while ((t.size + k - 1) / k > t.chunk) k += s;
  return std::min(k, t.size);
}

void CheckTiling(const TablePartition& p, const Triple& t) {
  const std::vector<Chunk>& chunks = p.chunks();
  ASSERT_FALSE(chunks.empty());
  uint64_t next = 0;
  uint64_t smallest = UINT64_MAX;
  uint64_t largest = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const Chunk& c = chunks[i];
    ASSERT_EQ(c.index, i);
    ASSERT_EQ(c.begin, next) << "chunk " << i << " leaves a gap or overlaps";
    ASSERT_GT(c.end, c.begin) << "chunk " << i << " is empty";
    ASSERT_LE(c.size(), t.chunk) << "chunk " << i << " is larger than chunk_elements";
    ASSERT_GE(c.shard, 0);
    ASSERT_LT(c.shard, t.shards);
    if (i > 0) {
      ASSERT_LE(chunks[i - 1].shard, c.shard) << "owners are not in order";
    }
    smallest = std::min(smallest, c.size());
    largest = std::max(largest, c.size());
    next = c.end;
  }
  EXPECT_EQ(next, t.size) << "the chunks do not cover the table";
  EXPECT_LE(largest - smallest, 1u) << "chunk sizes differ by more than one element";
}

void CheckChunkCount(const TablePartition& p, const Triple& t) {
  const uint64_t k = p.chunks().size();
  EXPECT_EQ(k, ExpectedChunks(t));
  // A whole number of chunks per shard, unless that would need chunks smaller than one
  // element (then every chunk holds one element).
  if (t.size >= static_cast<uint64_t>(t.shards)) {
    EXPECT_TRUE(k % t.shards == 0 || k == t.size) << k << " chunks";
  } else {
    EXPECT_EQ(k, t.size) << "a tiny table has one chunk per element";
  }
}

void CheckShards(const TablePartition& p, const Triple& t) {
  EXPECT_EQ(p.num_shards(), t.shards);
  EXPECT_EQ(p.size(), t.size);
  EXPECT_EQ(p.shard_begin(0), 0u);
  EXPECT_EQ(p.shard_end(t.shards - 1), t.size);
  uint64_t largest_chunk = 0;
  for (const Chunk& c : p.chunks()) largest_chunk = std::max(largest_chunk, c.size());
  uint64_t least = UINT64_MAX;
  uint64_t most = 0;
  std::size_t chunks_seen = 0;
  for (int s = 0; s < t.shards; ++s) {
    const uint64_t begin = p.shard_begin(s);
    const uint64_t end = p.shard_end(s);
    ASSERT_LE(begin, end) << "shard " << s;
    if (s + 1 < t.shards) {
      ASSERT_EQ(end, p.shard_begin(s + 1)) << "shard " << s;
    }
    std::span<const Chunk> mine = p.shard_chunks(s);
    if (mine.empty()) {
      EXPECT_EQ(begin, end) << "shard " << s << " owns elements but no chunk";
    } else {
      EXPECT_EQ(mine.front().begin, begin) << "shard " << s;
      EXPECT_EQ(mine.back().end, end) << "shard " << s;
      for (const Chunk& c : mine) EXPECT_EQ(c.shard, s) << "chunk " << c.index;
      EXPECT_EQ(mine.front().index, chunks_seen) << "shard " << s;
    }
    chunks_seen += mine.size();
    least = std::min(least, end - begin);
    most = std::max(most, end - begin);
  }
  EXPECT_EQ(chunks_seen, p.chunks().size()) << "shard_chunks do not partition the chunks";
  EXPECT_LE(most - least, largest_chunk) << "shares differ by more than one chunk";
  if (p.chunks().size() % t.shards == 0) {
    const std::size_t per_shard = p.chunks().size() / t.shards;
    for (int s = 0; s < t.shards; ++s) EXPECT_EQ(p.shard_chunks(s).size(), per_shard);
    // K/S chunks each, of sizes q or q+1: shares differ by at most one element per chunk.
    EXPECT_LE(most - least, per_shard);
  }
}

// Brute force: the chunk holding `e` by linear scan.
const Chunk& ReferenceChunkOf(const TablePartition& p, uint64_t e) {
  for (const Chunk& c : p.chunks()) {
    if (c.begin <= e && e < c.end) return c;
  }
  ADD_FAILURE() << "no chunk holds " << e;
  return p.chunks().front();
}

// Brute force: the indices of the chunks that intersect [begin, end).
std::vector<uint32_t> ReferenceOverlapping(const TablePartition& p, uint64_t begin,
                                           uint64_t end) {
  std::vector<uint32_t> out;
  for (const Chunk& c : p.chunks()) {
    if (c.begin < end && begin < c.end) out.push_back(c.index);
  }
  return out;
}

void CheckLookups(const TablePartition& p, uint64_t begin, uint64_t end) {
  std::vector<uint32_t> got;
  for (const Chunk& c : p.Overlapping(begin, end)) got.push_back(c.index);
  ASSERT_EQ(got, ReferenceOverlapping(p, begin, end)) << "[" << begin << ", " << end << ")";
}

void CheckLookups(const TablePartition& p, const Triple& t, std::mt19937_64& rng) {
  if (t.size <= 16) {
    for (uint64_t e = 0; e < t.size; ++e) {
      ASSERT_EQ(p.ChunkOf(e).index, ReferenceChunkOf(p, e).index) << e;
    }
    for (uint64_t b = 0; b < t.size; ++b) {
      for (uint64_t e = b + 1; e <= t.size; ++e) CheckLookups(p, b, e);
    }
    return;
  }
  // Every chunk boundary and its neighbours, then random ranges.
  for (const Chunk& c : p.chunks()) {
    for (uint64_t e : {c.begin, c.end - 1}) {
      ASSERT_EQ(p.ChunkOf(e).index, c.index) << e;
    }
  }
  std::uniform_int_distribution<uint64_t> element(0, t.size - 1);
  for (int i = 0; i < 50; ++i) {
    const uint64_t e = element(rng);
    ASSERT_EQ(p.ChunkOf(e).index, ReferenceChunkOf(p, e).index) << e;
    uint64_t a = element(rng);
    uint64_t b = element(rng);
    if (a > b) std::swap(a, b);
    CheckLookups(p, a, b + 1);
  }
  CheckLookups(p, 0, t.size);
}

TEST(TablePartitionTest, PropertiesHoldForManyShapes) {
  std::mt19937_64 rng(42);
  for (const Triple& t : Triples()) {
    SCOPED_TRACE(t.ToString());
    TablePartition p(t.size, t.shards, t.chunk);
    CheckTiling(p, t);
    CheckChunkCount(p, t);
    CheckShards(p, t);
    CheckLookups(p, t, rng);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(TablePartitionTest, ExactSplitOfASmallTable) {
  // 10 elements, at most 3 per chunk, 2 shards: 4 chunks (the smallest even count).
  TablePartition p(10, 2, 3);
  ASSERT_EQ(p.chunks().size(), 4u);
  const std::vector<std::pair<uint64_t, uint64_t>> want = {{0, 2}, {2, 5}, {5, 7}, {7, 10}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(p.chunks()[i].begin, want[i].first) << i;
    EXPECT_EQ(p.chunks()[i].end, want[i].second) << i;
    EXPECT_EQ(p.chunks()[i].shard, i < 2 ? 0 : 1) << i;
  }
  EXPECT_EQ(p.shard_begin(0), 0u);
  EXPECT_EQ(p.shard_end(0), 5u);
  EXPECT_EQ(p.shard_begin(1), 5u);
  EXPECT_EQ(p.shard_end(1), 10u);
  EXPECT_EQ(p.ChunkOf(4).index, 1u);
  EXPECT_EQ(p.ChunkOf(5).index, 2u);
  std::span<const Chunk> o = p.Overlapping(4, 6);
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].index, 1u);
  EXPECT_EQ(o[1].index, 2u);
}

TEST(TablePartitionTest, OneShardOneChunkWhenTableFits) {
  TablePartition p(100, 1, 1000);
  ASSERT_EQ(p.chunks().size(), 1u);
  EXPECT_EQ(p.chunks()[0].begin, 0u);
  EXPECT_EQ(p.chunks()[0].end, 100u);
  EXPECT_EQ(p.shard_end(0), 100u);
}

TEST(TablePartitionTest, TinyTableLeavesSomeShardsEmpty) {
  // 3 elements over 5 shards: one chunk per element, owned by shards floor(i * 5 / 3).
  TablePartition p(3, 5, 100);
  ASSERT_EQ(p.chunks().size(), 3u);
  EXPECT_EQ(p.chunks()[0].shard, 0);
  EXPECT_EQ(p.chunks()[1].shard, 1);
  EXPECT_EQ(p.chunks()[2].shard, 3);
  const std::vector<std::pair<uint64_t, uint64_t>> ranges = {
      {0, 1}, {1, 2}, {2, 2}, {2, 3}, {3, 3}};
  for (int s = 0; s < 5; ++s) {
    EXPECT_EQ(p.shard_begin(s), ranges[s].first) << "shard " << s;
    EXPECT_EQ(p.shard_end(s), ranges[s].second) << "shard " << s;
  }
  EXPECT_TRUE(p.shard_chunks(2).empty());
  EXPECT_TRUE(p.shard_chunks(4).empty());
  ASSERT_EQ(p.shard_chunks(3).size(), 1u);
  EXPECT_EQ(p.shard_chunks(3)[0].index, 2u);
}

TEST(TablePartitionTest, SingleElementTableBelongsToShardZero) {
  TablePartition p(1, 4, 1);
  ASSERT_EQ(p.chunks().size(), 1u);
  EXPECT_EQ(p.chunks()[0].shard, 0);
  EXPECT_EQ(p.shard_end(0), 1u);
  for (int s = 1; s < 4; ++s) {
    EXPECT_EQ(p.shard_begin(s), 1u);
    EXPECT_EQ(p.shard_end(s), 1u);
  }
}

TEST(TablePartitionTest, ChunkCountIsCappedAtOneElementPerChunk) {
  // 10 one-element chunks: 12 (a multiple of 4) would need empty chunks, 8 would exceed
  // chunk_elements = 1.
  TablePartition p(10, 4, 1);
  EXPECT_EQ(p.chunks().size(), 10u);
  for (const Chunk& c : p.chunks()) EXPECT_EQ(c.size(), 1u);
}

TEST(TablePartitionTest, HugeTableSplitsWithoutOverflow) {
  // size * chunk_index overflows 64 bits here; the split must not.
  const Triple t{(uint64_t{1} << 50) + 12345, 7, uint64_t{1} << 34};
  TablePartition p(t.size, t.shards, t.chunk);
  CheckTiling(p, t);
  CheckChunkCount(p, t);
  CheckShards(p, t);
  EXPECT_EQ(p.ChunkOf(t.size - 1).index, p.chunks().size() - 1);
  EXPECT_EQ(p.ChunkOf(0).index, 0u);
}

}  // namespace
}  // namespace kairos::internal

namespace kairos::internal {
namespace {

// The owner of a sparse table's row is part of the protocol: fixed values (SplitMix64's
// finaliser mod the number of servers), the same in every run, on every node and whatever
// the number of workers. A change here breaks every job with nodes of two builds.
TEST(ShardOfKeyTest, IsAFixedFunctionOfTheKeyAndTheServerCount) {
  EXPECT_EQ(Mix64(0), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(Mix64(1), 0x910a2dec89025cc1ULL);
  EXPECT_EQ(Mix64(~uint64_t{0}), 0xe4d971771b652c20ULL);
  struct Case {
    uint64_t key;
    int shards[5];  // of 1, 2, 3, 7 and 64 servers
  };
  const Case cases[] = {{0, {0, 1, 1, 2, 47}},
                        {1, {0, 1, 2, 2, 1}},
                        {42, {0, 1, 1, 5, 21}},
                        {uint64_t{1} << 63, {0, 1, 1, 6, 27}},
                        {~uint64_t{0}, {0, 0, 2, 0, 32}}};
  const int counts[] = {1, 2, 3, 7, 64};
  for (const Case& c : cases) {
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(ShardOfKey(c.key, counts[i]), c.shards[i]) << c.key << " of " << counts[i];
    }
  }
}

// Consecutive keys (feature ids 0, 1, 2, ...) spread evenly over the servers.
TEST(ShardOfKeyTest, SpreadsConsecutiveKeysEvenly) {
  constexpr int kShards = 5;
  int count[kShards] = {};
  for (uint64_t k = 0; k < 100000; ++k) ++count[ShardOfKey(k, kShards)];
  for (int c : count) EXPECT_NEAR(c, 20000, 600);
}

}  // namespace
}  // namespace kairos::internal
