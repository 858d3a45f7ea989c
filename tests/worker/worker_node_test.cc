// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The worker's node driven through a FakeTransport, with the test playing the coordinator
// and the servers: join and start, requests sent through flow control with the worker's
// credential and completed by their answers, expiry at the deadline, heartbeats, and the
// ways the node ends. No socket, no thread, no sleep.

#include "worker/worker_node.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "fakes/fake_transport.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "wire/convert.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint32_t kNodeId = 9;
const Credential kCredential{0x1111, 0x2222};
constexpr PeerId kCoordinator = 0;  // the node's first connection
PeerId ServerPeer(int shard) { return 1 + static_cast<PeerId>(shard); }  // connected at START

// One table "w" of 12 elements in chunks of 3 over 2 servers: [0, 6) on shard 0, [6, 12)
// on shard 1; `merge`: its pushes are merged (TableSpec::merge_pushes).
JobConfig Job(bool merge = false, uint32_t cache_clocks = 0) {
  TableSpec w;
  w.name = "w";
  w.size = 12;
  w.merge_pushes = merge;
  w.cache_clocks = cache_clocks;
  JobConfig job;
  job.tables.push_back(w);
  job.chunk_elements = 3;
  return job;
}

class WorkerNodeTest : public ::testing::Test {
 protected:
  // Creates the node over a FakeTransport and sends its JOIN. `merge`: the job merges the
  // table's pushes; `passes` (by default as `merge`): the transport has passes, each
  // RunPosted one.
  void Create(WorkerOptions options = {}, bool merge = false,
              std::optional<bool> passes = std::nullopt) {
    merge_ = merge;
    options.coordinator = "fake://coordinator";
    options.job = Job(merge, cache_clocks_);
    options.join_timeout = absl::Milliseconds(1);  // everything is delivered before waiting
    auto transport = std::make_unique<FakeTransport>("worker");
    if (passes.value_or(merge)) transport->EnablePasses();
    t_ = transport.get();
    node_ = std::make_unique<WorkerNode>(options, std::move(transport));
    ASSERT_TRUE(node_->SendJoin().ok());
  }

  // Answers the JOIN and sends START for 2 servers and 3 workers; AwaitStart's status.
  absl::Status Start(int num_servers = 2, int64_t clock = 0) {
    return StartWith(num_servers, clock, [](wire::Start*) {});
  }

  // The same with the START changed by `spoil` before it is sent.
  absl::Status StartWith(int num_servers, int64_t clock,
                         const std::function<void(wire::Start*)>& spoil) {
    std::vector<FakeTransport::Sent> sent = t_->TakeSent();
    if (sent.size() != 1 || sent[0].message.header.kind() != wire::JOIN) {
      return absl::InternalError("expected one JOIN");
    }
    Message reply;
    reply.header.set_kind(wire::JOIN_REPLY);
    reply.header.set_request_id(sent[0].message.header.request_id());
    reply.header.mutable_join_reply()->set_node_id(kNodeId);
    reply.header.mutable_join_reply()->set_rank(1);
    reply.header.mutable_join_reply()->set_token_hi(kCredential.hi);
    reply.header.mutable_join_reply()->set_token_lo(kCredential.lo);
    reply.header.mutable_join_reply()->set_clock(clock);
    if (absl::Status s = t_->Deliver(kCoordinator, std::move(reply)); !s.ok()) return s;
    Message start;
    start.header.set_kind(wire::START);
    wire::Start* body = start.header.mutable_start();
    ToWire(Job(merge_, cache_clocks_), body->mutable_job());
    body->set_num_servers(num_servers);
    body->set_num_workers(3);
    for (int s = 0; s < num_servers; ++s) {
      wire::Node* n = body->add_nodes();
      n->set_role(wire::SERVER);
      n->set_rank(s);
      n->set_endpoint("fake://server-" + std::to_string(s));
    }
    spoil(body);
    if (absl::Status s = t_->Deliver(kCoordinator, std::move(start)); !s.ok()) return s;
    return node_->AwaitStart();
  }

