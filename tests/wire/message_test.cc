// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the wire message checks (Decode): every well-formed kind is accepted, every
// malformed frame set is refused with InvalidArgument naming the problem, and payloads are
// used in place when aligned and copied when not.

#include "wire/message.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/job.h"
#include "wire/encoding.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// `bytes` stored `misalign` bytes into a heap block (operator new aligns it to at least 16)
// that the frame keeps alive.
RawFrame Frame(std::string_view bytes, std::size_t misalign = 0) {
  auto storage = std::make_shared<std::vector<char>>(bytes.size() + 16);
  char* at = storage->data() + misalign;
  if (!bytes.empty()) std::memcpy(at, bytes.data(), bytes.size());
  RawFrame frame;
  frame.owner = std::move(storage);
  frame.data = at;
  frame.size = bytes.size();
  return frame;
}

std::string FloatBytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

wire::Header Header(wire::Kind kind, uint64_t length, uint32_t payload_frames) {
  wire::Header h;
  h.set_protocol_version(kProtocolVersion);
  h.set_kind(kind);
  h.set_request_id(12);
  h.set_sender(3);
  h.set_table(1);
  h.set_offset(10);
  h.set_length(length);
  h.set_clock(5);
  h.set_payload_frames(payload_frames);
  return h;
}

std::vector<RawFrame> Frames(const wire::Header& h, const std::vector<std::string>& payloads) {
  std::vector<RawFrame> frames;
  frames.push_back(Frame(h.SerializeAsString()));
  for (const std::string& p : payloads) frames.push_back(Frame(p));
  return frames;
}

void ExpectInvalid(const absl::StatusOr<Message>& m, std::string_view what) {
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << m.status();
  EXPECT_THAT(m.status().message(), HasSubstr(what));
}

TEST(DecodeTest, AcceptsPushWithItsPayload) {
  absl::StatusOr<Message> m =
      Decode(Frames(Header(wire::PUSH, 3, 1), {FloatBytes({1.0f, -2.5f, 3.0f})}));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->header.kind(), wire::PUSH);
  EXPECT_EQ(m->header.request_id(), 12u);
  EXPECT_EQ(m->header.sender(), 3u);
  EXPECT_EQ(m->header.table(), 1u);
  EXPECT_EQ(m->header.offset(), 10u);
  EXPECT_EQ(m->header.length(), 3u);
  EXPECT_EQ(m->header.clock(), 5);
  ASSERT_EQ(m->payloads.size(), 1u);
  EXPECT_THAT(m->payloads[0].span(), ElementsAre(1.0f, -2.5f, 3.0f));
}

std::string EncodedBytes(Compression c, const std::vector<float>& values) {
  const Buffer b = Encode(c, values);
  return std::string(reinterpret_cast<const char*>(b.data()), b.size_bytes());
}

// A compressed table's values arrive encoded and leave Decode as float32, the header's
// encoding cleared; a count that is not the header's length, an encoding on a kind that
// carries no values and an unknown encoding are refused.
TEST(DecodeTest, DecodesACompressedPushAndPullReply) {
  for (wire::Kind kind : {wire::PUSH, wire::PULL_REPLY}) {
    wire::Header h = Header(kind, 3, 1);
    h.set_encoding(static_cast<uint32_t>(Compression::kBf16));
    absl::StatusOr<Message> m =
        Decode(Frames(h, {EncodedBytes(Compression::kBf16, {1.0f, -2.5f, 3.0f})}));
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->header.encoding(), 0u);
    ASSERT_EQ(m->payloads.size(), 1u);
    EXPECT_THAT(m->payloads[0].span(), ElementsAre(1.0f, -2.5f, 3.0f));
  }
  wire::Header sparse = Header(wire::PUSH_SPARSE, 2, 2);
  sparse.set_encoding(static_cast<uint32_t>(Compression::kInt8));
  const uint64_t keys[] = {5, 9};
  absl::StatusOr<Message> rows =
      Decode(Frames(sparse, {std::string(reinterpret_cast<const char*>(keys), sizeof(keys)),
                             EncodedBytes(Compression::kInt8, {127.0f, -1.0f, 0.0f, 64.0f})}));
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->payloads.size(), 2u);
  EXPECT_THAT(rows->payloads[1].span(), ElementsAre(127.0f, -1.0f, 0.0f, 64.0f));
}

