// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The shard engine driven directly: events in, answers out, no socket, thread or clock
// (tests/engine/engine_fixture.h).

#include "engine/shard_engine.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/job.h"
#include "kairos/updater.h"
#include "policy/policy.h"
#include "tests/engine/engine_fixture.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Kind = EngineAnswer::Kind;

TEST(ShardEngineTest, AspAppliesEachPushAndAnswersWithTheNewVersion) {
  EngineFixture f("asp", 2);
  f.Push(0, 0, {1, 2, 3, 4});
  f.Push(1, 0, {1, 1, 1, 1});
  EXPECT_EQ(f.Values(), (std::vector<float>{-2, -3, -4, -5}));
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kPushed, Kind::kPushed));
  EXPECT_EQ(a[0].version, 1u);
  EXPECT_EQ(a[1].version, 2u);
  EXPECT_EQ(f.engine->counters().pushes, 2u);
  EXPECT_EQ(f.engine->counters().version, 2u);
}

// BSP: the round's pushes are summed; the average is applied once every worker clocked,
// and only then is a read of the next round served, seeing it.
TEST(ShardEngineTest, BspAppliesTheRoundAverageBeforeServingTheNextRound) {
  EngineFixture f("bsp", 2);
  f.Push(0, 0, {2, 0, 0, 0});
  f.Clock(0, 1);
  f.Pull(0, 1, kT0 + absl::Seconds(1));
  EXPECT_EQ(f.engine->num_waiting(), 1);
  f.Push(1, 0, {0, 4, 0, 0});
  EXPECT_EQ(f.Values(), (std::vector<float>{0, 0, 0, 0}));  // the round is still open
  f.host.Take();
  f.Clock(1, 1, kT0 + absl::Seconds(3));
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kRead));
  EXPECT_EQ(a[0].request.rank, 0);
  EXPECT_EQ(std::vector<float>(a[0].values.data(), a[0].values.data() + 4),
            (std::vector<float>{-1, -2, 0, 0}));
  EXPECT_EQ(f.engine->metrics()[0].blocked_time, absl::Seconds(2));
}

// A read says how far every active worker had come when it was served (the worker's read
// cache bounds a copy's age with it): the smallest clock, the read's own with none active.
TEST(ShardEngineTest, AReadCarriesTheSmallestClockOfAnActiveWorker) {
  EngineFixture f("ssp:s=3", 2);
  f.Clock(0, 2);
  f.Clock(1, 1);
  f.Pull(0, 2);
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kRead));
  EXPECT_EQ(a[0].min_clock, 1);
  f.Clock(1, 3);
  f.Pull(1, 3);
  a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kRead));
  EXPECT_EQ(a[0].min_clock, 2);
}

// The order of a push: the aggregation decides at once, the weighting's multiplier where
// the chunk's work runs. With the lane held, the bucket exists (the round is decided) but
// nothing is added; the answer comes only once the work ran.
TEST(ShardEngineTest, ChunkWorkRunsOnTheLaneAndAnswersFromThere) {
  EngineOptions options;
  options.inline_apply_bytes = 0;  // every chunk on a lane
  EngineFixture f("asp", 1, 4, 4, options);
  f.host.Hold();
  f.Push(0, 0, {1, 1, 1, 1});
  EXPECT_TRUE(f.host.answers.empty());
  EXPECT_EQ(f.Values(), (std::vector<float>{0, 0, 0, 0}));
  // A read queues behind the chunk's work instead of reading stale values.
  f.Pull(0, 0);
  EXPECT_TRUE(f.host.answers.empty());
  f.host.Release();
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kPushed, Kind::kRead));
  EXPECT_EQ(a[1].values[0], -1.0f);
}

