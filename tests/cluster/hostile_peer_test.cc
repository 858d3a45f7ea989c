// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Hostile peers: a client that never joined cannot write, read, clock, finish, assign,
// change a learning rate or barrier in another node's name; every bounded field is
// accepted at its limit and refused just past it, with its own status and counter; nothing
// refused changes the job's values.

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "tests/cluster/cluster_harness.h"
#include "tests/cluster/raw_client.h"
#include "tests/cluster/raw_worker_job.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;
using internal::Message;

constexpr uint64_t kSize = 100;

JobConfig Job(const std::string& policy = "asp") { return testing::SgdJob(kSize, policy); }

// ----------------------------------------------------------------------- strangers

// Two servers and two real workers over tcp; a raw client that never joined connects to
// every server and to the coordinator and speaks in the names of the job's nodes.
class StrangerTest : public ::testing::Test {
 protected:
  static constexpr int kServers = 2;
  static constexpr int kWorkers = 2;

  void SetUp() override {
    CoordinatorOptions co;
    co.num_servers = kServers;
    co.num_workers = kWorkers;
    co.job = Job();
    coordinator_ = *Coordinator::Create(co);
    for (int s = 0; s < kServers; ++s) {
      ServerOptions so;
      so.coordinator = coordinator_->endpoint();
      servers_.push_back(*Server::Create(so));
    }
    WorkerOptions wo;
    wo.coordinator = coordinator_->endpoint();
    wo.job = Job();
    wo.request_timeout = absl::Seconds(20);
    auto workers = testing::JoinWorkers(kWorkers, wo);
    ASSERT_TRUE(workers.ok()) << workers.status();
    workers_ = *std::move(workers);
  }

  void TearDown() override {
    for (auto& w : workers_) {
      if (w) {
        EXPECT_TRUE(w->Shutdown().ok());
      }
    }
    workers_.clear();
    EXPECT_TRUE(coordinator_->Wait(absl::Seconds(20)).ok());
  }

  // A request in node `sender`'s name, with `credential` (none by default).
  Message Forged(wire::Kind kind, uint32_t sender, internal::Credential credential = {}) {
    Message m;
    m.header.set_kind(kind);
    m.header.set_request_id(next_id_++);
    m.header.set_sender(sender);
    internal::SetCredential(credential, &m.header);
    m.header.set_table(0);
    m.header.set_length(kSize / kServers);
    m.header.set_timeout_ms(5000);
    if (kind == wire::PUSH || kind == wire::ASSIGN) {
      m.payloads.push_back(Buffer::Zeros(kSize / kServers));
      for (float& x : m.payloads[0].span()) x = 1000.0f;
    }
    if (kind == wire::SET_LEARNING_RATE) m.header.set_learning_rate(1000.0f);
    return m;
  }

  std::unique_ptr<Coordinator> coordinator_;
  std::vector<std::unique_ptr<Server>> servers_;
  std::vector<std::unique_ptr<Worker>> workers_;
  uint64_t next_id_ = 1;
};

