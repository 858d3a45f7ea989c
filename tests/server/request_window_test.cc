// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "server/request_window.h"

#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

using Verdict = RequestWindow::Verdict;

TEST(RequestWindowTest, EachIdIsTakenOnce) {
  RequestWindow w;
  EXPECT_EQ(w.Take(1), Verdict::kNew);
  EXPECT_EQ(w.Take(2), Verdict::kNew);
  EXPECT_EQ(w.Take(2), Verdict::kDuplicate);
  EXPECT_EQ(w.Take(1), Verdict::kDuplicate);
}

TEST(RequestWindowTest, IdsSlightlyOutOfOrderAreNew) {
  RequestWindow w;
  EXPECT_EQ(w.Take(5), Verdict::kNew);
  EXPECT_EQ(w.Take(3), Verdict::kNew);
  EXPECT_EQ(w.Take(4), Verdict::kNew);
  EXPECT_EQ(w.Take(3), Verdict::kDuplicate);
  EXPECT_EQ(w.Take(6), Verdict::kNew);
  EXPECT_EQ(w.highest(), 6u);
}

TEST(RequestWindowTest, TheWindowEdgeIsExact) {
  RequestWindow w;
  const uint64_t top = 10 * RequestWindow::kWidth;
  EXPECT_EQ(w.Take(top), Verdict::kNew);
  // The oldest id still told apart is top - kWidth + 1.
  EXPECT_EQ(w.Take(top - RequestWindow::kWidth + 1), Verdict::kNew);
  EXPECT_EQ(w.Take(top - RequestWindow::kWidth + 1), Verdict::kDuplicate);
  EXPECT_EQ(w.Take(top - RequestWindow::kWidth), Verdict::kTooOld);
}

TEST(RequestWindowTest, SlidingForgetsOnlyWhatLeftTheWindow) {
  RequestWindow w;
  for (uint64_t id = 1; id <= 3 * RequestWindow::kWidth; id += 2) {
    ASSERT_EQ(w.Take(id), Verdict::kNew) << id;
  }
  const uint64_t top = w.highest();
  // Every odd id in the window is remembered, every even one is not.
  for (uint64_t id = top - RequestWindow::kWidth + 1; id <= top; ++id) {
    ASSERT_EQ(w.Take(id), id % 2 == 1 ? Verdict::kDuplicate : Verdict::kNew) << id;
  }
  // A jump larger than the window forgets everything before it.
  EXPECT_EQ(w.Take(top + 5 * RequestWindow::kWidth), Verdict::kNew);
  EXPECT_EQ(w.Take(top + 5 * RequestWindow::kWidth - 1), Verdict::kNew);
}

}  // namespace
}  // namespace kairos::internal
