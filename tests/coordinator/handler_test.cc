// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The coordinator's message handler over the FakeTransport, on a kairos::testing::ManualEnv: the
// test plays every node and the I/O thread, delivers their messages and moves the clock itself, and
// reads what the coordinator sent. No socket, no sleep. (tests/fuzz/coordinator_fuzzer.cc
// drives the same seam with the input's operations.)

#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "fakes/fake_transport.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/coordinator.h"
#include "kairos/job.h"
#include "kairos/options.h"
#include "kairos/testing/manual_env.h"
#include "tests/common/scratch_dir.h"
#include "transport/node_bringup.h"
#include "transport/transport.h"
#include "wire/convert.h"
#include "wire/message.h"

namespace kairos::internal {
namespace {

using ::testing::HasSubstr;
using Sent = FakeTransport::Sent;

JobConfig Job() {
  JobConfig job;
  job.policy = "bsp";
  job.chunk_elements = 4;
  job.tables.push_back({"w", 8, Initializer::Zeros(), {"sgd", 0.5f}});
  return job;
}

// A coordinator for 1 server and 2 workers (node i sends from IncomingPeer(i)).
class CoordinatorHandlerTest : public ::testing::Test {
 protected:
  void Create(absl::Duration server_restart_timeout = absl::ZeroDuration()) {
    CoordinatorOptions o;
    o.listen = "fake://coordinator";
    o.num_servers = 1;
    o.num_workers = 2;
    o.job = Job();
    o.heartbeat_timeout = absl::Seconds(2);
    o.rejoin_silence = absl::Milliseconds(500);
    o.server_restart_timeout = server_restart_timeout;
    o.state_dir = state_dir_;
    o.env = env_;
    auto transport = std::make_unique<FakeTransport>("coordinator");
    t_ = transport.get();
    o.transport_factory = OneTransportFactory(std::move(transport));
    absl::StatusOr<std::unique_ptr<Coordinator>> c = Coordinator::Create(o);
    ASSERT_TRUE(c.ok()) << c.status();
    coordinator_ = *std::move(c);
  }

  void TearDown() override {
    if (coordinator_ == nullptr) return;
    // Past every timeout the job ends, so the coordinator's destructor has nothing to stop.
    Advance(absl::Hours(1));
    Advance(absl::Hours(1));
  }

  static PeerId Peer(int i) { return FakeTransport::IncomingPeer(static_cast<uint64_t>(i)); }

  void Advance(absl::Duration d) {
    env_->Advance(d);
    t_->Tick(env_->Now());
  }

  // Delivers `m` from `peer` and returns what the coordinator sent in answer.
  std::vector<Sent> From(PeerId peer, Message m) {
    EXPECT_TRUE(t_->Deliver(peer, std::move(m)).ok());
    return t_->TakeSent();
  }

  Message Join(wire::Role role, int rank, uint64_t incarnation, bool keeps_log = false) {
    Message m;
    m.header.set_kind(wire::JOIN);
    m.header.set_request_id(next_id_++);
    m.header.mutable_join()->set_role(role);
    m.header.mutable_join()->set_incarnation(incarnation);
    m.header.mutable_join()->set_keeps_log(keeps_log);
    if (role == wire::SERVER) {
      m.header.mutable_join()->set_requested_shard(static_cast<uint32_t>(rank + 1));
      m.header.mutable_join()->set_endpoint(absl::StrCat("tcp://10.0.0.1:", 7000 + incarnation));
    } else {
      m.header.mutable_join()->set_requested_rank(rank);
      ToWire(Job(), m.header.mutable_join()->mutable_job());
    }
    return m;
  }

  // The JOIN with which node `node` (of `role`, rank, incarnation) asks a restarted
  // coordinator to take it back.
  Message Resume(wire::Role role, int rank, uint64_t incarnation, uint32_t node) {
    Message m = Join(role, rank, incarnation);
    m.header.mutable_join()->set_resume_node_id(node);
    return m;
  }

  Message Signal(wire::Kind kind, uint32_t node) {
    Message m;
    m.header.set_kind(kind);
    m.header.set_request_id(next_id_++);
    m.header.set_sender(node);
    return m;
  }