TEST_F(StrangerTest, RequestsInTheNamesOfTheJobsNodesAreRefusedAndChangeNothing) {
  testing::RawClient stranger;
  std::vector<internal::PeerId> server_peers;
  for (auto& s : servers_) server_peers.push_back(stranger.Connect(s->endpoint()));
  stranger.ConnectCoordinator(coordinator_->endpoint());

  // Node ids are small integers handed out in join order: try each of them, without a
  // credential and with a made-up one.
  const int nodes = kServers + kWorkers;
  std::vector<uint64_t> ids;
  uint64_t to_each_server = 0;
  for (uint32_t sender = 0; sender <= nodes + 1; ++sender) {
    for (internal::Credential c : {internal::Credential{}, internal::Credential{1, sender}}) {
      for (int s = 0; s < kServers; ++s) {
        for (wire::Kind kind : {wire::PUSH, wire::PULL, wire::CLOCK, wire::FINISH,
                                wire::ASSIGN, wire::SET_LEARNING_RATE}) {
          Message m = Forged(kind, sender, c);
          if (kind == wire::PULL || kind == wire::PUSH || kind == wire::ASSIGN) {
            m.header.set_offset(static_cast<uint64_t>(s) * (kSize / kServers));
          }
          if (kind == wire::CLOCK) m.header.set_clock(1);
          ids.push_back(m.header.request_id());
          stranger.Send(server_peers[s], std::move(m));
        }
      }
      to_each_server += 6;
    }
    for (wire::Kind kind : {wire::BARRIER, wire::FINISH, wire::HEARTBEAT}) {
      Message m = Forged(kind, sender);
      ids.push_back(m.header.request_id());
      stranger.Send(stranger.coordinator(), std::move(m));
    }
  }
  for (uint64_t id : ids) {
    std::optional<Message> reply = stranger.Reply(id, absl::Seconds(10));
    ASSERT_TRUE(reply.has_value()) << "no answer to request " << id;
    EXPECT_EQ(reply->header.kind(), wire::ERROR);
    EXPECT_EQ(reply->header.status().code(),
              static_cast<int>(absl::StatusCode::kPermissionDenied))
        << reply->header.status().message();
    EXPECT_TRUE(reply->payloads.empty());
  }
  for (auto& s : servers_) {
    EXPECT_EQ(s->stats().refused.unauthenticated, to_each_server);
    EXPECT_EQ(s->stats().pushes, 0u);
    EXPECT_EQ(s->stats().pulls, 0u);
    EXPECT_EQ(s->stats().version, 0u);
  }
  EXPECT_EQ(coordinator_->stats().refused.unauthenticated, 3u * (nodes + 2));

  // A stranger cannot join the running job either, whatever rank it asks for.
  Message join;
  join.header.set_kind(wire::JOIN);
  join.header.set_request_id(next_id_++);
  join.header.mutable_join()->set_role(wire::WORKER);
  join.header.mutable_join()->set_requested_rank(0);
  internal::ToWire(Job(), join.header.mutable_join()->mutable_job());
  const uint64_t join_id = join.header.request_id();
  stranger.Send(stranger.coordinator(), std::move(join));
  std::optional<Message> refused = stranger.Reply(join_id, absl::Seconds(10));
  ASSERT_TRUE(refused.has_value());
  EXPECT_THAT(refused->header.status().message(), HasSubstr("already started"));

  // The job is untouched: the workers' pushes (not the stranger's 1000s, assigned or as
  // the learning rate) make the values, nobody was finished or clocked in their name, and
  // the job ends normally (TearDown).
  std::vector<float> grad(kSize, 1.0f);
  for (auto& w : workers_) {
    ASSERT_TRUE(w->Push("w", grad).ok());
    ASSERT_TRUE(w->AdvanceClock().ok());
  }
  std::vector<float> out(kSize);
  for (auto& w : workers_) ASSERT_TRUE(w->Pull("w", out).ok());
  EXPECT_EQ(out, std::vector<float>(kSize, -2.0f));
  for (auto& s : servers_) {
    for (const WorkerMetrics& m : s->stats().workers) EXPECT_EQ(m.pushes, 1u);
  }
}

// ------------------------------------------------------------ a joined raw client

struct Limits {
  std::string policy = "asp";
  ServerOptions server;
  CoordinatorOptions coordinator;
  NonFinitePolicy nonfinite = NonFinitePolicy::kRefuse;
};

// One server, one real worker (rank 0) and a raw client that joined as worker 1, so that it
// can send exactly the (bad) fields it wants with a valid credential (raw_worker_job.h);
// the policy, the server's and coordinator's options and the non-finite policy are the
// test's Limits.
class FieldLimitTest : public testing::RawWorkerJobTest {
 protected:
  void Start(const Limits& limits = Limits()) {
    JobConfig job = Job(limits.policy);
    job.tables[0].nonfinite = limits.nonfinite;
    StartJob(job, limits.coordinator, limits.server);
  }

  Message Request(wire::Kind kind, int64_t clock = 0) {
    Message m = Stamped(kind);
    m.header.set_table(0);
    m.header.set_offset(0);
    m.header.set_length(kSize);
    m.header.set_clock(clock);
    if (kind == wire::PUSH) m.payloads.push_back(Filled(1.0f));
    return m;
  }
};

