// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The kairos::testing target as a program's own test uses it, through the public API alone
// (this test links libkairos): a FaultyNetwork's faults reach the nodes given its factory
// and leave exact values exact, its plan is checked, a dropped reply is the caller's clear
// error; a FaultyEnv's file faults reach a server's update log, and the job ends with the
// disk's error.

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "kairos/testing/faulty_env.h"
#include "kairos/testing/faulty_network.h"
#include "tests/common/scratch_dir.h"

namespace kairos {
namespace {

using testing::FaultAction;
using testing::FaultDirection;
using testing::FaultyEnv;
using testing::FaultyNetwork;
using testing::FileOp;
using ::testing::HasSubstr;
using testing::NetworkFaultPlan;

constexpr int kSize = 8;

ClusterOptions Options(int workers) {
  ClusterOptions o;
  o.num_servers = 1;
  o.num_workers = workers;
  TableSpec w;
  w.name = "w";
  w.size = kSize;
  w.init = Initializer::Zeros();
  w.updater.name = "sgd";
  w.updater.learning_rate = 1.0f;
  o.job.tables.push_back(w);
  o.job.policy = "bsp";
  o.worker.log_level = LogLevel::kOff;
  o.server.log_level = LogLevel::kOff;
  o.coordinator.log_level = LogLevel::kOff;
  return o;
}

// Three BSP rounds of a gradient of ones from each worker, averaged at learning rate 1:
// every element ends at exactly -3.
absl::Status ThreeRounds(Worker& worker) {
  const std::vector<float> ones(kSize, 1.0f);
  std::vector<float> w(kSize);
  for (int round = 0; round < 3; ++round) {
    KAIROS_RETURN_IF_ERROR(worker.Push("w", ones));
    KAIROS_RETURN_IF_ERROR(worker.AdvanceClock());
    KAIROS_RETURN_IF_ERROR(worker.Pull("w", w));
  }
  for (float v : w) {
    if (v != -3.0f) return absl::InternalError("a value is not -3");
  }
  return absl::OkStatus();
}

absl::Status RunJob(ClusterOptions options, const std::function<absl::Status(Worker&)>& fn) {
  absl::StatusOr<std::unique_ptr<LocalCluster>> c = LocalCluster::Create(options);
  if (!c.ok()) return c.status();
  KAIROS_RETURN_IF_ERROR((*c)->Run(fn));
  return (*c)->Shutdown();
}

TEST(FaultyNetworkTest, DelayedAndDuplicatedMessagesLeaveExactValuesExact) {
  NetworkFaultPlan plan;
  plan.faults.push_back({.action = FaultAction::kDelay,
                         .kinds = {"PUSH"},
                         .direction = FaultDirection::kSend,
                         .delay = absl::Milliseconds(5)});
  plan.faults.push_back({.action = FaultAction::kDuplicate,
                         .kinds = {"HEARTBEAT"},
                         .direction = FaultDirection::kReceive});
  absl::StatusOr<std::unique_ptr<FaultyNetwork>> net = FaultyNetwork::Create(plan);
  ASSERT_TRUE(net.ok()) << net.status();
  ClusterOptions options = Options(2);
  options.transport_factory = (*net)->factory();
  ASSERT_TRUE(RunJob(options, ThreeRounds).ok());
  // Each worker's three pushes were held on their way out.
  EXPECT_EQ((*net)->Count(FaultAction::kDelay, "PUSH"), 6) << (*net)->Summary();
  EXPECT_EQ((*net)->Count(FaultAction::kDelay, "PULL"), 0);
  EXPECT_THAT((*net)->Summary(), HasSubstr("6x delay send PUSH"));
  const std::vector<testing::NetworkFaultEvent> events = (*net)->events();
  ASSERT_FALSE(events.empty());
  EXPECT_THAT(events.front().ToString(), HasSubstr(": delay send PUSH"));
  EXPECT_GT((*net)->activity(), 0u);
}

// Every message sent is handled: in flight reaches 0 while every node still runs (after
// the shutdown a late message to a node that has stopped stays counted, as in_flight says).
TEST(FaultyNetworkTest, WithoutFaultsItIsThePlainTransport) {
  absl::StatusOr<std::unique_ptr<FaultyNetwork>> net = FaultyNetwork::Create({});
  ASSERT_TRUE(net.ok());
  ClusterOptions options = Options(2);
  options.transport_factory = (*net)->factory();
  absl::StatusOr<std::unique_ptr<LocalCluster>> c = LocalCluster::Create(options);
  ASSERT_TRUE(c.ok()) << c.status();
  absl::Status rounds[2];
  {
    std::thread other([&] { rounds[1] = ThreeRounds((*c)->worker(1)); });
    rounds[0] = ThreeRounds((*c)->worker(0));
    other.join();
  }
  EXPECT_TRUE(rounds[0].ok()) << rounds[0];
  EXPECT_TRUE(rounds[1].ok()) << rounds[1];
  EXPECT_TRUE((*net)->AwaitInFlightAtMost(0, absl::Seconds(30)));
  ASSERT_TRUE((*c)->Shutdown().ok());
  EXPECT_EQ((*net)->Summary(), "no faults");
  EXPECT_GT((*net)->activity(), 0u);
}

TEST(FaultyNetworkTest, APlanThatCannotWorkIsRefusedNamingTheFault) {
  auto refused = [](testing::NetworkFault f) {
    NetworkFaultPlan plan;
    plan.faults.push_back({});  // fault 0 is fine
    plan.faults.push_back(std::move(f));
    return FaultyNetwork::Create(plan).status();
  };
  const absl::Status kind = refused({.kinds = {"PUSHH"}});
  EXPECT_EQ(kind.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(kind.message(), HasSubstr("network fault 1: no message kind is named \"PUSHH\""));
  EXPECT_THAT(refused({.probability = 1.5}).message(), HasSubstr("probability 1.5"));
  EXPECT_THAT(refused({.delay = -absl::Seconds(1)}).message(), HasSubstr("delay is negative"));
  EXPECT_THAT(refused({.reorder_after = 0}).message(), HasSubstr("reorder_after"));
  EXPECT_TRUE(FaultyNetwork::Create({.faults = {{.kinds = {"PULL_REPLY"}}}}).ok());
}

TEST(FaultyNetworkTest, ALostReplyIsTheCallersDeadlineNamingTheServer) {
  NetworkFaultPlan plan;
  plan.faults.push_back({.action = FaultAction::kDrop,
                         .kinds = {"PULL_REPLY"},
                         .direction = FaultDirection::kReceive,
                         .node = "worker"});
  absl::StatusOr<std::unique_ptr<FaultyNetwork>> net = FaultyNetwork::Create(plan);
  ASSERT_TRUE(net.ok());
  ClusterOptions options = Options(1);
  options.transport_factory = (*net)->factory();
  options.worker.request_timeout = absl::Milliseconds(300);
  absl::StatusOr<std::unique_ptr<LocalCluster>> c = LocalCluster::Create(options);
  ASSERT_TRUE(c.ok()) << c.status();
  std::vector<float> w(kSize);
  const absl::Status pulled = (*c)->worker(0).Pull("w", w);
  EXPECT_EQ(pulled.code(), absl::StatusCode::kDeadlineExceeded) << pulled;
  EXPECT_THAT(pulled.message(), HasSubstr("server"));
  EXPECT_EQ((*net)->Count(FaultAction::kDrop, "PULL_REPLY"), 1);
  // The positive control: pushes still get their answers.
  EXPECT_TRUE((*c)->worker(0).Push("w", std::vector<float>(kSize, 1.0f)).ok());
}

TEST(FaultyEnvTest, AServersUpdateLogWritesGoThroughTheJobsEnvironment) {
  testing::UniqueTempDir dir("kairos-testing-api-");
  ASSERT_TRUE(dir.ok());
  auto env = std::make_shared<FaultyEnv>();
  ClusterOptions options = Options(2);
  options.server.state_dir = dir.path();
  options.env = env;
  ASSERT_TRUE(RunJob(options, ThreeRounds).ok());
  EXPECT_GT(env->calls(FileOp::kCreate), 0);
  EXPECT_GT(env->calls(FileOp::kAppend), 1);  // the header, then the pushes and clocks
  EXPECT_GT(env->calls(FileOp::kSyncDir), 0);
  EXPECT_EQ(env->failures(FileOp::kAppend), 0);
}

TEST(FaultyEnvTest, AFullDiskUnderTheUpdateLogEndsTheJobWithTheDisksError) {
  testing::UniqueTempDir dir("kairos-testing-api-");
  ASSERT_TRUE(dir.ok());
  auto env = std::make_shared<FaultyEnv>();
  // The log's header goes through; its first record (a push) finds the disk full.
  env->Add(
      {.op = FileOp::kAppend, .path_contains = ".kul", .error = FaultyEnv::DiskFull(), .skip = 1});
  ClusterOptions options = Options(1);
  options.server.state_dir = dir.path();
  options.env = env;
  absl::StatusOr<std::unique_ptr<LocalCluster>> c = LocalCluster::Create(options);
  ASSERT_TRUE(c.ok()) << c.status();
  const absl::Status pushed = (*c)->worker(0).Push("w", std::vector<float>(kSize, 1.0f));
  EXPECT_FALSE(pushed.ok());
  EXPECT_THAT(pushed.message(), HasSubstr("No space left on device")) << pushed;
  EXPECT_THAT(pushed.message(), HasSubstr(".kul"));
  EXPECT_EQ(env->failures(FileOp::kAppend), 1);
}

}  // namespace
}  // namespace kairos