  // Posts a push or pull of [offset, offset + length) of "w" as WorkerImpl would, and runs
  // the I/O thread's dispatch (unless `run` is false: the test runs it, RunPosted).
  // A push's values are `values` when given, else zeros.
  std::shared_ptr<RequestState> Issue(wire::Kind kind, uint64_t offset, uint64_t length,
                                      absl::Time deadline = absl::InfiniteFuture(),
                                      std::vector<float>* out = nullptr, bool run = true,
                                      std::vector<float> values = {}) {
    const TableEntry* table = *node_->Table("w");
    std::span<const Chunk> chunks = table->partition.Overlapping(offset, offset + length);
    auto state = std::make_shared<RequestState>(
        RequestLabel{"req", "w", offset, offset + length}, deadline,
        static_cast<int>(chunks.size()));
    if (out != nullptr) state->ReceiveInto(out->data());
    RangeRoute route;
    route.kind = kind;
    route.offset = offset;
    route.length = length;
    if (kind == wire::PUSH) {
      route.payload = values.empty() ? Buffer::Zeros(length) : Buffer::CopyOf(values);
    }
    Stamp stamp;
    stamp.sender = node_->node_id();
    stamp.first_id = node_->ReserveIds(static_cast<int>(chunks.size()));
    node_->Post(RouteRange(route, chunks, stamp, state), "req");
    if (run) t_->RunPosted();
    return state;
  }
  // A push of `values` to [offset, offset + values.size()), posted and not yet run.
  std::shared_ptr<RequestState> PostPush(uint64_t offset, std::vector<float> values,
                                         absl::Time deadline = absl::InfiniteFuture()) {
    const uint64_t length = values.size();
    return Issue(wire::PUSH, offset, length, deadline, nullptr, /*run=*/false, std::move(values));
  }
  static std::vector<float> Values(const Message& m) {
    return std::vector<float>(m.payloads.at(0).data(),
                              m.payloads.at(0).data() + m.payloads.at(0).size());
  }

  // The answer of a server to `request`.
  static Message Reply(const Message& request) {
    Message m;
    m.header.set_kind(request.header.kind() == wire::PULL ? wire::PULL_REPLY
                                                          : wire::PUSH_REPLY);
    m.header.set_request_id(request.header.request_id());
    m.header.set_offset(request.header.offset());
    m.header.set_length(request.header.length());
    if (request.header.kind() == wire::PULL) {
      Buffer values = Buffer::Allocate(request.header.length());
      for (uint64_t i = 0; i < values.size(); ++i) {
        values[i] = static_cast<float>(request.header.offset() + i);
      }
      m.payloads.push_back(values);
    }
    return m;
  }

  std::unique_ptr<WorkerNode> node_;
  FakeTransport* t_ = nullptr;  // owned by node_
  bool merge_ = false;
  uint32_t cache_clocks_ = 0;  // of the table, for the next Create
};

TEST_F(WorkerNodeTest, JoinsWithItsJobAndLearnsTheServersAndTablesAtStart) {
  WorkerOptions options;
  options.rank = 1;
  Create(options);
  std::vector<FakeTransport::Sent> sent = t_->sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].to, kCoordinator);
  const wire::Header& join = sent[0].message.header;
  EXPECT_EQ(join.kind(), wire::JOIN);
  EXPECT_EQ(join.join().role(), wire::WORKER);
  EXPECT_EQ(join.join().requested_rank(), 1);
  EXPECT_EQ(FromWire(join.join().job()), Job());
  EXPECT_FALSE(node_->joined());

  ASSERT_TRUE(Start().ok());
  EXPECT_TRUE(node_->joined());
  EXPECT_EQ(node_->rank(), 1);
  EXPECT_EQ(node_->node_id(), kNodeId);
  EXPECT_EQ(node_->num_servers(), 2);
  EXPECT_EQ(node_->num_workers(), 3);
  EXPECT_EQ(node_->job(), Job());
  EXPECT_THAT(t_->connections(),
              ElementsAre("fake://coordinator", "fake://server-0", "fake://server-1"));
  absl::StatusOr<const TableEntry*> w = node_->Table("w");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)->info.size, 12u);
  EXPECT_EQ((*w)->partition.chunks().size(), 4u);
  const absl::StatusOr<const TableEntry*> missing = node_->Table("v");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("unknown table 'v'; the job has: w"));
  EXPECT_TRUE(node_->EndStatus().ok());
}

