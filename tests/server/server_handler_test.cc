// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The server's message handler driven through a FakeTransport (CreateServerWithTransport):
// the test plays the coordinator and the workers on its own thread, every message is
// handled before Deliver returns, and the replies are read from the transport. Small
// chunks are applied on the calling thread (inline_apply_bytes), so nothing here waits.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/server.h"
#include "tests/server/fake_server_job.h"
#include "fakes/fake_transport.h"
#include "wire/convert.h"
#include "wire/credential.h"

namespace kairos {
namespace {

using internal::FakeTransport;
using internal::Message;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::FakeJobOptions;
using testing::FakeServerJob;

// "w": 8 elements in chunks of 4, starting at zero, SGD with learning rate 1.
FakeJobOptions Job(const std::string& policy) { return testing::SmallSgdJob(policy); }

// Every chunk is worked on the calling thread.
ServerOptions Inline() { return testing::InlineApply(); }

std::vector<float> Values(const Buffer& b) { return {b.span().begin(), b.span().end()}; }

// The one message the server sent since the last call, which must be the reply to `id`.
Message OnlyReply(FakeServerJob& job, uint64_t id) {
  std::vector<FakeTransport::Sent> sent = job.transport().TakeSent();
  EXPECT_EQ(sent.size(), 1u);
  if (sent.empty()) return Message();
  EXPECT_EQ(sent[0].message.header.request_id(), id);
  return sent[0].message;
}

TEST(ServerHandlerTest, JoinsStartsAndServesAPushAndAPull) {
  FakeServerJob job(Job("asp"), Inline());
  ASSERT_TRUE(job.Start().ok());
  EXPECT_EQ(job.transport().connections(), std::vector<std::string>{"fake://coordinator"});
  EXPECT_EQ(job.server().stats().shard, 0);

  Message push = job.Push(0, 0, 4, {1, 2, 3, 4}, 0);
  const uint64_t push_id = push.header.request_id();
  ASSERT_TRUE(job.FromWorker(0, std::move(push)).ok());
  Message reply = OnlyReply(job, push_id);
  EXPECT_EQ(reply.header.kind(), wire::PUSH_REPLY);
  EXPECT_EQ(reply.header.version(), 1u);

  Message pull = job.Request(wire::PULL, 1, 0, 4, 4, 0);
  const uint64_t pull_id = pull.header.request_id();
  ASSERT_TRUE(job.FromWorker(1, std::move(pull)).ok());
  std::vector<FakeTransport::Sent> sent = job.transport().TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].to, FakeServerJob::worker_peer(1));
  EXPECT_EQ(sent[0].message.header.kind(), wire::PULL_REPLY);
  EXPECT_EQ(sent[0].message.header.request_id(), pull_id);
  ASSERT_EQ(sent[0].message.payloads.size(), 1u);
  EXPECT_THAT(Values(sent[0].message.payloads[0]), ElementsAre(-1, -2, -3, -4));
  EXPECT_EQ(job.server().stats().pushes, 1u);
  EXPECT_EQ(job.server().stats().pulls, 1u);
}

TEST(ServerHandlerTest, BspReadWaitsForEveryClockThenSeesTheRoundAverage) {
  FakeServerJob job(Job("bsp"), Inline());
  ASSERT_TRUE(job.Start().ok());
  ASSERT_TRUE(job.FromWorker(0, job.Push(0, 0, 0, {2, 2, 2, 2}, 0)).ok());
  ASSERT_TRUE(job.FromWorker(1, job.Push(1, 0, 0, {4, 4, 4, 4}, 0)).ok());
  job.transport().ClearSent();
  ASSERT_TRUE(job.FromWorker(0, job.Request(wire::CLOCK, 0, 0, 0, 0, 1)).ok());
  Message pull = job.Request(wire::PULL, 0, 0, 0, 4, 1);
  ASSERT_TRUE(job.FromWorker(0, std::move(pull)).ok());
  EXPECT_EQ(job.transport().sent_count(), 0u);  // waits for worker 1's clock
  ASSERT_TRUE(job.FromWorker(1, job.Request(wire::CLOCK, 1, 0, 0, 0, 1)).ok());
  std::vector<FakeTransport::Sent> sent = job.transport().TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].message.header.kind(), wire::PULL_REPLY);
  EXPECT_THAT(Values(sent[0].message.payloads[0]), ElementsAre(-3, -3, -3, -3));
}

