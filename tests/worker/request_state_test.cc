// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of RequestState, the shared state behind kairos::Request: parts, the first error
// (prefixed with what the request was), Fail, waits with a deadline, and WaitTuning (the
// spin of a lone request, the wait on the worker's transport).

#include "worker/request_state.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/worker.h"

namespace kairos::internal {
namespace {

using ::testing::HasSubstr;

constexpr char kWhat[] = "pull of table 'w' [0, 100)";
const RequestLabel kLabel{"pull", "w", 0, 100};
const absl::Time kFarDeadline = absl::InfiniteFuture();

TEST(RequestStateTest, CompletesWhenEveryPartIsDone) {
  RequestState state(kLabel, kFarDeadline, 3);
  EXPECT_EQ(state.label().ToString(), kWhat);
  EXPECT_FALSE(state.done());
  state.PartDone(absl::OkStatus());
  state.PartDone(absl::OkStatus());
  EXPECT_FALSE(state.done());
  state.PartDone(absl::OkStatus());
  EXPECT_TRUE(state.done());
  EXPECT_TRUE(state.Wait(absl::InfinitePast()).ok());
}

TEST(RequestStateTest, ZeroPartsIsCompleteAtOnce) {
  RequestState state(kLabel, kFarDeadline, 0);
  EXPECT_TRUE(state.done());
  EXPECT_TRUE(state.Wait(absl::InfinitePast()).ok());
}

TEST(RequestStateTest, KeepsTheFirstErrorPrefixedWithWhat) {
  RequestState state(kLabel, kFarDeadline, 3);
  state.PartDone(absl::OkStatus());
  state.PartDone(absl::UnavailableError("server 1 is down"));
  state.PartDone(absl::InternalError("a later error"));
  ASSERT_TRUE(state.done());
  const absl::Status s = state.Wait(absl::InfinitePast());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "pull of table 'w' [0, 100): server 1 is down");
}

TEST(RequestStateTest, ErrorIsNotPrefixedWhenWhatIsEmpty) {
  RequestState state(RequestLabel{}, kFarDeadline, 1);
  state.PartDone(absl::NotFoundError("no table 9"));
  EXPECT_EQ(state.Wait(absl::InfinitePast()), absl::NotFoundError("no table 9"));
}

TEST(RequestStateTest, ExtraPartsAfterCompletionAreIgnored) {
  RequestState state(kLabel, kFarDeadline, 1);
  state.PartDone(absl::OkStatus());
  state.PartDone(absl::InternalError("late"));
  EXPECT_TRUE(state.Wait(absl::InfinitePast()).ok());
}

TEST(RequestStateTest, FailCompletesWithOutstandingParts) {
  RequestState state(kLabel, kFarDeadline, 4);
  state.PartDone(absl::OkStatus());
  state.Fail(absl::CancelledError("the worker is shutting down"));
  EXPECT_TRUE(state.done());
  const absl::Status s = state.Wait(absl::InfinitePast());
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(s.message(), "pull of table 'w' [0, 100): the worker is shutting down");
  state.PartDone(absl::InternalError("late part"));  // ignored
  EXPECT_EQ(state.Wait(absl::InfinitePast()).code(), absl::StatusCode::kCancelled);
}

TEST(RequestStateTest, FailKeepsAnEarlierError) {
  RequestState state(kLabel, kFarDeadline, 2);
  state.PartDone(absl::UnavailableError("first"));
  state.Fail(absl::DeadlineExceededError("second"));
  EXPECT_EQ(state.Wait(absl::InfinitePast()).code(), absl::StatusCode::kUnavailable);
}

TEST(RequestStateTest, FailAfterCompletionChangesNothing) {
  RequestState state(kLabel, kFarDeadline, 1);
  state.PartDone(absl::OkStatus());
  state.Fail(absl::InternalError("too late"));
  EXPECT_TRUE(state.Wait(absl::InfinitePast()).ok());
}

TEST(RequestStateTest, FailedIsCompleteWithTheStatusAsIs) {
  std::shared_ptr<RequestState> state =
      RequestState::Failed(absl::InvalidArgumentError("unknown table 'q'"));
  EXPECT_TRUE(state->done());
  EXPECT_EQ(state->Wait(absl::InfinitePast()), absl::InvalidArgumentError("unknown table 'q'"));
}

TEST(RequestStateTest, WaitPastDeadlineIsDeadlineExceededNamingTheRequest) {
  RequestState state(kLabel, kFarDeadline, 2);
  state.PartDone(absl::OkStatus());
  const absl::Status s = state.Wait(absl::InfinitePast());
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(s.message(), HasSubstr(kWhat));
  const absl::Status later = state.Wait(absl::Now() + absl::Milliseconds(20));
  EXPECT_EQ(later.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_FALSE(state.done()) << "a timed-out wait does not complete the request";
}

TEST(RequestStateTest, WaitWakesWhenAnotherThreadCompletesTheLastPart) {
  RequestState state(kLabel, kFarDeadline, 2);
  std::thread completer([&state] {
    state.PartDone(absl::OkStatus());
    state.PartDone(absl::OkStatus());
  });
  EXPECT_TRUE(state.Wait(absl::Now() + absl::Seconds(10)).ok());
  completer.join();
}

TEST(RequestStateTest, KeepsTheDeadlineItWasGiven) {
  const absl::Time deadline = absl::FromUnixSeconds(12345);
  RequestState state(kLabel, deadline, 1);
  EXPECT_EQ(state.deadline(), deadline);
}

TEST(RequestStateTest, LabelsOfControlRequestsNameTheWorker) {
  EXPECT_EQ((RequestLabel{"barrier", "", 0, 0, 3}).ToString(), "barrier of worker 3");
  EXPECT_EQ(RequestLabel{}.ToString(), "");
}

TEST(RequestStateTest, PulledPartsAreCopiedIntoPlaceByWait) {
  std::vector<float> out(6, -1.0f);
  RequestState state(kLabel, kFarDeadline, 2);
  state.ReceiveInto(out.data());
  Buffer second = Buffer::CopyOf(std::vector<float>{4, 5, 6});
  state.PartDone(uint64_t{3}, second);
  state.PartDone(uint64_t{0}, Buffer::CopyOf(std::vector<float>{1, 2, 3}));
  EXPECT_EQ(out, std::vector<float>(6, -1.0f)) << "nothing is written before Wait";
  ASSERT_TRUE(state.Wait(absl::InfinitePast()).ok());
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(RequestStateTest, GatheredPullOfOnePartTakesTheReceivedBuffer) {
  ConstBuffer out;
  RequestState state(kLabel, kFarDeadline, 1);
  state.GatherInto(&out, 4);
  Buffer received = Buffer::CopyOf(std::vector<float>{1, 2, 3, 4});
  state.PartDone(uint64_t{0}, received);
  ASSERT_TRUE(state.Wait(absl::InfinitePast()).ok());
  EXPECT_EQ(out.data(), received.data()) << "no copy";
  EXPECT_EQ(out.size(), 4u);
}

TEST(RequestStateTest, GatheredPullOfSeveralPartsIsJoinedInOrderOfOffset) {
  ConstBuffer out;
  RequestState state(kLabel, kFarDeadline, 3);
  state.GatherInto(&out, 7);
  state.PartDone(uint64_t{5}, Buffer::CopyOf(std::vector<float>{6, 7}));
  state.PartDone(uint64_t{0}, Buffer::CopyOf(std::vector<float>{1, 2}));
  EXPECT_TRUE(out.empty());
  state.PartDone(uint64_t{2}, Buffer::CopyOf(std::vector<float>{3, 4, 5}));
  ASSERT_TRUE(state.Wait(absl::InfinitePast()).ok());
  ASSERT_EQ(out.size(), 7u);
  EXPECT_EQ(std::vector<float>(out.data(), out.data() + 7),
            (std::vector<float>{1, 2, 3, 4, 5, 6, 7}));
  const float* first = out.data();
  ASSERT_TRUE(state.Wait(absl::InfinitePast()).ok());  // a second wait changes nothing
  EXPECT_EQ(out.data(), first);
}

TEST(RequestStateTest, GatheredPullJoinsIntoTheCallersOwnBuffer) {
  ConstBuffer out = Buffer::Zeros(4);
  const float* storage = out.data();
  RequestState state(kLabel, kFarDeadline, 2);
  state.GatherInto(&out, 4);
  state.PartDone(uint64_t{2}, Buffer::CopyOf(std::vector<float>{3, 4}));
  state.PartDone(uint64_t{0}, Buffer::CopyOf(std::vector<float>{1, 2}));
  ASSERT_TRUE(state.Wait(absl::InfinitePast()).ok());
  EXPECT_EQ(out.data(), storage) << "reused, not reallocated";
  EXPECT_EQ(std::vector<float>(out.data(), out.data() + 4), (std::vector<float>{1, 2, 3, 4}));
}

TEST(RequestStateTest, GatheredPullNeverWritesIntoSharedOrForeignMemory) {
  // A buffer someone else also holds, and adopted memory (such as a received message):
  // both are left as they are and the values go to a new buffer.
  Buffer mine = Buffer::Zeros(2);
  ConstBuffer shared = mine;
  auto storage = std::make_shared<std::vector<float>>(2, 9.0f);
  ConstBuffer adopted = Buffer::Adopt(storage, storage->data(), 2);
  for (ConstBuffer* out : {&shared, &adopted}) {
    const ConstBuffer before = *out;
    RequestState state(kLabel, kFarDeadline, 2);
    state.GatherInto(out, 2);
    state.PartDone(uint64_t{1}, Buffer::CopyOf(std::vector<float>{6}));
    state.PartDone(uint64_t{0}, Buffer::CopyOf(std::vector<float>{5}));
    ASSERT_TRUE(state.Wait(absl::InfinitePast()).ok());
    EXPECT_NE(out->data(), before.data());
    EXPECT_EQ(std::vector<float>(out->data(), out->data() + 2), (std::vector<float>{5, 6}));
  }
  EXPECT_EQ(mine[0], 0.0f);
  EXPECT_EQ((*storage)[0], 9.0f);
}

TEST(RequestStateTest, FailedGatheredPullLeavesTheBufferAlone) {
  ConstBuffer out;
  RequestState state(kLabel, kFarDeadline, 2);
  state.GatherInto(&out, 4);
  state.PartDone(uint64_t{0}, Buffer::CopyOf(std::vector<float>{1, 2}));
  state.PartDone(absl::UnavailableError("server 1 is down"));
  EXPECT_EQ(state.Wait(absl::InfinitePast()).code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(out.empty());
}

TEST(RequestStateTest, CountsItselfOpenUntilItCompletesOnce) {
  auto tuning = std::make_shared<WaitTuning>();
  {
    RequestState a(kLabel, kFarDeadline, 2, /*spin=*/true, tuning);
    RequestState b(kLabel, kFarDeadline, 1, /*spin=*/true, tuning);
    EXPECT_EQ(tuning->open.load(), 2);
    a.PartDone(absl::OkStatus());
    EXPECT_EQ(tuning->open.load(), 2) << "a part is still outstanding";
    a.PartDone(absl::OkStatus());
    EXPECT_EQ(tuning->open.load(), 1);
    a.PartDone(absl::OkStatus());  // extra: ignored
    b.Fail(absl::CancelledError("stop"));
    b.Fail(absl::CancelledError("again"));
    EXPECT_EQ(tuning->open.load(), 0);
    EXPECT_TRUE(a.Wait(absl::InfinitePast()).ok());
  }
  RequestState none(kLabel, kFarDeadline, 0, /*spin=*/true, tuning);
  EXPECT_EQ(tuning->open.load(), 0) << "a request of no parts is complete at once";
  EXPECT_TRUE(none.done());
  EXPECT_TRUE(none.Wait(absl::InfinitePast()).ok());
}

// Requests that do not spin (large ones) are also counted apart, until they complete: the
// worker's I/O thread does not spin while one is open.
TEST(RequestStateTest, CountsItselfOpenAndLargeUntilItCompletes) {
  auto tuning = std::make_shared<WaitTuning>();
  RequestState small(kLabel, kFarDeadline, 1, /*spin=*/true, tuning);
  RequestState large(kLabel, kFarDeadline, 2, /*spin=*/false, tuning);
  EXPECT_EQ(tuning->open.load(), 2);
  EXPECT_EQ(tuning->open_large.load(), 1);
  large.PartDone(absl::OkStatus());
  EXPECT_EQ(tuning->open_large.load(), 1) << "a part is still outstanding";
  large.Fail(absl::CancelledError("stop"));
  large.PartDone(absl::OkStatus());  // after the end: ignored
  EXPECT_EQ(tuning->open_large.load(), 0);
  EXPECT_EQ(tuning->open.load(), 1);
  small.PartDone(absl::OkStatus());
  EXPECT_EQ(tuning->open.load(), 0);
  EXPECT_EQ(tuning->open_large.load(), 0);
  RequestState none(kLabel, kFarDeadline, 0, /*spin=*/false, tuning);
  EXPECT_EQ(tuning->open_large.load(), 0) << "a request of no parts is complete at once";
}

TEST(WaitTuningTest, SpinsLongerThanTheAverageAnswerUpToItsLimit) {
  WaitTuning t;
  EXPECT_EQ(t.SpinBudgetNs(), WaitTuning::kFirstSpinNs) << "nothing known yet";
  t.RecordLoneLatency(40'000);
  EXPECT_EQ(t.lone_latency_ns.load(), 40'000) << "the first sample is taken as it is";
  EXPECT_EQ(t.SpinBudgetNs(), 60'000);
  t.RecordLoneLatency(80'000);
  EXPECT_EQ(t.lone_latency_ns.load(), 50'000) << "(3 x 40 + 80) / 4";
  EXPECT_EQ(t.SpinBudgetNs(), 75'000);
  t.lone_latency_ns.store(120'000);
  EXPECT_EQ(t.SpinBudgetNs(), WaitTuning::kMaxSpinNs) << "1.5 x 120 us, capped";
  t.lone_latency_ns.store(WaitTuning::kMaxSpinNs + 1);
  EXPECT_EQ(t.SpinBudgetNs(), 0) << "answers slower than the limit: sleep at once";
}

// Only a request issued while no other was open learns the answer time: behind others its
// wait says nothing about a synchronous call's.
TEST(WaitTuningTest, OnlyLoneSpinningRequestsRecordTheirAnswerTime) {
  auto tuning = std::make_shared<WaitTuning>();
  {
    RequestState big(kLabel, kFarDeadline, 1, /*spin=*/false, tuning);
    RequestState behind(kLabel, kFarDeadline, 1, /*spin=*/true, tuning);
    behind.PartDone(absl::OkStatus());
    big.PartDone(absl::OkStatus());
  }
  EXPECT_EQ(tuning->lone_latency_ns.load(), 0);
  RequestState lone(kLabel, kFarDeadline, 1, /*spin=*/true, tuning);
  lone.PartDone(absl::OkStatus());
  EXPECT_GT(tuning->lone_latency_ns.load(), 0);
  EXPECT_TRUE(lone.Wait(absl::InfinitePast()).ok());
}

// A wait that cannot end at once goes to the worker's WaitHere (after a lone request's
// spin), which may complete the request itself: the wait then returns without sleeping.
TEST(WaitTuningTest, AWaitThatCannotEndAtOnceWaitsHere) {
  auto tuning = std::make_shared<WaitTuning>();
  RequestState* completing = nullptr;
  int calls = 0;
  absl::Time until_seen;
  absl::Time spin_seen;
  tuning->SetWaitHere([&](absl::FunctionRef<bool()> done, absl::Time until, absl::Time spin) {
    ++calls;
    until_seen = until;
    spin_seen = spin;
    EXPECT_FALSE(done());
    completing->PartDone(absl::OkStatus());  // as a handler run here would
    EXPECT_TRUE(done());
    return true;
  });
  RequestState first(kLabel, kFarDeadline, 1, /*spin=*/true, tuning);   // lone: spins first
  RequestState behind(kLabel, kFarDeadline, 1, /*spin=*/true, tuning);  // behind it
  RequestState large(kLabel, kFarDeadline, 1, /*spin=*/false, tuning);
  const absl::Time until = absl::Now() + absl::Seconds(30);
  for (RequestState* r : {&behind, &large, &first}) {
    completing = r;
    const absl::Time before = absl::Now();
    EXPECT_TRUE(r->Wait(until).ok());
    if (r == &first) {  // spins in the poll for as long as it would have spun
      EXPECT_GT(spin_seen, absl::InfinitePast());
      EXPECT_LE(spin_seen, before + absl::Nanoseconds(WaitTuning::kFirstSpinNs));
    } else {
      EXPECT_EQ(spin_seen, absl::InfinitePast()) << "behind others, or large: no spin";
    }
  }
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(until_seen, until);
  // Complete already, or a deadline already past: nothing to wait for here.
  EXPECT_TRUE(first.Wait(until).ok());
  RequestState late(kLabel, kFarDeadline, 1, /*spin=*/true, tuning);
  EXPECT_EQ(late.Wait(absl::Now() - absl::Seconds(1)).code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(calls, 3);
  late.Fail(absl::CancelledError("end"));
}

// A WaitHere that did not wait (false: the I/O thread was busy) leaves the caller to sleep
// until the I/O thread completes the request; without a WaitHere set, or once cleared, the
// caller sleeps as well.
TEST(WaitTuningTest, WithoutAWaitHereTheCallerSleeps) {
  for (const bool set : {true, false}) {
    auto tuning = std::make_shared<WaitTuning>();
    int calls = 0;
    tuning->SetWaitHere([&](absl::FunctionRef<bool()>, absl::Time, absl::Time) {
      ++calls;
      return false;
    });
    if (!set) tuning->ClearWaitHere();
    RequestState r(kLabel, kFarDeadline, 2, /*spin=*/false, tuning);
    r.PartDone(absl::OkStatus());
    std::thread io([&] { r.PartDone(absl::OkStatus()); });
    EXPECT_TRUE(r.Wait(absl::Now() + absl::Seconds(30)).ok());
    io.join();
    EXPECT_LE(calls, set ? 1 : 0);
  }
}

// ClearWaitHere returns only once the waits in progress have returned (the worker clears it
// before it goes, and a wait here runs the worker's handlers): while a wait is inside, a
// clearer started from it does not get through (given 100 ms to, which a broken guard
// would use), and gets through once it returned.
TEST(WaitTuningTest, ClearWaitHereWaitsForTheWaitsInProgress) {
  auto tuning = std::make_shared<WaitTuning>();
  absl::Notification cleared;
  std::thread clearer;
  bool cleared_inside = true;
  tuning->SetWaitHere([&](absl::FunctionRef<bool()>, absl::Time, absl::Time) {
    clearer = std::thread([&] {
      tuning->ClearWaitHere();
      cleared.Notify();
    });
    cleared_inside = cleared.WaitForNotificationWithTimeout(absl::Milliseconds(100));
    return true;
  });
  EXPECT_TRUE(tuning->WaitHere([] { return false; }, absl::InfiniteFuture(), absl::InfinitePast()));
  clearer.join();
  EXPECT_FALSE(cleared_inside) << "ClearWaitHere returned while a wait was in progress";
  EXPECT_TRUE(cleared.HasBeenNotified());
  EXPECT_FALSE(tuning->WaitHere([] { return false; }, absl::InfiniteFuture(), absl::InfinitePast()))
      << "cleared";
}

TEST(RequestTest, DefaultRequestIsCompleteAndOk) {
  Request r;
  EXPECT_TRUE(r.done());
  EXPECT_TRUE(r.Wait().ok());
  EXPECT_TRUE(r.WaitFor(absl::ZeroDuration()).ok());
}

TEST(RequestTest, WaitForGivesUpWithDeadlineExceeded) {
  auto state = std::make_shared<RequestState>(kLabel, kFarDeadline, 1);
  Request r(state);
  EXPECT_FALSE(r.done());
  EXPECT_EQ(r.WaitFor(absl::Milliseconds(10)).code(), absl::StatusCode::kDeadlineExceeded);
  state->PartDone(absl::AbortedError("stop"));
  EXPECT_TRUE(r.done());
  EXPECT_EQ(r.Wait().code(), absl::StatusCode::kAborted);
  Request copy = r;  // copies share the state
  EXPECT_EQ(copy.WaitFor(absl::ZeroDuration()).code(), absl::StatusCode::kAborted);
}

}  // namespace
}  // namespace kairos::internal