  // The node id of the JOIN_REPLY among `sent`.
  static uint32_t NodeId(const std::vector<Sent>& sent) {
    for (const Sent& s : sent) {
      if (s.message.header.kind() == wire::JOIN_REPLY) {
        EXPECT_FALSE(s.message.header.has_status()) << s.message.header.status().message();
        return s.message.header.join_reply().node_id();
      }
    }
    ADD_FAILURE() << "no JOIN_REPLY";
    return 0;
  }

  // The server joins from peer 0, workers 0 and 1 from peers 1 and 2; the server is READY.
  void BringUp() {
    server_ = NodeId(From(Peer(0), Join(wire::SERVER, 0, 1)));
    workers_[0] = NodeId(From(Peer(1), Join(wire::WORKER, 0, 1)));
    workers_[1] = NodeId(From(Peer(2), Join(wire::WORKER, 1, 1)));
    From(Peer(0), Signal(wire::READY, server_));
    ASSERT_EQ(coordinator_->stats().phase, JobPhase::kRunning);
  }

  std::shared_ptr<kairos::testing::ManualEnv> env_ =
      std::make_shared<kairos::testing::ManualEnv>(absl::UnixEpoch() + absl::Hours(1));
  FakeTransport* t_ = nullptr;  // owned by coordinator_
  std::unique_ptr<Coordinator> coordinator_;
  uint64_t next_id_ = 1;
  std::string state_dir_;  // CoordinatorOptions::state_dir of the next Create
  uint32_t server_ = 0;
  uint32_t workers_[2] = {0, 0};
};

// Found by coordinator_fuzzer: a worker declared dead while its barrier call waited was
// dropped from the barrier without an answer, so the call (of a worker that still runs,
// e.g. resumed after a pause) waited until its own deadline.
TEST_F(CoordinatorHandlerTest, ABarrierCallOfAWorkerDeclaredDeadIsAnswered) {
  Create();
  BringUp();
  Message barrier = Signal(wire::BARRIER, workers_[0]);
  const uint64_t id = barrier.header.request_id();
  EXPECT_TRUE(From(Peer(1), std::move(barrier)).empty());  // waits for worker 1
  Advance(absl::Milliseconds(1500));
  From(Peer(0), Signal(wire::HEARTBEAT, server_));
  From(Peer(2), Signal(wire::HEARTBEAT, workers_[1]));
  Advance(absl::Milliseconds(1000));  // worker 0 silent for 2.5 s
  std::optional<Message> answer;
  for (Sent& s : t_->TakeSent()) {
    if (s.to == Peer(1) && s.message.header.request_id() == id) answer = s.message;
  }
  ASSERT_TRUE(answer.has_value()) << "the barrier call of the dead worker was not answered";
  EXPECT_EQ(answer->header.kind(), wire::ERROR);
  EXPECT_EQ(StatusOf(answer->header).code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(answer->header.status().message(), HasSubstr("declared dead"));
  EXPECT_EQ(coordinator_->stats().barrier_waiting, 0);
}

TEST_F(CoordinatorHandlerTest, ABarrierCallOfAWorkerThatFinishesIsAnswered) {
  Create();
  BringUp();
  Message barrier = Signal(wire::BARRIER, workers_[0]);
  const uint64_t id = barrier.header.request_id();
  From(Peer(1), std::move(barrier));
  std::vector<Sent> sent = From(Peer(1), Signal(wire::FINISH, workers_[0]));
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].message.header.kind(), wire::FINISH);
  EXPECT_EQ(sent[1].message.header.kind(), wire::ERROR);
  EXPECT_EQ(sent[1].message.header.request_id(), id);
  EXPECT_EQ(StatusOf(sent[1].message.header).code(), absl::StatusCode::kFailedPrecondition);
}

// Found by coordinator_fuzzer: a BARRIER that reached the coordinator after the job ended
// (crossing its SHUTDOWN) was kept as a waiter that nothing would ever answer.
TEST_F(CoordinatorHandlerTest, ABarrierCallAfterTheJobEndedIsAnswered) {
  Create();
  BringUp();
  Advance(absl::Seconds(3));  // the server is declared dead: the job ends, workers active
  t_->ClearSent();
  ASSERT_EQ(coordinator_->stats().phase, JobPhase::kDone);
  ASSERT_EQ(coordinator_->stats().workers_active, 2);
  std::vector<Sent> sent = From(Peer(1), Signal(wire::BARRIER, workers_[0]));
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].message.header.kind(), wire::ERROR);
  EXPECT_EQ(StatusOf(sent[0].message.header).code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(sent[0].message.header.status().message(), HasSubstr("the job has ended"));
  EXPECT_EQ(coordinator_->stats().barrier_waiting, 0);
}