TEST(ServerHandlerTest, RequestOfANodeThatIsNotAWorkerIsRefused) {
  FakeServerJob job(Job("asp"), Inline());
  ASSERT_TRUE(job.Start().ok());
  Message pull = job.Request(wire::PULL, 0, 0, 0, 4, 0);
  pull.header.set_sender(999);
  const uint64_t id = pull.header.request_id();
  ASSERT_TRUE(job.FromWorker(0, std::move(pull)).ok());
  Message reply = OnlyReply(job, id);
  EXPECT_EQ(reply.header.kind(), wire::ERROR);
  EXPECT_EQ(internal::StatusOf(reply.header).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(reply.header.status().message(), HasSubstr("node 999 is not a worker"));
}

TEST(ServerHandlerTest, MalformedFramesAreDroppedAndCounted) {
  FakeServerJob job(Job("asp"), Inline());
  ASSERT_TRUE(job.Start().ok());
  absl::Status s = job.transport().DeliverFrames(FakeServerJob::worker_peer(0),
                                                 std::vector<std::string>{"\xff\xff junk"});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(job.transport().sent_count(), 0u);  // nobody to answer
  EXPECT_GE(job.server().stats().dropped, 1u);
}

TEST(ServerHandlerTest, TickSendsAHeartbeatToTheCoordinator) {
  FakeServerJob job(Job("asp"), Inline());
  ASSERT_TRUE(job.Start().ok());
  job.transport().Tick(absl::Now());
  std::vector<FakeTransport::Sent> sent = job.transport().TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].to, job.coordinator());
  EXPECT_EQ(sent[0].message.header.kind(), wire::HEARTBEAT);
  EXPECT_EQ(sent[0].message.header.sender(), job.server_node(0));
}

// ------------------------------------------------ regressions found by the server fuzzer
// tests/fuzz/regressions/server holds the inputs; these tests name what they found.

// A START whose worker ranks are outside [0, num_workers) made every later request of such
// a worker read the gate's per-worker state out of bounds. Now the START is refused
// (READY with the error) and the server ends with it.
TEST(ServerHandlerTest, StartWithAWorkerRankOutOfRangeIsRefused) {
  FakeServerJob job(Job("asp"), Inline());
  // The START says 1 worker but gives ranks 0 and 1.
  absl::Status ready = job.Start([](wire::Start& s) { s.set_num_workers(1); });
  EXPECT_EQ(ready.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(ready.message()), HasSubstr("worker rank 1, out of range"));
  EXPECT_EQ(job.server().Wait(absl::ZeroDuration()), ready);
  // Rank 1's requests are answered, not served from out-of-range state.
  Message clock = job.Request(wire::CLOCK, 1, 0, 0, 0, 1);
  const uint64_t id = clock.header.request_id();
  ASSERT_TRUE(job.FromWorker(1, std::move(clock)).ok());
  Message reply = OnlyReply(job, id);
  EXPECT_EQ(internal::StatusOf(reply.header).code(), absl::StatusCode::kUnavailable);
}

// A second START rebuilt the shard, losing every update, while reads waiting in the old
// one (and, for large chunks, lane jobs) still pointed into it. Now it is ignored.
TEST(ServerHandlerTest, SecondStartIsIgnoredAndKeepsTheValues) {
  FakeServerJob job(Job("asp"), Inline());
  ASSERT_TRUE(job.Start().ok());
  ASSERT_TRUE(job.FromWorker(0, job.Push(0, 0, 0, {1, 1, 1, 1}, 0)).ok());
  job.transport().ClearSent();
  ASSERT_TRUE(job.FromCoordinator(job.StartMessage()).ok());
  EXPECT_EQ(job.transport().sent_count(), 0u);  // no second READY
  Message pull = job.Request(wire::PULL, 0, 0, 0, 4, 0);
  const uint64_t id = pull.header.request_id();
  ASSERT_TRUE(job.FromWorker(0, std::move(pull)).ok());
  Message reply = OnlyReply(job, id);
  ASSERT_EQ(reply.payloads.size(), 1u);
  EXPECT_THAT(Values(reply.payloads[0]), ElementsAre(-1, -1, -1, -1));
}

