// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A decoded kairos message: the Protobuf header and its raw float32 payloads, and the
// decoding of received frames with the checks every message passes before it touches any
// state (docs/wire_format.md).

#ifndef KAIROS_WIRE_MESSAGE_H_
#define KAIROS_WIRE_MESSAGE_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "kairos/buffer.h"
#include "wire/kairos.pb.h"

namespace kairos::internal {

struct Message {
  wire::Header header;
  std::vector<Buffer> payloads;
};

// One received frame, kept alive by `owner` (e.g. the transport's message object).
struct RawFrame {
  std::shared_ptr<void> owner;
  const void* data = nullptr;
  std::size_t size = 0;
};

// Decodes frames[0] as the header and the rest as payloads, checking: the header parses;
// its protocol version is kProtocolVersion; payload_frames equals the frames that follow;
// each payload is a whole number of float32 values; PUSH, ASSIGN and PULL_REPLY carry
// exactly one payload of `length` values; PUSH_SPARSE (2 payloads) and PULL_SPARSE (1)
// carry 1..kMaxSparseKeys keys (`length`) in a first frame of exactly 8 x length bytes;
// every other kind carries none. Payloads are used
// in place when they are float-aligned and copied otherwise. A compressed table's values
// (header encoding, set on PUSH, PULL_REPLY and PUSH_SPARSE's rows; wire/encoding.h) are
// checked (their count, for PUSH and PULL_REPLY the header's length) and decoded to float32
// here, and the decoded header's encoding is 0. InvalidArgument says what is wrong.
// On failure, `*parsed_header` (when given) holds the header if it parsed, so that the
// receiver can still answer the sender's request id; it stays empty otherwise.
absl::StatusOr<Message> Decode(std::vector<RawFrame> frames,
                               std::optional<wire::Header>* parsed_header = nullptr);

// Serializes the header. Sets protocol_version and payload_frames from `message`.
std::string EncodeHeader(Message& message);
// The same without a string: PrepareHeader sets the two fields and returns the header's
// serialized size; EncodeHeaderTo then writes exactly that many bytes to `out` (e.g. the
// transport's message buffer, saving an allocation and a copy per message). No change to
// the header in between.
std::size_t PrepareHeader(Message& message);
void EncodeHeaderTo(const Message& message, void* out);

// Decodes a received message as Decode does, and a batch into the messages it carries:
// `deliver` gets each good message in order; `reject` each one that fails to decode (its
// error, and its header when that parsed), or the whole batch when the batch itself is
// malformed (a batch inside a batch, sizes beyond its bytes, fewer than 2 or more than
// kMaxBatchMessages messages, payload frames beside it; wire/one_frame.h). Returns the
// messages it carried.
std::size_t DecodeReceived(
    std::vector<RawFrame> frames, absl::FunctionRef<void(Message&&)> deliver,
    absl::FunctionRef<void(const absl::Status&, const wire::Header*)> reject);

// A short description for logs and errors: "PUSH #12 from node 3 (table 0 [0, 100))".
std::string Describe(const wire::Header& header);

// Builds the header of a reply to `request` (same request id, table, offset, length).
wire::Header ReplyHeader(const wire::Header& request, wire::Kind kind, uint32_t sender);

}  // namespace kairos::internal

#endif  // KAIROS_WIRE_MESSAGE_H_