TEST(ShardEngineTest, RefusalsNameTheProblemAndChangeNothing) {
  EngineFixture f("asp", 2);
  f.Push(0, 0, {1, 1, 1, 1}, kT0, /*offset=*/2);  // runs past the table
  f.Push(0, 9, {1, 1, 1, 1});                      // clock far ahead
  f.Push(0, 0, {1, std::nanf(""), 1, 1});          // non-finite
  EngineRequest bad_scale = f.Req(EngineRequest::Kind::kPush, 0, 0);
  bad_scale.worker_scale = -1;
  f.engine->OnPush(bad_scale, Buffer::Zeros(4), kT0);
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kError, Kind::kError, Kind::kError, Kind::kError));
  EXPECT_EQ(a[0].status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(a[1].status.message(), HasSubstr("max_clock_lead"));
  EXPECT_THAT(a[2].status.message(), HasSubstr("element 1 of table 'w'"));
  EXPECT_THAT(a[3].status.message(), HasSubstr("worker_scale -1 is not a finite number >= 0"));
  EXPECT_EQ(f.Values(), (std::vector<float>{0, 0, 0, 0}));
  const RefusalCounts r = f.engine->refused();
  EXPECT_EQ(r.bad_range, 1u);
  EXPECT_EQ(r.bad_clock, 1u);
  EXPECT_EQ(r.nonfinite, 1u);
  EXPECT_EQ(r.bad_scale, 1u);
  EXPECT_EQ(f.engine->counters().version, 0u);
}

TEST(ShardEngineTest, AFinishedWorkerIsRefusedAndReleasesTheOthers) {
  EngineFixture f("ssp:s=0", 2);
  f.Clock(0, 1);
  f.Pull(0, 1);
  EXPECT_EQ(f.engine->num_waiting(), 1);
  f.engine->OnFinish(f.Req(EngineRequest::Kind::kFinish, 1, 0), kT0);
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kRead, Kind::kFinished));
  f.Push(1, 0, {1, 1, 1, 1});
  a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kError));
  EXPECT_EQ(a[0].status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(f.engine->refused().not_active, 1u);
}

// A rejoin of a worker that left: re-admitted at max(its last clock, the slowest active
// clock); rounds at or after that clock wait for it again, earlier ones were applied
// without it (docs/policies.md, "Membership").
TEST(ShardEngineTest, ARejoinedWorkerIsCountedFromTheSlowestActiveClock) {
  EngineFixture f("bsp", 3);
  for (int w = 0; w < 3; ++w) f.Clock(w, 1);
  f.engine->OnLeave(2, policy::MemberState::kDead, kT0);
  for (int w = 0; w < 2; ++w) {
    f.Push(w, 1, {2.0f * (w + 1), 0, 0, 0});
    f.Clock(w, 2);
  }
  f.Clock(0, 3);  // worker 1 is the slowest active one, at 2
  EXPECT_EQ(f.Values(), (std::vector<float>{-3, 0, 0, 0}));  // round 1: (2 + 4) / 2
  f.host.Take();
  EXPECT_EQ(f.engine->OnRejoin(2, kT0), 2);
  EXPECT_TRUE(f.engine->active(2));
  EXPECT_EQ(f.engine->clocks().clock(2), 2);
  // Round 2 now needs worker 2: pushes of workers 1 and 2 at clock 2, then their clocks.
  f.Push(1, 2, {0, 3, 0, 0});
  f.Clock(1, 3);
  EXPECT_EQ(f.Values(), (std::vector<float>{-3, 0, 0, 0}));
  f.Push(2, 2, {0, 1, 0, 0});
  f.Clock(2, 3);
  EXPECT_EQ(f.Values(), (std::vector<float>{-3, -2, 0, 0}));  // round 2: (3 + 1) / 2
  // Out of range: -1.
  EXPECT_EQ(f.engine->OnRejoin(3, kT0), -1);
}

// A rejoin of a worker still active (its process replaced before it was declared dead):
// its clock and place are kept; only its old process's waiting reads go.
TEST(ShardEngineTest, AReplacedWorkerKeepsItsClockAndLosesItsWaitingReads) {
  EngineFixture f("ssp:s=0", 2);
  f.Clock(0, 1);
  f.Clock(0, 2);
  f.Pull(0, 2);
  f.Clock(1, 1);
  f.Pull(1, 1);
  EXPECT_EQ(f.engine->num_waiting(), 1);  // worker 0's read at 2 waits for worker 1
  f.host.Take();
  EXPECT_EQ(f.engine->OnRejoin(0, kT0), 2);
  EXPECT_EQ(f.engine->num_waiting(), 0);
  EXPECT_TRUE(f.host.answers.empty());  // dropped unanswered
  EXPECT_EQ(f.engine->OnRejoin(1, kT0), 1);
}