TEST_F(FieldLimitTest, RequestClocksAreAcceptedUpToTheLeadAndRefusedPastIt) {
  Limits limits;
  limits.server.max_clock_lead = 3;
  Start(limits);
  EXPECT_TRUE(Roundtrip(Request(wire::PUSH, 3)).ok());  // at the limit
  for (int64_t clock : {int64_t{4}, int64_t{-1}, std::numeric_limits<int64_t>::max(),
                        std::numeric_limits<int64_t>::min()}) {
    absl::Status s = Roundtrip(Request(wire::PUSH, clock));
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << clock;
    EXPECT_THAT(std::string(s.message()), HasSubstr("max_clock_lead 3"));
    s = Roundtrip(Request(wire::PULL, clock));
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << clock;
  }
  // A CLOCK may jump at most the lead too; once at 3, a read at 3 + 3 is in the window.
  absl::Status jump = Roundtrip(Request(wire::CLOCK, 4));
  EXPECT_EQ(jump.code(), absl::StatusCode::kOutOfRange);
  raw_.Send(server_peer_, Request(wire::CLOCK, 3));
  std::optional<Message> read = Exchange(Request(wire::PULL, 6));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->header.kind(), wire::PULL_REPLY);
  EXPECT_EQ(server_->stats().refused.bad_clock, 9u);
  EXPECT_EQ(Read(), std::vector<float>(kSize, -1.0f));  // only the push at the limit
}

TEST_F(FieldLimitTest, WorkerScaleMustBeFiniteAndNotNegative) {
  Start();
  for (float scale : {std::nanf(""), std::numeric_limits<float>::infinity(),
                      -std::numeric_limits<float>::infinity(), -1.0f, -1e-30f}) {
    Message m = Request(wire::PUSH);
    m.header.set_worker_scale(scale);
    absl::Status s = Roundtrip(std::move(m));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << scale;
    EXPECT_THAT(std::string(s.message()), HasSubstr("worker_scale"));
  }
  EXPECT_EQ(server_->stats().refused.bad_scale, 5u);
  EXPECT_EQ(Read(), std::vector<float>(kSize, 0.0f));
  Message zero = Request(wire::PUSH);  // 0 means 1
  zero.header.set_worker_scale(0.0f);
  EXPECT_TRUE(Roundtrip(std::move(zero)).ok());
  Message twice = Request(wire::PUSH);
  twice.header.set_worker_scale(2.0f);
  EXPECT_TRUE(Roundtrip(std::move(twice)).ok());
  EXPECT_EQ(Read(), std::vector<float>(kSize, -3.0f));
}

TEST_F(FieldLimitTest, NonFiniteGradientsAreRefusedByDefaultAndNothingIsApplied) {
  Start();
  for (float bad : {std::nanf(""), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    Message m = Request(wire::PUSH);
    m.payloads[0][37] = bad;
    absl::Status s = Roundtrip(std::move(m));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.message()), HasSubstr("at element 37 of table 'w'"));
  }
  // Through the API as well.
  std::vector<float> grad(kSize, 1.0f);
  grad[99] = std::numeric_limits<float>::quiet_NaN();
  absl::Status api = worker_->Push("w", grad);
  EXPECT_EQ(api.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(api.message()), HasSubstr("element 99"));
  const ServerStats stats = server_->stats();
  EXPECT_EQ(stats.refused.nonfinite, 4u);
  EXPECT_EQ(stats.workers[1].nonfinite, 3u);
  EXPECT_EQ(stats.workers[0].nonfinite, 1u);
  EXPECT_EQ(Read(), std::vector<float>(kSize, 0.0f));
}

// An assign holding NaN or an infinity is refused even where the table skips such pushes
// (a silent no-op would leave the caller believing the values were loaded); a learning
// rate must be finite and >= 0. Through the API both are refused before anything is sent.
TEST_F(FieldLimitTest, AssignValuesAndLearningRatesMustBeFinite) {
  Limits limits;
  limits.nonfinite = NonFinitePolicy::kSkip;
  Start(limits);
  for (float bad : {std::nanf(""), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    Message m = Request(wire::ASSIGN);
    m.payloads.push_back(Filled(5.0f));
    m.payloads[0][12] = bad;
    absl::Status s = Roundtrip(std::move(m));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.message()), HasSubstr("at element 12 of table 'w'"));
    Message lr = Request(wire::SET_LEARNING_RATE);
    lr.header.set_learning_rate(bad);
    s = Roundtrip(std::move(lr));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.message()), HasSubstr("learning rate"));
  }
  Message negative = Request(wire::SET_LEARNING_RATE);
  negative.header.set_learning_rate(-1e-30f);
  EXPECT_EQ(Roundtrip(std::move(negative)).code(), absl::StatusCode::kInvalidArgument);
  std::vector<float> values(kSize, 5.0f);
  values[99] = std::numeric_limits<float>::quiet_NaN();
  absl::Status api = worker_->Assign("w", 0, values);
  EXPECT_EQ(api.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(api.message()), HasSubstr("element 99; nothing was sent"));
  EXPECT_EQ(worker_->SetLearningRate("w", -1.0f).code(), absl::StatusCode::kInvalidArgument);
  const ServerStats stats = server_->stats();
  EXPECT_EQ(stats.refused.nonfinite, 3u);
  EXPECT_EQ(stats.refused.bad_scale, 4u);
  EXPECT_EQ(stats.version, 0u);
  // A learning rate of 0 is accepted: pushes no longer move the table.
  Message zero = Request(wire::SET_LEARNING_RATE);
  zero.header.set_learning_rate(0.0f);
  EXPECT_TRUE(Roundtrip(std::move(zero)).ok());
  EXPECT_TRUE(Roundtrip(Request(wire::PUSH)).ok());
  EXPECT_EQ(Read(), std::vector<float>(kSize, 0.0f));
}

