// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "wire/message.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/utility/utility.h"
#include "kairos/job.h"
#include "wire/encoding.h"
#include "wire/one_frame.h"

namespace kairos::internal {
namespace {

bool CarriesOnePayload(wire::Kind kind) {
  return kind == wire::PUSH || kind == wire::PULL_REPLY || kind == wire::ASSIGN;
}

bool Sparse(wire::Kind kind) { return kind == wire::PUSH_SPARSE || kind == wire::PULL_SPARSE; }

bool CarriesNoPayload(wire::Kind kind) { return !CarriesOnePayload(kind) && !Sparse(kind); }

// PUSH_SPARSE and PULL_SPARSE: a bounded number of keys, frame 0 holding exactly them; a
// push's frame 1 holds its rows (whole float32; the shard checks keys x row_width).
absl::Status CheckSparsePayloads(const wire::Header& h, const std::vector<RawFrame>& frames) {
  const std::size_t want = h.kind() == wire::PUSH_SPARSE ? 2 : 1;
  if (frames.size() - 1 != want) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: expects %d payload frames, got %d", Describe(h), want, frames.size() - 1));
  }
  if (h.length() == 0 || h.length() > kMaxSparseKeys) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d keys; a sparse request carries 1 to %d (kMaxSparseKeys)", Describe(h),
        h.length(), kMaxSparseKeys));
  }
  // Compared in keys, not bytes (no multiplication of a length from the network).
  if (frames[1].size % sizeof(uint64_t) != 0 || frames[1].size / sizeof(uint64_t) != h.length()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: header says %d keys but the key frame has %d bytes", Describe(h), h.length(),
        frames[1].size));
  }
  return absl::OkStatus();
}

Buffer PayloadFrom(RawFrame& frame) {
  const std::size_t count = frame.size / sizeof(float);
  if (count == 0) return Buffer();
  if (reinterpret_cast<std::uintptr_t>(frame.data) % alignof(float) == 0) {
    return Buffer::Adopt(std::move(frame.owner),
                         static_cast<float*>(const_cast<void*>(frame.data)), count);
  }
  // A payload that the transport delivered at an odd address (inside a batch of small
  // messages) is copied once so that it can be read as floats.
  Buffer copy = Buffer::Allocate(count);
  std::memcpy(copy.data(), frame.data, frame.size);
  return copy;
}

absl::Status CheckPayloads(const wire::Header& h, const std::vector<RawFrame>& frames) {
  const std::size_t payloads = frames.size() - 1;
  if (h.payload_frames() != payloads) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: header announces %d payload frames but %d arrived", Describe(h),
        h.payload_frames(), payloads));
  }
  for (std::size_t i = 1; i < frames.size(); ++i) {
    if (frames[i].size % sizeof(float) != 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: payload frame %d has %d bytes, not a whole number of float32",
                          Describe(h), i - 1, frames[i].size));
    }
  }
  if (Sparse(h.kind())) return CheckSparsePayloads(h, frames);
  if (CarriesOnePayload(h.kind())) {
    if (payloads != 1) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: expects 1 payload frame, got %d", Describe(h), payloads));
    }
    // An encoded payload's values are counted once it is decoded (Decode).
    if (h.encoding() != 0) return absl::OkStatus();
    // Compared in values, not bytes: length * 4 wraps for lengths of 2^62 and more.
    if (frames[1].size / sizeof(float) != h.length()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: header says %d values but the payload has %d bytes (%d values)", Describe(h),
          h.length(), frames[1].size, frames[1].size / sizeof(float)));
    }
  } else if (CarriesNoPayload(h.kind()) && payloads != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expects no payload, got %d frames", Describe(h), payloads));
  }
  return absl::OkStatus();
}

// The frame of an encoded payload (wire/encoding.h), or 0: PUSH and PULL_REPLY carry their
// values in frame 1, PUSH_SPARSE its rows in frame 2. Any other kind is never encoded.
std::size_t EncodedFrame(const wire::Header& h) {
  if (h.kind() == wire::PUSH || h.kind() == wire::PULL_REPLY) return 1;
  if (h.kind() == wire::PUSH_SPARSE) return 2;
  return 0;
}

absl::Status CheckEncoding(const wire::Header& h) {
  if (h.encoding() == 0) return absl::OkStatus();
  if (EncodedFrame(h) == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: this kind of message carries no encoded values (encoding %d)",
                        Describe(h), h.encoding()));
  }
  if (h.encoding() > static_cast<uint32_t>(Compression::kInt8)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: unknown encoding %d", Describe(h), h.encoding()));
  }
  return absl::OkStatus();
}

absl::Status CheckVersion(const wire::Header& h) {
  if (h.protocol_version() == kProtocolVersion) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s: protocol version %d, this node speaks %d",
                                                    Describe(h), h.protocol_version(),
                                                    kProtocolVersion));
}

