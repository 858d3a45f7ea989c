// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target: wire::Decode and DecodeReceived of arbitrary frame sequences (a
// message in frames, a one-frame message with packed payloads, a batch of them).
//
// Input: one flags byte, then frames, each a u16 length and its bytes (ByteReader::Frame),
// at most kMaxFrames. Flags bits 0-1 shift every frame by 0-3 bytes from an aligned address
// (payloads at odd addresses take Decode's copying path); bit 2 asks Decode for the parsed
// header of a refused message.
//
// Besides "no crash, no sanitizer report", it checks what Decode promises: a decoded
// message has a valid kind and this protocol version, one payload per announced frame (or
// packed piece) with exactly its bytes at a float-aligned address, one payload of `length` floats
// for PUSH, ASSIGN and PULL_REPLY, `length` keys first for PUSH_SPARSE (keys, rows) and PULL_SPARSE
// (keys), and none for other kinds, an encoded payload (a compressed table's, wire/encoding.h)
// turned into exactly the float32 values it encodes and the encoding cleared, and it survives
// EncodeHeader and a second Decode unchanged; a refused one is InvalidArgument, with the header
// handed back exactly when frame 0 parses. DecodeReceived gives one outcome (delivered or rejected)
// per message it says it carried, the same as Decode's for anything but a batch, and never delivers
// a batch.
//
// `decode_fuzzer --write-seeds=DIR` writes the seed corpus (tests/fuzz/corpus/decode).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kairos/job.h"
#include "tests/fuzz/fuzz_input.h"
#include "wire/convert.h"
#include "wire/encoding.h"
#include "wire/message.h"
#include "wire/one_frame.h"