TEST(DecodeTest, RefusesEncodedValuesThatDoNotFit) {
  wire::Header h = Header(wire::PUSH, 4, 1);
  h.set_encoding(static_cast<uint32_t>(Compression::kFp16));
  std::optional<wire::Header> parsed;
  ExpectInvalid(Decode(Frames(h, {EncodedBytes(Compression::kFp16, {1.0f, 2.0f, 3.0f})}), &parsed),
                "header says 4 values but the encoded payload holds 3");
  EXPECT_TRUE(parsed.has_value());  // the sender can be answered
  ExpectInvalid(Decode(Frames(h, {FloatBytes({1.0f, 2.0f, 3.0f, 4.0f})})), "fp16 payload");
  wire::Header clock = Header(wire::CLOCK, 0, 0);
  clock.set_encoding(1);
  ExpectInvalid(Decode(Frames(clock, {})), "carries no encoded values");
  wire::Header assign = Header(wire::ASSIGN, 1, 1);
  assign.set_encoding(1);
  ExpectInvalid(Decode(Frames(assign, {FloatBytes({1.0f})})), "carries no encoded values");
  h.set_encoding(9);
  ExpectInvalid(Decode(Frames(h, {FloatBytes({1.0f, 2.0f, 3.0f, 4.0f})})), "unknown encoding 9");
}

TEST(DecodeTest, AcceptsPullWithoutPayload) {
  absl::StatusOr<Message> m = Decode(Frames(Header(wire::PULL, 100, 0), {}));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->header.kind(), wire::PULL);
  EXPECT_EQ(m->header.length(), 100u);
  EXPECT_TRUE(m->payloads.empty());
}

TEST(DecodeTest, AcceptsPullReplyWithItsPayload) {
  absl::StatusOr<Message> m =
      Decode(Frames(Header(wire::PULL_REPLY, 2, 1), {FloatBytes({7.0f, 8.0f})}));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->header.kind(), wire::PULL_REPLY);
  ASSERT_EQ(m->payloads.size(), 1u);
  EXPECT_THAT(m->payloads[0].span(), ElementsAre(7.0f, 8.0f));
}

TEST(DecodeTest, AssignCarriesExactlyOnePayloadOfItsLength) {
  absl::StatusOr<Message> m =
      Decode(Frames(Header(wire::ASSIGN, 2, 1), {FloatBytes({7.0f, 8.0f})}));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->header.kind(), wire::ASSIGN);
  EXPECT_THAT(m->payloads[0].span(), ElementsAre(7.0f, 8.0f));
  EXPECT_EQ(Describe(m->header), "ASSIGN #12 from node 3 (table 1 [10, 12))");
  ExpectInvalid(Decode(Frames(Header(wire::ASSIGN, 2, 0), {})), "expects 1 payload frame, got 0");
  ExpectInvalid(Decode(Frames(Header(wire::ASSIGN, 3, 1), {FloatBytes({1, 2})})),
                "header says 3 values");
  ExpectInvalid(Decode(Frames(Header(wire::ASSIGN, uint64_t{1} << 62, 1), {""})),
                "header says");
}

TEST(DecodeTest, SetLearningRateCarriesNoPayload) {
  wire::Header h = Header(wire::SET_LEARNING_RATE, 0, 0);
  h.set_learning_rate(0.25f);
  absl::StatusOr<Message> m = Decode(Frames(h, {}));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->header.learning_rate(), 0.25f);
  EXPECT_EQ(Describe(m->header), "SET_LEARNING_RATE #12 from node 3 (table 1)");
  ExpectInvalid(Decode(Frames(Header(wire::SET_LEARNING_RATE, 0, 1), {FloatBytes({1})})),
                "expects no payload, got 1 frames");
}