TEST(ShardEngineTest, AWaitingReadPastItsDeadlineNamesWhomItWaitedFor) {
  EngineFixture f("bsp", 2);
  f.Clock(0, 1);
  f.Pull(0, 1, kT0, /*timeout_ms=*/500);
  f.engine->OnTick(kT0 + absl::Milliseconds(499));
  EXPECT_TRUE(f.host.answers.empty());
  f.engine->OnTick(kT0 + absl::Milliseconds(500));
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kError));
  EXPECT_EQ(a[0].status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(a[0].status.message(), HasSubstr("worker 1 (clock 0)"));
  EXPECT_EQ(f.engine->num_waiting(), 0);
}

// Eager pull: the push is answered by the read of its range at the next clock, carrying
// every worker's clock.
TEST(ShardEngineTest, EagerPushIsAnsweredByTheReadAtTheNextClock) {
  EngineFixture f("ssp:s=0+pull=eager", 2);
  EngineRequest push = f.Req(EngineRequest::Kind::kPush, 0, 0);
  push.pull_after = true;
  f.engine->OnPush(push, Buffer::CopyOf(std::vector<float>{1, 1, 1, 1}), kT0);
  f.Clock(0, 1);
  EXPECT_TRUE(f.host.answers.empty());  // worker 1 is still at clock 0
  f.Clock(1, 1);
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kRead));
  EXPECT_TRUE(a[0].eager);
  EXPECT_EQ(a[0].request.clock, 1);
  EXPECT_THAT(a[0].clocks, ElementsAre(1, 1));
  EXPECT_EQ(a[0].values[0], -1.0f);
}

TEST(ShardEngineTest, TooManyWaitingReadsOfOneWorkerAreRefused) {
  EngineOptions options;
  options.max_waiting_reads_per_worker = 2;
  EngineFixture f("bsp", 2, 4, 4, options);
  f.Clock(0, 1);
  for (int i = 0; i < 3; ++i) f.Pull(0, 1);
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kError));
  EXPECT_EQ(a[0].status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(f.engine->num_waiting(), 2);
}

TEST(ShardEngineTest, DescribeWaitingNamesTheBlockers) {
  EngineFixture f("ssp:s=1", 2);
  f.Clock(0, 1);
  f.Clock(0, 2);
  f.Pull(0, 2);
  EXPECT_EQ(f.engine->DescribeWaiting(),
            "worker 0's read at clock 2 waits for workers [1 (clock 0)]");
}

// ------------------------------------------------------------------ assign

TEST(ShardEngineTest, AssignReplacesTheRangeAndCountsAsOneUpdate) {
  EngineFixture f("asp", 2);
  f.Push(0, 0, {1, 1, 1, 1});
  f.Assign(1, 1, {5, 6});
  EXPECT_EQ(f.Values(), (std::vector<float>{-1, 5, 6, -1}));
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kPushed, Kind::kAssigned));
  EXPECT_EQ(a[1].version, 2u);
  EXPECT_EQ(a[1].request.offset, 1u);
  EXPECT_EQ(f.engine->counters().version, 2u);
  EXPECT_EQ(f.engine->counters().pushes, 1u);  // not a push
  // Nothing of a push's bookkeeping: no staleness sample, scale or push count.
  EXPECT_EQ(f.engine->metrics()[1].pushes, 0u);
  EXPECT_EQ(f.engine->metrics()[1].scale.count(), 0u);
  // The version counts for the staleness of later pushes: worker 0 read nothing since.
  f.Push(0, 0, {0, 0, 0, 0});
  EXPECT_EQ(f.engine->metrics()[0].staleness.max(), 2u);
}

