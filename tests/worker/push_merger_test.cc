// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// PushMerger alone: which pushes are summed into one message, what that message carries,
// how the merged requests complete or fail with it, and that the caller's memory is never
// written.

#include "worker/push_merger.h"

#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/outstanding.h"
#include "worker/request_state.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

struct Sent {
  Part part;
  Message message;
};

// A push of `values` to [offset, offset + values.size()) of table `table` on `shard`.
std::pair<Part, Message> Push(int shard, std::vector<float> values, uint64_t offset = 0,
                              int64_t clock = 0, absl::Time deadline = absl::InfiniteFuture(),
                              uint32_t table = 0) {
  static uint64_t next_id = 1;
  Message m;
  m.header.set_kind(wire::PUSH);
  m.header.set_request_id(next_id++);
  m.header.set_table(table);
  m.header.set_offset(offset);
  m.header.set_length(values.size());
  m.header.set_clock(clock);
  m.payloads.push_back(Buffer::CopyOf(values));
  Part part{std::make_shared<RequestState>(RequestLabel{"push", "w"}, deadline, 1), shard,
            values.size()};
  return {std::move(part), std::move(m)};
}

class PushMergerTest : public ::testing::Test {
 protected:
  auto Collect() {
    return [this](Part p, Message m) { sent_.push_back({std::move(p), std::move(m)}); };
  }
  void Hold(std::pair<Part, Message> push) {
    ASSERT_TRUE(PushMerger::Mergeable(push.first, push.second));
    merger_.Hold(std::move(push.first), std::move(push.second), Collect());
  }
  static std::vector<float> Values(const Message& m) {
    return std::vector<float>(m.payloads[0].data(), m.payloads[0].data() + m.payloads[0].size());
  }

  PushMerger merger_{2};
  std::vector<Sent> sent_;
};

TEST_F(PushMergerTest, SumsPushesToOneRangeIntoTheFirstOnesMessage) {
  auto a = Push(0, {1, 2, 3});
  auto b = Push(0, {10, 20, 30});
  auto c = Push(0, {100, 200, 300});
  const uint64_t first_id = a.second.header.request_id();
  const Buffer callers_memory = a.second.payloads[0];
  auto sa = a.first.state, sb = b.first.state, sc = c.first.state;
  Hold(std::move(a));
  Hold(std::move(b));
  Hold(std::move(c));
  EXPECT_TRUE(sent_.empty()) << "nothing leaves before the end of the pass";
  EXPECT_EQ(merger_.merged(), 2u);
  merger_.ReleaseAll(Collect());
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_[0].message.header.request_id(), first_id);
  EXPECT_THAT(Values(sent_[0].message), ElementsAre(111, 222, 333));
  EXPECT_THAT(std::vector<float>(callers_memory.data(), callers_memory.data() + 3),
              ElementsAre(1, 2, 3))
      << "the sum is the merger's own buffer";
  EXPECT_TRUE(merger_.empty());

  // The answer to the one message completes the three requests.
  ASSERT_EQ(sent_[0].part.merged.size(), 2u);
  EXPECT_FALSE(sb->done());
  Message ack;
  ack.header.set_kind(wire::PUSH_REPLY);
  CompletePart(sent_[0].part, ack);
  for (const auto& s : {sa, sb, sc}) {
    EXPECT_TRUE(s->done());
    EXPECT_TRUE(s->Wait(absl::InfiniteFuture()).ok());
  }
}

// A sparse push of `keys` with rows of `width` values (row i: `rows[i]` repeated).
std::pair<Part, Message> PushRows(int shard, std::vector<uint64_t> keys, std::vector<float> rows,
                                  uint32_t width, uint32_t table = 3) {
  static uint64_t next_id = 1000;
  Message m;
  m.header.set_kind(wire::PUSH_SPARSE);
  m.header.set_request_id(next_id++);
  m.header.set_table(table);
  m.header.set_length(keys.size());
  Buffer k = Buffer::Allocate(keys.size() * 2);
  std::memcpy(k.data(), keys.data(), keys.size() * sizeof(uint64_t));
  m.payloads.push_back(std::move(k));
  std::vector<float> values;
  for (float r : rows) values.insert(values.end(), width, r);
  m.payloads.push_back(Buffer::CopyOf(values));
  Part part{
      std::make_shared<RequestState>(RequestLabel{"sparse push", "e"}, absl::InfiniteFuture(), 1),
      shard, keys.size() * width};
  part.bytes = keys.size() * 8 + values.size() * 4;
  return {std::move(part), std::move(m)};
}