// Found by coordinator_fuzzer: a rejoin that was waiting for the servers' answers when the
// job ended was completed by a late answer, with a JOIN_REPLY and a START after SHUTDOWN.
TEST_F(CoordinatorHandlerTest, ARejoinAnsweredAfterTheJobEndedIsNotAdmitted) {
  Create();
  BringUp();
  Advance(absl::Milliseconds(600));
  From(Peer(0), Signal(wire::HEARTBEAT, server_));
  std::optional<Message> ask;
  for (Sent& s : From(Peer(3), Join(wire::WORKER, 0, 2))) {
    if (s.to == Peer(0) && s.message.header.kind() == wire::MEMBERSHIP) ask = s.message;
  }
  ASSERT_TRUE(ask.has_value());
  Advance(absl::Seconds(3));  // the server is declared dead: the job ends
  ASSERT_EQ(coordinator_->stats().phase, JobPhase::kDone);
  bool told = false;
  for (const Sent& s : t_->TakeSent()) {
    told |= s.to == Peer(3) && s.message.header.kind() == wire::SHUTDOWN;
  }
  EXPECT_TRUE(told) << "the rejoining worker is told the job ended";
  Message answer = Signal(wire::MEMBERSHIP, server_);
  answer.header.set_request_id(ask->header.request_id());
  *answer.header.mutable_membership() = ask->header.membership();
  for (const Sent& s : From(Peer(0), std::move(answer))) {
    ADD_FAILURE() << "sent after the job ended: " << Describe(s.message.header);
  }
}

// Found by coordinator_fuzzer: a restarted server READY after the job ended (its restart
// took longer than server_restart_timeout) was announced to the workers, after SHUTDOWN.
TEST_F(CoordinatorHandlerTest, AServerReadyAfterTheJobEndedIsNotAnnounced) {
  Create(/*server_restart_timeout=*/absl::Seconds(3));
  BringUp();
  Advance(absl::Milliseconds(600));
  From(Peer(1), Signal(wire::HEARTBEAT, workers_[0]));
  From(Peer(2), Signal(wire::HEARTBEAT, workers_[1]));
  const uint32_t new_server = NodeId(From(Peer(4), Join(wire::SERVER, 0, 2)));
  Advance(absl::Milliseconds(1500));
  From(Peer(1), Signal(wire::HEARTBEAT, workers_[0]));
  From(Peer(2), Signal(wire::HEARTBEAT, workers_[1]));
  From(Peer(4), Signal(wire::HEARTBEAT, new_server));
  Advance(absl::Milliseconds(1600));  // 3.1 s since the restart began: the job ends
  ASSERT_EQ(coordinator_->stats().phase, JobPhase::kDone);
  t_->ClearSent();
  for (const Sent& s : From(Peer(4), Signal(wire::READY, new_server))) {
    ADD_FAILURE() << "sent after the job ended: " << Describe(s.message.header);
  }
}

