// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of RequestState, the shared state behind kairos::Request: parts, the first error
// (prefixed with what the request was), Fail, and waits with a deadline.

#include "worker/request_state.h"

#include <memory>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/worker.h"

namespace kairos::internal {
namespace {

using ::testing::HasSubstr;

constexpr char kWhat[] = "pull of table 'w' [0, 100)";
const absl::Time kFarDeadline = absl::InfiniteFuture();

TEST(RequestStateTest, CompletesWhenEveryPartIsDone) {
  RequestState state(kWhat, kFarDeadline, 3);
  EXPECT_EQ(state.what(), kWhat);
  EXPECT_FALSE(state.done());
  state.PartDone(absl::OkStatus());
  state.PartDone(absl::OkStatus());
  EXPECT_FALSE(state.done());
  state.PartDone(absl::OkStatus());
  EXPECT_TRUE(state.done());
  EXPECT_TRUE(state.Wait(absl::InfinitePast()).ok());
}

TEST(RequestStateTest, ZeroPartsIsCompleteAtOnce) {
  RequestState state(kWhat, kFarDeadline, 0);
  EXPECT_TRUE(state.done());
  EXPECT_TRUE(state.Wait(absl::InfinitePast()).ok());
}

TEST(RequestStateTest, KeepsTheFirstErrorPrefixedWithWhat) {
  RequestState state(kWhat, kFarDeadline, 3);
  state.PartDone(absl::OkStatus());
  state.PartDone(absl::UnavailableError("server 1 is down"));
  state.PartDone(absl::InternalError("a later error"));
  ASSERT_TRUE(state.done());
  const absl::Status s = state.Wait(absl::InfinitePast());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "pull of table 'w' [0, 100): server 1 is down");
}

TEST(RequestStateTest, ErrorIsNotPrefixedWhenWhatIsEmpty) {
  RequestState state("", kFarDeadline, 1);
  state.PartDone(absl::NotFoundError("no table 9"));
  EXPECT_EQ(state.Wait(absl::InfinitePast()), absl::NotFoundError("no table 9"));
}

TEST(RequestStateTest, ExtraPartsAfterCompletionAreIgnored) {
  RequestState state(kWhat, kFarDeadline, 1);
  state.PartDone(absl::OkStatus());
  state.PartDone(absl::InternalError("late"));
  EXPECT_TRUE(state.Wait(absl::InfinitePast()).ok());
}

TEST(RequestStateTest, FailCompletesWithOutstandingParts) {
  RequestState state(kWhat, kFarDeadline, 4);
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
  RequestState state(kWhat, kFarDeadline, 2);
  state.PartDone(absl::UnavailableError("first"));
  state.Fail(absl::DeadlineExceededError("second"));
  EXPECT_EQ(state.Wait(absl::InfinitePast()).code(), absl::StatusCode::kUnavailable);
}

TEST(RequestStateTest, FailAfterCompletionChangesNothing) {
  RequestState state(kWhat, kFarDeadline, 1);
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
  RequestState state(kWhat, kFarDeadline, 2);
  state.PartDone(absl::OkStatus());
  const absl::Status s = state.Wait(absl::InfinitePast());
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(s.message(), HasSubstr(kWhat));
  const absl::Status later = state.Wait(absl::Now() + absl::Milliseconds(20));
  EXPECT_EQ(later.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_FALSE(state.done()) << "a timed-out wait does not complete the request";
}

TEST(RequestStateTest, WaitWakesWhenAnotherThreadCompletesTheLastPart) {
  RequestState state(kWhat, kFarDeadline, 2);
  std::thread completer([&state] {
    state.PartDone(absl::OkStatus());
    state.PartDone(absl::OkStatus());
  });
  EXPECT_TRUE(state.Wait(absl::Now() + absl::Seconds(10)).ok());
  completer.join();
}

TEST(RequestStateTest, KeepsTheDeadlineItWasGiven) {
  const absl::Time deadline = absl::FromUnixSeconds(12345);
  RequestState state(kWhat, deadline, 1);
  EXPECT_EQ(state.deadline(), deadline);
}

TEST(RequestTest, DefaultRequestIsCompleteAndOk) {
  Request r;
  EXPECT_TRUE(r.done());
  EXPECT_TRUE(r.Wait().ok());
  EXPECT_TRUE(r.WaitFor(absl::ZeroDuration()).ok());
}

TEST(RequestTest, WaitForGivesUpWithDeadlineExceeded) {
  auto state = std::make_shared<RequestState>(kWhat, kFarDeadline, 1);
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
