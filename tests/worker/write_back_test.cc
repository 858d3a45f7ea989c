// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "worker/write_back.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;

Message Push(uint32_t table, uint64_t offset, std::vector<float> values, int64_t clock,
             float scale = 0.0f) {
  Message m;
  m.header.set_kind(wire::PUSH);
  m.header.set_table(table);
  m.header.set_offset(offset);
  m.header.set_length(values.size());
  m.header.set_clock(clock);
  m.header.set_sender(7);
  if (scale != 0.0f) m.header.set_worker_scale(scale);
  m.payloads.push_back(Buffer::CopyOf(values));
  return m;
}

Message PushRows(uint32_t table, const std::vector<uint64_t>& keys, std::vector<float> rows,
                 int64_t clock) {
  Message m;
  m.header.set_kind(wire::PUSH_SPARSE);
  m.header.set_table(table);
  m.header.set_length(keys.size());
  m.header.set_clock(clock);
  Buffer k = Buffer::Allocate(keys.size() * 2);
  std::memcpy(k.data(), keys.data(), keys.size() * sizeof(uint64_t));
  m.payloads.push_back(std::move(k));
  m.payloads.push_back(Buffer::CopyOf(rows));
  return m;
}

std::vector<float> Values(const Buffer& b) { return {b.data(), b.data() + b.size()}; }

std::vector<uint64_t> Keys(const Buffer& b) {
  std::vector<uint64_t> keys(b.size() / 2);
  std::memcpy(keys.data(), b.data(), keys.size() * sizeof(uint64_t));
  return keys;
}

Part PushPart(int shard) {
  Part p;
  p.shard = shard;
  return p;
}

TEST(WriteBackTest, SumsPushesOfOneRangeIntoOneMessage) {
  WriteBack wb(2);
  EXPECT_TRUE(wb.empty());
  EXPECT_TRUE(wb.Hold(1, Push(0, 10, {1, 2}, /*clock=*/3), /*due=*/5));
  EXPECT_TRUE(wb.Hold(1, Push(0, 10, {10, 20}, 4), 6));
  EXPECT_TRUE(wb.Hold(1, Push(0, 20, {5, 5}, 4), 6));  // another range
  EXPECT_EQ(wb.summed(), 1u);
  EXPECT_EQ(wb.oldest(), 3);
  EXPECT_EQ(wb.due(), 5);
  EXPECT_TRUE(wb.Take(0).empty());
  std::vector<Message> out = wb.Take(1);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].header.kind(), wire::PUSH);
  EXPECT_EQ(out[0].header.offset(), 10u);
  EXPECT_EQ(out[0].header.length(), 2u);
  EXPECT_EQ(out[0].header.clock(), 4) << "the latest clock of the pushes summed";
  EXPECT_EQ(out[0].header.sender(), 7u);
  EXPECT_THAT(Values(out[0].payloads[0]), ElementsAre(11, 22));
  EXPECT_THAT(Values(out[1].payloads[0]), ElementsAre(5, 5));
  EXPECT_TRUE(wb.empty());
  EXPECT_EQ(wb.oldest(), std::nullopt);
}

TEST(WriteBackTest, NeverWritesTheCallersBuffer) {
  WriteBack wb(1);
  Message first = Push(0, 0, {1, 1}, 0);
  const Buffer callers = first.payloads[0];
  wb.Hold(0, first, 1);
  wb.Hold(0, Push(0, 0, {1, 1}, 0), 1);
  EXPECT_THAT(Values(callers), ElementsAre(1, 1));
  EXPECT_THAT(Values(wb.Take(0)[0].payloads[0]), ElementsAre(2, 2));
}

TEST(WriteBackTest, APushOfAnotherScaleIsNotSummed) {
  WriteBack wb(1);
  EXPECT_TRUE(wb.Hold(0, Push(0, 0, {1}, 0, 0.5f), 1));
  EXPECT_FALSE(wb.Hold(0, Push(0, 0, {1}, 0, 0.25f), 1));
  EXPECT_TRUE(wb.Hold(0, Push(0, 0, {3}, 0, 0.5f), 1));
  std::vector<Message> out = wb.Take(0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].header.worker_scale(), 0.5f);
  EXPECT_THAT(Values(out[0].payloads[0]), ElementsAre(4));
}

TEST(WriteBackTest, SumsSparseRowsPerKey) {
  WriteBack wb(1);
  wb.Hold(0, PushRows(2, {5, 9}, {1, 1, 2, 2}, 0), 2);
  wb.Hold(0, PushRows(2, {9, 4}, {10, 10, 3, 3}, 1), 3);
  EXPECT_EQ(wb.summed(), 1u);
  std::vector<Message> out = wb.Take(0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].header.kind(), wire::PUSH_SPARSE);
  EXPECT_EQ(out[0].header.table(), 2u);
  EXPECT_EQ(out[0].header.length(), 3u);
  EXPECT_EQ(out[0].header.clock(), 1);
  EXPECT_THAT(Keys(out[0].payloads[0]), ElementsAre(5, 9, 4));
  EXPECT_THAT(Values(out[0].payloads[1]), ElementsAre(1, 1, 12, 12, 3, 3));
}

