// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// One-frame messages (docs/wire_format.md, "Small messages in one frame"): the sender's side.
// A small message's payloads travel packed into its header frame, and small messages to
// one peer that leave together travel as one frame, a batch. Decode and DecodeReceived
// (wire/message.h) take them apart.

#ifndef KAIROS_WIRE_ONE_FRAME_H_
#define KAIROS_WIRE_ONE_FRAME_H_

#include <cstddef>
#include <span>

#include "wire/message.h"

namespace kairos::internal {

// A message whose payloads together are smaller than this may travel as one frame
// (PreparePacked): the header with its payloads packed into its `packed` field.
inline constexpr std::size_t kMaxPackedBytes = 4096;

// Whether `message` may travel packed: it has payloads, and they hold between 1 and
// kMaxPackedBytes - 1 bytes together.
bool Packable(const Message& message);
// PrepareHeader for a packed message: sets protocol_version, payload_frames (0) and
// packed_sizes and returns the frame's size. EncodeOneFrameTo then writes the header and
// its `packed` field holding the payloads' bytes (appended as the last field, so the
// payloads are copied once, straight into the frame). Decode unpacks them into payloads.
// REQUIRES: Packable(message).
std::size_t PreparePacked(Message& message);

// Batches: small messages to one peer that leave together travel as one frame, a header
// of kind BATCH whose `packed` field holds them back to back (each a whole one-frame
// message: its header, with its payloads packed when it has any) and packed_sizes the
// size of each but the last. A batch carries 2 to kMaxBatchMessages messages.
inline constexpr std::size_t kMaxBatchMessages = 1024;
// A batch is closed once its messages reach this many bytes.
inline constexpr std::size_t kMaxBatchBytes = std::size_t{256} << 10;

// Whether `message` may travel as one frame, alone or in a batch: it has no payloads, or
// it is Packable.
bool OneFrame(const Message& message);
// The size of `message` as one frame, after PrepareHeader or PreparePacked.
// REQUIRES: OneFrame(message).
std::size_t PrepareOneFrame(Message& message);
void EncodeOneFrameTo(const Message& message, void* out);

// A batch of `messages` (each OneFrame, 2 to kMaxBatchMessages of them): PrepareBatch
// prepares each message and the batch's header and returns the frame's size; EncodeBatchTo
// writes exactly that many bytes to `out`. `batch` keeps what EncodeBatchTo needs.
struct BatchFrame {
  wire::Header header;
  std::size_t entries_bytes = 0;
};
std::size_t PrepareBatch(std::span<Message> messages, BatchFrame& batch);
void EncodeBatchTo(std::span<const Message> messages, const BatchFrame& batch, void* out);

}  // namespace kairos::internal

#endif  // KAIROS_WIRE_ONE_FRAME_H_