TEST(DecodeTest, AcceptsMessagesWithoutPayloadOfOtherKinds) {
  for (wire::Kind kind : {wire::JOIN, wire::HEARTBEAT, wire::CLOCK, wire::PUSH_REPLY,
                          wire::ERROR, wire::SHUTDOWN, wire::ASSIGN_REPLY,
                          wire::SET_LEARNING_RATE_REPLY}) {
    absl::StatusOr<Message> m = Decode(Frames(Header(kind, 0, 0), {}));
    EXPECT_TRUE(m.ok()) << wire::Kind_Name(kind) << ": " << m.status();
  }
}

// length * 4 wraps to 0 for 2^62: a PUSH announcing 2^62 values with an empty payload
// must not pass as a match.
TEST(DecodeTest, RejectsLengthsWhoseByteCountWraps) {
  for (uint64_t length : {uint64_t{1} << 62, (uint64_t{1} << 62) + 1, ~uint64_t{0}}) {
    ExpectInvalid(Decode(Frames(Header(wire::PUSH, length, 1), {""})), "header says");
    ExpectInvalid(Decode(Frames(Header(wire::PULL_REPLY, length, 1), {FloatBytes({1.0f})})),
                  "header says");
  }
}

TEST(DecodeTest, RejectsEmptyMessage) {
  std::optional<wire::Header> parsed;
  ExpectInvalid(Decode({}, &parsed), "empty message");
  EXPECT_FALSE(parsed.has_value()) << "nothing parsed, so nothing is reported";
}

TEST(DecodeTest, RejectsGarbageHeaderBytes) {
  // Wire type 7 does not exist; an 11-byte varint is longer than any varint.
  for (std::string garbage : {std::string("\x0f\x01\x02", 3), std::string(11, '\xff')}) {
    std::optional<wire::Header> parsed;
    std::vector<RawFrame> frames;
    frames.push_back(Frame(garbage));
    absl::StatusOr<Message> m = Decode(std::move(frames), &parsed);
    ExpectInvalid(m, "malformed header frame");
    EXPECT_THAT(m.status().message(), HasSubstr("does not parse as kairos.wire.Header"));
    EXPECT_THAT(m.status().message(),
                HasSubstr(absl::StrCat("(", garbage.size(), " bytes)")));
    EXPECT_FALSE(parsed.has_value()) << "an unparsed header is not reported";
  }
}

TEST(DecodeTest, RejectsTruncatedHeader) {
  wire::Header h = Header(wire::PULL, 4, 0);
  h.mutable_status()->set_message("a status message long enough to be cut in half");
  const std::string bytes = h.SerializeAsString();
  for (std::size_t cut : {std::size_t{1}, std::size_t{5}, bytes.size() / 2}) {
    std::vector<RawFrame> frames;
    frames.push_back(Frame(std::string_view(bytes).substr(0, bytes.size() - cut)));
    ExpectInvalid(Decode(std::move(frames)), "malformed header frame");
  }
}

TEST(DecodeTest, RejectsWrongProtocolVersion) {
  wire::Header h = Header(wire::PULL, 4, 0);
  h.set_protocol_version(kProtocolVersion + 1);
  std::optional<wire::Header> parsed;
  absl::StatusOr<Message> m = Decode(Frames(h, {}), &parsed);
  ExpectInvalid(m, "protocol version " + std::to_string(kProtocolVersion + 1));
  EXPECT_THAT(m.status().message(),
              HasSubstr("this node speaks " + std::to_string(kProtocolVersion)));
  EXPECT_THAT(m.status().message(), HasSubstr("PULL #12 from node 3"));
  EXPECT_EQ(parsed->request_id(), 12u);
}