TEST_F(PushMergerTest, SumsSparsePushesOfOneTableIntoOneMessagePerShard) {
  Hold(PushRows(0, {5, 9}, {1, 2}, /*width=*/2));
  Hold(PushRows(0, {9, 4}, {10, 3}, 2));
  Hold(PushRows(1, {7}, {1}, 2));  // another shard: its own message
  EXPECT_EQ(merger_.merged(), 1u);
  merger_.ReleaseAll(Collect());
  ASSERT_EQ(sent_.size(), 2u);
  const Message& m = sent_[0].message;
  EXPECT_EQ(m.header.kind(), wire::PUSH_SPARSE);
  EXPECT_EQ(m.header.length(), 3u);
  std::vector<uint64_t> keys(3);
  std::memcpy(keys.data(), m.payloads[0].data(), 3 * sizeof(uint64_t));
  EXPECT_THAT(keys, ElementsAre(5, 9, 4));
  EXPECT_THAT(std::vector<float>(m.payloads[1].data(), m.payloads[1].data() + 6),
              ElementsAre(1, 1, 12, 12, 3, 3));
  EXPECT_EQ(sent_[0].part.length, 6u) << "the rows it carries";
  EXPECT_EQ(sent_[0].part.bytes, 3u * 8 + 6 * 4);
  EXPECT_EQ(sent_[0].part.merged.size(), 1u);
  EXPECT_EQ(sent_[1].message.header.length(), 1u) << "a lone push leaves as it came";
}

TEST_F(PushMergerTest, ALoneWaitingPushLeavesAsItCame) {
  auto a = Push(1, {4, 5});
  const float* callers = a.second.payloads[0].data();
  Hold(std::move(a));
  merger_.Release(0, Collect());
  EXPECT_TRUE(sent_.empty()) << "shard 0 had nothing waiting";
  merger_.Release(1, Collect());
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_[0].message.payloads[0].data(), callers) << "not copied";
  EXPECT_TRUE(sent_[0].part.merged.empty());
  EXPECT_EQ(merger_.merged(), 0u);
}

TEST_F(PushMergerTest, APushOfTheSameRangeThatDiffersSendsTheShardsWaitingPushesFirst) {
  // Another clock or a shorter deadline: never summed. The shard's waiting pushes leave
  // at once, in the order they began to wait, so the shard sees them before this one.
  const absl::Time soon = absl::UnixEpoch() + absl::Seconds(5);
  std::vector<std::pair<Part, Message>> second;
  second.push_back(Push(0, {1, 1}, 0, /*clock=*/1));
  second.push_back(Push(0, {1, 1}, 0, 0, soon));
  for (auto& next : second) {
    sent_.clear();
    Hold(Push(0, {7, 7}));
    Hold(Push(0, {5, 5}, /*offset=*/2));
    const uint64_t next_id = next.second.header.request_id();
    Hold(std::move(next));
    ASSERT_EQ(sent_.size(), 2u);
    EXPECT_THAT(Values(sent_[0].message), ElementsAre(7, 7));
    EXPECT_THAT(Values(sent_[1].message), ElementsAre(5, 5));
    merger_.ReleaseAll(Collect());
    ASSERT_EQ(sent_.size(), 3u);
    EXPECT_EQ(sent_[2].message.header.request_id(), next_id);
  }
  EXPECT_EQ(merger_.merged(), 0u);
  // The other way round: a later deadline joins an earlier one.
  sent_.clear();
  Hold(Push(0, {1, 1}, 0, 0, soon));
  Hold(Push(0, {2, 2}));
  merger_.ReleaseAll(Collect());
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_THAT(Values(sent_[0].message), ElementsAre(3, 3));
}

TEST_F(PushMergerTest, PushesOfOtherRangesWaitSideBySideAndLeaveInTheirOrder) {
  // Two chunks of one shard, and another table's range at the same offset.
  Hold(Push(0, {1, 1}, /*offset=*/0));
  Hold(Push(0, {2, 2}, /*offset=*/2));
  Hold(Push(0, {3, 3}, /*offset=*/0, 0, absl::InfiniteFuture(), /*table=*/1));
  Hold(Push(0, {10, 10}, /*offset=*/2));
  Hold(Push(0, {20, 20}, /*offset=*/0));
  EXPECT_TRUE(sent_.empty());
  EXPECT_EQ(merger_.merged(), 2u);
  merger_.Release(0, Collect());
  ASSERT_EQ(sent_.size(), 3u);
  EXPECT_THAT(Values(sent_[0].message), ElementsAre(21, 21));
  EXPECT_THAT(Values(sent_[1].message), ElementsAre(12, 12));
  EXPECT_THAT(Values(sent_[2].message), ElementsAre(3, 3));
  EXPECT_EQ(sent_[2].message.header.table(), 1u);
  EXPECT_TRUE(merger_.empty());
  // Released, a range starts over.
  Hold(Push(0, {4, 4}, /*offset=*/2));
  merger_.ReleaseAll(Collect());
  ASSERT_EQ(sent_.size(), 4u);
  EXPECT_THAT(Values(sent_[3].message), ElementsAre(4, 4));
}