// A pull at clock INT64_MIN + 2 overflowed `clock - min` (signed, undefined) in the read
// metrics; a push at INT64_MAX with pull_after overflowed `clock + 1`. A request's clock
// must now be in [0, the worker's clock + max_clock_lead] (OUT_OF_RANGE otherwise), so
// neither can happen; the largest accepted clock still works.
TEST(ServerHandlerTest, ClocksOutsideTheirRangeAreRefused) {
  ServerOptions options = Inline();
  options.max_clock_lead = 4;
  FakeServerJob job(Job("asp"), options);
  ASSERT_TRUE(job.Start().ok());
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  std::vector<Message> bad;
  bad.push_back(job.Request(wire::PULL, 0, 0, 0, 4, kMin + 2));
  bad.push_back(job.Request(wire::PULL, 0, 0, 0, 4, -1));
  bad.push_back(job.Push(0, 0, 0, {1, 1, 1, 1}, kMax));
  bad.back().header.set_pull_after(true);
  bad.push_back(job.Request(wire::CLOCK, 0, 0, 0, 0, kMax));
  bad.push_back(job.Request(wire::PULL, 0, 0, 0, 4, 5));
  for (Message& m : bad) {
    const uint64_t id = m.header.request_id();
    const int64_t clock = m.header.clock();
    ASSERT_TRUE(job.FromWorker(0, std::move(m)).ok());
    Message reply = OnlyReply(job, id);
    EXPECT_EQ(reply.header.kind(), wire::ERROR) << clock;
    EXPECT_EQ(internal::StatusOf(reply.header).code(), absl::StatusCode::kOutOfRange);
    EXPECT_THAT(reply.header.status().message(), HasSubstr(absl::StrCat("clock ", clock)));
  }
  EXPECT_EQ(job.server().stats().pushes, 0u);
  EXPECT_EQ(job.server().stats().refused.bad_clock, 5u);
  Message pull = job.Request(wire::PULL, 0, 0, 0, 4, 4);
  const uint64_t id = pull.header.request_id();
  ASSERT_TRUE(job.FromWorker(0, std::move(pull)).ok());
  EXPECT_EQ(OnlyReply(job, id).header.kind(), wire::PULL_REPLY);
}

// A worker's request is accepted only with its own credential: the right node id with
// another worker's credential, a changed bit, or none is PERMISSION_DENIED.
TEST(ServerHandlerTest, RequestsWithoutTheSendersCredentialAreRefused) {
  FakeServerJob job(Job("asp"), Inline());
  ASSERT_TRUE(job.Start().ok());
  internal::Credential flipped = FakeServerJob::credential(0);
  flipped.lo ^= 1;
  for (internal::Credential c : {FakeServerJob::credential(1), flipped, internal::Credential{}}) {
    Message push = job.Push(0, 0, 0, {1, 1, 1, 1}, 0);
    internal::SetCredential(c, &push.header);
    const uint64_t id = push.header.request_id();
    ASSERT_TRUE(job.FromWorker(0, std::move(push)).ok());
    Message reply = OnlyReply(job, id);
    EXPECT_EQ(internal::StatusOf(reply.header).code(), absl::StatusCode::kPermissionDenied);
    EXPECT_THAT(reply.header.status().message(), HasSubstr("does not carry node"));
  }
  EXPECT_EQ(job.server().stats().refused.unauthenticated, 3u);
  EXPECT_EQ(job.server().stats().pushes, 0u);
}

