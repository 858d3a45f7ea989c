// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The rows of one sparse table held by one shard (docs/sparse.md): a hash map from the
// uint64_t key to a row slot, the rows in fixed-size blocks (values, then the updater's
// state, per row), and each row's update count (Adam's step). Memory grows with the rows
// held: a block at a time, never for the key space.
//
// Thread-safety: the rows are touched only where the table's work runs (its lane, or the
// engine's thread while the lane has none of the table's work); rows() and bytes() may be
// read from any thread.

#ifndef KAIROS_ENGINE_SPARSE_ROWS_H_
#define KAIROS_ENGINE_SPARSE_ROWS_H_

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "kairos/buffer.h"
#include "kairos/table.h"

namespace kairos::internal {

// Key i of a key frame (little-endian uint64 values in a float buffer, any alignment).
inline uint64_t KeyAt(const Buffer& keys, std::size_t i) {
  uint64_t k;
  std::memcpy(&k, reinterpret_cast<const char*>(keys.data()) + i * sizeof(uint64_t),
              sizeof(k));
  return k;
}
inline std::size_t KeyCount(const Buffer& keys) { return keys.size() * sizeof(float) / 8; }

// Element c of row `key`'s initial values: InitialValue(init, Mix64(key) + c), a function
// of (initializer, seed, key, c) alone.
void FillSparseRow(const Initializer& init, uint64_t key, std::span<float> out);

class SparseRows {
 public:
  // `track`: keep each row's key and last update clock beside it (16 bytes a row), for
  // eviction (touched, ForEachSlot); without it those are not available.
  SparseRows(uint32_t width, std::size_t state_per_element, bool track = false);

  uint32_t width() const { return width_; }
  // The slot of `key`, or -1 when the row does not exist.
  int64_t Find(uint64_t key) const {
    auto it = index_.find(key);
    return it == index_.end() ? -1 : static_cast<int64_t>(it->second);
  }
  // The slot of `key`, created with its initial values, zero state, step 0 and touched at
  // clock 0 when absent (in a slot an erased row freed, if any). Throws std::bad_alloc when
  // memory runs out, and std::length_error past 2^32 - 1 rows.
  uint32_t FindOrCreate(uint64_t key, const Initializer& init);
  // Removes the row of `key` (its values, state and step): its slot is reused by the next
  // row created. False when there is none.
  bool Erase(uint64_t key);

  std::span<float> values(uint32_t slot) { return {Row(slot), width_}; }
  std::span<const float> values(uint32_t slot) const { return {Row(slot), width_}; }
  std::span<float> state(uint32_t slot) { return {Row(slot) + width_, state_floats_}; }
  // The row's update count (Adam's step; RowEviction's frequency).
  uint64_t& step(uint32_t slot) { return steps_[slot / rows_per_block_][slot % rows_per_block_]; }
  uint64_t step(uint32_t slot) const {
    return steps_[slot / rows_per_block_][slot % rows_per_block_];
  }
  // The stamp of the row's last update: its clock, or its time in nanoseconds (a table
  // evicting by seconds: ShardTable::Stamp), for RowEviction's recency and idleness. Touch
  // records it when tracking, else does nothing; touched() REQUIRES tracking. A row created
  // or restored is stamped 0.
  bool tracking() const { return track_; }
  void Touch(uint32_t slot, int64_t stamp) {
    if (track_) Track(slot).touched = stamp;
    if (keep_changes_) changed_[slot / 64] |= uint64_t{1} << (slot % 64);
  }
  int64_t touched(uint32_t slot) const { return Track(slot).touched; }

  // Calls f(key, slot) for every row held, in no particular order.
  template <typename F>
  void ForEach(F f) const {
    for (const auto& [key, slot] : index_) f(key, slot);
  }
  // Calls f(key, slot) for every row held, in slot order: a sequential pass over the rows'
  // bookkeeping (ForEach visits them in hash order, a cache miss each). REQUIRES tracking.
  template <typename F>
  void ForEachSlot(F f) const {
    for (uint32_t slot = 0; slot < used_; ++slot) {
      const RowTrack& t = Track(slot);
      if (t.touched != kFreeSlot) f(t.key, slot);
    }
  }
  std::span<const float> row_and_state(uint32_t slot) const { return {Row(slot), stride_}; }