// An updater with one float of state per element: state += g; w -= state.
class MomentumLike final : public Updater {
 public:
  std::size_t state_per_element() const override { return 1; }
  void Apply(std::span<float> values, std::span<float> state,
             const Update& u) const override {
    const float scale = u.gradient_scale * u.step_scale;
    for (std::size_t i = 0; i < values.size(); ++i) {
      state[i] += scale * u.gradient[i];
      values[i] -= state[i];
    }
  }
};

TEST(ShardEngineTest, AssignZeroesTheUpdaterStateOfItsRangeOnly) {
  EngineOptions options;
  options.updater_factory = [](const UpdaterSpec&) -> absl::StatusOr<std::unique_ptr<Updater>> {
    return std::make_unique<MomentumLike>();
  };
  EngineFixture f("asp", 1, 4, 4, options);
  f.Push(0, 0, {1, 1, 1, 1});
  f.Push(0, 0, {1, 1, 1, 1});  // state 2, values -3
  f.Assign(0, 0, {10, 10});
  const Buffer& state = f.engine->shard().tables()[0].chunks[0].state;
  EXPECT_EQ(std::vector<float>(state.data(), state.data() + 4), (std::vector<float>{0, 0, 2, 2}));
  f.Push(0, 0, {1, 1, 1, 1});
  EXPECT_EQ(f.Values(), (std::vector<float>{9, 9, -6, -6}));
}

// A read still holding the chunk's values keeps them: the assign writes a fresh copy.
TEST(ShardEngineTest, AssignCopiesOnWriteWhileAReadSharesTheValues) {
  EngineFixture f("asp", 1);
  f.Push(0, 0, {1, 1, 1, 1});
  f.Pull(0, 0);
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kPushed, Kind::kRead));
  const Buffer held = a[1].values;
  f.Assign(0, 0, {7, 7, 7, 7});
  EXPECT_EQ(std::vector<float>(held.data(), held.data() + 4), (std::vector<float>{-1, -1, -1, -1}));
  EXPECT_EQ(f.Values(), (std::vector<float>{7, 7, 7, 7}));
}

// On a lane, pushes that queue up while it is busy are applied in one drain; an assign
// decided between two of them keeps its place: the first push is overwritten, the second
// applies on top of the assigned values.
TEST(ShardEngineTest, AssignKeepsItsPlaceAmongQueuedPushes) {
  EngineOptions options;
  options.inline_apply_bytes = 0;  // every chunk on a lane
  EngineFixture f("asp", 2, 4, 4, options);
  f.host.Hold();
  f.Push(0, 0, {1, 1, 1, 1});
  f.Assign(1, 0, {7, 7, 7, 7});
  f.Push(0, 0, {1, 2, 3, 4});
  f.Pull(1, 0);
  EXPECT_TRUE(f.host.answers.empty());
  EXPECT_EQ(f.Values(), (std::vector<float>{0, 0, 0, 0}));
  f.host.Release();
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kPushed, Kind::kAssigned, Kind::kPushed, Kind::kRead));
  EXPECT_EQ(f.Values(), (std::vector<float>{6, 5, 4, 3}));
  EXPECT_EQ(std::vector<float>(a[3].values.data(), a[3].values.data() + 4),
            (std::vector<float>{6, 5, 4, 3}));
}

// BSP: the round's sum still pending when the assign arrives is applied on top of the
// assigned values once the round completes.
TEST(ShardEngineTest, BspRoundPendingAtAnAssignIsAppliedOnTopOfIt) {
  EngineFixture f("bsp", 2);
  f.Push(0, 0, {2, 2, 2, 2});
  f.Push(1, 0, {4, 4, 4, 4});
  f.Assign(0, 0, {10, 10, 10, 10});
  EXPECT_EQ(f.Values(), (std::vector<float>{10, 10, 10, 10}));
  f.Clock(0, 1);
  f.Clock(1, 1);
  EXPECT_EQ(f.Values(), (std::vector<float>{7, 7, 7, 7}));
  EXPECT_EQ(f.engine->counters().version, 2u);  // the assign and the round
}

