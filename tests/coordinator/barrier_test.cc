// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "coordinator/barrier.h"

#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kT0 = absl::UnixEpoch();

BarrierWaiter Waiter(int rank, absl::Time deadline = absl::InfiniteFuture(), uint64_t id = 0) {
  BarrierWaiter w;
  w.peer = 100 + rank;
  w.rank = rank;
  w.deadline = deadline;
  w.request.set_request_id(id);
  return w;
}

std::vector<int> Ranks(const std::vector<BarrierWaiter>& ws) {
  std::vector<int> out;
  for (const BarrierWaiter& w : ws) out.push_back(w.rank);
  return out;
}

TEST(BarrierBookTest, ReleasesOnlyWhenEveryActiveWorkerWaits) {
  BarrierBook b;
  EXPECT_THAT(b.TakeReleased({0, 1, 2}), IsEmpty());  // nobody waits: nothing to release
  b.Arrive(Waiter(0));
  b.Arrive(Waiter(2));
  EXPECT_THAT(b.Missing({0, 1, 2}), ElementsAre(1));
  EXPECT_THAT(b.TakeReleased({0, 1, 2}), IsEmpty());
  // Worker 1 left: it is no longer waited for.
  EXPECT_THAT(Ranks(b.TakeReleased({0, 2})), ElementsAre(0, 2));
  EXPECT_TRUE(b.empty());
}

TEST(BarrierBookTest, ANewerCallOfAWorkerReplacesItsOlderOne) {
  BarrierBook b;
  EXPECT_FALSE(b.Arrive(Waiter(0, absl::InfiniteFuture(), 1)).has_value());
  std::optional<BarrierWaiter> old = b.Arrive(Waiter(0, absl::InfiniteFuture(), 2));
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->request.request_id(), 1u);
  std::vector<BarrierWaiter> released = b.TakeReleased({0});
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0].request.request_id(), 2u);
}

TEST(BarrierBookTest, WaitersExpireAtTheirDeadlineAndLeftWorkersAreRemoved) {
  BarrierBook b;
  b.Arrive(Waiter(0, kT0 + absl::Seconds(1)));
  b.Arrive(Waiter(1, kT0 + absl::Seconds(2)));
  b.Arrive(Waiter(2, kT0 + absl::Seconds(3)));
  EXPECT_THAT(b.TakeExpired(kT0), IsEmpty());
  EXPECT_THAT(Ranks(b.TakeExpired(kT0 + absl::Seconds(1))), ElementsAre(0));
  std::optional<BarrierWaiter> left = b.Remove(1);
  ASSERT_TRUE(left.has_value());  // returned, for the coordinator to answer
  EXPECT_EQ(left->rank, 1);
  EXPECT_FALSE(b.Remove(1).has_value());
  EXPECT_FALSE(b.Remove(0).has_value());  // expired already
  EXPECT_THAT(b.Missing({0, 1, 2}), ElementsAre(0, 1));
  EXPECT_THAT(Ranks(b.TakeAll()), ElementsAre(2));
  EXPECT_TRUE(b.empty());
}

}  // namespace
}  // namespace kairos::internal