// Found by coordinator_fuzzer (tests/fuzz/regressions/coordinator/
// worker-rejoin-start-names-replaced-node): after a worker rejoined, a restarted server's
// START named the replaced worker and the new one with the same rank, and a server refuses
// such a START.
TEST_F(CoordinatorHandlerTest, AServerRestartedAfterAWorkerRejoinedGetsEachRankOnce) {
  Create(/*server_restart_timeout=*/absl::Seconds(30));
  BringUp();
  Advance(absl::Milliseconds(600));
  From(Peer(0), Signal(wire::HEARTBEAT, server_));
  // Worker 0's new incarnation, from a new connection; the server re-admits it.
  std::vector<Sent> sent = From(Peer(3), Join(wire::WORKER, 0, 2));
  std::optional<Message> ask;
  for (Sent& s : sent) {
    if (s.to == Peer(0) && s.message.header.kind() == wire::MEMBERSHIP) ask = s.message;
  }
  ASSERT_TRUE(ask.has_value());
  const uint32_t new_worker = ask->header.membership().node_id();
  Message answer = Signal(wire::MEMBERSHIP, server_);
  answer.header.set_request_id(ask->header.request_id());
  *answer.header.mutable_membership() = ask->header.membership();
  answer.header.mutable_membership()->set_clock(0);
  EXPECT_EQ(NodeId(From(Peer(0), std::move(answer))), new_worker);

  // The server restarts with its shard, from a new connection.
  Advance(absl::Milliseconds(600));
  sent = From(Peer(4), Join(wire::SERVER, 0, 2));
  const uint32_t new_server = NodeId(sent);
  std::optional<wire::Start> start;
  for (Sent& s : sent) {
    if (s.message.header.kind() == wire::START) start = s.message.header.start();
  }
  ASSERT_TRUE(start.has_value());
  std::vector<std::pair<int, uint32_t>> servers, workers;
  for (const wire::Node& n : start->nodes()) {
    (n.role() == wire::SERVER ? servers : workers).push_back({n.rank(), n.node_id()});
  }
  EXPECT_EQ(servers, (std::vector<std::pair<int, uint32_t>>{{0, new_server}}));
  EXPECT_EQ(workers, (std::vector<std::pair<int, uint32_t>>{{0, new_worker}, {1, workers_[1]}}));
  // The restarted server is READY: back in the job.
  From(Peer(4), Signal(wire::READY, new_server));
  EXPECT_EQ(coordinator_->stats().servers_restarted, 1u);
  EXPECT_NE(coordinator_->stats().phase, JobPhase::kDone);
}

// Durability is the server's one switch: with server_restart_timeout left at 0, a server
// that keeps an update log is waited for (kDefaultServerRestartWait, told to the workers in
// START) and restarts into the job; one that keeps none ends the job when it dies, and the
// error says what it lacked.
TEST_F(CoordinatorHandlerTest, AServerThatKeepsALogIsWaitedForWithoutACoordinatorOption) {
  Create();
  server_ = NodeId(From(Peer(0), Join(wire::SERVER, 0, 1, /*keeps_log=*/true)));
  workers_[0] = NodeId(From(Peer(1), Join(wire::WORKER, 0, 1)));
  workers_[1] = NodeId(From(Peer(2), Join(wire::WORKER, 1, 1)));
  std::optional<wire::Start> start;
  for (Sent& s : From(Peer(0), Signal(wire::READY, server_))) {
    if (s.to == Peer(1) && s.message.header.kind() == wire::START) start = s.message.header.start();
  }
  ASSERT_TRUE(start.has_value());
  EXPECT_EQ(start->server_restart_timeout_ms(),
            static_cast<uint64_t>(absl::ToInt64Milliseconds(kDefaultServerRestartWait)));
  // The server falls silent past the heartbeat timeout (2 s); the workers go on.
  for (int i = 0; i < 5; ++i) {
    Advance(absl::Milliseconds(600));
    From(Peer(1), Signal(wire::HEARTBEAT, workers_[0]));
    From(Peer(2), Signal(wire::HEARTBEAT, workers_[1]));
  }
  EXPECT_EQ(coordinator_->stats().servers_dead, 1);
  EXPECT_EQ(coordinator_->stats().servers_away, 1);
  EXPECT_NE(coordinator_->stats().phase, JobPhase::kDone);
  // It restarts with its shard and its log, and is back in the job.
  const uint32_t restarted = NodeId(From(Peer(4), Join(wire::SERVER, 0, 2, /*keeps_log=*/true)));
  From(Peer(4), Signal(wire::READY, restarted));
  EXPECT_EQ(coordinator_->stats().servers_restarted, 1u);
  EXPECT_EQ(coordinator_->stats().servers_away, 0);
  EXPECT_NE(coordinator_->stats().phase, JobPhase::kDone);
}

