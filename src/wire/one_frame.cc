// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "wire/one_frame.h"

#include <cstdint>
#include <cstring>

#include "google/protobuf/io/coded_stream.h"
#include "kairos/job.h"

namespace kairos::internal {
namespace {

using google::protobuf::io::CodedOutputStream;

// The `packed` field's tag: its number, wire type 2 (length-delimited).
constexpr uint32_t kPackedTag = (wire::Header::kPackedFieldNumber << 3) | 2;

std::size_t PackedBytes(const Message& message) {
  std::size_t bytes = 0;
  for (const Buffer& p : message.payloads) bytes += p.size_bytes();
  return bytes;
}

// The bytes of the `packed` field holding `bytes` bytes: its tag, its length and them.
std::size_t PackedFieldSize(std::size_t bytes) {
  return CodedOutputStream::VarintSize32(kPackedTag) + CodedOutputStream::VarintSize64(bytes) +
         bytes;
}

// Writes the `packed` field's tag and length; its bytes follow.
uint8_t* PutPackedField(std::size_t bytes, uint8_t* out) {
  out = CodedOutputStream::WriteVarint32ToArray(kPackedTag, out);
  return CodedOutputStream::WriteVarint64ToArray(bytes, out);
}

// EncodeOneFrameTo; returns the end of what it wrote.
uint8_t* WriteOneFrame(const Message& message, uint8_t* out) {
  uint8_t* at = message.header.SerializeWithCachedSizesToArray(out);
  if (message.payloads.empty()) return at;
  at = PutPackedField(PackedBytes(message), at);
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
  return h.ByteSizeLong() + PackedFieldSize(batch.entries_bytes);
}

void EncodeBatchTo(std::span<const Message> messages, const BatchFrame& batch, void* out) {
  uint8_t* at = batch.header.SerializeWithCachedSizesToArray(static_cast<uint8_t*>(out));
  at = PutPackedField(batch.entries_bytes, at);
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
  return h.ByteSizeLong() + PackedFieldSize(PackedBytes(message));
}

}  // namespace kairos::internal