TEST(DecodeTest, RejectsMissingProtocolVersion) {
  wire::Header h = Header(wire::PULL, 4, 0);
  h.clear_protocol_version();
  ExpectInvalid(Decode(Frames(h, {})), "protocol version 0");
}

TEST(DecodeTest, RejectsUnknownKind) {
  wire::Header h = Header(wire::PULL, 0, 0);
  h.set_kind(static_cast<wire::Kind>(99));
  std::optional<wire::Header> parsed;
  ExpectInvalid(Decode(Frames(h, {}), &parsed), "no valid kind (99)");
  EXPECT_EQ(static_cast<int>(parsed->kind()), 99);
  EXPECT_EQ(parsed->request_id(), 12u);
}

TEST(DecodeTest, RejectsUnspecifiedKind) {
  wire::Header h = Header(wire::KIND_UNSPECIFIED, 0, 0);
  std::optional<wire::Header> parsed;
  absl::StatusOr<Message> m = Decode(Frames(h, {}), &parsed);
  ExpectInvalid(m, "no valid kind (0)");
  EXPECT_THAT(m.status().message(), HasSubstr("message #12 from node 3"));
  EXPECT_EQ(parsed->request_id(), 12u);
}

TEST(DecodeTest, RejectsPayloadFrameCountMismatch) {
  std::optional<wire::Header> parsed;
  absl::StatusOr<Message> m =
      Decode(Frames(Header(wire::PUSH, 1, 2), {FloatBytes({1.0f})}), &parsed);
  ExpectInvalid(m, "header announces 2 payload frames but 1 arrived");
  EXPECT_EQ(parsed->kind(), wire::PUSH);
  EXPECT_EQ(parsed->request_id(), 12u);
}

TEST(DecodeTest, RejectsPayloadThatIsNotWholeFloats) {
  std::optional<wire::Header> parsed;
  absl::StatusOr<Message> m =
      Decode(Frames(Header(wire::PUSH, 1, 1), {std::string(6, '\0')}), &parsed);
  ExpectInvalid(m, "payload frame 0 has 6 bytes, not a whole number of float32");
  EXPECT_EQ(parsed->request_id(), 12u);
}

TEST(DecodeTest, RejectsPushWhoseLengthDiffersFromPayload) {
  absl::StatusOr<Message> m =
      Decode(Frames(Header(wire::PUSH, 5, 1), {FloatBytes({1, 2, 3, 4})}));
  ExpectInvalid(m, "header says 5 values but the payload has 16 bytes (4 values)");
  EXPECT_THAT(m.status().message(), HasSubstr("PUSH #12 from node 3 (table 1 [10, 15))"));
}

TEST(DecodeTest, RejectsPullReplyWhoseLengthDiffersFromPayload) {
  ExpectInvalid(Decode(Frames(Header(wire::PULL_REPLY, 1, 1), {FloatBytes({1, 2})})),
                "header says 1 values but the payload has 8 bytes (2 values)");
}

TEST(DecodeTest, RejectsPushWithoutPayload) {
  ExpectInvalid(Decode(Frames(Header(wire::PUSH, 2, 0), {})), "expects 1 payload frame, got 0");
}

TEST(DecodeTest, RejectsPushWithTwoPayloads) {
  ExpectInvalid(Decode(Frames(Header(wire::PUSH, 1, 2), {FloatBytes({1}), FloatBytes({2})})),
                "expects 1 payload frame, got 2");
}

TEST(DecodeTest, RejectsPullCarryingPayload) {
  std::optional<wire::Header> parsed;
  ExpectInvalid(Decode(Frames(Header(wire::PULL, 1, 1), {FloatBytes({1})}), &parsed),
                "expects no payload, got 1 frames");
  EXPECT_EQ(parsed->kind(), wire::PULL);
}

TEST(DecodeTest, RejectsClockCarryingPayload) {
  ExpectInvalid(Decode(Frames(Header(wire::CLOCK, 0, 1), {FloatBytes({1})})),
                "expects no payload, got 1 frames");
}