// A rejoin (docs/design.md, "Failures"): "not yet" (Unavailable) makes the worker send the
// same JOIN (same incarnation) again at its next tick; a JOIN_REPLY with a clock makes it
// tell every shard that clock before anything else, and start there.
TEST_F(WorkerNodeTest, ANotYetJoinIsSentAgainAndARejoinStartsAtItsClock) {
  WorkerOptions options;
  options.rank = 1;
  options.coordinator = "fake://coordinator";
  options.job = Job();
  options.join_timeout = absl::Seconds(60);
  auto transport = std::make_unique<FakeTransport>("worker");
  t_ = transport.get();
  node_ = std::make_unique<WorkerNode>(options, std::move(transport));
  ASSERT_TRUE(node_->SendJoin().ok());
  std::vector<FakeTransport::Sent> sent = t_->TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  const uint64_t incarnation = sent[0].message.header.join().incarnation();
  EXPECT_NE(incarnation, 0u);
  Message reply;
  reply.header.set_kind(wire::JOIN_REPLY);
  reply.header.set_request_id(sent[0].message.header.request_id());
  ToWire(absl::UnavailableError("worker rank 1 is active (heard 10ms ago)"),
         reply.header.mutable_status());
  ASSERT_TRUE(t_->Deliver(kCoordinator, std::move(reply)).ok());
  EXPECT_FALSE(node_->joined());
  EXPECT_TRUE(node_->EndStatus().ok());
  EXPECT_TRUE(t_->sent().empty());
  t_->Tick(absl::Now());
  sent = t_->sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].message.header.kind(), wire::JOIN);
  EXPECT_EQ(sent[0].message.header.join().incarnation(), incarnation);
  ASSERT_TRUE(Start(/*num_servers=*/2, /*clock=*/7).ok());
  EXPECT_EQ(node_->start_clock(), 7);
  sent = t_->TakeSent();
  ASSERT_EQ(sent.size(), 2u);
  for (const FakeTransport::Sent& m : sent) {
    EXPECT_EQ(m.message.header.kind(), wire::CLOCK);
    EXPECT_EQ(m.message.header.clock(), 7);
    EXPECT_EQ(m.message.header.sender(), kNodeId);
  }
}

TEST_F(WorkerNodeTest, ARefusedJoinEndsTheNodeWithTheCoordinatorsReason) {
  Create();
  std::vector<FakeTransport::Sent> sent = t_->TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  Message reply;
  reply.header.set_kind(wire::JOIN_REPLY);
  reply.header.set_request_id(sent[0].message.header.request_id());
  ToWire(absl::InvalidArgumentError("table 0 ('w') size is 12 here but 10 in the job"),
         reply.header.mutable_status());
  ASSERT_TRUE(t_->Deliver(kCoordinator, std::move(reply)).ok());
  const absl::Status s = node_->AwaitStart();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("the job refused this worker: table 0 ('w')"));
}

TEST_F(WorkerNodeTest, AStartWithoutServersIsRefused) {
  Create();
  const absl::Status s = Start(/*num_servers=*/0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("START names 0 servers"));
}

