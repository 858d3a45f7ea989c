// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "wire/one_frame.h"

#include <cstdint>
#include <cstring>

#include "kairos/job.h"

namespace kairos::internal {
namespace {

// The `packed` field's tag: field 28, wire type 2 (length-delimited), as a varint.
constexpr uint32_t kPackedTag = (28 << 3) | 2;

std::size_t PackedBytes(const Message& message) {
  std::size_t bytes = 0;
  for (const Buffer& p : message.payloads) bytes += p.size_bytes();
  return bytes;
}

std::size_t VarintSize(uint64_t v) {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

uint8_t* PutVarint(uint64_t v, uint8_t* out) {
  while (v >= 0x80) {
    *out++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<uint8_t>(v);
  return out;
}

// EncodeOneFrameTo; returns the end of what it wrote.
uint8_t* WriteOneFrame(const Message& message, uint8_t* out) {
  uint8_t* at = message.header.SerializeWithCachedSizesToArray(out);
  if (message.payloads.empty()) return at;
  at = PutVarint(kPackedTag, at);
  at = PutVarint(PackedBytes(message), at);
  for (const Buffer& p : message.payloads) {
    if (p.size_bytes() == 0) continue;
    std::memcpy(at, p.data(), p.size_bytes());
    at += p.size_bytes();
  }
  return at;
}

}  // namespace

bool OneFrame(const Message& message) { return message.payloads.empty() || Packable(message); }

std::size_t PrepareOneFrame(Message& message) {
  return message.payloads.empty() ? PrepareHeader(message) : PreparePacked(message);
}

void EncodeOneFrameTo(const Message& message, void* out) {
  WriteOneFrame(message, static_cast<uint8_t*>(out));
}

std::size_t PrepareBatch(std::span<Message> messages, BatchFrame& batch) {
  wire::Header& h = batch.header;
  h.Clear();
  h.set_protocol_version(kProtocolVersion);
  h.set_kind(wire::BATCH);
  batch.entries_bytes = 0;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const std::size_t size = PrepareOneFrame(messages[i]);
    batch.entries_bytes += size;
    if (i + 1 < messages.size()) h.add_packed_sizes(static_cast<uint32_t>(size));
  }
  return h.ByteSizeLong() + VarintSize(kPackedTag) + VarintSize(batch.entries_bytes) +
         batch.entries_bytes;
}

void EncodeBatchTo(std::span<const Message> messages, const BatchFrame& batch, void* out) {
  uint8_t* at = batch.header.SerializeWithCachedSizesToArray(static_cast<uint8_t*>(out));
  at = PutVarint(kPackedTag, at);
  at = PutVarint(batch.entries_bytes, at);
  for (const Message& m : messages) at = WriteOneFrame(m, at);
}

bool Packable(const Message& message) {
  const std::size_t bytes = PackedBytes(message);
  return bytes > 0 && bytes < kMaxPackedBytes;
}

std::size_t PreparePacked(Message& message) {
  wire::Header& h = message.header;
  h.set_protocol_version(kProtocolVersion);
  h.set_payload_frames(0);
  h.clear_packed();
  h.clear_packed_sizes();
  for (std::size_t i = 0; i + 1 < message.payloads.size(); ++i) {
    h.add_packed_sizes(static_cast<uint32_t>(message.payloads[i].size_bytes()));
  }
  const std::size_t bytes = PackedBytes(message);
  return h.ByteSizeLong() + VarintSize(kPackedTag) + VarintSize(bytes) + bytes;
}

}  // namespace kairos::internal
