// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of one-frame messages (wire/message.h): a small message's payloads packed into its
// header frame, and batches of such messages in one frame. Each encoding decodes to the
// message that was encoded (exact values); each malformed variant is refused with
// InvalidArgument naming the problem, next to the well-formed control it was derived from.

#include "wire/one_frame.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/job.h"
#include "wire/encoding.h"
#include "wire/message.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Message Push(uint64_t request_id, const std::vector<float>& values) {
  Message m;
  m.header.set_kind(wire::PUSH);
  m.header.set_request_id(request_id);
  m.header.set_table(1);
  m.header.set_length(values.size());
  m.payloads.push_back(Buffer::CopyOf(values));
  return m;
}

Message Pull(uint64_t request_id, uint64_t length) {
  Message m;
  m.header.set_kind(wire::PULL);
  m.header.set_request_id(request_id);
  m.header.set_length(length);
  return m;
}

Message SparsePush(uint64_t request_id, const std::vector<uint64_t>& keys,
                   const std::vector<float>& rows) {
  Message m;
  m.header.set_kind(wire::PUSH_SPARSE);
  m.header.set_request_id(request_id);
  m.header.set_length(keys.size());
  Buffer k = Buffer::Allocate(keys.size() * 2);
  std::memcpy(k.data(), keys.data(), keys.size() * sizeof(uint64_t));
  m.payloads.push_back(std::move(k));
  m.payloads.push_back(Buffer::CopyOf(rows));
  return m;
}

// `bytes` as a received frame.
RawFrame FrameOf(std::string bytes) {
  auto owner = std::make_shared<std::string>(std::move(bytes));
  return RawFrame{owner, owner->data(), owner->size()};
}

// `m` encoded as one frame.
RawFrame OneFrameOf(Message m) {
  EXPECT_TRUE(OneFrame(m));
  std::string bytes(PrepareOneFrame(m), '\0');
  EncodeOneFrameTo(m, bytes.data());
  return FrameOf(std::move(bytes));
}

// `messages` encoded as a batch.
RawFrame BatchOf(std::vector<Message> messages) {
  BatchFrame batch;
  std::string bytes(PrepareBatch(messages, batch), '\0');
  EncodeBatchTo(messages, batch, bytes.data());
  return FrameOf(std::move(bytes));
}

// What DecodeReceived gave: the messages delivered, the errors rejected (with whether each
// came with its header), and its count.
struct Decoded {
  std::vector<Message> delivered;
  std::vector<absl::Status> rejected;
  std::vector<bool> with_header;
  std::size_t carried = 0;
};

Decoded DecodeAll(std::vector<RawFrame> frames) {
  Decoded d;
  d.carried = DecodeReceived(
      std::move(frames), [&](Message m) { d.delivered.push_back(std::move(m)); },
      [&](const absl::Status& why, const wire::Header* header) {
        d.rejected.push_back(why);
        d.with_header.push_back(header != nullptr);
      });
  return d;
}

TEST(PackedTest, OnlyMessagesWithSomeButFewPayloadBytesArePacked) {
  EXPECT_FALSE(Packable(Pull(1, 4)));
  EXPECT_TRUE(OneFrame(Pull(1, 4)));  // a header alone is one frame already
  EXPECT_TRUE(Packable(Push(1, {1.0f})));
  EXPECT_TRUE(Packable(Push(1, std::vector<float>(kMaxPackedBytes / 4 - 1))));
  EXPECT_FALSE(Packable(Push(1, std::vector<float>(kMaxPackedBytes / 4))));
  EXPECT_FALSE(OneFrame(Push(1, std::vector<float>(kMaxPackedBytes / 4))));
  EXPECT_FALSE(Packable(Push(1, {})));  // an empty payload travels as a frame of its own
}

TEST(PackedTest, APackedPushDecodesToItsHeaderAndPayload) {
  absl::StatusOr<Message> m = Decode({OneFrameOf(Push(7, {1.5f, -2.0f, 3.25f}))});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->header.kind(), wire::PUSH);
  EXPECT_EQ(m->header.request_id(), 7u);
  EXPECT_EQ(m->header.payload_frames(), 1u);
  EXPECT_TRUE(m->header.packed().empty());
  EXPECT_EQ(m->header.packed_sizes_size(), 0);
  ASSERT_EQ(m->payloads.size(), 1u);
  EXPECT_THAT(m->payloads[0].span(), ElementsAre(1.5f, -2.0f, 3.25f));
}

