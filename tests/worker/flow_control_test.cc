// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of FlowControl, the worker's per-shard flow control, driven directly: the byte
// budget, FIFO order, the oversized message that always goes, clocks and finishes behind
// pushes, completion releasing the budget, and requests that expire while they wait.

#include "worker/flow_control.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;

// What left, in order: (shard, request id; 0 for a clock).
using Sent = std::vector<std::pair<int, uint64_t>>;

Message Request(wire::Kind kind, uint64_t id) {
  Message m;
  m.header.set_kind(kind);
  m.header.set_request_id(id);
  return m;
}
Message Push(uint64_t id) { return Request(wire::PUSH, id); }
Message Pull(uint64_t id) { return Request(wire::PULL, id); }
Message Clock(int64_t clock) {
  Message m;
  m.header.set_kind(wire::CLOCK);
  m.header.set_clock(clock);
  return m;
}

class FlowControlTest : public ::testing::Test {
 protected:
  FlowControl Make(int shards, int64_t budget) {
    return FlowControl(shards, budget, [this](int shard, Message m) {
      sent_.emplace_back(shard, m.header.request_id());
      kinds_.push_back(m.header.kind());
    });
  }
  Sent sent_;
  std::vector<wire::Kind> kinds_;
};

TEST_F(FlowControlTest, SendsAtOnceWithinTheBudget) {
  FlowControl flow = Make(1, 100);
  flow.Submit(0, Push(1), 40);
  flow.Submit(0, Pull(2), 60);
  EXPECT_THAT(sent_, ElementsAre(std::pair(0, 1u), std::pair(0, 2u)));
  EXPECT_EQ(flow.in_flight(0), 100u) << "exactly the budget is allowed";
  EXPECT_EQ(flow.waiting(0), 0u);
}

TEST_F(FlowControlTest, HoldsWhatWouldExceedTheBudgetUntilACompletionReleasesIt) {
  FlowControl flow = Make(1, 100);
  flow.Submit(0, Push(1), 40);
  flow.Submit(0, Push(2), 40);
  flow.Submit(0, Push(3), 40);  // 120 > 100: waits
  EXPECT_THAT(sent_, ElementsAre(std::pair(0, 1u), std::pair(0, 2u)));
  EXPECT_EQ(flow.in_flight(0), 80u);
  EXPECT_EQ(flow.waiting(0), 1u);
  flow.Complete(1);
  EXPECT_THAT(sent_, ElementsAre(std::pair(0, 1u), std::pair(0, 2u), std::pair(0, 3u)));
  EXPECT_EQ(flow.in_flight(0), 80u);
  flow.Complete(2);
  flow.Complete(3);
  EXPECT_EQ(flow.in_flight(0), 0u);
}

TEST_F(FlowControlTest, KeepsFifoOrderEvenWhenALaterMessageWouldFit) {
  FlowControl flow = Make(1, 100);
  flow.Submit(0, Push(1), 90);
  flow.Submit(0, Pull(2), 50);  // does not fit
  flow.Submit(0, Push(3), 5);   // would fit, but must not overtake 2
  EXPECT_THAT(sent_, ElementsAre(std::pair(0, 1u)));
  flow.Complete(1);
  EXPECT_THAT(sent_, ElementsAre(std::pair(0, 1u), std::pair(0, 2u), std::pair(0, 3u)));
  EXPECT_EQ(flow.in_flight(0), 55u);
}

TEST_F(FlowControlTest, AnOversizedMessageAlwaysGoesWhenNothingIsInFlight) {
  FlowControl flow = Make(1, 100);
  flow.Submit(0, Pull(1), 1000);
  EXPECT_THAT(sent_, ElementsAre(std::pair(0, 1u)));
  EXPECT_EQ(flow.in_flight(0), 1000u);
  // Behind it, even a small one waits: the budget is spent.
  flow.Submit(0, Push(2), 1);
  EXPECT_EQ(sent_.size(), 1u);
  flow.Complete(1);
  EXPECT_THAT(sent_, ElementsAre(std::pair(0, 1u), std::pair(0, 2u)));
}

TEST_F(FlowControlTest, AnOversizedMessageWaitsForWhatIsAlreadyInFlight) {
  FlowControl flow = Make(1, 100);
  flow.Submit(0, Push(1), 10);
  flow.Submit(0, Pull(2), 1000);
  EXPECT_THAT(sent_, ElementsAre(std::pair(0, 1u)));
  flow.Complete(1);
  EXPECT_THAT(sent_, ElementsAre(std::pair(0, 1u), std::pair(0, 2u)));
}