TEST(DecodeTest, UsesAlignedPayloadInPlaceAndKeepsItsFrameAlive) {
  std::vector<RawFrame> frames = Frames(Header(wire::PUSH, 2, 1), {FloatBytes({4.0f, 5.0f})});
  const void* payload_at = frames[1].data;
  std::weak_ptr<void> payload_owner = frames[1].owner;
  absl::StatusOr<Message> m = Decode(std::move(frames));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(static_cast<const void*>(m->payloads[0].data()), payload_at);
  EXPECT_FALSE(payload_owner.expired()) << "the payload must keep its frame alive";
  EXPECT_THAT(m->payloads[0].span(), ElementsAre(4.0f, 5.0f));
  m = absl::InternalError("dropped");
  EXPECT_TRUE(payload_owner.expired());
}

TEST(DecodeTest, CopiesPayloadAtOddAddressIntoAlignedBuffer) {
  std::vector<RawFrame> frames;
  frames.push_back(Frame(Header(wire::PUSH, 3, 1).SerializeAsString()));
  frames.push_back(Frame(FloatBytes({1.25f, 2.5f, -3.75f}), /*misalign=*/1));
  const void* payload_at = frames[1].data;
  ASSERT_NE(reinterpret_cast<std::uintptr_t>(payload_at) % alignof(float), 0u);
  std::weak_ptr<void> payload_owner = frames[1].owner;
  absl::StatusOr<Message> m = Decode(std::move(frames));
  ASSERT_TRUE(m.ok()) << m.status();
  const float* data = m->payloads[0].data();
  EXPECT_NE(static_cast<const void*>(data), payload_at);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(data) % kBufferAlignment, 0u);
  EXPECT_THAT(m->payloads[0].span(), ElementsAre(1.25f, 2.5f, -3.75f));
  EXPECT_TRUE(payload_owner.expired()) << "a copied payload does not hold the frame";
}

TEST(DecodeTest, AcceptsEmptyPushPayloadForZeroLength) {
  absl::StatusOr<Message> m = Decode(Frames(Header(wire::PUSH, 0, 1), {std::string()}));
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->payloads.size(), 1u);
  EXPECT_TRUE(m->payloads[0].empty());
}

TEST(EncodeHeaderTest, SetsProtocolVersionAndPayloadFrames) {
  Message m;
  m.header.set_kind(wire::PUSH);
  m.header.set_length(2);
  m.header.set_protocol_version(999);
  m.payloads.push_back(Buffer::CopyOf(std::vector<float>{1, 2}));
  const std::string bytes = EncodeHeader(m);
  wire::Header h;
  ASSERT_TRUE(h.ParseFromString(bytes));
  EXPECT_EQ(h.protocol_version(), kProtocolVersion);
  EXPECT_EQ(h.payload_frames(), 1u);
  EXPECT_EQ(m.header.payload_frames(), 1u);
  // What EncodeHeader writes, Decode accepts.
  std::vector<RawFrame> frames;
  frames.push_back(Frame(bytes));
  frames.push_back(Frame(FloatBytes({1, 2})));
  EXPECT_TRUE(Decode(std::move(frames)).ok());
}

TEST(EncodeHeaderTest, EncodeHeaderToWritesTheSameBytesInPlace) {
  Message m;
  m.header.set_kind(wire::PULL_REPLY);
  m.header.set_request_id(123456789);
  m.header.set_length(2);
  m.header.add_clocks(7);
  m.payloads.push_back(Buffer::CopyOf(std::vector<float>{1, 2}));
  Message copy = m;
  const std::string expected = EncodeHeader(copy);
  const std::size_t size = PrepareHeader(m);
  ASSERT_EQ(size, expected.size());
  std::string written(size + 1, '#');  // one byte more: nothing is written past `size`
  EncodeHeaderTo(m, written.data());
  EXPECT_EQ(written.substr(0, size), expected);
  EXPECT_EQ(written[size], '#');
  EXPECT_EQ(m.header.protocol_version(), kProtocolVersion);
  EXPECT_EQ(m.header.payload_frames(), 1u);
}