TEST_F(FieldLimitTest, NonFiniteGradientsAreSkippedWhenTheTableSaysSo) {
  Limits limits;
  limits.nonfinite = NonFinitePolicy::kSkip;
  Start(limits);
  std::vector<float> grad(kSize, 1.0f);
  grad[0] = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(worker_->Push("w", grad).ok());
  EXPECT_TRUE(Roundtrip(Request(wire::PUSH)).ok());  // a finite one is applied
  EXPECT_EQ(server_->stats().refused.nonfinite_skipped, 1u);
  EXPECT_EQ(server_->stats().workers[0].nonfinite, 1u);
  EXPECT_EQ(Read(), std::vector<float>(kSize, -1.0f));
}

TEST_F(FieldLimitTest, ReadTimeoutsOfZeroOrAboveTheCapWaitTheCap) {
  Limits limits;
  limits.policy = "bsp";
  limits.server.max_read_wait = absl::Milliseconds(300);
  Start(limits);
  // The real worker stays at clock 0, so a read at clock 1 waits in the gate until its
  // deadline: 0 and 10^12 ms both get the 300 ms cap instead of waiting forever.
  for (uint64_t timeout_ms : {uint64_t{0}, uint64_t{1'000'000'000'000}}) {
    Message m = Request(wire::PULL, 1);
    m.header.set_timeout_ms(timeout_ms);
    std::optional<Message> reply = Exchange(std::move(m), absl::Seconds(10));
    ASSERT_TRUE(reply.has_value()) << timeout_ms;
    EXPECT_EQ(reply->header.status().code(),
              static_cast<int>(absl::StatusCode::kDeadlineExceeded));
    EXPECT_THAT(reply->header.status().message(), HasSubstr("waited 300ms"));
  }
  Message within = Request(wire::PULL, 1);
  within.header.set_timeout_ms(100);
  std::optional<Message> reply = Exchange(std::move(within));
  ASSERT_TRUE(reply.has_value());
  EXPECT_THAT(reply->header.status().message(), HasSubstr("waited 100ms"));
  EXPECT_EQ(server_->stats().refused.waits_capped, 2u);
}

TEST_F(FieldLimitTest, WaitingReadsOfAWorkerAreCapped) {
  Limits limits;
  limits.policy = "bsp";
  limits.server.max_waiting_reads_per_worker = 2;
  Start(limits);
  std::vector<uint64_t> waiting;
  for (int i = 0; i < 2; ++i) {
    Message m = Request(wire::PULL, 1);
    waiting.push_back(m.header.request_id());
    raw_.Send(server_peer_, std::move(m));
  }
  absl::Status third = Roundtrip(Request(wire::PULL, 1));
  EXPECT_EQ(third.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(third.message()), HasSubstr("already has 2 reads waiting"));
  EXPECT_EQ(server_->stats().refused.too_many_waiting, 1u);
  // Once both workers reach clock 1 the two waiting reads are served.
  raw_.Send(server_peer_, Request(wire::CLOCK, 1));
  ASSERT_TRUE(worker_->AdvanceClock().ok());
  for (uint64_t id : waiting) {
    std::optional<Message> r = raw_.Reply(id, absl::Seconds(10));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->header.kind(), wire::PULL_REPLY);
  }
}

// ----------------------------------------------------------------- job limits