  // Changes, for delta checkpoints (docs/durability.md, "Delta checkpoints"): once kept,
  // every row created or touched (Touch) is marked changed and every key erased is listed,
  // until ClearChanges. Call KeepChanges before the rows are used.
  void KeepChanges();
  bool keeps_changes() const { return keep_changes_; }
  // Calls f(key, slot) for every row held that changed since the last ClearChanges, in no
  // particular order (a pass over the hash map; the rows not changed are not touched).
  template <typename F>
  void ForEachChanged(F f) const {
    for (const auto& [key, slot] : index_) {
      if (changed_[slot / 64] >> (slot % 64) & 1) f(key, slot);
    }
  }
  // The keys erased since the last ClearChanges (a key may be listed and held again).
  const std::vector<uint64_t>& removed() const { return removed_; }
  void ClearChanges();
  std::size_t stride() const { return stride_; }

  uint64_t rows() const { return rows_.load(std::memory_order_relaxed); }
  // Bytes held: the blocks and the hash map's slots (erased rows' slots included, until
  // reused).
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  uint32_t rows_per_block() const { return rows_per_block_; }
  // What one more row costs, about: its share of a block and two hash-map slots.
  uint64_t bytes_per_row() const {
    return stride_ * sizeof(float) + sizeof(uint64_t) + (track_ ? sizeof(RowTrack) : 0) +
           2 * (sizeof(std::pair<uint64_t, uint32_t>) + 1);
  }

 private:
  static constexpr int64_t kFreeSlot = INT64_MIN;  // RowTrack::touched of an erased row
  struct RowTrack {
    int64_t touched = 0;
    uint64_t key = 0;
  };
  float* Row(uint32_t slot) const {
    return blocks_[slot / rows_per_block_].get() + (slot % rows_per_block_) * stride_;
  }
  RowTrack& Track(uint32_t slot) const {
    return tracks_[slot / rows_per_block_][slot % rows_per_block_];
  }
  void UpdateBytes();

  const uint32_t width_;
  const std::size_t state_floats_;  // width x state_per_element
  const std::size_t stride_;        // floats per row: values then state
  const uint32_t rows_per_block_;
  const bool track_;
  absl::flat_hash_map<uint64_t, uint32_t> index_;
  std::vector<std::unique_ptr<float[]>> blocks_;
  std::vector<std::unique_ptr<uint64_t[]>> steps_;
  std::vector<std::unique_ptr<RowTrack[]>> tracks_;  // tracking only
  std::vector<uint32_t> free_;                       // slots of erased rows
  bool keep_changes_ = false;
  std::vector<uint64_t> changed_;                    // keeping changes: a bit per slot
  std::vector<uint64_t> removed_;                    // keeping changes: keys erased
  uint32_t used_ = 0;                                // slots ever handed out
  std::atomic<uint64_t> rows_{0}, bytes_{0};
};

// A round's sums of one sparse table (BSP): per row the sum of the scaled gradients pushed
// into the round and the distinct workers that pushed it (the row's divisor).
struct SparseBucket {
  absl::flat_hash_map<uint64_t, uint32_t> index;
  std::vector<uint64_t> keys;
  std::vector<float> sums;  // keys.size() x width
  std::vector<absl::InlinedVector<int, 2>> workers;
  // Adds `scale` x row i of `rows` for each key i of `keys`, pushed by worker `rank`.
  // Throws std::bad_alloc.
  void Add(int rank, const Buffer& keys, const Buffer& rows, uint32_t width, float scale);
};

}  // namespace kairos::internal

#endif  // KAIROS_ENGINE_SPARSE_ROWS_H_