TEST_F(PushMergerTest, PushesToOtherShardsWaitSideBySide) {
  Hold(Push(0, {1}));
  Hold(Push(1, {2}));
  Hold(Push(0, {3}));
  Hold(Push(1, {4}));
  EXPECT_TRUE(sent_.empty());
  merger_.ReleaseAll(Collect());
  ASSERT_EQ(sent_.size(), 2u);
  EXPECT_THAT(Values(sent_[0].message), ElementsAre(4));
  EXPECT_THAT(Values(sent_[1].message), ElementsAre(6));
}

TEST_F(PushMergerTest, OnlyPlainFloatPushesMayWait) {
  auto plain = Push(0, {1, 2});
  EXPECT_TRUE(PushMerger::Mergeable(plain.first, plain.second));
  auto eager = Push(0, {1, 2});
  eager.second.header.set_pull_after(true);
  EXPECT_FALSE(PushMerger::Mergeable(eager.first, eager.second));
  auto encoded = Push(0, {1, 2});
  encoded.second.header.set_encoding(2);
  EXPECT_FALSE(PushMerger::Mergeable(encoded.first, encoded.second));
  auto reads = Push(0, {1, 2});
  reads.first.reads = true;
  EXPECT_FALSE(PushMerger::Mergeable(reads.first, reads.second));
  auto pull = Push(0, {1, 2});
  pull.second.header.set_kind(wire::PULL);
  pull.second.payloads.clear();
  EXPECT_FALSE(PushMerger::Mergeable(pull.first, pull.second));
  auto coordinator = Push(-1, {1, 2});
  EXPECT_FALSE(PushMerger::Mergeable(coordinator.first, coordinator.second));
}

TEST_F(PushMergerTest, FailAllFailsEveryWaitingPushAndThoseMergedIntoIt) {
  auto a = Push(0, {1});
  auto b = Push(0, {1});
  auto c = Push(1, {1});
  auto sa = a.first.state, sb = b.first.state, sc = c.first.state;
  Hold(std::move(a));
  Hold(std::move(b));
  Hold(std::move(c));
  merger_.FailAll(absl::UnavailableError("worker 1 stopped"));
  EXPECT_TRUE(merger_.empty());
  for (const auto& s : {sa, sb, sc}) {
    EXPECT_EQ(s->Wait(absl::InfiniteFuture()).code(), absl::StatusCode::kUnavailable);
  }
  merger_.ReleaseAll(Collect());
  EXPECT_TRUE(sent_.empty());
}

TEST(OutstandingMergedTest, AnErrorOrTheDeadlineFailsEveryMergedPush) {
  auto leader = std::make_shared<RequestState>(RequestLabel{"push", "w"},
                                               absl::UnixEpoch() + absl::Seconds(1), 1);
  auto follower = std::make_shared<RequestState>(RequestLabel{"push", "w"},
                                                 absl::UnixEpoch() + absl::Seconds(9), 1);
  Part part{leader, 0, 4};
  part.merged.push_back(follower);
  Message refused;
  refused.header.set_kind(wire::ERROR);
  refused.header.mutable_status()->set_code(static_cast<int>(absl::StatusCode::kInvalidArgument));
  CompletePart(part, refused);
  EXPECT_EQ(follower->Wait(absl::InfiniteFuture()).code(), absl::StatusCode::kInvalidArgument);

  auto leader2 = std::make_shared<RequestState>(RequestLabel{"push", "w"},
                                                absl::UnixEpoch() + absl::Seconds(1), 1);
  auto follower2 = std::make_shared<RequestState>(RequestLabel{"push", "w"},
                                                  absl::UnixEpoch() + absl::Seconds(9), 1);
  OutstandingParts parts;
  Part p2{leader2, 0, 4};
  p2.merged.push_back(follower2);
  parts.Add(7, std::move(p2));
  parts.Expire(absl::UnixEpoch() + absl::Seconds(2), [](uint64_t, const Part&) {});
  EXPECT_EQ(follower2->Wait(absl::InfiniteFuture()).code(), absl::StatusCode::kDeadlineExceeded)
      << "the message's deadline is its first push's";
  EXPECT_EQ(parts.size(), 0u);
}

}  // namespace
}  // namespace kairos::internal