// Found by worker_fuzzer (tests/fuzz/regressions/worker/start-chunk-elements-0 and
// start-dense-size-huge): the START's job was used unchecked, so a chunk of 0 elements or a
// table of size 0 broke the partition's assertion, and a table of 2^32 elements in chunks
// of 1 asked for a partition of 2^32 chunks. The worker now checks it as the coordinator
// does (ValidateJobConfig) and ends, naming the fault.
TEST_F(WorkerNodeTest, AStartWithAJobThatDoesNotValidateIsRefused) {
  const std::vector<std::pair<std::function<void(wire::Start*)>, std::string>> spoiled = {
      {[](wire::Start* s) { s->mutable_job()->set_chunk_elements(0); },
       "chunk_elements is 0"},
      {[](wire::Start* s) { s->mutable_job()->mutable_tables(0)->set_size(0); },
       "table 'w': size is 0 elements"},
      {[](wire::Start* s) {
         s->mutable_job()->set_chunk_elements(1);
         s->mutable_job()->mutable_tables(0)->set_size(uint64_t{1} << 32);
       },
       "chunks"},
      {[](wire::Start* s) { s->mutable_job()->clear_tables(); }, "declares no table"},
  };
  for (const auto& [spoil, why] : spoiled) {
    Create();
    const absl::Status s = StartWith(2, 0, spoil);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << why;
    EXPECT_THAT(s.message(), HasSubstr("START carries a job this worker cannot address"));
    EXPECT_THAT(s.message(), HasSubstr(why));
    EXPECT_EQ(node_->EndStatus().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(t_->connections(), ElementsAre("fake://coordinator")) << "no server connected";
  }
}

// Found by worker_fuzzer (tests/fuzz/regressions/worker/start-shard-missing): a START that
// named no server for a shard left that shard addressed to connection 0, the
// coordinator's, which then got the shard's requests and could answer them.
TEST_F(WorkerNodeTest, AStartThatDoesNotNameEveryShardOnceIsRefused) {
  Create();
  absl::Status s = StartWith(2, 0, [](wire::Start* st) { st->set_num_servers(3); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("START names no server for shard 2 of 3"));

  Create();
  s = StartWith(2, 0, [](wire::Start* st) { st->mutable_nodes(1)->set_rank(0); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("START names server shard 0 twice"));

  // In another order than the shards' is fine: each shard gets its own server.
  Create();
  ASSERT_TRUE(StartWith(2, 0, [](wire::Start* st) {
                st->mutable_nodes()->SwapElements(0, 1);
              }).ok());
  std::vector<float> out(6, -1.0f);
  auto state = Issue(wire::PULL, 3, 6, absl::InfiniteFuture(), &out);  // [3, 6) [6, 9)
  std::vector<FakeTransport::Sent> sent = t_->TakeSent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(t_->connections()[sent[0].to], "fake://server-0");
  EXPECT_EQ(t_->connections()[sent[1].to], "fake://server-1");
}

// Found by worker_fuzzer (tests/fuzz/regressions/worker/read-answered-ok-without-values):
// a pull answered with an OK PUSH_REPLY by its own server completed OK without values.
TEST_F(WorkerNodeTest, APullAnsweredOkWithoutValuesFails) {
  Create();
  ASSERT_TRUE(Start().ok());
  std::vector<float> out(3, -1.0f);
  auto state = Issue(wire::PULL, 0, 3, absl::InfiniteFuture(), &out);
  std::vector<FakeTransport::Sent> sent = t_->TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  Message wrong;
  wrong.header.set_kind(wire::PUSH_REPLY);
  wrong.header.set_request_id(sent[0].message.header.request_id());
  ASSERT_TRUE(t_->Deliver(ServerPeer(0), std::move(wrong)).ok());
  const absl::Status s = state->Wait(absl::InfinitePast());
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("answered a read with PUSH_REPLY"));
  EXPECT_THAT(out, ElementsAre(-1, -1, -1));
  // The right answer, late, changes nothing.
  ASSERT_TRUE(t_->Deliver(ServerPeer(0), Reply(sent[0].message)).ok());
  EXPECT_EQ(state->Wait(absl::InfinitePast()).code(), absl::StatusCode::kInternal);
  EXPECT_THAT(out, ElementsAre(-1, -1, -1));
}

TEST_F(WorkerNodeTest, NoStartBeforeTheJoinTimeoutIsDeadlineExceeded) {
  Create();
  const absl::Status s = node_->AwaitStart();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(s.message(), HasSubstr("did not start within"));
}

TEST_F(WorkerNodeTest, SendsEachChunkToItsShardWithTheCredentialAndCompletesOnTheAnswers) {
  Create();
  ASSERT_TRUE(Start().ok());
  std::vector<float> out(6, -1.0f);
  auto state = Issue(wire::PULL, 3, 6, absl::InfiniteFuture(), &out);  // [3, 6) [6, 9)
  std::vector<FakeTransport::Sent> sent = t_->TakeSent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].to, ServerPeer(0));
  EXPECT_EQ(sent[1].to, ServerPeer(1));
  for (const FakeTransport::Sent& s : sent) {
    EXPECT_EQ(s.message.header.sender(), kNodeId);
    EXPECT_EQ(s.message.header.token_hi(), kCredential.hi) << "proves who sends";
    EXPECT_EQ(s.message.header.token_lo(), kCredential.lo);
  }
  // An answer from another node than the one asked is ignored.
  ASSERT_TRUE(t_->Deliver(ServerPeer(0), Reply(sent[1].message)).ok());
  EXPECT_FALSE(state->done());
  ASSERT_TRUE(t_->Deliver(ServerPeer(1), Reply(sent[1].message)).ok());
  ASSERT_TRUE(t_->Deliver(ServerPeer(0), Reply(sent[0].message)).ok());
  ASSERT_TRUE(state->Wait(absl::InfinitePast()).ok());
  EXPECT_THAT(out, ElementsAre(3, 4, 5, 6, 7, 8));
}