// VSGD: the change an assign makes is added to every worker's drift, like an update's; a
// read of a worker clears its own.
TEST(ShardEngineTest, AssignMovesEveryWorkersDriftUnderVsgd) {
  for (const char* policy : {"vsgd", "vsgd+weight=value:mode=bound"}) {
    SCOPED_TRACE(policy);
    EngineFixture f(policy, 2);
    f.Assign(0, 0, {3, 4, 0, 0});
    ShardTable& t = f.engine->shard().tables()[0];
    EXPECT_DOUBLE_EQ(t.ValueStaleness(t.chunks[0], 0), 5.0);
    EXPECT_DOUBLE_EQ(t.ValueStaleness(t.chunks[0], 1), 5.0);
    f.Pull(0, 0);
    EXPECT_DOUBLE_EQ(t.ValueStaleness(t.chunks[0], 0), 0.0);
    EXPECT_DOUBLE_EQ(t.ValueStaleness(t.chunks[0], 1), 5.0);
  }
}

TEST(ShardEngineTest, AssignRefusalsNameTheProblemAndChangeNothing) {
  // Non-finite values are refused even where the table skips non-finite pushes.
  EngineFixture f("asp", 2, 4, 4, {}, 1.0f, NonFinitePolicy::kSkip);
  f.Assign(0, 0, {1, 2, std::numeric_limits<float>::infinity(), 4});
  f.Assign(0, 2, {1, 2, 3});  // runs past the table
  EngineRequest unknown = f.Req(EngineRequest::Kind::kAssign, 0, 0, 0, 1);
  unknown.table = 7;
  f.engine->OnAssign(unknown, Buffer::Zeros(1), kT0);
  EngineRequest short_payload = f.Req(EngineRequest::Kind::kAssign, 0, 0, 0, 4);
  f.engine->OnAssign(short_payload, Buffer::Zeros(3), kT0);
  f.engine->OnFinish(f.Req(EngineRequest::Kind::kFinish, 1, 0), kT0);
  f.host.Take();
  f.Assign(1, 0, {1, 1, 1, 1});  // a worker that left
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(f.Values(), (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(f.engine->counters().version, 0u);
  const RefusalCounts r = f.engine->refused();
  EXPECT_EQ(r.nonfinite, 1u);
  EXPECT_EQ(r.nonfinite_skipped, 0u);
  EXPECT_EQ(r.bad_range, 2u);
  EXPECT_EQ(r.malformed, 1u);
  EXPECT_EQ(r.not_active, 1u);
  EXPECT_EQ(f.engine->metrics()[0].nonfinite, 1u);
}

TEST(ShardEngineTest, AssignRefusalMessages) {
  EngineFixture f("asp", 1);
  f.Assign(0, 0, {1, std::nanf(""), 1, 1});
  f.Assign(0, 2, {1, 2, 3});
  EngineRequest unknown = f.Req(EngineRequest::Kind::kAssign, 0, 0, 0, 1);
  unknown.table = 7;
  f.engine->OnAssign(unknown, Buffer::Zeros(1), kT0);
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kError, Kind::kError, Kind::kError));
  EXPECT_EQ(a[0].status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(a[0].status.message(), HasSubstr("element 1 of table 'w'"));
  EXPECT_THAT(a[0].status.message(), HasSubstr("nothing was assigned"));
  EXPECT_EQ(a[1].status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(a[2].status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(a[2].status.message(), HasSubstr("unknown table id 7"));
}

// ------------------------------------------------------------------ learning rate

// The exact values SGD computes: w += (-lr * 1) * g per push, in float.
float SgdSteps(std::initializer_list<std::pair<float, float>> lr_and_g) {
  float w = 0.0f;
  for (auto [lr, g] : lr_and_g) w += (-lr * 1.0f) * g;
  return w;
}

TEST(ShardEngineTest, SetLearningRateAppliesToLaterPushes) {
  EngineFixture f("asp", 2, 4, 4, {}, /*lr=*/0.1f);
  f.Push(0, 0, {3, 3, 3, 3});
  f.SetLearningRate(1, 0.01f);
  f.Push(0, 0, {3, 3, 3, 3});
  const float expected = SgdSteps({{0.1f, 3.0f}, {0.01f, 3.0f}});
  EXPECT_EQ(f.Values(), (std::vector<float>(4, expected)));
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kPushed, Kind::kLearningRateSet, Kind::kPushed));
  EXPECT_EQ(f.engine->shard().tables()[0].chunks[0].learning_rate, 0.01f);
  EXPECT_EQ(f.engine->shard().tables()[0].spec.updater.learning_rate, 0.1f);
  // Not an update: the version counts the two pushes only.
  EXPECT_EQ(f.engine->counters().version, 2u);
  f.SetLearningRate(0, 0.0f);  // 0 is allowed: the table stops moving
  f.Push(0, 0, {3, 3, 3, 3});
  EXPECT_EQ(f.Values(), (std::vector<float>(4, expected)));
}

// Under BSP the rate in force when the round is applied is the one used: a change between
// the pushes and the round's end applies to that round.
TEST(ShardEngineTest, SetLearningRateUnderBspAppliesToTheRoundAppliedAfterIt) {
  EngineFixture f("bsp", 1);
  f.Push(0, 0, {2, 2, 2, 2});
  f.SetLearningRate(0, 0.5f);
  f.Clock(0, 1);
  EXPECT_EQ(f.Values(), (std::vector<float>(4, -1.0f)));
}

// Every owned chunk takes the rate on its own lane, between the pushes decided before and
// after the change (even those queued in the same drain), and the answer comes once the
// last chunk has it.
TEST(ShardEngineTest, SetLearningRateKeepsItsPlaceOnEveryChunksLane) {
  EngineOptions options;
  options.inline_apply_bytes = 0;
  EngineFixture f("asp", 1, /*size=*/8, /*chunk=*/4, options);
  f.host.Hold();
  f.Push(0, 0, {1, 1, 1, 1});
  f.SetLearningRate(0, 0.5f);
  f.Push(0, 0, {1, 1, 1, 1});
  f.Push(0, 0, {1, 1, 1, 1}, kT0, /*offset=*/4);
  EXPECT_TRUE(f.host.answers.empty());
  f.host.Release();
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a),
              ElementsAre(Kind::kPushed, Kind::kPushed, Kind::kLearningRateSet, Kind::kPushed));
  EXPECT_EQ(f.Values(0), (std::vector<float>(4, -1.5f)));
  EXPECT_EQ(f.Values(1), (std::vector<float>(4, -0.5f)));
}