// The job's first worker defines it; a bad one is refused at join and the coordinator and
// server go on to run a good job.
TEST(JobLimitTest, ImpossibleJobsAreRefusedAtJoinAndTheNodesKeepServing) {
  CoordinatorOptions co;
  auto coordinator = Coordinator::Create(co);
  ASSERT_TRUE(coordinator.ok());
  ServerOptions so;
  so.coordinator = (*coordinator)->endpoint();
  auto server = Server::Create(so);
  ASSERT_TRUE(server.ok());

  struct Case {
    JobConfig job;
    std::string error;
  };
  std::vector<Case> cases;
  JobConfig huge = Job();
  huge.tables[0].size = uint64_t{1} << 40;
  cases.push_back({huge, "table 'w': size is 1099511627776 elements; it must be in [1, "
                         "68719476736]"});
  JobConfig wraps = Job();
  wraps.tables[0].size = (uint64_t{1} << 62) + 16;
  wraps.chunk_elements = uint64_t{1} << 63;
  cases.push_back({wraps, "chunk_elements is 9223372036854775808; it must be in [1, "
                          "268435456]"});
  JobConfig many = Job();
  many.tables[0].size = uint64_t{1} << 36;
  many.chunk_elements = 1024;
  cases.push_back({many, "make 67108864 chunks"});
  JobConfig long_schedule = Job();
  long_schedule.tables[0].updater.schedule = std::string(kMaxScheduleLength + 1, 'x');
  cases.push_back({long_schedule,
                   "the learning-rate schedule must be at most 256 printable characters"});
  JobConfig binary_schedule = Job();
  binary_schedule.tables[0].updater.schedule = std::string("step\x01", 5);
  cases.push_back({binary_schedule,
                   "the learning-rate schedule must be at most 256 printable characters"});
  JobConfig bad_schedule = Job();
  bad_schedule.tables[0].updater.schedule = "cosine:steps=0";
  cases.push_back({bad_schedule, "parameter 'steps' must be an integer in [1, 2^62]"});
  for (const Case& c : cases) {
    // A raw JOIN: the coordinator itself refuses the job, naming the field and the limit.
    testing::RawClient raw;
    raw.ConnectCoordinator((*coordinator)->endpoint());
    Message join;
    join.header.set_kind(wire::JOIN);
    join.header.set_request_id(1);
    join.header.mutable_join()->set_role(wire::WORKER);
    join.header.mutable_join()->set_requested_rank(-1);
    internal::ToWire(c.job, join.header.mutable_join()->mutable_job());
    raw.Send(raw.coordinator(), std::move(join));
    std::optional<Message> reply = raw.Reply(1, absl::Seconds(10));
    ASSERT_TRUE(reply.has_value());
    EXPECT_EQ(reply->header.kind(), wire::JOIN_REPLY);
    EXPECT_EQ(reply->header.status().code(),
              static_cast<int>(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(reply->header.status().message(), HasSubstr(c.error));

    WorkerOptions wo;
    wo.coordinator = (*coordinator)->endpoint();
    wo.job = c.job;
    wo.join_timeout = absl::Seconds(10);
    // The worker checks its own job first; the coordinator checks it again at join.
    auto worker = Worker::Create(wo);
    ASSERT_FALSE(worker.ok());
    EXPECT_EQ(worker.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(worker.status().message()), HasSubstr(c.error));
  }
  // Both nodes still serve: a good job runs.
  WorkerOptions wo;
  wo.coordinator = (*coordinator)->endpoint();
  wo.job = Job();
  auto worker = Worker::Create(wo);
  ASSERT_TRUE(worker.ok()) << worker.status();
  ASSERT_TRUE((*worker)->Push("w", std::vector<float>(kSize, 1.0f)).ok());
  std::vector<float> out(kSize);
  ASSERT_TRUE((*worker)->Pull("w", out).ok());
  EXPECT_EQ(out, std::vector<float>(kSize, -1.0f));
  ASSERT_TRUE((*worker)->Shutdown().ok());
  EXPECT_TRUE((*coordinator)->Wait(absl::Seconds(10)).ok());
  EXPECT_TRUE((*server)->Wait(absl::Seconds(10)).ok());
  EXPECT_EQ((*coordinator)->stats().refused.joins, cases.size());
}

TEST(JobLimitTest, AJobWhoseShardExceedsTheMemoryBudgetFailsEveryCreateClearly) {
  CoordinatorOptions co;
  co.num_servers = 2;
  auto coordinator = Coordinator::Create(co);
  ASSERT_TRUE(coordinator.ok());
  std::vector<std::unique_ptr<Server>> servers;
  for (uint64_t budget : {uint64_t{64} << 20, uint64_t{1} << 20}) {
    ServerOptions so;
    so.coordinator = (*coordinator)->endpoint();
    so.memory_budget_bytes = budget;
    servers.push_back(*Server::Create(so));
  }
  JobConfig job = Job("bsp");
  // 4 MiB, 2 MiB per shard, + a round sum each (2 x 2^19 x 4 bytes) + 2 chunks of
  // bookkeeping (2 x (1024 + 8 x 1 worker)): 4196368 bytes.
  job.tables[0].size = uint64_t{1} << 20;
  WorkerOptions wo;
  wo.coordinator = (*coordinator)->endpoint();
  wo.job = job;
  wo.join_timeout = absl::Seconds(20);
  const absl::Time begin = absl::Now();
  auto worker = Worker::Create(wo);
  ASSERT_FALSE(worker.ok());
  EXPECT_LT(absl::Now() - begin, absl::Seconds(10));  // at once, not at a deadline
  EXPECT_EQ(worker.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(worker.status().message()),
              HasSubstr("needs 4196368 bytes (4.0 MiB) for the job's tables (the largest "
                        "share: table 'w'"));
  EXPECT_THAT(std::string(worker.status().message()),
              HasSubstr("memory budget is 1048576 bytes (1.0 MiB"));
  EXPECT_EQ((*coordinator)->Wait(absl::Seconds(10)).code(),
            absl::StatusCode::kResourceExhausted);
  for (auto& s : servers) {
    EXPECT_EQ(s->Wait(absl::Seconds(10)).code(), absl::StatusCode::kResourceExhausted);
  }
}

// ------------------------------------------------------------------ coordinator

TEST(CoordinatorLimitTest, ANewerBarrierOfAWorkerSupersedesItsOlderOne) {
  JobConfig job = Job();
  CoordinatorOptions co;
  co.num_workers = 2;
  co.job = job;
  auto coordinator = Coordinator::Create(co);
  ASSERT_TRUE(coordinator.ok());
  ServerOptions so;
  so.coordinator = (*coordinator)->endpoint();
  auto server = Server::Create(so);
  ASSERT_TRUE(server.ok());
  std::unique_ptr<Worker> worker;
  std::thread join([&] {
    WorkerOptions wo;
    wo.coordinator = (*coordinator)->endpoint();
    wo.job = job;
    wo.rank = 0;
    auto w = Worker::Create(wo);
    ASSERT_TRUE(w.ok()) << w.status();
    worker = *std::move(w);
  });
  testing::RawClient raw;
  ASSERT_TRUE(raw.JoinAsWorker((*coordinator)->endpoint(), job, 1).has_value());
  join.join();
  ASSERT_NE(worker, nullptr);
  auto barrier = [&](uint64_t id, uint64_t timeout_ms) {
    Message m;
    m.header.set_kind(wire::BARRIER);
    m.header.set_request_id(id);
    m.header.set_sender(raw.node_id());
    m.header.set_timeout_ms(timeout_ms);
    raw.Send(raw.coordinator(), std::move(m));
  };
  barrier(1, 0);  // 0: the coordinator's cap, not forever
  barrier(2, 0);
  std::optional<Message> first = raw.Reply(1, absl::Seconds(10));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->header.status().code(), static_cast<int>(absl::StatusCode::kAborted));
  EXPECT_THAT(first->header.status().message(), HasSubstr("superseded"));
  // The real worker arrives: the one waiting barrier of the raw client is released with it.
  ASSERT_TRUE(worker->Barrier().ok());
  std::optional<Message> second = raw.Reply(2, absl::Seconds(10));
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->header.kind(), wire::BARRIER_RELEASE);
  EXPECT_EQ((*coordinator)->stats().refused.waits_capped, 2u);
  ASSERT_TRUE(worker->Shutdown().ok());
  Message finish;
  finish.header.set_kind(wire::FINISH);
  finish.header.set_request_id(3);
  finish.header.set_sender(raw.node_id());
  raw.Send(raw.coordinator(), std::move(finish));
  EXPECT_TRUE((*coordinator)->Wait(absl::Seconds(10)).ok());
}

}  // namespace
}  // namespace kairos
