// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the event queue: virtual-time order, ties in scheduling order.

#include "sim/event_queue.h"

#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kairos::sim {
namespace {

const absl::Time kT0 = absl::UnixEpoch();

TEST(EventQueueTest, PopsInTimeOrder) {
  EventQueue q;
  q.Schedule({.time = kT0 + absl::Seconds(3), .worker = 3});
  q.Schedule({.time = kT0 + absl::Seconds(1), .worker = 1});
  q.Schedule({.time = kT0 + absl::Seconds(2), .worker = 2});
  std::vector<int> order;
  while (!q.empty()) order.push_back(q.Pop().worker);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(EventQueueTest, BreaksTiesInSchedulingOrder) {
  EventQueue q;
  for (int w = 0; w < 50; ++w) q.Schedule({.time = kT0, .worker = (w * 7) % 50});
  std::vector<int> order;
  while (!q.empty()) order.push_back(q.Pop().worker);
  for (int w = 0; w < 50; ++w) EXPECT_EQ(order[static_cast<size_t>(w)], (w * 7) % 50);
}

TEST(EventQueueTest, StampsIncreasingSequenceNumbers) {
  EventQueue q;
  q.Schedule({.time = kT0 + absl::Seconds(1)});
  q.Schedule({.time = kT0});
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.top().sequence, 1u);
  EXPECT_EQ(q.Pop().sequence, 1u);
  EXPECT_EQ(q.Pop().sequence, 0u);
}

}  // namespace
}  // namespace kairos::sim
