// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Pulled values that may share a server's memory are read-only, and the Eigen views are
// const-correct: the static_asserts below check at compile time that writing through a
// ConstBuffer, through the read-only Eigen views, or pulling zero-copy into a writable
// Buffer does not compile; the tests check what a ConstBuffer does at run time.

#include <concepts>
#include <type_traits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kairos/buffer.h"
#include "kairos/eigen.h"
#include "kairos/worker.h"

namespace kairos {
namespace {

// ----------------------------------------------------------------- compile-time checks

template <typename T>
concept WritableByIndex = requires(T t) { t[0] = 1.0f; };
template <typename T>
concept WritableByData = requires(T t) { *t.data() = 1.0f; };
template <typename T>
concept WritableBySpan = requires(T t) { t.span()[0] = 1.0f; };

// A ConstBuffer gives no way to write its values.
static_assert(!WritableByIndex<ConstBuffer&>);
static_assert(!WritableByIndex<const ConstBuffer&>);
static_assert(!WritableByData<ConstBuffer&>);
static_assert(!WritableBySpan<ConstBuffer&>);
static_assert(!WritableByIndex<decltype(std::declval<ConstBuffer&>().Slice(0, 1))>);
static_assert(std::is_same_v<decltype(std::declval<ConstBuffer&>().data()), const float*>);
static_assert(!std::is_assignable_v<decltype(std::declval<ConstBuffer&>()[0]), float>);
// ... and cannot become a Buffer again (the way back is a copy: Buffer::CopyOf).
static_assert(!std::is_constructible_v<Buffer, ConstBuffer>);
static_assert(!std::is_convertible_v<ConstBuffer, Buffer>);
static_assert(!std::is_assignable_v<Buffer&, ConstBuffer>);
// A Buffer gives up write access implicitly.
static_assert(std::is_convertible_v<Buffer, ConstBuffer>);
// The Buffer itself stays writable (the caller's own memory).
static_assert(WritableByIndex<Buffer&>);

// Eigen: read-only memory gives read-only maps; only writable memory gives a VectorMap.
static_assert(std::is_same_v<decltype(AsEigen(std::declval<const ConstBuffer&>())),
                             ConstVectorMap>);
static_assert(std::is_same_v<decltype(AsEigen(std::declval<ConstBuffer&>())), ConstVectorMap>);
static_assert(std::is_same_v<decltype(AsEigen(std::declval<const Buffer&>())), ConstVectorMap>);
static_assert(std::is_same_v<decltype(AsEigen(std::declval<Buffer>())), ConstVectorMap>,
          "a temporary Buffer gives no writable view");
static_assert(std::is_same_v<decltype(AsEigen(std::declval<std::span<const float>>())),
                             ConstVectorMap>);
static_assert(std::is_same_v<decltype(AsEigen(std::declval<Buffer&>())), VectorMap>);
static_assert(std::is_same_v<decltype(AsEigen(std::declval<std::span<float>>())), VectorMap>);
static_assert(!WritableByData<ConstVectorMap>);
static_assert(!std::is_assignable_v<decltype(std::declval<ConstVectorMap&>()(0)), float>);
static_assert(!std::is_assignable_v<decltype(std::declval<ConstVectorMap&>()[0]), float>);
static_assert(std::is_assignable_v<decltype(std::declval<VectorMap&>()(0)), float>);

// A zero-copy pull hands its values out read-only: it takes a ConstBuffer, never a Buffer.
template <typename Out>
concept PullsZeroCopyInto = requires(Worker& w, Out* out) { w.PullAsync("w", 0, 1, out); };
static_assert(PullsZeroCopyInto<ConstBuffer>);
static_assert(!PullsZeroCopyInto<Buffer>);

// ---------------------------------------------------------------------- run-time checks

TEST(ConstBufferTest, DefaultIsEmpty) {
  ConstBuffer b;
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.data(), nullptr);
  EXPECT_EQ(b.use_count(), 0);
}

TEST(ConstBufferTest, ViewsTheBuffersStorageWithoutACopy) {
  Buffer mine = Buffer::CopyOf(std::vector<float>{1, 2, 3, 4});
  ConstBuffer view = mine;
  EXPECT_EQ(view.data(), mine.data());
  EXPECT_EQ(view.size(), 4u);
  EXPECT_EQ(view.size_bytes(), 16u);
  EXPECT_EQ(view.use_count(), 2);
  mine[1] = 20.0f;  // the owner of a writable Buffer may still write; the view sees it
  EXPECT_EQ(view[1], 20.0f);
  const ConstBuffer slice = view.Slice(1, 2);
  EXPECT_EQ(slice.data(), mine.data() + 1);
  EXPECT_EQ(slice.span().size(), 2u);
  EXPECT_EQ(slice[1], 3.0f);
  EXPECT_EQ(view.use_count(), 3);
}

TEST(ConstBufferTest, WritingMeansCopying) {
  ConstBuffer pulled = Buffer::CopyOf(std::vector<float>{1, 2});
  Buffer copy = Buffer::CopyOf(pulled.span());
  copy[0] = 9.0f;
  EXPECT_NE(copy.data(), pulled.data());
  EXPECT_EQ(pulled[0], 1.0f);
}

TEST(ConstBufferTest, EigenViewsReadInPlace) {
  ConstBuffer values = Buffer::CopyOf(std::vector<float>{1, 2, 3});
  ConstVectorMap map = AsEigen(values);
  EXPECT_EQ(map.data(), values.data());
  EXPECT_EQ(map.sum(), 6.0f);
  Buffer mine = Buffer::Zeros(3);
  AsEigen(mine) = 2.0f * AsEigen(values);  // a writable view of the caller's own Buffer
  EXPECT_EQ(mine[2], 6.0f);
}

}  // namespace
}  // namespace kairos
