// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The encodings of a compressed table's values on the wire (kairos::Compression,
// docs/wire_format.md, "Compressed values"). An encoded payload describes itself:
//
//   { u32 count, body, zero padding to a multiple of 4 bytes }      little-endian
//
// with the body: kFp16, kBf16: count u16 values; kInt8: ceil(count / 256) float32 scales,
// then count int8 values (value = int8 * its block's scale). The padding keeps every payload
// a whole number of float32 words, as the transport and Decode want them. Decode (wire/
// message.h) turns an encoded payload back into float32 before anything reads it.
//
// Thread-safety: the functions are thread-safe; a PushResidual is too (one lock).

#ifndef KAIROS_WIRE_ENCODING_H_
#define KAIROS_WIRE_ENCODING_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kairos/buffer.h"
#include "kairos/table.h"

namespace kairos::internal {

inline constexpr std::size_t kInt8Block = 256;

// The bytes of `count` values encoded with `c` (c != kNone), padding included; nullopt when
// `count` does not fit the payload's u32 count (a message holds at most kMaxChunkElements).
std::optional<std::size_t> EncodedBytes(Compression c, uint64_t count);

// Encodes `values` (c != kNone) into a payload of EncodedBytes(c, values.size()) bytes.
Buffer Encode(Compression c, std::span<const float> values);

// Encodes `values` (c != kNone) as Encode does, and leaves in each what the encoding took
// from it (its value less the decoded one; 0 where that is not finite): error feedback.
Buffer EncodeKeepingRest(Compression c, std::span<float> values);

// Decodes a payload of `bytes` bytes encoded with `c`: InvalidArgument when it is not one
// (too short, more than kMaxChunkElements values, a count its size does not match exactly,
// nonzero padding).
absl::StatusOr<Buffer> DecodeValues(Compression c, const void* data, std::size_t bytes);

// Error feedback for a dense table's compressed pushes (TableSpec::compression): what the
// encoding took from each element is kept, and added to that element's next push. The
// residual of a chunk (the table partition's, common/partition.h) is allocated at its first
// push: a worker holds one float per element of the chunks it pushed to.
class PushResidual {
 public:
  explicit PushResidual(Compression c) : c_(c) {}

  // The payload of a push of `gradient` to elements [offset, offset + gradient.size()) of
  // the chunk [chunk_begin, chunk_end): the gradient plus their residual, encoded; the
  // residual becomes what that encoding left out. REQUIRES: the range is inside the chunk.
  Buffer Encode(uint64_t chunk_begin, uint64_t chunk_end, uint64_t offset,
                std::span<const float> gradient);
  Compression compression() const { return c_; }

 private:
  const Compression c_;
  absl::Mutex mu_;
  absl::flat_hash_map<uint64_t, std::vector<float>> residual_ ABSL_GUARDED_BY(mu_);  // by begin
};

}  // namespace kairos::internal

#endif  // KAIROS_WIRE_ENCODING_H_