TEST_F(CoordinatorHandlerTest, AServerWithoutALogEndsTheJobWhenItDiesSayingWhatItLacked) {
  Create();
  BringUp();  // the server keeps no log
  for (int i = 0; i < 5; ++i) {
    Advance(absl::Milliseconds(600));
    From(Peer(1), Signal(wire::HEARTBEAT, workers_[0]));
    From(Peer(2), Signal(wire::HEARTBEAT, workers_[1]));
  }
  EXPECT_EQ(coordinator_->stats().phase, JobPhase::kDone);
  const absl::Status ended = coordinator_->Wait(absl::ZeroDuration());
  EXPECT_EQ(ended.code(), absl::StatusCode::kUnavailable) << ended;
  EXPECT_THAT(ended.message(), HasSubstr("keeps no update log"));
  EXPECT_THAT(ended.message(), HasSubstr("--state-dir"));
}

// A node that stops on an error of its own says so (FAILED, with its error): the job ends
// with that error at once, every node is told it in SHUTDOWN, and nobody waits for the
// server's silence to reach the heartbeat timeout.
TEST_F(CoordinatorHandlerTest, AServerThatFailsEndsTheJobAtOnceWithItsError) {
  Create();
  BringUp();
  Message failed = Signal(wire::FAILED, server_);
  ToWire(absl::ResourceExhaustedError("server 0: update log /d/shard-00000.kul: write: No space "
                                      "left on device; the server stops"),
         failed.header.mutable_status());
  std::set<PeerId> told;
  for (const Sent& s : From(Peer(0), std::move(failed))) {
    ASSERT_EQ(s.message.header.kind(), wire::SHUTDOWN);
    EXPECT_EQ(StatusOf(s.message.header).code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(s.message.header.status().message(), HasSubstr("No space left on device"));
    told.insert(s.to);
  }
  // The failed server is not told: it has stopped.
  EXPECT_EQ(told, (std::set<PeerId>{Peer(1), Peer(2)}));
  EXPECT_EQ(coordinator_->stats().phase, JobPhase::kDone);
  const absl::Status ended = coordinator_->Wait(absl::ZeroDuration());
  EXPECT_EQ(ended.code(), absl::StatusCode::kResourceExhausted) << ended;
  EXPECT_EQ(ended.message(), absl::StrCat("node ", server_,
                                          " failed: server 0: update log /d/shard-00000.kul: "
                                          "write: No space left on device; the server stops"));
}

// A worker's FAILED is its death, with its error as the why: the job goes on without it
// when dead workers are tolerated, and otherwise ends naming it once the others finish.
TEST_F(CoordinatorHandlerTest, AWorkerThatFailsIsCountedOutAtOnceWithItsError) {
  Create();
  BringUp();
  Message failed = Signal(wire::FAILED, workers_[1]);
  ToWire(absl::InvalidArgumentError("worker 1: START names no server for shard 0 of 1"),
         failed.header.mutable_status());
  std::vector<Sent> sent = From(Peer(2), std::move(failed));
  ASSERT_EQ(sent.size(), 1u);  // the server is told (MEMBERSHIP DEAD)
  EXPECT_EQ(sent[0].to, Peer(0));
  EXPECT_EQ(sent[0].message.header.membership().state(), wire::Membership::DEAD);
  EXPECT_EQ(coordinator_->stats().workers_dead, 1);
  EXPECT_NE(coordinator_->stats().phase, JobPhase::kDone);
  From(Peer(1), Signal(wire::FINISH, workers_[0]));
  const absl::Status ended = coordinator_->Wait(absl::ZeroDuration());
  EXPECT_EQ(ended.code(), absl::StatusCode::kUnavailable) << ended;
  EXPECT_THAT(ended.message(), HasSubstr("workers 1, declared dead"));
  EXPECT_THAT(ended.message(), HasSubstr("START names no server for shard 0 of 1"));
}

// Positive control of the sender check: a FAILED that names a node its connection did not
// join as changes nothing.
TEST_F(CoordinatorHandlerTest, AFailedFromAnotherConnectionIsRefused) {
  Create();
  BringUp();
  Message failed = Signal(wire::FAILED, server_);
  ToWire(absl::InternalError("forged"), failed.header.mutable_status());
  std::vector<Sent> sent = From(Peer(1), std::move(failed));
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].message.header.kind(), wire::ERROR);
  EXPECT_EQ(StatusOf(sent[0].message.header).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(coordinator_->stats().phase, JobPhase::kDone);
}

