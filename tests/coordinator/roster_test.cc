// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The coordinator's roster: which joins are admitted with which rank, the START it
// describes, and when the job is over.

#include "coordinator/roster.h"

#include <optional>
#include <string>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/job.h"
#include "wire/convert.h"

namespace kairos::internal {
namespace {

using ::testing::HasSubstr;

JobConfig Job(uint64_t size) {
  JobConfig job;
  job.policy = "bsp";
  job.tables.push_back({"w", size, Initializer::Zeros(), {"sgd", 0.1f}});
  return job;
}

wire::Join ServerJoin(const std::string& endpoint = "tcp://127.0.0.1:1") {
  wire::Join j;
  j.set_role(wire::SERVER);
  j.set_endpoint(endpoint);
  return j;
}

wire::Join WorkerJoin(int rank, uint64_t size = 100) {
  wire::Join j;
  j.set_role(wire::WORKER);
  j.set_requested_rank(rank);
  ToWire(Job(size), j.mutable_job());
  return j;
}

TEST(RosterTest, RanksAreGivenInJoinOrderOrAsAsked) {
  Roster r(2, 3, std::nullopt);
  EXPECT_EQ(*r.Admit(ServerJoin(), false), 0);
  r.Add(wire::SERVER, 0, "a", 1, absl::UnixEpoch(), {});
  EXPECT_EQ(*r.Admit(ServerJoin(), false), 1);
  EXPECT_EQ(*r.Admit(WorkerJoin(2), false), 2);
  r.Add(wire::WORKER, 2, "", 2, absl::UnixEpoch(), {});
  EXPECT_EQ(*r.Admit(WorkerJoin(-1), false), 0);  // the lowest free rank
  EXPECT_FALSE(r.full());
}

TEST(RosterTest, RefusalsSayWhy) {
  Roster r(1, 2, Job(100));
  EXPECT_EQ(r.Admit(ServerJoin(), true).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // A server late for a running job is told which options let a server restart into it.
  const std::string late = std::string(r.Admit(ServerJoin(), true).status().message());
  EXPECT_THAT(late, HasSubstr("server_restart_timeout"));
  EXPECT_THAT(late, HasSubstr("--server-restart-timeout"));
  EXPECT_THAT(late, HasSubstr("--state-dir"));
  EXPECT_THAT(std::string(r.Admit(WorkerJoin(0), true).status().message()),
              ::testing::Not(HasSubstr("server_restart_timeout")));
  EXPECT_THAT(r.Admit(ServerJoin(""), false).status().message(), HasSubstr("where workers reach it"));
  EXPECT_THAT(r.Admit(WorkerJoin(2), false).status().message(), HasSubstr("out of range"));
  EXPECT_THAT(r.Admit(WorkerJoin(0, 200), false).status().message(),
              HasSubstr("size is 200 here but 100 in the job"));
  r.Add(wire::WORKER, 0, "", 5, absl::UnixEpoch(), {});
  EXPECT_EQ(r.Admit(WorkerJoin(0), false).status().code(), absl::StatusCode::kAlreadyExists);
  r.Add(wire::WORKER, 1, "", 6, absl::UnixEpoch(), {});
  EXPECT_EQ(r.Admit(WorkerJoin(-1), false).status().code(),
            absl::StatusCode::kResourceExhausted);
  wire::Join none;
  EXPECT_EQ(r.Admit(none, false).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RosterTest, AServerMayNameItsShard) {
  Roster r(3, 1, Job(100));
  wire::Join second = ServerJoin();
  second.set_requested_shard(2);  // shard 1
  EXPECT_EQ(*r.Admit(second, false), 1);
  r.Add(wire::SERVER, 1, "a", 1, absl::UnixEpoch(), {});
  EXPECT_EQ(r.Admit(second, false).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(*r.Admit(ServerJoin(), false), 0);  // the first free one
  r.Add(wire::SERVER, 0, "b", 2, absl::UnixEpoch(), {});
  EXPECT_EQ(*r.Admit(ServerJoin(), false), 2);
  wire::Join far = ServerJoin();
  far.set_requested_shard(4);  // shard 3 of 3
  EXPECT_THAT(r.Admit(far, false).status().message(), HasSubstr("out of range"));
}

TEST(RosterTest, TheFirstWorkersJobBecomesTheJobsWithoutOne) {
  Roster r(1, 2, std::nullopt);
  ASSERT_TRUE(r.Admit(WorkerJoin(0, 100), false).ok());
  r.Add(wire::WORKER, 0, "", 5, absl::UnixEpoch(), {});
  EXPECT_THAT(r.Admit(WorkerJoin(1, 300), false).status().message(),
              HasSubstr("size is 300 here but 100 in the job"));
}

TEST(RosterTest, ANodeIsTheConnectionItJoinedOn) {
  Roster r(1, 1, Job(100));
  const uint32_t id = r.Add(wire::SERVER, 0, "a", /*peer=*/7, absl::UnixEpoch(), {}).id;
  EXPECT_NE(r.Find(id, 7), nullptr);
  EXPECT_EQ(r.Find(id, 8), nullptr);
  EXPECT_EQ(r.Find(id + 1, 7), nullptr);
}

TEST(RosterTest, OnlyTheServersStartCarriesTheWorkersCredentials) {
  Roster r(1, 1, Job(100));
  r.Add(wire::SERVER, 0, "tcp://s", 1, absl::UnixEpoch(), {});
  r.Add(wire::WORKER, 0, "", 2, absl::UnixEpoch(), Credential{11, 22});
  ASSERT_TRUE(r.full());
  const wire::Start to_servers = r.StartMessage(true);
  const wire::Start to_workers = r.StartMessage(false);
  ASSERT_EQ(to_servers.nodes_size(), 2);
  EXPECT_EQ(to_servers.nodes(1).token_hi(), 11u);
  EXPECT_EQ(to_workers.nodes(1).token_hi(), 0u);
  EXPECT_EQ(to_servers.nodes(0).endpoint(), "tcp://s");
  EXPECT_EQ(to_workers.num_workers(), 1);
}

// Found by coordinator_fuzzer (tests/fuzz/regressions/coordinator/
// worker-rejoin-start-names-replaced-node): the START after a worker rejoined (to the
// rejoining worker, and to a server restarted later) named the replaced node as well, so
// rank 0 twice, and a restarted server refuses such a START (server/start_checks.cc), which
// ended the job. The same for a server restarted with its shard.
TEST(RosterTest, StartNamesOnlyTheNodesThatHoldTheirRankNow) {
  Roster r(2, 2, Job(100));
  const uint32_t s0 = r.Add(wire::SERVER, 0, "tcp://s0", 1, absl::UnixEpoch(), {}).id;
  r.Add(wire::SERVER, 1, "tcp://s1", 2, absl::UnixEpoch(), {});
  r.Add(wire::WORKER, 0, "", 3, absl::UnixEpoch(), Credential{1, 1});
  const uint32_t w1 = r.Add(wire::WORKER, 1, "", 4, absl::UnixEpoch(), Credential{2, 2}).id;
  // Worker 0 rejoins (a new incarnation) and server 0 restarts: each replaces its rank's node.
  r.node(r.workers().at(0)).state = NodeState::kDead;
  const uint32_t new_w0 = r.Add(wire::WORKER, 0, "", 5, absl::UnixEpoch(), Credential{3, 3}).id;
  r.node(s0).state = NodeState::kDead;
  const uint32_t new_s0 = r.Add(wire::SERVER, 0, "tcp://s0-again", 6, absl::UnixEpoch(), {}).id;
  ASSERT_EQ(r.nodes().size(), 6u);  // the replaced records stay (their messages are refused)

  const wire::Start start = r.StartMessage(/*with_credentials=*/true);
  ASSERT_EQ(start.nodes_size(), 4);
  EXPECT_EQ(start.nodes(0).node_id(), new_s0);
  EXPECT_EQ(start.nodes(0).rank(), 0);
  EXPECT_EQ(start.nodes(0).endpoint(), "tcp://s0-again");
  EXPECT_EQ(start.nodes(1).rank(), 1);
  EXPECT_EQ(start.nodes(1).role(), wire::SERVER);
  EXPECT_EQ(start.nodes(2).node_id(), new_w0);
  EXPECT_EQ(start.nodes(2).rank(), 0);
  EXPECT_EQ(start.nodes(2).token_hi(), 3u);  // the new incarnation's credential only
  EXPECT_EQ(start.nodes(3).node_id(), w1);
  EXPECT_EQ(start.nodes(3).rank(), 1);
}

TEST(RosterTest, TheJobEndsWhenNoWorkerIsActiveAndNamesTheDead) {
  Roster r(1, 3, Job(100));
  for (int w = 0; w < 3; ++w) r.Add(wire::WORKER, w, "", 10 + w, absl::UnixEpoch(), {});
  EXPECT_FALSE(r.Outcome().has_value());
  r.node(r.workers().at(0)).state = NodeState::kFinished;
  r.node(r.workers().at(1)).state = NodeState::kDead;
  EXPECT_EQ(r.ActiveWorkers(), std::vector<int>{2});
  EXPECT_FALSE(r.Outcome().has_value());
  r.node(r.workers().at(2)).state = NodeState::kFinished;
  ASSERT_TRUE(r.Outcome().has_value());
  EXPECT_EQ(r.Outcome()->code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(r.Outcome()->message(), HasSubstr("without workers 1"));
}

TEST(RosterTest, ToleratedDeadWorkersNeedOneThatFinished) {
  Roster r(1, 2, Job(100));
  for (int w = 0; w < 2; ++w) r.Add(wire::WORKER, w, "", 10 + w, absl::UnixEpoch(), {});
  r.node(r.workers().at(0)).state = NodeState::kDead;
  r.node(r.workers().at(1)).state = NodeState::kFinished;
  EXPECT_EQ(r.Outcome(/*tolerate_dead_workers=*/false)->code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(r.Outcome(/*tolerate_dead_workers=*/true)->ok());
  r.node(r.workers().at(1)).state = NodeState::kDead;
  ASSERT_TRUE(r.Outcome(true).has_value());
  EXPECT_THAT(r.Outcome(true)->message(), HasSubstr("no worker finished: workers 0, 1"));
}

wire::Join Incarnation(int rank, uint64_t incarnation) {
  wire::Join j = WorkerJoin(rank);
  j.set_incarnation(incarnation);
  return j;
}

TEST(RosterTest, ARejoinNamesADeadOrSilentRankAndReplacesIt) {
  const absl::Time t0 = absl::UnixEpoch();
  const absl::Duration silence = absl::Seconds(1);
  Roster r(1, 3, Job(100));
  for (int w = 0; w < 3; ++w) {
    r.Add(wire::WORKER, w, "", 10 + w, t0, {}).incarnation = 100 + w;
  }
  r.node(r.workers().at(1)).state = NodeState::kDead;
  r.node(r.workers().at(2)).state = NodeState::kFinished;
  // A dead rank rejoins at once.
  EXPECT_EQ(*r.AdmitRejoin(Incarnation(1, 7), false, t0, silence), 1);
  // An active rank: the same process again is a repeated JOIN; another process waits
  // until the old one has been silent long enough.
  EXPECT_EQ(r.AdmitRejoin(Incarnation(0, 100), false, t0 + silence, silence).status().code(),
            absl::StatusCode::kAlreadyExists);
  absl::StatusOr<int> early = r.AdmitRejoin(Incarnation(0, 7), false, t0 + absl::Milliseconds(300),
                                            silence);
  EXPECT_EQ(early.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(early.status().message(), HasSubstr("already started and worker rank 0 is active"));
  EXPECT_EQ(*r.AdmitRejoin(Incarnation(0, 7), false, t0 + silence, silence), 0);
  // Refused: a finished rank, a rank being rejoined, no rank, a rank out of range, a server,
  // another job.
  EXPECT_THAT(r.AdmitRejoin(Incarnation(2, 7), false, t0, silence).status().message(),
              HasSubstr("has finished"));
  EXPECT_EQ(r.AdmitRejoin(Incarnation(1, 7), true, t0, silence).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_THAT(r.AdmitRejoin(Incarnation(-1, 7), false, t0, silence).status().message(),
              HasSubstr("must name its rank"));
  EXPECT_THAT(r.AdmitRejoin(Incarnation(3, 7), false, t0, silence).status().message(),
              HasSubstr("out of range"));
  EXPECT_THAT(r.AdmitRejoin(ServerJoin(), false, t0, silence).status().message(),
              HasSubstr("already started"));
  wire::Join other = WorkerJoin(1, 200);
  EXPECT_THAT(r.AdmitRejoin(other, false, t0, silence).status().message(),
              HasSubstr("size is 200 here but 100 in the job"));
  // The new node replaces the old one as the rank's; the old one is no longer current.
  const uint32_t old_id = r.workers().at(1);
  const NodeRecord& fresh = r.Add(wire::WORKER, 1, "", 20, t0, {});
  EXPECT_EQ(r.workers().at(1), fresh.id);
  EXPECT_FALSE(r.Current(r.node(old_id)));
  EXPECT_TRUE(r.Current(fresh));
  EXPECT_EQ(r.ActiveWorkers(), (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace kairos::internal