TEST_F(FlowControlTest, ClocksAndFinishesQueueBehindThePushesTheyEnd) {
  FlowControl flow = Make(1, 100);
  flow.Submit(0, Push(1), 80);
  flow.Submit(0, Push(2), 80);  // waits for 1
  flow.Submit(0, Clock(1), 0);  // behind 2, although it moves no bytes
  flow.Submit(0, Request(wire::FINISH, 3), 0);
  EXPECT_THAT(kinds_, ElementsAre(wire::PUSH));
  flow.Complete(1);
  EXPECT_THAT(kinds_, ElementsAre(wire::PUSH, wire::PUSH, wire::CLOCK, wire::FINISH));
  EXPECT_THAT(sent_, ElementsAre(std::pair(0, 1u), std::pair(0, 2u), std::pair(0, 0u),
                                 std::pair(0, 3u)));
}

TEST_F(FlowControlTest, AClockWithNothingQueuedGoesAtOnce) {
  FlowControl flow = Make(1, 100);
  flow.Submit(0, Push(1), 100);  // the budget is full, nothing waits
  flow.Submit(0, Clock(1), 0);
  EXPECT_THAT(kinds_, ElementsAre(wire::PUSH, wire::CLOCK));
  EXPECT_EQ(flow.in_flight(0), 100u);
  flow.Complete(0);  // a clock is not tracked: no effect
  EXPECT_EQ(flow.in_flight(0), 100u);
}

TEST_F(FlowControlTest, ShardsHaveSeparateBudgetsAndQueues) {
  FlowControl flow = Make(2, 100);
  flow.Submit(0, Push(1), 100);
  flow.Submit(0, Push(2), 10);  // shard 0 is full
  flow.Submit(1, Push(3), 100);
  EXPECT_THAT(sent_, ElementsAre(std::pair(0, 1u), std::pair(1, 3u)));
  flow.Complete(3);  // frees shard 1, not shard 0
  EXPECT_EQ(sent_.size(), 2u);
  EXPECT_EQ(flow.in_flight(1), 0u);
  flow.Complete(1);
  EXPECT_THAT(sent_, ElementsAre(std::pair(0, 1u), std::pair(1, 3u), std::pair(0, 2u)));
}

TEST_F(FlowControlTest, AMessageCompletedWhileItWaitsIsNeverSent) {
  FlowControl flow = Make(1, 100);
  flow.Submit(0, Push(1), 100);
  flow.Submit(0, Push(2), 50);
  flow.Submit(0, Push(3), 50);
  flow.Complete(2);  // its request expired while it waited
  EXPECT_EQ(flow.in_flight(0), 100u) << "a message never sent releases nothing";
  flow.Complete(1);
  EXPECT_THAT(sent_, ElementsAre(std::pair(0, 1u), std::pair(0, 3u)));
  EXPECT_EQ(flow.in_flight(0), 50u);
  EXPECT_EQ(flow.waiting(0), 0u);
}

TEST_F(FlowControlTest, CompletingTwiceOrAnUnknownIdChangesNothing) {
  FlowControl flow = Make(1, 100);
  flow.Submit(0, Push(1), 60);
  flow.Submit(0, Push(2), 30);
  flow.Complete(1);
  flow.Complete(1);
  flow.Complete(99);
  EXPECT_EQ(flow.in_flight(0), 30u);
}

TEST_F(FlowControlTest, ABudgetBelowOneCountsAsOne) {
  FlowControl flow = Make(1, 0);
  EXPECT_EQ(flow.max_bytes_in_flight(), 1u);
  flow.Submit(0, Push(1), 8);  // one message always goes
  flow.Submit(0, Push(2), 8);
  EXPECT_THAT(sent_, ElementsAre(std::pair(0, 1u)));
}

TEST_F(FlowControlTest, ClearDropsEverythingWaitingAndInFlight) {
  FlowControl flow = Make(1, 100);
  flow.Submit(0, Push(1), 100);
  flow.Submit(0, Push(2), 50);
  flow.Submit(0, Clock(1), 0);
  flow.Clear();
  EXPECT_EQ(flow.in_flight(0), 0u);
  EXPECT_EQ(flow.waiting(0), 0u);
  flow.Complete(1);  // forgotten: no effect, nothing sent
  EXPECT_THAT(sent_, ElementsAre(std::pair(0, 1u)));
}

// A transport may answer inside the send (a fake one); the completion then re-enters.
TEST(FlowControlReentryTest, ACompletionInsideTheSendKeepsTheOrder) {
  Sent sent;
  FlowControl* self = nullptr;
  FlowControl flow(1, 100, [&](int shard, Message m) {
    const uint64_t id = m.header.request_id();
    sent.emplace_back(shard, id);
    if (id != 0) self->Complete(id);  // answered at once
  });
  self = &flow;
  flow.Submit(0, Push(1), 100);
  flow.Submit(0, Push(2), 100);
  flow.Submit(0, Clock(1), 0);
  EXPECT_THAT(sent, ElementsAre(std::pair(0, 1u), std::pair(0, 2u), std::pair(0, 0u)));
  EXPECT_EQ(flow.in_flight(0), 0u);
  EXPECT_EQ(flow.waiting(0), 0u);
}

}  // namespace
}  // namespace kairos::internal