namespace kairos::fuzz {
namespace {

using internal::Message;
using internal::RawFrame;

constexpr int kMaxFrames = 16;

// Frame bytes at `shift` bytes past a 64-byte aligned address, kept alive by the RawFrame.
RawFrame Place(const std::string& bytes, int shift) {
  auto storage = std::shared_ptr<char[]>(new (std::align_val_t{64}) char[bytes.size() + 64],
                                         [](char* p) { operator delete[](p, std::align_val_t{64}); });
  char* at = storage.get() + shift;
  if (!bytes.empty()) std::memcpy(at, bytes.data(), bytes.size());
  return RawFrame{storage, at, bytes.size()};
}

// The frame whose values `sent` (frame 0) says are encoded (wire/encoding.h), or 0.
std::size_t EncodedFrame(const wire::Header& sent) {
  if (sent.encoding() == 0) return 0;
  return sent.kind() == wire::PUSH_SPARSE ? 2 : 1;
}

std::string Bytes(const Buffer& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size_bytes());
}

// The payloads `sent` (frame 0's header) announces: the frames after it, or the pieces of
// its packed bytes.
std::vector<std::string> PayloadBytes(const std::vector<std::string>& frames,
                                      const wire::Header& sent) {
  if (sent.packed().empty()) return {frames.begin() + 1, frames.end()};
  std::vector<std::string> pieces;
  std::size_t at = 0;
  for (const uint32_t size : sent.packed_sizes()) {
    pieces.push_back(sent.packed().substr(at, size));
    at += size;
  }
  pieces.push_back(sent.packed().substr(at));
  return pieces;
}

void CheckDecoded(const Message& m, const std::vector<std::string>& frames,
                  const wire::Header& sent) {
  const std::vector<std::string> payloads = PayloadBytes(frames, sent);
  const wire::Header& h = m.header;
  Require(h.encoding() == 0, "a decoded message's payloads are float32");
  const std::size_t encoded = EncodedFrame(sent);
  Require(h.protocol_version() == kProtocolVersion, "decoded with another protocol version");
  Require(h.kind() != wire::KIND_UNSPECIFIED && wire::Kind_IsValid(h.kind()),
          "decoded with an invalid kind");
  Require(m.payloads.size() == payloads.size(), "a payload per frame (or packed piece)");
  Require(h.payload_frames() == m.payloads.size(), "payload_frames equals the payloads");
  Require(h.packed().empty() && h.packed_sizes_size() == 0, "packed payloads are unpacked");
  for (std::size_t i = 0; i < m.payloads.size(); ++i) {
    const Buffer& p = m.payloads[i];
    const std::string& f = payloads[i];
    Require(reinterpret_cast<std::uintptr_t>(p.data()) % alignof(float) == 0,
            "a payload is float-aligned");
    if (i + 1 == encoded) {
      absl::StatusOr<Buffer> values = internal::DecodeValues(
          static_cast<Compression>(sent.encoding()), f.data(), f.size());
      Require(values.ok() && Bytes(*values) == Bytes(p),
              "an encoded payload becomes the values it encodes");
      continue;
    }
    Require(p.size_bytes() == f.size(), "a payload has its frame's size");
    Require(f.empty() || std::memcmp(p.data(), f.data(), f.size()) == 0,
            "a payload has its frame's bytes");
  }
  switch (h.kind()) {
    case wire::PUSH:
    case wire::ASSIGN:
    case wire::PULL_REPLY:
      Require(m.payloads.size() == 1 && m.payloads[0].size() == h.length(),
              "PUSH, ASSIGN and PULL_REPLY carry one payload of `length` floats");
      break;
    case wire::PUSH_SPARSE:
    case wire::PULL_SPARSE:
      Require(m.payloads.size() == (h.kind() == wire::PUSH_SPARSE ? 2u : 1u),
              "PUSH_SPARSE carries keys and rows, PULL_SPARSE keys");
      Require(h.length() >= 1 && h.length() <= kMaxSparseKeys,
              "a sparse request carries 1 to kMaxSparseKeys keys");
      Require(m.payloads[0].size_bytes() == h.length() * sizeof(uint64_t),
              "the key frame holds `length` keys");
      break;
    default:
      Require(m.payloads.empty(), "other kinds carry no payload");
  }
  // What a node sends after decoding it (a relay, a reply built from it) decodes again to
  // the same header.
  Message copy = m;
  const std::string header = internal::EncodeHeader(copy);
  std::vector<RawFrame> again{Place(header, 0)};
  for (const Buffer& p : m.payloads) again.push_back(Place(Bytes(p), 0));
  absl::StatusOr<Message> second = internal::Decode(std::move(again));
  Require(second.ok(), "a decoded message decodes again after EncodeHeader");
  Require(second->header.SerializeAsString() == h.SerializeAsString(),
          "the header survives EncodeHeader and Decode");
  (void)internal::Describe(h);
  (void)internal::ReplyHeader(h, wire::ERROR, 1);
  (void)internal::StatusOf(h);
}

// DecodeReceived of the same frames: for anything but a batch, Decode's outcome; for a
// batch, one outcome per message carried, none of them a batch.
void CheckReceived(const std::vector<RawFrame>& raw, const absl::StatusOr<Message>& one,
                   bool batch) {
  std::size_t delivered = 0;
  std::size_t rejected = 0;
  std::string delivered_header;
  const std::size_t carried = internal::DecodeReceived(
      raw,
      [&](Message m) {
        ++delivered;
        Require(m.header.kind() != wire::BATCH, "a batch is never delivered");
        Require(m.header.protocol_version() == kProtocolVersion, "delivered: this version");
        Require(m.header.payload_frames() == m.payloads.size(), "delivered: its payloads");
        delivered_header = m.header.SerializeAsString();
      },
      [&](const absl::Status& why, const wire::Header*) {
        ++rejected;
        Require(why.code() == absl::StatusCode::kInvalidArgument, "rejections are InvalidArgument");
      });
  Require(delivered + rejected == carried, "one outcome per message carried");
  if (batch) {
    Require(!one.ok(), "Decode refuses a batch");
    return;
  }
  Require(carried == 1, "one message unless a batch");
  Require(delivered == (one.ok() ? 1u : 0u), "DecodeReceived agrees with Decode");
  if (one.ok()) {
    Require(delivered_header == one->header.SerializeAsString(), "the same message delivered");
  }
}

void Run(const uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  const uint8_t flags = in.U8();
  const int shift = flags & 3;
  const bool want_header = (flags & 4) != 0;
  std::vector<std::string> frames;
  while (!in.empty() && frames.size() < kMaxFrames) frames.push_back(in.Frame());

  std::vector<RawFrame> raw;
  for (const std::string& f : frames) raw.push_back(Place(f, shift));
  std::optional<wire::Header> parsed;
  absl::StatusOr<Message> m = internal::Decode(raw, want_header ? &parsed : nullptr);

  wire::Header reference;
  const bool parses = !frames.empty() &&
                      reference.ParseFromArray(frames[0].data(), static_cast<int>(frames[0].size()));
  CheckReceived(raw, m, parses && reference.kind() == wire::BATCH);
  if (m.ok()) {
    Require(parses, "decoded a header that does not parse");
    CheckDecoded(*m, frames, reference);
    return;
  }
  Require(m.status().code() == absl::StatusCode::kInvalidArgument, "refusals are InvalidArgument");
  Require(!m.status().message().empty(), "a refusal says why");
  if (want_header) {
    Require(parsed.has_value() == parses, "the header is handed back exactly when it parses");
    if (parsed.has_value()) {
      Require(parsed->SerializeAsString() == reference.SerializeAsString(),
              "the handed-back header is frame 0");
      (void)internal::Describe(*parsed);
    }
  }
}

// ------------------------------------------------------------------------ seed corpus
std::string Input(uint8_t flags, const Message& m, const std::vector<std::string>& payloads) {
  Message copy = m;
  ByteWriter w;
  w.U8(flags).Frame(copy.header.SerializeAsString());
  for (const std::string& p : payloads) w.Frame(p);
  return w.data();
}

std::string Floats(std::vector<float> v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

std::string Encoded(Compression c, const std::vector<float>& v) {
  return Bytes(internal::Encode(c, v));
}

Message Header(wire::Kind kind, uint32_t payload_frames, uint64_t length = 0) {
  Message m;
  m.header.set_protocol_version(kProtocolVersion);
  m.header.set_kind(kind);
  m.header.set_request_id(7);
  m.header.set_sender(3);
  m.header.set_table(0);
  m.header.set_offset(4);
  m.header.set_length(length);
  m.header.set_clock(2);
  m.header.set_payload_frames(payload_frames);
  return m;
}

Seeds MakeSeeds() {
  Seeds s;
  s.push_back({"push", Input(0, Header(wire::PUSH, 1, 3), {Floats({1, 2, 3})})});
  s.push_back({"push-unaligned", Input(5, Header(wire::PUSH, 1, 2), {Floats({1, 2})})});
  s.push_back({"pull", Input(0, Header(wire::PULL, 0, 8), {})});
  s.push_back({"pull-reply", Input(4, Header(wire::PULL_REPLY, 1, 2), {Floats({5, 6})})});
  s.push_back({"clock", Input(0, Header(wire::CLOCK, 0), {})});
  s.push_back({"assign", Input(0, Header(wire::ASSIGN, 1, 2), {Floats({7, 8})})});
  {
    const uint64_t keys[2] = {11, 1u << 30};
    const std::string key_frame(reinterpret_cast<const char*>(keys), sizeof(keys));
    s.push_back({"push-sparse",
                 Input(0, Header(wire::PUSH_SPARSE, 2, 2), {key_frame, Floats({1, 2, 3, 4})})});
    s.push_back({"pull-sparse", Input(5, Header(wire::PULL_SPARSE, 1, 2), {key_frame})});
    s.push_back({"sparse-no-keys", Input(4, Header(wire::PULL_SPARSE, 1, 0), {""})});
    Message rows = Header(wire::PUSH_SPARSE, 2, 2);
    rows.header.set_encoding(static_cast<uint32_t>(Compression::kBf16));
    s.push_back({"push-sparse-bf16", Input(0, rows, {key_frame, Encoded(Compression::kBf16,
                                                                        {1, -2, 3, 0.5f})})});
  }
  {
    Message push = Header(wire::PUSH, 1, 3);
    push.header.set_encoding(static_cast<uint32_t>(Compression::kFp16));
    s.push_back({"push-fp16", Input(1, push, {Encoded(Compression::kFp16, {1, 2, 3})})});
    Message reply = Header(wire::PULL_REPLY, 1, 300);
    reply.header.set_encoding(static_cast<uint32_t>(Compression::kInt8));
    s.push_back({"pull-reply-int8",
                 Input(0, reply, {Encoded(Compression::kInt8, std::vector<float>(300, 0.25f))})});
    Message wrong = Header(wire::PUSH, 1, 4);
    wrong.header.set_encoding(static_cast<uint32_t>(Compression::kFp16));
    s.push_back({"push-fp16-short", Input(0, wrong, {Encoded(Compression::kFp16, {1, 2, 3})})});
  }
  {
    Message m = Header(wire::JOIN, 0);
    m.header.mutable_join()->set_role(wire::WORKER);
    m.header.mutable_join()->set_requested_rank(-1);
    wire::Table* t = m.header.mutable_join()->mutable_job()->add_tables();
    t->set_name("w");
    t->set_size(100);
    t->mutable_updater()->set_name("sgd");
    m.header.mutable_join()->mutable_job()->set_policy("bsp");
    s.push_back({"join", Input(0, m, {})});
  }
  {
    Message m = Header(wire::START, 0);
    m.header.mutable_start()->set_num_servers(1);
    m.header.mutable_start()->set_num_workers(2);
    wire::Node* n = m.header.mutable_start()->add_nodes();
    n->set_node_id(2);
    n->set_role(wire::WORKER);
    s.push_back({"start", Input(0, m, {})});
  }
  {
    Message m = Header(wire::MEMBERSHIP, 0);
    m.header.mutable_membership()->set_rank(1);
    m.header.mutable_membership()->set_state(wire::Membership::DEAD);
    s.push_back({"membership", Input(0, m, {})});
  }
  {
    Message m = Header(wire::ERROR, 0);
    m.header.mutable_status()->set_code(3);
    m.header.mutable_status()->set_message("bad");
    s.push_back({"error", Input(0, m, {})});
  }
  {
    Message m = Header(wire::HEARTBEAT, 0);
    m.header.add_stragglers(1);
    m.header.add_clocks(4);
    s.push_back({"heartbeat", Input(0, m, {})});
  }
  {
    // One-frame messages: a packed push, a packed sparse push, and a batch of them.
    Message push = Header(wire::PUSH, 0, 3);
    push.payloads.push_back(Buffer::CopyOf(std::vector<float>{1, 2, 3}));
    Message sparse = Header(wire::PUSH_SPARSE, 0, 1);
    const uint64_t key = 42;
    Buffer k = Buffer::Allocate(2);
    std::memcpy(k.data(), &key, sizeof(key));
    sparse.payloads.push_back(std::move(k));
    sparse.payloads.push_back(Buffer::CopyOf(std::vector<float>{0.5f, 0.25f}));
    for (auto& [name, m] : {std::pair<const char*, Message*>{"packed-push", &push},
                            std::pair<const char*, Message*>{"packed-push-sparse", &sparse}}) {
      Message copy = *m;
      std::string bytes(internal::PrepareOneFrame(copy), '\0');
      internal::EncodeOneFrameTo(copy, bytes.data());
      s.push_back({name, ByteWriter().U8(0).Frame(bytes).data()});
    }
    std::vector<Message> batch = {push, Header(wire::PULL, 0, 8), sparse};
    internal::BatchFrame frame;
    std::string bytes(internal::PrepareBatch(batch, frame), '\0');
    internal::EncodeBatchTo(batch, frame, bytes.data());
    s.push_back({"batch", ByteWriter().U8(1).Frame(bytes).data()});
  }
  // Refused ones: each check of Decode.
  {
    Message m = Header(wire::PULL, 0);
    m.header.set_protocol_version(99);
    s.push_back({"bad-version", Input(4, m, {})});
  }
  s.push_back({"bad-kind", Input(4, Header(static_cast<wire::Kind>(77), 0), {})});
  s.push_back({"bad-frame-count", Input(4, Header(wire::PUSH, 2, 1), {Floats({1})})});
  s.push_back({"bad-length", Input(4, Header(wire::PUSH, 1, 5), {Floats({1, 2})})});
  s.push_back({"odd-payload", Input(4, Header(wire::PUSH, 1, 1), {"abcde"})});
  s.push_back({"payload-on-pull", Input(4, Header(wire::PULL, 1, 1), {Floats({1})})});
  s.push_back({"not-a-header", ByteWriter().U8(4).Frame("\xff\xff\xff not protobuf").data()});
  s.push_back({"no-frames", ByteWriter().U8(0).data()});
  return s;
}

}  // namespace
}  // namespace kairos::fuzz

KAIROS_FUZZ_TARGET(kairos::fuzz::Run, kairos::fuzz::MakeSeeds)