absl::Status CheckHeader(const wire::Header& h, const std::vector<RawFrame>& frames) {
  if (absl::Status s = CheckVersion(h); !s.ok()) return s;
  if (h.kind() == wire::KIND_UNSPECIFIED || !wire::Kind_IsValid(h.kind())) {
    return absl::InvalidArgumentError(
        absl::StrFormat("message #%d from node %d has no valid kind (%d)", h.request_id(),
                        h.sender(), static_cast<int>(h.kind())));
  }
  if (absl::Status s = CheckEncoding(h); !s.ok()) return s;
  return CheckPayloads(h, frames);
}

// The encoded payload of `frame`, as float32; for PUSH and PULL_REPLY exactly the header's
// `length` values.
absl::StatusOr<Buffer> DecodedPayload(const wire::Header& h, const RawFrame& frame) {
  absl::StatusOr<Buffer> values =
      DecodeValues(static_cast<Compression>(h.encoding()), frame.data, frame.size);
  if (!values.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s", Describe(h), values.status().message()));
  }
  if (h.kind() != wire::PUSH_SPARSE && values->size() != h.length()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: header says %d values but the encoded payload holds %d", Describe(h),
                        h.length(), values->size()));
  }
  return values;
}

// A packed message (its payloads in the header's `packed` field): the payloads become
// frames after the header's, sharing one copy of the bytes, and the header says so
// (payload_frames), so that the checks of a message in frames apply unchanged.
absl::Status Unpack(wire::Header& h, std::vector<RawFrame>& frames) {
  if (h.packed().empty() && h.packed_sizes_size() == 0) return absl::OkStatus();
  if (h.packed().empty() || frames.size() != 1 || h.payload_frames() != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: packed payloads (%d bytes) with %d payload frames (%d sent); packed payloads "
        "travel alone",
        Describe(h), h.packed().size(), h.payload_frames(), frames.size() - 1));
  }
  auto bytes = std::make_shared<std::string>(std::move(*h.mutable_packed()));
  h.clear_packed();
  std::size_t at = 0;
  for (const uint32_t size : h.packed_sizes()) {
    if (size > bytes->size() - at) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: packed payload sizes exceed the %d packed bytes", Describe(h), bytes->size()));
    }
    frames.push_back(RawFrame{bytes, bytes->data() + at, size});
    at += size;
  }
  frames.push_back(RawFrame{bytes, bytes->data() + at, bytes->size() - at});
  h.clear_packed_sizes();
  h.set_payload_frames(static_cast<uint32_t>(frames.size() - 1));
  return absl::OkStatus();
}

absl::Status ParseHeader(const RawFrame& frame, wire::Header& h) {
  if (frame.size > static_cast<std::size_t>(INT32_MAX) ||
      !h.ParseFromArray(frame.data, static_cast<int>(frame.size))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "malformed header frame (%d bytes) that does not parse as kairos.wire.Header", frame.size));
  }
  return absl::OkStatus();
}