TEST(ShardEngineTest, SetLearningRateRefusals) {
  EngineFixture f("asp", 2);
  f.SetLearningRate(0, -0.1f);
  f.SetLearningRate(0, std::nanf(""));
  f.SetLearningRate(0, std::numeric_limits<float>::infinity());
  f.SetLearningRate(0, 0.5f, /*table=*/3);
  f.engine->OnFinish(f.Req(EngineRequest::Kind::kFinish, 1, 0), kT0);
  f.SetLearningRate(1, 0.5f);
  std::vector<EngineAnswer> a = f.host.Take();
  ASSERT_THAT(Kinds(a), ElementsAre(Kind::kError, Kind::kError, Kind::kError, Kind::kError,
                                    Kind::kFinished, Kind::kError));
  EXPECT_EQ(a[0].status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(a[0].status.message(), HasSubstr("learning rate -0.1 for table 'w'"));
  EXPECT_THAT(a[1].status.message(), HasSubstr("nan"));
  EXPECT_THAT(a[2].status.message(), HasSubstr("inf"));
  EXPECT_EQ(a[3].status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(a[5].status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(f.engine->shard().tables()[0].chunks[0].learning_rate, 1.0f);
  EXPECT_EQ(f.engine->refused().bad_scale, 3u);
  EXPECT_EQ(f.engine->refused().bad_range, 1u);
}

// A shard that owns none of the table answers at once: nothing to change.
TEST(ShardEngineTest, SetLearningRateOfATableWithNoChunkHereIsAnsweredAtOnce) {
  JobConfig job;
  job.policy = "asp";
  job.chunk_elements = 4;
  job.tables.push_back({"one", 1, Initializer::Zeros(), {"sgd", 1.0f}});
  absl::StatusOr<policy::PolicySpec> spec = policy::ParsePolicySpec("asp");
  ASSERT_TRUE(spec.ok());
  RecordingHost host;
  auto e = ShardEngine::Create(job, *spec, /*shard=*/1, /*num_shards=*/2, 1, {}, &host);
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_TRUE((*e)->shard().tables()[0].chunks.empty());
  EngineRequest r;
  r.kind = EngineRequest::Kind::kSetLearningRate;
  r.learning_rate = 0.5f;
  (*e)->OnSetLearningRate(r, kT0);
  ASSERT_THAT(Kinds(host.Take()), ElementsAre(Kind::kLearningRateSet));
}

TEST(ShardEngineTest, DescribeMatchesTheWireFormat) {
  EngineRequest r;
  r.kind = EngineRequest::Kind::kPush;
  r.request_id = 12;
  r.sender = 3;
  r.offset = 0;
  r.length = 100;
  EXPECT_EQ(Describe(r), "PUSH #12 from node 3 (table 0 [0, 100))");
  r.kind = EngineRequest::Kind::kClock;
  EXPECT_EQ(Describe(r), "CLOCK #12 from node 3");
  r.kind = EngineRequest::Kind::kAssign;
  EXPECT_EQ(Describe(r), "ASSIGN #12 from node 3 (table 0 [0, 100))");
  r.kind = EngineRequest::Kind::kSetLearningRate;
  r.table = 2;
  EXPECT_EQ(Describe(r), "SET_LEARNING_RATE #12 from node 3 (table 2)");
}

// ------------------------------------------------------------------------ the updater's view

// What the engine hands the updater: an updater that records every Update (and whether it
// came in a batch) and applies plain SGD.
struct SeenUpdate {
  float gradient_scale;
  float step_scale;
  float learning_rate;
  uint64_t step;
  std::size_t batch;  // updates in the Apply/ApplyMany call that carried it
};

class RecordingUpdater final : public Updater {
 public:
  explicit RecordingUpdater(std::shared_ptr<std::vector<SeenUpdate>> seen)
      : seen_(std::move(seen)) {}
  void Apply(std::span<float> values, std::span<float>, const Update& u) const override {
    Record(u, 1);
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] -= u.learning_rate * u.step_scale * u.gradient_scale * u.gradient[i];
    }
  }
  void ApplyMany(std::span<float> values, std::span<float> state,
                 std::span<const Update> updates) const override {
    for (const Update& u : updates) {
      Record(u, updates.size());
      for (std::size_t i = 0; i < values.size(); ++i) {
        values[i] -= u.learning_rate * u.step_scale * u.gradient_scale * u.gradient[i];
      }
    }
  }

 private:
  void Record(const Update& u, std::size_t batch) const {
    seen_->push_back({u.gradient_scale, u.step_scale, u.learning_rate, u.step, batch});
  }
  std::shared_ptr<std::vector<SeenUpdate>> seen_;
};

struct UpdaterFixture {
  UpdaterFixture(const std::string& policy, int workers, const std::string& schedule,
                 int64_t inline_apply_bytes = int64_t{64} << 10) {
    JobConfig job;
    job.policy = policy;
    job.chunk_elements = 4;
    job.tables.push_back({"w", 4, Initializer::Zeros(), {"rec", 1.0f, schedule}});
    EngineOptions options;
    options.inline_apply_bytes = inline_apply_bytes;
    options.updater_factory =
        [seen = seen](const UpdaterSpec&) -> absl::StatusOr<std::unique_ptr<Updater>> {
      return std::make_unique<RecordingUpdater>(seen);
    };
    absl::StatusOr<policy::PolicySpec> spec = policy::ParsePolicySpec(policy);
    EXPECT_TRUE(spec.ok()) << spec.status();
    auto e = ShardEngine::Create(job, *spec, 0, 1, workers, options, &host);
    EXPECT_TRUE(e.ok()) << e.status();
    engine = *std::move(e);
  }
  void Push(int rank, int64_t clock, float worker_scale = 0) {
    EngineRequest r;
    r.kind = EngineRequest::Kind::kPush;
    r.request_id = next_id++;
    r.sender = static_cast<uint32_t>(10 + rank);
    r.rank = rank;
    r.length = 4;
    r.clock = clock;
    r.worker_scale = worker_scale;
    engine->OnPush(r, Buffer::CopyOf(std::vector<float>{1, 2, 3, 4}), kT0);
  }
  void Clock(int rank, int64_t clock) {
    EngineRequest r;
    r.kind = EngineRequest::Kind::kClock;
    r.request_id = next_id++;
    r.sender = static_cast<uint32_t>(10 + rank);
    r.rank = rank;
    r.clock = clock;
    engine->OnClock(r, kT0);
  }

  std::shared_ptr<std::vector<SeenUpdate>> seen = std::make_shared<std::vector<SeenUpdate>>();
  RecordingHost host;
  std::unique_ptr<ShardEngine> engine;
  uint64_t next_id = 1;
};

// A round's sum: the aggregation's 1 / divisor is the gradient scale, the step scale is 1;
// the step is the chunk's update count and the schedule's t the round.
TEST(ShardEngineUpdaterTest, ARoundIsAveragedThroughTheGradientScale) {
  UpdaterFixture f("bsp", 2, "step:every=1,gamma=0.5");
  for (int64_t round = 0; round < 3; ++round) {
    f.Push(0, round);
    f.Push(1, round);
    f.Clock(0, round + 1);
    f.Clock(1, round + 1);
  }
  ASSERT_EQ(f.seen->size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    const SeenUpdate& u = (*f.seen)[k];
    EXPECT_EQ(u.gradient_scale, 0.5f) << k;
    EXPECT_EQ(u.step_scale, 1.0f) << k;
    EXPECT_EQ(u.step, k + 1);
    EXPECT_EQ(u.learning_rate, std::ldexp(1.0f, -static_cast<int>(k)));  // 1, 0.5, 0.25
  }
}

// A push applied on its own: gradient scale 1; the policy's weighting (here the worker's
// eager-pull scale) is the step scale; the schedule's t is the worker's clock.
TEST(ShardEngineUpdaterTest, APushOnItsOwnCarriesTheWeightingAsTheStepScale) {
  UpdaterFixture f("asp", 2, "step:every=2,gamma=0.5");
  f.Push(0, 0, 0.25f);
  f.Push(1, 3);
  f.Push(0, 4, 0.5f);
  ASSERT_EQ(f.seen->size(), 3u);
  const std::vector<float> step_scale = {0.25f, 1.0f, 0.5f};
  const std::vector<float> lr = {1.0f, 0.5f, 0.25f};  // t = 0, 3, 4
  for (std::size_t k = 0; k < 3; ++k) {
    const SeenUpdate& u = (*f.seen)[k];
    EXPECT_EQ(u.gradient_scale, 1.0f) << k;
    EXPECT_EQ(u.step_scale, step_scale[k]) << k;
    EXPECT_EQ(u.learning_rate, lr[k]) << k;
    EXPECT_EQ(u.step, k + 1);
  }
}

// Pushes that queue up behind a busy lane are applied in one ApplyMany, each with the step
// and t captured when it was decided.
TEST(ShardEngineUpdaterTest, BatchedPushesKeepTheirOwnStepAndSchedule) {
  UpdaterFixture f("asp", 1, "step:every=1,gamma=0.5", /*inline_apply_bytes=*/0);
  f.host.Hold();
  f.Push(0, 0);
  f.Push(0, 1);
  f.Push(0, 2);
  EXPECT_TRUE(f.seen->empty());
  f.host.Release();
  ASSERT_EQ(f.seen->size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    const SeenUpdate& u = (*f.seen)[k];
    EXPECT_EQ(u.batch, 3u);
    EXPECT_EQ(u.step, k + 1);
    EXPECT_EQ(u.learning_rate, std::ldexp(1.0f, -static_cast<int>(k)));
  }
}

}  // namespace
}  // namespace kairos::internal