TEST_F(WorkerNodeTest, FlowControlHoldsMessagesBeyondTheBudgetUntilAnswersArrive) {
  WorkerOptions options;
  options.max_bytes_in_flight_per_server = 3 * sizeof(float);  // one chunk's push
  Create(options);
  ASSERT_TRUE(Start().ok());
  auto push = Issue(wire::PUSH, 0, 6);  // two chunks of shard 0
  node_->PostClock(1);
  t_->RunPosted();
  std::vector<FakeTransport::Sent> sent = t_->TakeSent();
  // Shard 0 got the first chunk only; shard 1 its clock at once (nothing queued there).
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].to, ServerPeer(0));
  EXPECT_EQ(sent[0].message.header.offset(), 0u);
  EXPECT_EQ(sent[1].to, ServerPeer(1));
  EXPECT_EQ(sent[1].message.header.kind(), wire::CLOCK);
  ASSERT_TRUE(t_->Deliver(ServerPeer(0), Reply(sent[0].message)).ok());
  sent = t_->TakeSent();
  ASSERT_EQ(sent.size(), 2u) << "the second chunk, then the clock behind it";
  EXPECT_EQ(sent[0].message.header.offset(), 3u);
  EXPECT_EQ(sent[1].message.header.kind(), wire::CLOCK);
  EXPECT_EQ(sent[1].message.header.clock(), 1);
  EXPECT_FALSE(push->done());
  ASSERT_TRUE(t_->Deliver(ServerPeer(0), Reply(sent[0].message)).ok());
  EXPECT_TRUE(push->Wait(absl::InfinitePast()).ok());
}

// Pulls of values of several chunks collapsed elsewhere as requests piled up, a
// sign of work per message that grows with what is outstanding (a rescan of the waiting
// messages, a search through the outstanding parts). A pipelined caller of whole-table
// pulls (4 chunks, 2 per shard) behind a budget of one chunk per shard, with 1 to 16
// requests in flight: the bookkeeping looked at per message must stay the same.
TEST_F(WorkerNodeTest, BookkeepingPerMessageDoesNotGrowWithTheRequestsInFlight) {
  constexpr int kRequests = 64;
  constexpr int kChunksPerRequest = 4;
  std::vector<double> visited_per_message;
  std::vector<double> examined_per_message;
  for (const int window : {1, 2, 4, 8, 16}) {
    WorkerOptions options;
    options.max_bytes_in_flight_per_server = 3 * sizeof(float);  // one chunk's reply
    Create(options);
    ASSERT_TRUE(Start().ok());
    const WorkerNode::Bookkeeping before = node_->bookkeeping();
    std::deque<std::shared_ptr<RequestState>> in_flight;
    std::deque<FakeTransport::Sent> unanswered;
    int issued = 0;
    int completed = 0;
    size_t max_waiting = 0;
    auto issue = [&] {
      in_flight.push_back(Issue(wire::PULL, 0, 12));
      ++issued;
    };
    while (issued < window) issue();
    while (completed < kRequests) {
      for (FakeTransport::Sent& s : t_->TakeSent()) unanswered.push_back(std::move(s));
      ASSERT_FALSE(unanswered.empty()) << "window " << window << ": nothing in flight";
      max_waiting = std::max(max_waiting, unanswered.size());
      const FakeTransport::Sent s = std::move(unanswered.front());
      unanswered.pop_front();
      ASSERT_TRUE(t_->Deliver(s.to, Reply(s.message)).ok());
      while (!in_flight.empty() && in_flight.front()->done()) {
        ASSERT_TRUE(in_flight.front()->Wait(absl::InfinitePast()).ok());
        in_flight.pop_front();
        ++completed;
        if (issued < kRequests) issue();
      }
    }
    // The budget holds one chunk per shard in flight; the rest waited in flow control.
    EXPECT_LE(max_waiting, 2u) << "window " << window;
    const WorkerNode::Bookkeeping after = node_->bookkeeping();
    const double messages = kRequests * kChunksPerRequest;
    visited_per_message.push_back((after.parts_visited - before.parts_visited) / messages);
    examined_per_message.push_back((after.queue_examined - before.queue_examined) / messages);
    // Add, Find and Take: three looks at the outstanding parts per message; one look at
    // the queue when the message leaves, and at most one at a message that does not fit
    // yet per answer.
    EXPECT_LE(visited_per_message.back(), 3.0) << "window " << window;
    EXPECT_LE(examined_per_message.back(), 2.0) << "window " << window;
  }
  // And no more lookups per message with 16 requests in flight than with one. (The queue
  // count is 1.5 per message at window 1, where the queue empties after each request, and
  // tends to 2 as it stays full: bounded, as checked above, not growing.)
  EXPECT_LE(visited_per_message.back(), visited_per_message.front() + 0.01);
}

