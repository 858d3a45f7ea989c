// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Worker::PushPullAsync of parts, the eager step of a model over several tables, through a
// whole cluster (LocalCluster, eager pull on ASP): each part's gradient applied and its range
// returned as it is after that push, exactly; one iteration ended per step, not per table; a
// refused step sends nothing, keeps the clock and fails every Request naming the problem;
// the merged reply's clocks. Uses the public API only.

#include <cstdint>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"

namespace kairos {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr float kLearningRate = 0.5f;
constexpr float kInitialA = 1.0f;
constexpr float kInitialB = 3.0f;

// Table "a" of 5 and "b" of 3 elements, SGD at 0.5, chunks of 2 over 2 servers: "a" is the
// chunks [0, 2) [2, 4) [4, 5), so a part reaches both shards. Every value below (small
// integers and halves, scales of powers of two) is exact in float32.
ClusterOptions TwoTables(int workers) {
  ClusterOptions o;
  o.num_servers = 2;
  o.num_workers = workers;
  o.job.policy = "eager";
  o.job.chunk_elements = 2;
  o.job.tables.push_back({"a", 5, Initializer::Constant(kInitialA), {"sgd", kLearningRate}});
  o.job.tables.push_back({"b", 3, Initializer::Constant(kInitialB), {"sgd", kLearningRate}});
  o.worker.request_timeout = absl::Seconds(30);
  return o;
}

PushPullPart Part(std::string table, uint64_t offset, const std::vector<float>& gradient,
                  std::span<float> out) {
  return PushPullPart{.table = std::move(table),
                      .offset = offset,
                      .gradient = Buffer::CopyOf(gradient),
                      .out = out};
}

TEST(PushPullPartsTest, AStepOverTwoTablesAppliesEachGradientAndReturnsTheValuesAfterIt) {
  auto cluster = LocalCluster::Create(TwoTables(2));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  PushPullReply reply;

  // Step 1, both tables whole: a = 1 - 0.5 * ga, b = 3 - 0.5 * gb.
  std::vector<float> out_a(5), out_b(3);
  std::vector<PushPullPart> parts;
  parts.push_back(Part("a", 0, {2, 4, 6, 8, 10}, out_a));
  parts.push_back(Part("b", 0, {1, -1, 2}, out_b));
  std::vector<Request> requests = w.PushPullAsync(parts, &reply);
  ASSERT_EQ(requests.size(), 2u);
  ASSERT_TRUE(WaitAll(requests).ok()) << WaitAll(requests);
  EXPECT_THAT(out_a, ElementsAre(0.0f, -1.0f, -2.0f, -3.0f, -4.0f));
  EXPECT_THAT(out_b, ElementsAre(2.5f, 3.5f, 2.0f));

  // Step 2 at scale 0.5: "a" whole, a -= 0.5 * 0.5 * 4; "b" only [1, 3).
  std::vector<float> out_b_tail(2);
  parts.clear();
  parts.push_back(Part("a", 0, {4, 4, 4, 4, 4}, out_a));
  parts.push_back(Part("b", 1, {2, -4}, out_b_tail));
  PushPullOptions half;
  half.scale = 0.5f;
  requests = w.PushPullAsync(parts, &reply, half);
  ASSERT_EQ(requests.size(), 2u);
  ASSERT_TRUE(WaitAll(requests).ok()) << WaitAll(requests);
  EXPECT_THAT(out_a, ElementsAre(-1.0f, -2.0f, -3.0f, -4.0f, -5.0f));
  EXPECT_THAT(out_b_tail, ElementsAre(3.0f, 3.0f));  // 3.5 - 0.25 * 2, 2 + 0.25 * 4

  // What the servers hold: the same, and b[0] untouched by the second step.
  std::vector<float> a(5), b(3);
  ASSERT_TRUE(w.Pull("a", a).ok());
  ASSERT_TRUE(w.Pull("b", b).ok());
  EXPECT_THAT(a, ElementsAreArray(out_a));
  EXPECT_THAT(b, ElementsAre(2.5f, 3.0f, 3.0f));
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

TEST(PushPullPartsTest, AStepEndsTheIterationOnceHoweverManyTablesItTouches) {
  auto cluster = LocalCluster::Create(TwoTables(2));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  ASSERT_EQ(w.clock(), 0);
  std::vector<float> out_a(5), out_b(3);
  PushPullReply reply;
  for (int64_t step = 1; step <= 3; ++step) {
    std::vector<PushPullPart> parts;
    parts.push_back(Part("a", 0, {0, 0, 0, 0, 0}, out_a));
    parts.push_back(Part("b", 0, {0, 0, 0}, out_b));
    const std::vector<Request> requests = w.PushPullAsync(parts, &reply);
    EXPECT_EQ(w.clock(), step) << "one clock per step of two tables";
    ASSERT_TRUE(WaitAll(requests).ok()) << WaitAll(requests);
    // The shards learned one clock per step too: this step was issued at clock step - 1.
    EXPECT_EQ(reply.clocks[0], step - 1);
  }
  EXPECT_EQ(w.clock(), 3);
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

TEST(PushPullPartsTest, ARefusedStepSendsNothingKeepsTheClockAndFailsEveryRequest) {
  auto cluster = LocalCluster::Create(TwoTables(2));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  std::vector<float> out_a(5), out_b(3), out_short(2);
  struct Case {
    std::string name;
    PushPullPart bad;  // the second part, after a valid part of "a"
    absl::StatusCode code;
    std::string message;
  };
  std::vector<Case> cases;
  cases.push_back({"unknown table", Part("c", 0, {1, 1, 1}, out_b), absl::StatusCode::kNotFound,
                   "push-pull: unknown table 'c'"});
  cases.push_back({"out.size() != gradient.size()", Part("b", 0, {1, 1, 1}, out_short),
                   absl::StatusCode::kInvalidArgument,
                   "push-pull of table 'b': needs out.size() == gradient.size() (2 vs 3)"});
  cases.push_back({"range past the table", Part("b", 2, {1, 1}, out_short),
                   absl::StatusCode::kInvalidArgument, "push-pull of table 'b': range [2, 4)"});
  for (Case& c : cases) {
    PushPullReply reply;
    std::vector<PushPullPart> parts;
    parts.push_back(Part("a", 0, {2, 2, 2, 2, 2}, out_a));
    parts.push_back(std::move(c.bad));
    const std::vector<Request> requests = w.PushPullAsync(parts, &reply);
    ASSERT_EQ(requests.size(), 2u) << c.name;
    for (const Request& r : requests) {
      const absl::Status s = r.Wait();
      EXPECT_EQ(s.code(), c.code) << c.name << ": " << s;
      EXPECT_THAT(s.message(), HasSubstr(c.message)) << c.name;
    }
    EXPECT_EQ(w.clock(), 0) << c.name;
  }
  // Nothing was sent: not even the valid part of "a" (a pull sees the worker's own pushes).
  std::vector<float> a(5);
  ASSERT_TRUE(w.Pull("a", a).ok());
  EXPECT_THAT(a, ElementsAre(kInitialA, kInitialA, kInitialA, kInitialA, kInitialA));

  // Positive control: the same step with a valid second part goes through.
  PushPullReply reply;
  std::vector<PushPullPart> parts;
  parts.push_back(Part("a", 0, {2, 2, 2, 2, 2}, out_a));
  parts.push_back(Part("b", 1, {1, 1}, out_short));
  const std::vector<Request> requests = w.PushPullAsync(parts, &reply);
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_TRUE(WaitAll(requests).ok()) << WaitAll(requests);
  EXPECT_EQ(w.clock(), 1);
  EXPECT_THAT(out_a, ElementsAre(0.0f, 0.0f, 0.0f, 0.0f, 0.0f));
  EXPECT_THAT(out_short, ElementsAre(2.5f, 2.5f));
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

TEST(PushPullPartsTest, TheMergedReplyHasOneClockPerWorkerWithThisWorkersOwn) {
  // Three workers; rank 1 steps, the others never clock.
  auto cluster = LocalCluster::Create(TwoTables(3));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(1);
  std::vector<float> out_a(5), out_b(3);
  for (int64_t step = 0; step < 3; ++step) {
    const int64_t issued_at = w.clock();
    PushPullReply reply;
    reply.clocks = {7, 7, 7, 7, 7};  // replaced by the step
    std::vector<PushPullPart> parts;
    parts.push_back(Part("a", 0, {1, 1, 1, 1, 1}, out_a));
    parts.push_back(Part("b", 0, {1, 1, 1}, out_b));
    const std::vector<Request> requests = w.PushPullAsync(parts, &reply);
    ASSERT_TRUE(WaitAll(requests).ok()) << WaitAll(requests);
    // The clock each shard knew when it answered: this worker's is the one it issued the
    // step at (its Clock() follows the pushes, in order, on every shard).
    EXPECT_THAT(reply.clocks, ElementsAre(0, issued_at, 0)) << "step " << step;
    EXPECT_EQ(w.clock(), issued_at + 1);
    EXPECT_FALSE(reply.dropped);
  }
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

// The one-table form: the same step as a part, at the options' scale; a scale that is not
// positive is refused and sends nothing (positive control: scale 1 then 0.5 apply).
TEST(PushPullOneTableTest, AppliesTheGradientAtTheScaleAndRefusesAScaleThatIsNotPositive) {
  auto cluster = LocalCluster::Create(TwoTables(1));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  std::vector<float> out(3);
  PushPullReply reply;
  PushPullOptions zero;
  zero.scale = 0.0f;
  const absl::Status refused = w.PushPullAsync(Part("b", 0, {2, 2, 2}, out), &reply, zero).Wait();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("scale > 0"));
  EXPECT_EQ(w.clock(), 0);

  ASSERT_TRUE(w.PushPullAsync(Part("b", 0, {2, 2, 2}, out), &reply).Wait().ok());
  EXPECT_THAT(out, ElementsAre(2.0f, 2.0f, 2.0f));  // 3 - 0.5 * 2
  EXPECT_EQ(w.clock(), 1);
  PushPullOptions half;
  half.scale = 0.5f;
  std::vector<float> tail(2);
  ASSERT_TRUE(w.PushPullAsync(Part("b", 1, {4, -4}, tail), &reply, half).Wait().ok());
  EXPECT_THAT(tail, ElementsAre(1.0f, 3.0f));  // 2 -+ 0.25 * 4
  EXPECT_EQ(w.clock(), 2);
  EXPECT_THAT(reply.clocks, ElementsAre(1));
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

// kairos::WaitAll waits for every request, failed ones included, and returns the first
// error in their order; an empty batch is OK.
TEST(WaitAllTest, WaitsForEveryRequestAndReturnsTheFirstError) {
  ClusterOptions o = TwoTables(1);
  o.job.policy = "asp";
  auto cluster = LocalCluster::Create(o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  EXPECT_TRUE(WaitAll({}).ok());
  const std::vector<float> ones(5, 1.0f);
  std::vector<float> out_b(3, 0.0f), out_past(2, 0.0f);
  std::vector<Request> requests;
  requests.push_back(w.PushAsync("a", ones));
  requests.push_back(w.PushAsync("c", ones));                           // no such table
  requests.push_back(w.PullAsync("b", 2, std::span<float>(out_past)));  // past its end
  requests.push_back(w.PullAsync("b", std::span<float>(out_b)));
  const absl::Status s = WaitAll(requests);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  for (const Request& r : requests) EXPECT_TRUE(r.done());
  EXPECT_FALSE(requests[2].Wait().ok());
  EXPECT_THAT(out_b, ElementsAre(kInitialB, kInitialB, kInitialB));  // the last one ran
  std::vector<float> a(5);
  ASSERT_TRUE(w.Pull("a", std::span<float>(a)).ok());
  EXPECT_THAT(a, ElementsAre(0.5f, 0.5f, 0.5f, 0.5f, 0.5f));  // 1 - 0.5 * 1
  ASSERT_TRUE((*cluster)->Shutdown().ok());
}

// Requests a caller sends itself and then leaves alone (it computes instead of waiting)
// complete all the same: whatever the caller did not take, the worker's I/O thread takes
// once the caller's lease on its sockets ends. Then the values are those of every push.
TEST(WaitAllTest, RequestsCompleteWithoutTheirCallerWaiting) {
  ClusterOptions o = TwoTables(1);
  o.job.policy = "asp";
  auto cluster = LocalCluster::Create(o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  const std::vector<float> ones(5, 1.0f);
  for (int round = 0; round < 20; ++round) {
    std::vector<Request> requests;
    for (int i = 0; i < 8; ++i) requests.push_back(w.PushAsync("a", ones));
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    auto all_done = [&] {
      for (const Request& r : requests) {
        if (!r.done()) return false;
      }
      return true;
    };
    while (!all_done() && absl::Now() < deadline) std::this_thread::yield();
    ASSERT_TRUE(all_done()) << "round " << round;
    ASSERT_TRUE(WaitAll(requests).ok());
  }
  std::vector<float> a(5);
  ASSERT_TRUE(w.Pull("a", std::span<float>(a)).ok());
  EXPECT_THAT(a, Each(kInitialA - 160 * kLearningRate));  // 160 pushes of 1, exact
  ASSERT_TRUE((*cluster)->Shutdown().ok());
}

}  // namespace
}  // namespace kairos