TEST(PackedTest, APackedSparsePushSplitsItsKeysFromItsRows) {
  absl::StatusOr<Message> m =
      Decode({OneFrameOf(SparsePush(3, {5, ~uint64_t{0}}, {1, 2, 3, 4, 5, 6}))});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->payloads.size(), 2u);
  uint64_t keys[2];
  ASSERT_EQ(m->payloads[0].size_bytes(), sizeof(keys));
  std::memcpy(keys, m->payloads[0].data(), sizeof(keys));
  EXPECT_THAT(keys, ElementsAre(5u, ~uint64_t{0}));
  EXPECT_THAT(m->payloads[1].span(), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(PackedTest, AnEncodedPayloadIsDecodedAfterUnpacking) {
  Message push = Push(4, {});
  push.payloads[0] = Encode(Compression::kBf16, std::vector<float>{1.0f, -2.5f, 3.0f});
  push.header.set_length(3);
  push.header.set_encoding(static_cast<uint32_t>(Compression::kBf16));
  absl::StatusOr<Message> m = Decode({OneFrameOf(std::move(push))});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->header.encoding(), 0u);
  EXPECT_THAT(m->payloads[0].span(), ElementsAre(1.0f, -2.5f, 3.0f));
}

TEST(PackedTest, MalformedPackingIsRefused) {
  Message control = Push(1, {1.0f, 2.0f});
  PreparePacked(control);
  ASSERT_TRUE(Decode({OneFrameOf(Push(1, {1.0f, 2.0f}))}).ok());

  // Packed payloads beside a payload frame.
  wire::Header beside = control.header;
  beside.set_packed(std::string(8, '\0'));
  beside.set_payload_frames(1);
  absl::StatusOr<Message> m =
      Decode({FrameOf(beside.SerializeAsString()), FrameOf(std::string(8, '\0'))});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("packed payloads travel alone"));

  // Sizes beyond the packed bytes.
  wire::Header beyond = control.header;
  beyond.set_packed(std::string(8, '\0'));
  beyond.add_packed_sizes(12);
  m = Decode({FrameOf(beyond.SerializeAsString())});
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("exceed the 8 packed bytes"));

  // Sizes without bytes.
  wire::Header empty = control.header;
  empty.add_packed_sizes(0);
  m = Decode({FrameOf(empty.SerializeAsString())});
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("packed payloads"));

  // Unpacked payloads still pass the checks of payloads in frames: a PUSH of 2 values
  // whose packed bytes hold 3.
  wire::Header longer = control.header;
  longer.set_packed(std::string(12, '\0'));
  std::optional<wire::Header> handed_back;
  m = Decode({FrameOf(longer.SerializeAsString())}, &handed_back);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("header says 2 values"));
  // The header handed back for an answer is the one that arrived, packed bytes and all.
  ASSERT_TRUE(handed_back.has_value());
  EXPECT_EQ(handed_back->SerializeAsString(), longer.SerializeAsString());
}

TEST(BatchTest, ABatchDeliversEachMessageInOrder) {
  std::vector<Message> messages;
  messages.push_back(Push(1, {1.0f, 2.0f}));
  messages.push_back(Pull(2, 40));
  messages.push_back(SparsePush(3, {9}, {0.5f, 0.25f}));
  const Decoded d = DecodeAll({BatchOf(std::move(messages))});
  EXPECT_EQ(d.carried, 3u);
  EXPECT_TRUE(d.rejected.empty());
  ASSERT_EQ(d.delivered.size(), 3u);
  EXPECT_EQ(d.delivered[0].header.request_id(), 1u);
  EXPECT_THAT(d.delivered[0].payloads[0].span(), ElementsAre(1.0f, 2.0f));
  EXPECT_EQ(d.delivered[1].header.kind(), wire::PULL);
  EXPECT_EQ(d.delivered[1].header.length(), 40u);
  EXPECT_TRUE(d.delivered[1].payloads.empty());
  EXPECT_EQ(d.delivered[2].header.kind(), wire::PUSH_SPARSE);
  EXPECT_THAT(d.delivered[2].payloads[1].span(), ElementsAre(0.5f, 0.25f));
}

TEST(BatchTest, AMessageInFramesIsDeliveredAlone) {
  Message m = Push(5, std::vector<float>(2000, 1.0f));  // too large to pack
  ASSERT_FALSE(OneFrame(m));
  std::string header(PrepareHeader(m), '\0');
  EncodeHeaderTo(m, header.data());
  const Decoded d = DecodeAll({FrameOf(header), FrameOf(std::string(8000, '\0'))});
  EXPECT_EQ(d.carried, 1u);
  ASSERT_EQ(d.delivered.size(), 1u);
  EXPECT_EQ(d.delivered[0].payloads[0].size(), 2000u);
}