TEST_F(WorkerNodeTest, TheTickExpiresRequestsPastTheirDeadlineNamingTheSilentServers) {
  WorkerOptions options;
  options.heartbeat_interval = absl::Hours(1);  // the coordinator is never silent too long
  Create(options);
  ASSERT_TRUE(Start().ok());
  const absl::Time deadline = absl::Now() + absl::Minutes(1);
  auto state = Issue(wire::PULL, 0, 12, deadline);  // 4 chunks, 2 per server
  std::vector<FakeTransport::Sent> sent = t_->TakeSent();
  ASSERT_EQ(sent.size(), 4u);
  ASSERT_TRUE(t_->Deliver(ServerPeer(0), Reply(sent[0].message)).ok());
  ASSERT_TRUE(t_->Deliver(ServerPeer(0), Reply(sent[1].message)).ok());
  t_->Tick(deadline - absl::Milliseconds(1));
  EXPECT_FALSE(state->done());
  t_->Tick(deadline);
  const absl::Status s = state->Wait(absl::InfinitePast());
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  // Each silent part names its server and the address START gave for it.
  EXPECT_THAT(s.message(), HasSubstr("no answer before the deadline from server 1 at "
                                     "fake://server-1, server 1 at fake://server-1"));
  // A late answer finds nothing and changes nothing.
  ASSERT_TRUE(t_->Deliver(ServerPeer(1), Reply(sent[2].message)).ok());
  EXPECT_EQ(state->Wait(absl::InfinitePast()).code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(WorkerNodeTest, TheTickSendsHeartbeatsAndEndsTheNodeWhenTheCoordinatorIsSilent) {
  WorkerOptions options;
  options.heartbeat_interval = absl::Milliseconds(100);
  Create(options);
  ASSERT_TRUE(Start().ok());
  t_->ClearSent();
  const absl::Time now = absl::Now();
  t_->Tick(now);
  std::vector<FakeTransport::Sent> sent = t_->TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].to, kCoordinator);
  EXPECT_EQ(sent[0].message.header.kind(), wire::HEARTBEAT);
  EXPECT_EQ(sent[0].message.header.sender(), kNodeId);

  auto pending = Issue(wire::PULL, 0, 3);
  t_->Tick(now + CoordinatorLink::kSilentIntervals * absl::Milliseconds(100) +
           absl::Seconds(1));
  EXPECT_EQ(node_->EndStatus().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(pending->Wait(absl::InfinitePast()).code(), absl::StatusCode::kUnavailable);
}

TEST_F(WorkerNodeTest, ShutdownFailsEverythingOutstandingWithItsReason) {
  Create();
  ASSERT_TRUE(Start().ok());
  auto pending = Issue(wire::PUSH, 0, 12);
  Message shutdown;
  shutdown.header.set_kind(wire::SHUTDOWN);
  ToWire(absl::UnavailableError("server 1 is dead"), shutdown.header.mutable_status());
  ASSERT_TRUE(t_->Deliver(kCoordinator, std::move(shutdown)).ok());
  EXPECT_EQ(node_->EndStatus().message(), "server 1 is dead");
  const absl::Status s = pending->Wait(absl::InfinitePast());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("server 1 is dead"));
}

