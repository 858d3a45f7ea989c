// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// SummedRows: rows of one sparse table added up per key, in the order their keys first came.
// What the worker's I/O thread holds when it adds sparse pushes together: merged pushes
// (worker/push_merger.h) and held ones (worker/write_back.h).
//
// Thread-safety: none.

#ifndef KAIROS_WORKER_SUMMED_ROWS_H_
#define KAIROS_WORKER_SUMMED_ROWS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "kairos/buffer.h"

namespace kairos::internal {

class SummedRows {
 public:
  explicit SummedRows(uint32_t width = 1) : width_(width) {}

  // Adds `rows` (keys.size() x width, row-major) of `keys`: a key already held adds into its
  // row, a new one is appended.
  void Add(std::span<const uint64_t> keys, std::span<const float> rows);
  // A PUSH_SPARSE's payloads, keys (uint64 in floats' storage) and rows: Add(keys, rows).
  void Add(const Buffer& keys, const Buffer& rows);
  // Removes the rows of those of `keys` it holds and returns them, in the order of `keys`
  // (the last row held moves into each place freed).
  SummedRows Take(std::span<const uint64_t> keys);

  bool empty() const { return keys_.empty(); }
  std::size_t size() const { return keys_.size(); }
  uint32_t width() const { return width_; }
  // The payloads of a PUSH_SPARSE of these rows: the keys, then the rows.
  Buffer KeysPayload() const;
  Buffer RowsPayload() const;

 private:
  uint32_t width_;
  absl::flat_hash_map<uint64_t, uint32_t> row_of_;  // key -> index into keys_
  std::vector<uint64_t> keys_;
  std::vector<float> values_;  // keys_.size() x width_
};

}  // namespace kairos::internal

#endif  // KAIROS_WORKER_SUMMED_ROWS_H_