// A server started again for the shard of a silent one proves the old process gone, even
// when it is refused: the old server is declared dead at once. Keeping no log, it cannot
// come back, and the job ends now, naming the refusal, not at the heartbeat timeout.
TEST_F(CoordinatorHandlerTest, ARefusedRestartOfASilentServerEndsTheJobAtOnce) {
  Create();
  BringUp();                         // the server keeps no log
  Advance(absl::Milliseconds(600));  // past rejoin_silence, inside the heartbeat timeout
  From(Peer(1), Signal(wire::HEARTBEAT, workers_[0]));
  From(Peer(2), Signal(wire::HEARTBEAT, workers_[1]));
  std::vector<Sent> sent = From(Peer(4), Join(wire::SERVER, 0, 2));  // no log: refused
  ASSERT_FALSE(sent.empty());
  EXPECT_EQ(sent[0].to, Peer(4));
  EXPECT_EQ(sent[0].message.header.kind(), wire::JOIN_REPLY);
  EXPECT_THAT(sent[0].message.header.status().message(), HasSubstr("--state-dir"));
  EXPECT_EQ(coordinator_->stats().phase, JobPhase::kDone);
  const absl::Status ended = coordinator_->Wait(absl::ZeroDuration());
  EXPECT_EQ(ended.code(), absl::StatusCode::kUnavailable) << ended;
  EXPECT_THAT(ended.message(), HasSubstr("a new server for its shard was refused"));
  EXPECT_THAT(ended.message(), HasSubstr("keeps no update log"));
}

// Control: the same refused JOIN while the old server is heard (a second server started by
// mistake with a taken shard) proves nothing, and the job goes on.
TEST_F(CoordinatorHandlerTest, ARefusedServerJoinWhileTheOldOneIsHeardChangesNothing) {
  Create();
  BringUp();
  Advance(absl::Milliseconds(600));
  From(Peer(0), Signal(wire::HEARTBEAT, server_));
  std::vector<Sent> sent = From(Peer(4), Join(wire::SERVER, 0, 2));
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].message.header.kind(), wire::JOIN_REPLY);
  EXPECT_TRUE(sent[0].message.header.has_status());
  EXPECT_EQ(coordinator_->stats().servers_dead, 0);
  EXPECT_NE(coordinator_->stats().phase, JobPhase::kDone);
}