TEST_F(WorkerNodeTest, ABatchThatNeverReachesTheIoThreadFailsAtOnce) {
  Create();
  ASSERT_TRUE(Start().ok());
  auto state = std::make_shared<RequestState>(RequestLabel{"push", "w", 0, 3},
                                              absl::InfiniteFuture(), 1);
  Batch batch;
  batch.emplace_back(Part{state, 0, 3}, Message());
  node_->Post(std::move(batch), "push");
  node_->Crash();  // stops the transport: the posted batch is destroyed unrun
  const absl::Status s = state->Wait(absl::InfinitePast());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("worker 1 stopped before the push was sent"));
  EXPECT_THAT(node_->EndStatus().message(), HasSubstr("worker 1 was killed"));
}

}  // namespace
}  // namespace kairos::internal

namespace kairos::internal {
namespace {

// Client-side merging (TableSpec::merge_pushes, worker/push_merger.h) in the node: pushes
// posted in one pass leave as one message per chunk, summed; the answer completes them all.
TEST_F(WorkerNodeTest, PushesToOneRangeInOnePassLeaveAsOneSummedMessage) {
  Create({}, /*merge=*/true);
  ASSERT_TRUE(Start().ok());
  t_->TakeSent();
  auto a = PostPush(3, {1, 2, 3, 4, 5, 6});  // chunks [3, 6) on shard 0, [6, 9) on shard 1
  auto b = PostPush(3, {10, 20, 30, 40, 50, 60});
  auto c = PostPush(3, {100, 200, 300, 400, 500, 600});
  t_->RunPosted();
  std::vector<FakeTransport::Sent> sent = t_->TakeSent();
  ASSERT_EQ(sent.size(), 2u) << "one message per chunk for the three pushes";
  EXPECT_EQ(sent[0].to, ServerPeer(0));
  EXPECT_THAT(Values(sent[0].message), ElementsAre(111, 222, 333));
  EXPECT_EQ(sent[1].to, ServerPeer(1));
  EXPECT_THAT(Values(sent[1].message), ElementsAre(444, 555, 666));
  EXPECT_EQ(sent[0].message.header.token_hi(), kCredential.hi);
  ASSERT_TRUE(t_->Deliver(ServerPeer(0), Reply(sent[0].message)).ok());
  EXPECT_FALSE(c->done()) << "shard 1 has not answered";
  ASSERT_TRUE(t_->Deliver(ServerPeer(1), Reply(sent[1].message)).ok());
  for (const auto& s : {a, b, c}) EXPECT_TRUE(s->Wait(absl::InfinitePast()).ok());
}

TEST_F(WorkerNodeTest, APullOrAClockBetweenPushesKeepsThemApartAndInOrder) {
  Create({}, /*merge=*/true);
  ASSERT_TRUE(Start().ok());
  t_->TakeSent();
  PostPush(0, {1, 1, 1});
  std::vector<float> out(3);
  Issue(wire::PULL, 0, 3, absl::InfiniteFuture(), &out, /*run=*/false);
  PostPush(0, {2, 2, 2});
  node_->PostClock(1);
  PostPush(0, {4, 4, 4});
  PostPush(0, {8, 8, 8});
  t_->RunPosted();
  std::vector<FakeTransport::Sent> sent = t_->TakeSent();
  std::vector<wire::Kind> to_shard0;
  for (const auto& s : sent) {
    if (s.to == ServerPeer(0)) to_shard0.push_back(s.message.header.kind());
  }
  EXPECT_THAT(to_shard0, ElementsAre(wire::PUSH, wire::PULL, wire::PUSH, wire::CLOCK, wire::PUSH));
  std::vector<std::vector<float>> pushed;
  for (const auto& s : sent) {
    if (s.message.header.kind() == wire::PUSH) pushed.push_back(Values(s.message));
  }
  EXPECT_THAT(pushed,
              ElementsAre(ElementsAre(1, 1, 1), ElementsAre(2, 2, 2), ElementsAre(12, 12, 12)))
      << "only the two pushes after the clock are summed";
}

TEST_F(WorkerNodeTest, WithoutPassesOrWithoutMergingEachPushLeavesOnItsOwn) {
  // A table that does not merge, over passes; a merging one over a transport without
  // passes, where each posted batch is sent at once.
  for (const bool merge : {false, true}) {
    Create({}, merge, /*passes=*/!merge);
    ASSERT_TRUE(Start().ok());
    t_->TakeSent();
    PostPush(0, {1, 1, 1});
    PostPush(0, {2, 2, 2});
    t_->RunPosted();
    EXPECT_EQ(t_->TakeSent().size(), 2u) << "merge " << merge;
  }
}

TEST_F(WorkerNodeTest, MergedPushesExpireTogetherAtTheFirstOnesDeadline) {
  WorkerOptions options;
  options.heartbeat_interval = absl::Hours(1);
  Create(options, /*merge=*/true);
  ASSERT_TRUE(Start().ok());
  t_->TakeSent();
  const absl::Time deadline = absl::Now() + absl::Minutes(1);
  auto a = PostPush(0, {1, 1, 1}, deadline);
  auto b = PostPush(0, {2, 2, 2}, deadline + absl::Minutes(1));
  t_->RunPosted();
  ASSERT_EQ(t_->TakeSent().size(), 1u);
  t_->Tick(deadline);
  EXPECT_EQ(a->Wait(absl::InfinitePast()).code(), absl::StatusCode::kDeadlineExceeded);
  const absl::Status s = b->Wait(absl::InfinitePast());
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(s.message(), HasSubstr("no answer before the deadline from server 0"));
}

}  // namespace
}  // namespace kairos::internal

