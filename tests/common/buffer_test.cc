// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of kairos::Buffer: alignment, the factories, and storage sharing (copies, slices,
// adopted storage).

#include "kairos/buffer.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/buffer_internal.h"

namespace kairos {
namespace {

using ::testing::ElementsAre;

bool IsAligned(const void* p, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

TEST(BufferTest, DefaultIsEmpty) {
  Buffer b;
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.size_bytes(), 0u);
  EXPECT_EQ(b.data(), nullptr);
  EXPECT_EQ(b.use_count(), 0);
  EXPECT_TRUE(b.span().empty());
}

TEST(BufferTest, AllocateIsAlignedTo64BytesForEverySize) {
  EXPECT_EQ(kBufferAlignment, 64u);
  for (std::size_t count : {1u, 2u, 3u, 15u, 16u, 17u, 100u, 1000u, 4097u}) {
    Buffer b = Buffer::Allocate(count);
    ASSERT_NE(b.data(), nullptr) << count;
    EXPECT_TRUE(IsAligned(b.data(), 64)) << count;
    EXPECT_EQ(b.size(), count);
    EXPECT_EQ(b.size_bytes(), count * sizeof(float));
    EXPECT_FALSE(b.empty());
    EXPECT_EQ(b.use_count(), 1);
  }
}

TEST(BufferTest, AllocateZeroIsEmpty) {
  Buffer b = Buffer::Allocate(0);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.data(), nullptr);
  EXPECT_EQ(b.use_count(), 0);
}

TEST(BufferTest, ZerosIsAllZeroAndAligned) {
  // Dirty the allocator first so that fresh memory is unlikely to be zero by chance.
  { Buffer dirty = Buffer::Allocate(1000); for (float& v : dirty.span()) v = 7.0f; }
  Buffer b = Buffer::Zeros(1000);
  ASSERT_EQ(b.size(), 1000u);
  EXPECT_TRUE(IsAligned(b.data(), 64));
  for (std::size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b[i], 0.0f) << i;
  EXPECT_TRUE(Buffer::Zeros(0).empty());
}

TEST(BufferTest, CopyOfCopiesValuesIntoNewAlignedStorage) {
  std::vector<float> values = {1.5f, -2.0f, 3.25f};
  Buffer b = Buffer::CopyOf(values);
  EXPECT_THAT(b.span(), ElementsAre(1.5f, -2.0f, 3.25f));
  EXPECT_NE(b.data(), values.data());
  EXPECT_TRUE(IsAligned(b.data(), 64));
  values[0] = 100.0f;  // the copy is independent of its source
  EXPECT_EQ(b[0], 1.5f);
  EXPECT_TRUE(Buffer::CopyOf({}).empty());
}

TEST(BufferTest, CopiesShareStorage) {
  Buffer a = Buffer::Zeros(4);
  Buffer b = a;
  EXPECT_EQ(a.data(), b.data());
  EXPECT_EQ(a.use_count(), 2);
  b[2] = 9.0f;
  EXPECT_EQ(a[2], 9.0f);
  { Buffer c = b; EXPECT_EQ(a.use_count(), 3); }
  EXPECT_EQ(a.use_count(), 2);
  b = Buffer();
  EXPECT_EQ(a.use_count(), 1);
}

TEST(BufferTest, SliceSharesStorageAndCountsAsUse) {
  Buffer a = Buffer::CopyOf(std::vector<float>{0, 1, 2, 3, 4, 5});
  Buffer s = a.Slice(2, 3);
  EXPECT_EQ(s.data(), a.data() + 2);
  EXPECT_EQ(s.size(), 3u);
  EXPECT_THAT(s.span(), ElementsAre(2.0f, 3.0f, 4.0f));
  EXPECT_EQ(a.use_count(), 2);
  s[0] = 20.0f;  // writes through the slice are seen by the parent
  EXPECT_EQ(a[2], 20.0f);
  Buffer empty_tail = a.Slice(6, 0);
  EXPECT_EQ(empty_tail.size(), 0u);
}

TEST(BufferTest, SliceKeepsStorageAliveAfterParentIsGone) {
  Buffer s;
  {
    Buffer a = Buffer::CopyOf(std::vector<float>{10, 11, 12, 13});
    s = a.Slice(1, 2);
  }
  EXPECT_EQ(s.use_count(), 1);
  EXPECT_THAT(s.span(), ElementsAre(11.0f, 12.0f));
}

TEST(BufferTest, AdoptViewsForeignMemoryAndKeepsOwnerAlive) {
  auto storage = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4, 5});
  std::weak_ptr<std::vector<float>> watch = storage;
  float* data = storage->data();
  Buffer b = Buffer::Adopt(storage, data + 1, 3);
  storage.reset();  // the buffer is now the only owner
  ASSERT_FALSE(watch.expired());
  EXPECT_EQ(b.data(), data + 1);
  EXPECT_THAT(b.span(), ElementsAre(2.0f, 3.0f, 4.0f));
  EXPECT_EQ(b.use_count(), 1);
  Buffer copy = b;
  b = Buffer();
  EXPECT_FALSE(watch.expired());
  copy = Buffer();
  EXPECT_TRUE(watch.expired());
}

TEST(BufferTest, AdoptRunsOwnersDeleterWhenLastCopyDies) {
  int deleted = 0;
  float value = 3.0f;
  std::shared_ptr<void> owner(&value, [&deleted](void*) { ++deleted; });
  {
    Buffer b = Buffer::Adopt(std::move(owner), &value, 1);
    Buffer s = b.Slice(0, 1);
    EXPECT_EQ(b.use_count(), 2);
    EXPECT_EQ(s[0], 3.0f);
    EXPECT_EQ(deleted, 0);
  }
  EXPECT_EQ(deleted, 1);
}

TEST(BufferTest, OwnerIsSharedWithCopies) {
  Buffer a = Buffer::Zeros(8);
  Buffer b = a.Slice(4, 4);
  EXPECT_EQ(a.owner().get(), b.owner().get());
  EXPECT_NE(a.owner(), nullptr);
}

TEST(BufferTest, OnlyUnsharedAllocationsArePrivate) {
  Buffer a = Buffer::Allocate(8);
  EXPECT_TRUE(internal::IsPrivateAllocation(a));
  EXPECT_TRUE(internal::IsPrivateAllocation(Buffer::Zeros(3)));
  EXPECT_FALSE(internal::IsPrivateAllocation(a.Slice(2, 4))) << "a slice shares";
  {
    Buffer copy = a;
    EXPECT_FALSE(internal::IsPrivateAllocation(a));
  }
  EXPECT_TRUE(internal::IsPrivateAllocation(a));
  auto storage = std::make_shared<std::vector<float>>(4, 1.0f);
  EXPECT_FALSE(internal::IsPrivateAllocation(Buffer::Adopt(storage, storage->data(), 4)));
  EXPECT_FALSE(internal::IsPrivateAllocation(Buffer()));
}

}  // namespace
}  // namespace kairos