// A message delivered twice (a duplicating network) is handled once: the second copy of a
// push is dropped unanswered and counted, and the values hold one update. An id far below
// the worker's latest is refused, since a duplicate can no longer be told from it.
TEST(ServerHandlerTest, ARequestDeliveredTwiceIsAppliedOnce) {
  FakeServerJob job(Job("asp"), Inline());
  ASSERT_TRUE(job.Start().ok());
  Message push = job.Push(0, 0, 0, {1, 1, 1, 1}, 0);
  const uint64_t id = push.header.request_id();
  Message copy = push;
  ASSERT_TRUE(job.FromWorker(0, std::move(push)).ok());
  EXPECT_EQ(OnlyReply(job, id).header.kind(), wire::PUSH_REPLY);
  ASSERT_TRUE(job.FromWorker(0, std::move(copy)).ok());
  EXPECT_TRUE(job.transport().TakeSent().empty());
  EXPECT_EQ(job.server().stats().refused.duplicates, 1u);
  EXPECT_EQ(job.server().stats().version, 1u);

  // Another worker may use the same id: ids are per worker.
  Message other = job.Push(1, 0, 0, {1, 1, 1, 1}, 0);
  other.header.set_request_id(id);
  ASSERT_TRUE(job.FromWorker(1, std::move(other)).ok());
  EXPECT_EQ(OnlyReply(job, id).header.kind(), wire::PUSH_REPLY);

  Message pull = job.Request(wire::PULL, 0, 0, 0, 4, 0);
  const uint64_t far = id + 5000;
  pull.header.set_request_id(far);
  ASSERT_TRUE(job.FromWorker(0, std::move(pull)).ok());
  EXPECT_EQ(OnlyReply(job, far).header.kind(), wire::PULL_REPLY);
  Message old = job.Push(0, 0, 0, {1, 1, 1, 1}, 0);
  old.header.set_request_id(id + 1);
  ASSERT_TRUE(job.FromWorker(0, std::move(old)).ok());
  Message refused = OnlyReply(job, id + 1);
  EXPECT_EQ(refused.header.kind(), wire::ERROR);
  EXPECT_EQ(internal::StatusOf(refused.header).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(job.server().stats().refused.duplicates, 2u);
  EXPECT_EQ(job.server().stats().version, 2u);
}

// ASSIGN and SET_LEARNING_RATE go through the same checks as a push: the credential, the
// request window, then the engine; each is answered with its own reply kind.
TEST(ServerHandlerTest, AssignAndSetLearningRateAreServedAndAnswered) {
  FakeServerJob job(Job("asp"), Inline());
  ASSERT_TRUE(job.Start().ok());
  Message assign = job.Request(wire::ASSIGN, 0, 0, 2, 4, 0);
  assign.payloads.push_back(Buffer::CopyOf(std::vector<float>{1, 2, 3, 4}));
  // [2, 6) spans both chunks: one message addresses one chunk.
  uint64_t id = assign.header.request_id();
  ASSERT_TRUE(job.FromWorker(0, std::move(assign)).ok());
  Message refused = OnlyReply(job, id);
  EXPECT_EQ(refused.header.kind(), wire::ERROR);
  EXPECT_THAT(refused.header.status().message(), HasSubstr("spans chunks"));

  assign = job.Request(wire::ASSIGN, 0, 0, 4, 4, 0);
  assign.payloads.push_back(Buffer::CopyOf(std::vector<float>{1, 2, 3, 4}));
  id = assign.header.request_id();
  ASSERT_TRUE(job.FromWorker(0, std::move(assign)).ok());
  Message reply = OnlyReply(job, id);
  EXPECT_EQ(reply.header.kind(), wire::ASSIGN_REPLY);
  EXPECT_EQ(reply.header.version(), 1u);

  Message lr = job.Request(wire::SET_LEARNING_RATE, 1, 0, 0, 0, 0);
  lr.header.set_learning_rate(0.5f);
  id = lr.header.request_id();
  ASSERT_TRUE(job.FromWorker(1, std::move(lr)).ok());
  EXPECT_EQ(OnlyReply(job, id).header.kind(), wire::SET_LEARNING_RATE_REPLY);

  ASSERT_TRUE(job.FromWorker(0, job.Push(0, 0, 4, {2, 2, 2, 2}, 0)).ok());
  job.transport().ClearSent();
  Message pull = job.Request(wire::PULL, 1, 0, 4, 4, 0);
  id = pull.header.request_id();
  ASSERT_TRUE(job.FromWorker(1, std::move(pull)).ok());
  reply = OnlyReply(job, id);
  ASSERT_EQ(reply.payloads.size(), 1u);
  EXPECT_THAT(Values(reply.payloads[0]), ElementsAre(0, 1, 2, 3));
}

TEST(ServerHandlerTest, AssignAndSetLearningRateWithoutTheCredentialAreRefused) {
  FakeServerJob job(Job("asp"), Inline());
  ASSERT_TRUE(job.Start().ok());
  Message assign = job.Request(wire::ASSIGN, 0, 0, 0, 4, 0);
  assign.payloads.push_back(Buffer::CopyOf(std::vector<float>{9, 9, 9, 9}));
  internal::SetCredential(FakeServerJob::credential(1), &assign.header);
  Message lr = job.Request(wire::SET_LEARNING_RATE, 0, 0, 0, 0, 0);
  lr.header.set_learning_rate(100.0f);
  lr.header.set_sender(999);  // no worker of the job
  for (Message* m : {&assign, &lr}) {
    const uint64_t id = m->header.request_id();
    ASSERT_TRUE(job.FromWorker(0, std::move(*m)).ok());
    Message reply = OnlyReply(job, id);
    EXPECT_EQ(reply.header.kind(), wire::ERROR);
    EXPECT_EQ(internal::StatusOf(reply.header).code(), absl::StatusCode::kPermissionDenied);
  }
  EXPECT_EQ(job.server().stats().refused.unauthenticated, 2u);
  EXPECT_EQ(job.server().stats().version, 0u);
  // The rate is unchanged: a push moves by the configured 1.
  ASSERT_TRUE(job.FromWorker(0, job.Push(0, 0, 0, {1, 1, 1, 1}, 0)).ok());
  job.transport().ClearSent();
  Message pull = job.Request(wire::PULL, 0, 0, 0, 4, 0);
  const uint64_t id = pull.header.request_id();
  ASSERT_TRUE(job.FromWorker(0, std::move(pull)).ok());
  EXPECT_THAT(Values(OnlyReply(job, id).payloads[0]), ElementsAre(-1, -1, -1, -1));
}

TEST(ServerHandlerTest, BadAssignsAndLearningRatesAreRefusedWithTheirReason) {
  FakeServerJob job(Job("asp"), Inline());
  ASSERT_TRUE(job.Start().ok());
  struct Case {
    Message m;
    absl::StatusCode code;
    std::string what;
  };
  std::vector<Case> cases;
  Message nan = job.Request(wire::ASSIGN, 0, 0, 0, 2, 0);
  nan.payloads.push_back(Buffer::CopyOf(std::vector<float>{1, std::nanf("")}));
  cases.push_back({std::move(nan), absl::StatusCode::kInvalidArgument, "element 1 of table 'w'"});
  Message far = job.Request(wire::ASSIGN, 0, 0, 7, 2, 0);
  far.payloads.push_back(Buffer::Zeros(2));
  cases.push_back({std::move(far), absl::StatusCode::kOutOfRange, "outside table 'w'"});
  Message unknown = job.Request(wire::ASSIGN, 0, 5, 0, 1, 0);
  unknown.payloads.push_back(Buffer::Zeros(1));
  cases.push_back({std::move(unknown), absl::StatusCode::kNotFound, "unknown table id 5"});
  for (float bad : {-1.0f, std::numeric_limits<float>::infinity(), std::nanf("")}) {
    Message lr = job.Request(wire::SET_LEARNING_RATE, 0, 0, 0, 0, 0);
    lr.header.set_learning_rate(bad);
    cases.push_back({std::move(lr), absl::StatusCode::kInvalidArgument, "not a finite number"});
  }
  Message lr_table = job.Request(wire::SET_LEARNING_RATE, 0, 9, 0, 0, 0);
  lr_table.header.set_learning_rate(0.5f);
  cases.push_back({std::move(lr_table), absl::StatusCode::kNotFound, "unknown table id 9"});
  for (Case& c : cases) {
    const uint64_t id = c.m.header.request_id();
    ASSERT_TRUE(job.FromWorker(0, std::move(c.m)).ok());
    Message reply = OnlyReply(job, id);
    EXPECT_EQ(reply.header.kind(), wire::ERROR);
    EXPECT_EQ(internal::StatusOf(reply.header).code(), c.code) << c.what;
    EXPECT_THAT(reply.header.status().message(), HasSubstr(c.what));
    EXPECT_THAT(reply.header.status().message(), HasSubstr("server 0:"));
  }
  EXPECT_EQ(job.server().stats().version, 0u);
  EXPECT_EQ(job.server().stats().refused.bad_scale, 3u);
  EXPECT_EQ(job.server().stats().refused.nonfinite, 1u);
  EXPECT_EQ(job.server().stats().refused.bad_range, 3u);
}

}  // namespace
}  // namespace kairos