namespace kairos::internal {
namespace {

// The read cache keeps a reply's values only when its min_clock can be true: at most the
// read's clock, never negative (a hostile server's value would otherwise stretch a copy's
// life, or overflow the age computed from it).
TEST_F(WorkerNodeTest, TheReadCacheKeepsACopyOnlyWithABelievableMinimumClock) {
  cache_clocks_ = 5;
  Create();
  ASSERT_TRUE(Start().ok());
  t_->TakeSent();
  std::vector<float> out(3);
  int64_t before = 0;  // the previous reply's min_clock (0: none yet)
  for (const int64_t min_clock : {int64_t{7}, int64_t{-1}, std::numeric_limits<int64_t>::min()}) {
    auto state = Issue(wire::PULL, 0, 3, absl::InfiniteFuture(), &out);
    std::vector<FakeTransport::Sent> sent = t_->TakeSent();
    ASSERT_EQ(sent.size(), 1u) << "a copy was kept from a reply with min_clock " << before;
    before = min_clock;
    Message reply = Reply(sent[0].message);
    reply.header.set_min_clock(min_clock);
    ASSERT_TRUE(t_->Deliver(ServerPeer(0), std::move(reply)).ok());
    ASSERT_TRUE(state->Wait(absl::InfinitePast()).ok()) << "the read itself is answered";
  }
  // The positive control: a min_clock of 0 at clock 0 is kept, and answers the next read.
  auto state = Issue(wire::PULL, 0, 3, absl::InfiniteFuture(), &out);
  std::vector<FakeTransport::Sent> sent = t_->TakeSent();
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(t_->Deliver(ServerPeer(0), Reply(sent[0].message)).ok());
  ASSERT_TRUE(state->Wait(absl::InfinitePast()).ok());
  std::fill(out.begin(), out.end(), -1.0f);
  state = Issue(wire::PULL, 0, 3, absl::InfiniteFuture(), &out);
  EXPECT_TRUE(t_->TakeSent().empty());
  ASSERT_TRUE(state->Wait(absl::InfinitePast()).ok());
  EXPECT_THAT(out, ElementsAre(0, 1, 2));
  EXPECT_EQ(node_->stats().reads_cached, 1u);
}

}  // namespace
}  // namespace kairos::internal