// A coordinator with a state directory that dies (here: its state file as it was, put back
// after the coordinator is gone) is resumed by a new one: every node is known but bound to
// no connection until it asks (a resume JOIN with its node id and incarnation); a stranger
// with a known id is refused; a barrier call released before the crash and sent again is
// released at once; the job then runs to its end as if nothing had happened.
TEST_F(CoordinatorHandlerTest, ARestartedCoordinatorResumesTheJobFromItsState) {
  testing::UniqueTempDir dir("kairos-coordinator-resume-");
  state_dir_ = dir.path();
  Create();
  BringUp();
  Message b0 = Signal(wire::BARRIER, workers_[0]);
  const uint64_t released_id = b0.header.request_id();
  From(Peer(1), std::move(b0));
  std::vector<Sent> sent = From(Peer(2), Signal(wire::BARRIER, workers_[1]));
  ASSERT_EQ(sent.size(), 2u);  // both released
  const std::string file = dir.path() + "/coordinator.state";
  const std::string kept = file + ".crash";
  std::filesystem::copy_file(file, kept);
  // The job ends (every node silent) and the coordinator goes, writing the job's end:
  // the crash's state is put back.
  Advance(absl::Hours(1));
  coordinator_.reset();
  std::filesystem::rename(kept, file);

  Create();
  EXPECT_EQ(coordinator_->stats().phase, JobPhase::kRunning);
  EXPECT_EQ(coordinator_->stats().workers_active, 2);
  EXPECT_EQ(coordinator_->stats().servers_ready, 1);
  // Unbound: the node's messages are refused, which tells it to ask.
  sent = From(Peer(5), Signal(wire::HEARTBEAT, workers_[0]));
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(StatusOf(sent[0].message.header).code(), absl::StatusCode::kPermissionDenied);
  // Another process with the node's id (not its incarnation) is refused.
  sent = From(Peer(6), Resume(wire::WORKER, 0, /*incarnation=*/9, workers_[0]));
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(StatusOf(sent[0].message.header).code(), absl::StatusCode::kPermissionDenied);
  // The server and the workers bind from new connections; workers get START again.
  EXPECT_EQ(NodeId(From(Peer(4), Resume(wire::SERVER, 0, 1, server_))), server_);
  for (int r = 0; r < 2; ++r) {
    sent = From(Peer(5 + r), Resume(wire::WORKER, r, 1, workers_[r]));
    EXPECT_EQ(NodeId(sent), workers_[r]);
    ASSERT_EQ(sent.size(), 2u);
    EXPECT_EQ(sent[1].message.header.kind(), wire::START);
  }
  // Worker 0's released call, sent again, is released at once.
  Message again = Signal(wire::BARRIER, workers_[0]);
  again.header.set_request_id(released_id);
  sent = From(Peer(5), std::move(again));
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].message.header.kind(), wire::BARRIER_RELEASE);
  // A new barrier waits for both, as before the crash.
  EXPECT_TRUE(From(Peer(5), Signal(wire::BARRIER, workers_[0])).empty());
  EXPECT_EQ(From(Peer(6), Signal(wire::BARRIER, workers_[1])).size(), 2u);
  From(Peer(5), Signal(wire::FINISH, workers_[0]));
  From(Peer(6), Signal(wire::FINISH, workers_[1]));
  EXPECT_TRUE(coordinator_->Wait(absl::ZeroDuration()).ok());
  // The state of an ended job starts a new job, not this one again.
  coordinator_.reset();
  Create();
  EXPECT_EQ(coordinator_->stats().phase, JobPhase::kJoining);
}

// Without a state directory no node moves to another connection: a resume JOIN, even with
// the node's own incarnation, is refused and the node stays bound where it joined.
TEST_F(CoordinatorHandlerTest, AResumeIsRefusedByACoordinatorThatKeepsNoState) {
  Create();
  BringUp();
  std::vector<Sent> sent = From(Peer(5), Resume(wire::WORKER, 0, 1, workers_[0]));
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(StatusOf(sent[0].message.header).code(), absl::StatusCode::kFailedPrecondition);
  // Still bound to its own connection (positive control), not to the new one.
  EXPECT_EQ(From(Peer(1), Signal(wire::HEARTBEAT, workers_[0]))[0].message.header.kind(),
            wire::HEARTBEAT);
  EXPECT_EQ(StatusOf(From(Peer(5), Signal(wire::HEARTBEAT, workers_[0]))[0].message.header).code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(CoordinatorHandlerTest, AStateOfAnotherJobShapeIsRefusedByCreate) {
  testing::UniqueTempDir dir("kairos-coordinator-resume-");
  state_dir_ = dir.path();
  Create();
  BringUp();
  const std::string file = dir.path() + "/coordinator.state";
  std::filesystem::copy_file(file, file + ".crash");
  Advance(absl::Hours(1));
  coordinator_.reset();
  std::filesystem::rename(file + ".crash", file);
  CoordinatorOptions o;
  o.listen = "fake://coordinator";
  o.num_servers = 2;  // the state's job has 1
  o.num_workers = 2;
  o.state_dir = dir.path();
  o.transport_factory = OneTransportFactory(std::make_unique<FakeTransport>("coordinator"));
  absl::StatusOr<std::unique_ptr<Coordinator>> c = Coordinator::Create(o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(c.status().message(), HasSubstr("1 servers and 2 workers"));
}

}  // namespace
}  // namespace kairos::internal