TEST(WriteBackTest, APullTakesOnlyWhatItMustSee) {
  WriteBack wb(1);
  wb.Hold(0, Push(0, 0, {1}, 0), 1);
  wb.Hold(0, Push(0, 8, {2}, 0), 1);
  wb.Hold(0, PushRows(1, {3}, {1}, 0), 1);
  std::vector<Message> out = wb.TakeFor(0, RangeKey{0, 8, 1});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].header.offset(), 8u);
  EXPECT_TRUE(wb.TakeFor(0, RangeKey{0, 16, 1}).empty());
  EXPECT_TRUE(wb.TakeFor(0, RangeKey{0, 1, 7}).empty()) << "[1, 8) misses [0, 1)";
  wb.Hold(0, Push(0, 8, {2}, 0), 1);
  wb.Hold(0, Push(0, 9, {2}, 0), 1);
  EXPECT_EQ(wb.TakeFor(0, RangeKey{0, 5, 5}).size(), 2u) << "[5, 10) overlaps [8, 9), [9, 10)";
  out = wb.TakeRows(0, 1, std::vector<uint64_t>{3});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].header.kind(), wire::PUSH_SPARSE);
  EXPECT_FALSE(wb.empty());
  EXPECT_EQ(wb.Take(0).size(), 1u);
  EXPECT_TRUE(wb.empty());
}

TEST(WriteBackTest, ASparsePullTakesTheRowsOfItsKeysOnly) {
  WriteBack wb(1);
  wb.Hold(0, PushRows(2, {1, 2, 3, 4}, {1, 1, 2, 2, 3, 3, 4, 4}, 0), 2);
  EXPECT_TRUE(wb.TakeRows(0, 2, std::vector<uint64_t>{9}).empty());
  std::vector<Message> out = wb.TakeRows(0, 2, std::vector<uint64_t>{2, 9, 1});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(Keys(out[0].payloads[0]), ElementsAre(2, 1));
  EXPECT_THAT(Values(out[0].payloads[1]), ElementsAre(2, 2, 1, 1));
  // The others stay held, each with its own row, and take more.
  wb.Hold(0, PushRows(2, {4}, {10, 10}, 1), 3);
  out = wb.Take(0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(Keys(out[0].payloads[0]), ElementsAre(3, 4));
  EXPECT_THAT(Values(out[0].payloads[1]), ElementsAre(3, 3, 14, 14));
  EXPECT_TRUE(wb.empty());
  // Taking every held row leaves nothing held.
  wb.Hold(0, PushRows(2, {5}, {1, 1}, 2), 4);
  EXPECT_EQ(wb.TakeRows(0, 2, std::vector<uint64_t>{5}).size(), 1u);
  EXPECT_TRUE(wb.empty());
}

TEST(WriteBackTest, AnAssignTakesItsTablesSums) {
  WriteBack wb(1);
  wb.Hold(0, Push(0, 0, {1}, 0), 1);
  wb.Hold(0, Push(1, 0, {1}, 0), 1);
  wb.Hold(0, PushRows(1, {3}, {1}, 0), 1);
  EXPECT_EQ(wb.TakeTable(0, 1).size(), 2u);
  EXPECT_EQ(wb.TakeTable(0, 1).size(), 0u);
  EXPECT_FALSE(wb.empty());
  EXPECT_EQ(wb.TakeTable(0, 0).size(), 1u);
  EXPECT_TRUE(wb.empty());
}

TEST(WriteBackTest, HoldsOnlyPlainPushes) {
  Message push = Push(0, 0, {1}, 0);
  EXPECT_TRUE(WriteBack::Holdable(PushPart(0), push));
  EXPECT_FALSE(WriteBack::Holdable(PushPart(-1), push)) << "to the coordinator";
  Message eager = push;
  eager.header.set_pull_after(true);
  EXPECT_FALSE(WriteBack::Holdable(PushPart(0), eager));
  Message encoded = push;
  encoded.header.set_encoding(1);
  EXPECT_FALSE(WriteBack::Holdable(PushPart(0), encoded));
  Message pull = push;
  pull.header.set_kind(wire::PULL);
  EXPECT_FALSE(WriteBack::Holdable(PushPart(0), pull));
  EXPECT_TRUE(WriteBack::Holdable(PushPart(0), PushRows(0, {1, 2}, {1, 2}, 0)));
  Message short_rows = PushRows(0, {1, 2}, {1, 2}, 0);
  short_rows.header.set_length(3);
  EXPECT_FALSE(WriteBack::Holdable(PushPart(0), short_rows));
}

}  // namespace
}  // namespace kairos::internal