TEST(DescribeTest, NamesKindRequestSenderAndRange) {
  wire::Header h = Header(wire::PUSH, 90, 1);
  h.set_table(0);
  EXPECT_EQ(Describe(h), "PUSH #12 from node 3 (table 0 [10, 100))");
  EXPECT_EQ(Describe(Header(wire::HEARTBEAT, 0, 0)), "HEARTBEAT #12 from node 3");
}

TEST(ReplyHeaderTest, CopiesRequestCoordinates) {
  wire::Header request = Header(wire::PULL, 40, 0);
  request.set_timeout_ms(500);
  wire::Header reply = ReplyHeader(request, wire::PULL_REPLY, 9);
  EXPECT_EQ(reply.kind(), wire::PULL_REPLY);
  EXPECT_EQ(reply.request_id(), 12u);
  EXPECT_EQ(reply.sender(), 9u);
  EXPECT_EQ(reply.table(), 1u);
  EXPECT_EQ(reply.offset(), 10u);
  EXPECT_EQ(reply.length(), 40u);
  EXPECT_EQ(reply.clock(), 5);
  EXPECT_EQ(reply.timeout_ms(), 0u);
  EXPECT_FALSE(reply.has_status());
}

std::string KeyBytes(const std::vector<uint64_t>& keys) {
  return std::string(reinterpret_cast<const char*>(keys.data()), keys.size() * sizeof(uint64_t));
}

TEST(DecodeSparseTest, WellFormedSparseRequestsAreAccepted) {
  absl::StatusOr<Message> push =
      Decode(Frames(Header(wire::PUSH_SPARSE, 2, 2), {KeyBytes({7, ~uint64_t{0}}),
                                                      FloatBytes({1, 2, 3, 4, 5, 6})}));
  ASSERT_TRUE(push.ok()) << push.status();
  ASSERT_EQ(push->payloads.size(), 2u);
  EXPECT_EQ(push->payloads[0].size(), 4u);  // two keys as float storage
  EXPECT_EQ(push->payloads[1].size(), 6u);
  absl::StatusOr<Message> pull = Decode(Frames(Header(wire::PULL_SPARSE, 1, 1), {KeyBytes({7})}));
  ASSERT_TRUE(pull.ok()) << pull.status();
}

TEST(DecodeSparseTest, MalformedSparseRequestsAreRefused) {
  ExpectInvalid(Decode(Frames(Header(wire::PUSH_SPARSE, 2, 1), {KeyBytes({1, 2})})),
                "expects 2 payload frames, got 1");
  ExpectInvalid(Decode(Frames(Header(wire::PULL_SPARSE, 3, 1), {KeyBytes({1, 2})})),
                "header says 3 keys but the key frame has 16 bytes");
  ExpectInvalid(Decode(Frames(Header(wire::PULL_SPARSE, 1, 1), {std::string(12, 'x')})),
                "header says 1 keys but the key frame has 12 bytes");
  ExpectInvalid(Decode(Frames(Header(wire::PULL_SPARSE, 0, 1), {std::string()})), "0 keys");
  // A count past the limit is refused before its size is multiplied or anything allocated.
  ExpectInvalid(Decode(Frames(Header(wire::PULL_SPARSE, kMaxSparseKeys + 1, 1), {KeyBytes({1})})),
                "kMaxSparseKeys");
  ExpectInvalid(Decode(Frames(Header(wire::PULL_SPARSE, ~uint64_t{0}, 1), {KeyBytes({1})})),
                "kMaxSparseKeys");
  ExpectInvalid(
      Decode(Frames(Header(wire::PUSH_SPARSE, 1, 2), {KeyBytes({1}), std::string(6, 'x')})),
      "not a whole number of float32");
}

}  // namespace
}  // namespace kairos::internal