TEST(BatchTest, AMalformedMessageInABatchIsRejectedAndTheOthersDelivered) {
  Message bad = Push(2, {1.0f});
  bad.header.set_length(5);  // says 5 values, carries 1
  std::vector<Message> messages;
  messages.push_back(Push(1, {1.0f}));
  messages.push_back(std::move(bad));
  messages.push_back(Push(3, {3.0f}));
  const Decoded d = DecodeAll({BatchOf(std::move(messages))});
  EXPECT_EQ(d.carried, 3u);
  ASSERT_EQ(d.delivered.size(), 2u);
  EXPECT_EQ(d.delivered[0].header.request_id(), 1u);
  EXPECT_EQ(d.delivered[1].header.request_id(), 3u);
  ASSERT_EQ(d.rejected.size(), 1u);
  EXPECT_THAT(d.rejected[0].message(), HasSubstr("header says 5 values"));
  EXPECT_TRUE(d.with_header[0]) << "the sender of a bad request can still be answered";
}

TEST(BatchTest, AMalformedBatchIsRejectedWhole) {
  // The control: two messages decode.
  std::vector<Message> two;
  two.push_back(Pull(1, 1));
  two.push_back(Pull(2, 1));
  ASSERT_EQ(DecodeAll({BatchOf(two)}).delivered.size(), 2u);

  BatchFrame frame;
  PrepareBatch(two, frame);
  std::string entries;
  for (Message& m : two) {
    std::string e(PrepareOneFrame(m), '\0');
    EncodeOneFrameTo(m, e.data());
    entries += e;
  }
  auto reject_whole = [](wire::Header h, std::vector<RawFrame> extra, const char* why) {
    std::vector<RawFrame> frames = {FrameOf(h.SerializeAsString())};
    for (RawFrame& f : extra) frames.push_back(std::move(f));
    const Decoded d = DecodeAll(std::move(frames));
    EXPECT_EQ(d.carried, 1u) << why;
    EXPECT_TRUE(d.delivered.empty()) << why;
    ASSERT_EQ(d.rejected.size(), 1u) << why;
    EXPECT_EQ(d.rejected[0].code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(d.rejected[0].message(), HasSubstr(why));
  };
  wire::Header good = frame.header;
  good.set_packed(entries);
  ASSERT_EQ(DecodeAll({FrameOf(good.SerializeAsString())}).delivered.size(), 2u);

  wire::Header one = good;
  one.clear_packed_sizes();  // one message: not a batch
  reject_whole(one, {}, "a batch carries 2 to");
  wire::Header many = good;
  for (std::size_t i = 0; i < kMaxBatchMessages; ++i) many.add_packed_sizes(0);
  reject_whole(many, {}, "a batch carries 2 to");
  wire::Header beyond = good;
  beyond.set_packed_sizes(0, static_cast<uint32_t>(entries.size() + 1));
  reject_whole(beyond, {}, "exceed the");
  wire::Header framed = good;
  framed.set_payload_frames(1);
  reject_whole(framed, {FrameOf("xxxx")}, "travel alone");
  wire::Header old = good;
  old.set_protocol_version(kProtocolVersion + 1);
  reject_whole(old, {}, "protocol version");
}

TEST(BatchTest, ABatchInsideABatchIsRejected) {
  std::vector<Message> inner;
  inner.push_back(Pull(1, 1));
  inner.push_back(Pull(2, 1));
  BatchFrame frame;
  std::string inner_bytes(PrepareBatch(inner, frame), '\0');
  EncodeBatchTo(inner, frame, inner_bytes.data());
  // An outer batch whose first entry is the inner batch, its second a good message.
  Message good = Pull(3, 1);
  std::string good_bytes(PrepareOneFrame(good), '\0');
  EncodeOneFrameTo(good, good_bytes.data());
  wire::Header outer;
  outer.set_protocol_version(kProtocolVersion);
  outer.set_kind(wire::BATCH);
  outer.add_packed_sizes(static_cast<uint32_t>(inner_bytes.size()));
  outer.set_packed(inner_bytes + good_bytes);
  const Decoded d = DecodeAll({FrameOf(outer.SerializeAsString())});
  ASSERT_EQ(d.rejected.size(), 1u);
  EXPECT_THAT(d.rejected[0].message(), HasSubstr("inside a batch"));
  ASSERT_EQ(d.delivered.size(), 1u);
  EXPECT_EQ(d.delivered[0].header.request_id(), 3u);
  // Decode, which takes one message, refuses a batch as well.
  absl::StatusOr<Message> m = Decode({FrameOf(inner_bytes)});
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("where one message was due"));
}

}  // namespace
}  // namespace kairos::internal