// Decode, for a message whose header m.header already parsed from frames[0]: fills in its
// payloads, in place (a Message moves at the cost of a Header's construction and swap).
absl::Status DecodeParsed(Message& m, std::vector<RawFrame>& frames,
                          std::optional<wire::Header>* parsed_header) {
  const bool packed = !m.header.packed().empty() || m.header.packed_sizes_size() > 0;
  // On a refusal: the header as it arrived (it parsed, whatever its content), so that the
  // receiver can answer its request id; parsed again from its frame when Unpack changed it.
  auto hand_back = [&] {
    if (parsed_header == nullptr) return;
    if (!packed) {
      *parsed_header = std::move(m.header);
      return;
    }
    parsed_header->emplace();
    (*parsed_header)->ParseFromArray(frames[0].data, static_cast<int>(frames[0].size));
  };
  absl::Status s = m.header.kind() == wire::BATCH
                       ? absl::InvalidArgumentError(absl::StrFormat(
                             "%s inside a batch or where one message was due", Describe(m.header)))
                       : Unpack(m.header, frames);
  if (s.ok()) s = CheckHeader(m.header, frames);
  if (!s.ok()) {
    hand_back();
    return s;
  }
  m.payloads.reserve(frames.size() - 1);
  const std::size_t encoded = m.header.encoding() != 0 ? EncodedFrame(m.header) : 0;
  for (std::size_t i = 1; i < frames.size(); ++i) {
    if (i != encoded) {
      m.payloads.push_back(PayloadFrom(frames[i]));
      continue;
    }
    absl::StatusOr<Buffer> values = DecodedPayload(m.header, frames[i]);
    if (!values.ok()) {
      hand_back();
      return values.status();
    }
    m.payloads.push_back(*std::move(values));
  }
  m.header.set_encoding(0);  // every payload is float32 now
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Message> Decode(std::vector<RawFrame> frames,
                               std::optional<wire::Header>* parsed_header) {
  if (frames.empty()) return absl::InvalidArgumentError("empty message (no header frame)");
  absl::StatusOr<Message> m(absl::in_place);
  if (absl::Status s = ParseHeader(frames[0], m->header); !s.ok()) return s;
  if (absl::Status s = DecodeParsed(*m, frames, parsed_header); !s.ok()) return s;
  return m;
}

std::size_t DecodeReceived(
    std::vector<RawFrame> frames, absl::FunctionRef<void(Message&&)> deliver,
    absl::FunctionRef<void(const absl::Status&, const wire::Header*)> reject) {
  // One message in `f`, whose header parsed into `m` (`parsed`).
  auto decode_one = [&](Message& m, std::vector<RawFrame>& f, const absl::Status& parsed) {
    if (!parsed.ok()) return reject(parsed, nullptr);
    std::optional<wire::Header> header;
    if (absl::Status s = DecodeParsed(m, f, &header); !s.ok()) {
      return reject(s, header.has_value() ? &*header : nullptr);
    }
    deliver(std::move(m));
  };
  if (frames.empty()) {
    reject(absl::InvalidArgumentError("empty message (no header frame)"), nullptr);
    return 1;
  }
  Message m;
  const absl::Status parsed = ParseHeader(frames[0], m.header);
  if (!parsed.ok() || m.header.kind() != wire::BATCH) {
    decode_one(m, frames, parsed);
    return 1;
  }
  // A batch: its messages become frames sharing its bytes (Unpack), each decoded alone. A
  // malformed batch is refused whole, without a header: it is no request to answer.
  wire::Header& h = m.header;
  absl::Status s = CheckVersion(h);
  if (s.ok() && (h.packed_sizes_size() < 1 ||
                 static_cast<std::size_t>(h.packed_sizes_size()) >= kMaxBatchMessages)) {
    s = absl::InvalidArgumentError(absl::StrFormat("%s of %d messages; a batch carries 2 to %d",
                                                   Describe(h), h.packed_sizes_size() + 1,
                                                   kMaxBatchMessages));
  }
  if (s.ok()) s = Unpack(h, frames);
  if (!s.ok()) {
    reject(s, nullptr);
    return 1;
  }
  std::vector<RawFrame> one(1);
  for (std::size_t i = 1; i < frames.size(); ++i) {
    Message entry;
    one.resize(1);
    one[0] = std::move(frames[i]);
    decode_one(entry, one, ParseHeader(one[0], entry.header));
  }
  return frames.size() - 1;
}

std::string EncodeHeader(Message& message) {
  message.header.set_protocol_version(kProtocolVersion);
  message.header.set_payload_frames(static_cast<uint32_t>(message.payloads.size()));
  return message.header.SerializeAsString();
}

std::size_t PrepareHeader(Message& message) {
  message.header.set_protocol_version(kProtocolVersion);
  message.header.set_payload_frames(static_cast<uint32_t>(message.payloads.size()));
  return message.header.ByteSizeLong();  // caches the sizes EncodeHeaderTo uses
}

void EncodeHeaderTo(const Message& message, void* out) {
  message.header.SerializeWithCachedSizesToArray(static_cast<uint8_t*>(out));
}

std::string Describe(const wire::Header& h) {
  std::string s = absl::StrFormat("%s #%d from node %d", wire::Kind_Name(h.kind()),
                                  h.request_id(), h.sender());
  switch (h.kind()) {
    case wire::PUSH:
    case wire::PULL:
    case wire::PUSH_REPLY:
    case wire::PULL_REPLY:
    case wire::ASSIGN:
    case wire::ASSIGN_REPLY:
      absl::StrAppendFormat(&s, " (table %d [%d, %d))", h.table(), h.offset(),
                            h.offset() + h.length());
      break;
    case wire::PUSH_SPARSE:
    case wire::PULL_SPARSE:
      absl::StrAppendFormat(&s, " (table %d, %d keys)", h.table(), h.length());
      break;
    case wire::SET_LEARNING_RATE:
    case wire::SET_LEARNING_RATE_REPLY:
      absl::StrAppendFormat(&s, " (table %d)", h.table());
      break;
    default:
      break;
  }
  return s;
}

wire::Header ReplyHeader(const wire::Header& request, wire::Kind kind, uint32_t sender) {
  wire::Header h;
  h.set_kind(kind);
  h.set_request_id(request.request_id());
  h.set_sender(sender);
  h.set_table(request.table());
  h.set_offset(request.offset());
  h.set_length(request.length());
  h.set_clock(request.clock());
  return h;
}

}  // namespace kairos::internal
