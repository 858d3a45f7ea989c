// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Every policy through a faulty network: a small job (2 servers, 3 workers, 4 iterations)
// runs on virtual time (virtual_time.h) with every node's transport a FaultyTransport, once
// without faults and once per fault kind. Whatever the fault, the job ends within its
// deadlines, never hangs, and either
//   - finishes, with exactly the fault-free values where the policy makes them independent
//     of timing (bsp, asp, ssp, dssp, psp: plain SGD sums of integer gradients), or
//   - fails with an error that names what was lost: the request or wait that got no answer
//     and the node it waited for, or the node declared dead.
// Delays, reorderings and duplicated control and reply messages lose nothing: the job must
// finish. Each job's faults come from a fixed seed, printed on failure with a summary of
// what was done, so a failure replays.

#include <cmath>
#include <iostream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "tests/cluster/virtual_time.h"
#include "tests/common/param_name.h"
#include "transport/faulty_transport.h"
#include "worker/worker_internal.h"

namespace kairos {
namespace {

using internal::FaultAction;
using internal::FaultDirection;
using internal::FaultPlan;
using internal::FaultRule;

constexpr uint64_t kSize = 64;
constexpr int kWorkers = 3;
constexpr int kIterations = 4;
constexpr float kLearningRate = 0.5f;
constexpr absl::Duration kStep = absl::Milliseconds(50);
// Real time a job may take at most: ample for a job that ends by its virtual deadlines
// (its own runs take well under a second), and short enough to report a hang as one.
constexpr absl::Duration kHangLimit = absl::Seconds(60);

// The data path: what a lost message of breaks a request.
const std::vector<wire::Kind> kDataKinds = {wire::PUSH, wire::PUSH_REPLY, wire::PULL,
                                            wire::PULL_REPLY, wire::CLOCK};

struct PolicyCase {
  std::string spec;
  bool deterministic;  // final values independent of timing
};

std::string CaseName(const ::testing::TestParamInfo<PolicyCase>& info) {
  return testing::ParamName(info.param.spec);
}

float Gradient(int rank, int t, uint64_t i) {
  return static_cast<float>((rank + 1) * (t + 1) + static_cast<int>(i % 3));
}

struct Outcome {
  absl::Status status;
  std::vector<float> params;  // worker 0's read after the barrier, when the job finished
  std::string faults;         // the FaultLog's summary
  absl::Duration took;
};

// Runs the job on virtual time with `plan`'s faults.
Outcome RunJob(const std::string& policy, FaultPlan plan) {
  const absl::Time began = absl::Now();
  test_support::VirtualTime time(kStep, std::move(plan));
  ClusterOptions o;
  o.num_servers = 2;
  o.num_workers = kWorkers;
  o.job.policy = policy;
  o.job.chunk_elements = 16;  // 4 chunks, 2 per server
  o.job.tables.push_back({"w", kSize, Initializer::Zeros(), {"sgd", kLearningRate}});
  o.coordinator.heartbeat_timeout = absl::Seconds(1);
  o.worker.heartbeat_interval = kStep;
  o.server.heartbeat_interval = kStep;
  // Long next to a step: time also passes while a worker computes between two calls, and
  // while the cluster is being made with a delayed JOIN held.
  o.worker.request_timeout = absl::Seconds(60);
  o.coordinator.join_timeout = absl::Hours(1);
  o.worker.join_timeout = absl::Hours(1);
  time.Apply(o);
  time.StartForJoin();  // delayed JOINs need time to pass
  Outcome out;
  auto cluster = LocalCluster::Create(o);
  if (!cluster.ok()) {
    out.status = cluster.status();
  } else {
    time.Start();
    std::vector<float> params(kSize);
    std::vector<absl::Status> results(kWorkers);
    std::vector<std::thread> threads;
    for (int r = 0; r < kWorkers; ++r) {
      threads.emplace_back([&, r] {
        Worker& w = (*cluster)->worker(r);
        results[r] = [&]() -> absl::Status {
          std::vector<float> read(kSize), grad(kSize);
          for (int t = 0; t < kIterations; ++t) {
            KAIROS_RETURN_IF_ERROR(w.Pull("w", read));
            for (uint64_t i = 0; i < kSize; ++i) grad[i] = Gradient(w.rank(), t, i);
            KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
            KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
          }
          // Every push is acknowledged before the barrier, so the read sees them all.
          KAIROS_RETURN_IF_ERROR(w.Barrier());
          if (w.rank() == 0) KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
          return w.Shutdown();
        }();
      });
    }
    for (std::thread& t : threads) t.join();
    for (int r = 0; r < kWorkers && out.status.ok(); ++r) {
      if (!results[r].ok()) {
        out.status = absl::Status(results[r].code(),
                                  absl::StrFormat("worker %d: %s", r, results[r].message()));
      }
    }
    if (!out.status.ok()) {
      // The job failed: crash the workers so that the coordinator ends it (their deaths)
      // instead of waiting for FINISHes that will not come.
      for (int r = 0; r < kWorkers; ++r) internal::CrashWorker((*cluster)->worker(r));
    }
    const absl::Status end = (*cluster)->Shutdown();
    if (out.status.ok()) out.status = end;
    if (out.status.ok()) out.params = params;
  }
  out.faults = time.log().Summary();
  time.Stop();
  out.took = absl::Now() - began;
  return out;
}

FaultRule Rule(FaultAction action, std::vector<wire::Kind> kinds, double probability) {
  FaultRule r;
  r.action = action;
  r.kinds = std::move(kinds);
  r.probability = probability;
  return r;
}

// An error that says what was lost: which request or wait got no answer, from whom; or
// which node was declared dead or silent.
bool NamesWhatWasLost(const absl::Status& s) {
  static const std::regex kNamed(
      "(no answer before the deadline from (server [0-9]|the coordinator)"
      "|waited [0-9a-z.]+ for (workers? [0-9]|no one)"
      "|(worker|server) [0-9]+ \\(node [0-9]+\\) has been silent"
      "|workers [0-9, ]+, declared dead"
      "|the coordinator at \\S+ has been silent"
      "|did not start within)");
  const std::string text(s.message());
  return std::regex_search(text, kNamed);
}

class FaultTest : public ::testing::TestWithParam<PolicyCase> {
 protected:
  // The fault-free run: it must finish; its values are the reference.
  void SetUp() override {
    reference_ = RunJob(GetParam().spec, FaultPlan{});
    ASSERT_TRUE(reference_.status.ok()) << reference_.status;
    for (float v : reference_.params) ASSERT_TRUE(std::isfinite(v));
  }

  // Checks one faulty run; `must_finish`: nothing is lost, so it must finish.
  void Check(const std::string& what, const Outcome& run, bool must_finish) {
    SCOPED_TRACE(absl::StrFormat("%s under %s: %s (%s of real time); faults: %s",
                                 GetParam().spec, what, run.status.ToString(),
                                 absl::FormatDuration(run.took), run.faults));
    std::cout << GetParam().spec << " under " << what << ": " << run.status << " (faults: "
              << run.faults << ")\n";
    EXPECT_LT(run.took, kHangLimit) << "a hang";
    if (must_finish) {
      ASSERT_TRUE(run.status.ok());
    }
    if (run.status.ok()) {
      if (GetParam().deterministic) {
        EXPECT_EQ(run.params, reference_.params);
      } else {
        for (float v : run.params) EXPECT_TRUE(std::isfinite(v));
      }
      return;
    }
    EXPECT_TRUE(run.status.code() == absl::StatusCode::kDeadlineExceeded ||
                run.status.code() == absl::StatusCode::kUnavailable)
        << run.status;
    EXPECT_TRUE(NamesWhatWasLost(run.status)) << run.status;
  }

  Outcome reference_;
};

TEST_P(FaultTest, DroppedDataMessagesFailNamingWhatWasLost) {
  FaultRule drop = Rule(FaultAction::kDrop, kDataKinds, 0.05);
  drop.max_hits = 1;
  Check("drop", RunJob(GetParam().spec, FaultPlan{11, {drop}}), false);
}

TEST_P(FaultTest, DelaysLoseNothing) {
  FaultRule delay = Rule(FaultAction::kDelay, {}, 0.3);
  delay.delay = absl::Milliseconds(200);
  Check("delay", RunJob(GetParam().spec, FaultPlan{12, {delay}}), true);
}

TEST_P(FaultTest, ReorderingAcrossConnectionsLosesNothing) {
  FaultRule reorder = Rule(FaultAction::kReorder, {}, 0.3);
  reorder.reorder_after = 2;
  Check("reorder", RunJob(GetParam().spec, FaultPlan{13, {reorder}}), true);
}

// Duplicated replies, reads, clocks and heartbeats: the worker ignores a second reply, a
// second read is served twice, a repeated clock changes nothing.
TEST_P(FaultTest, DuplicatedRepliesReadsAndClocksLoseNothing) {
  FaultRule dup = Rule(FaultAction::kDuplicate,
                       {wire::PUSH_REPLY, wire::PULL, wire::PULL_REPLY, wire::CLOCK,
                        wire::HEARTBEAT},
                       0.3);
  Check("duplicate", RunJob(GetParam().spec, FaultPlan{14, {dup}}), true);
}

// A duplicated PUSH is applied once: the server takes each request id of a worker once
// (RequestWindow) and drops the copy.
TEST_P(FaultTest, DuplicatedPushesAreAppliedOnce) {
  FaultRule dup = Rule(FaultAction::kDuplicate, {wire::PUSH}, 0.3);
  dup.direction = FaultDirection::kSend;
  const Outcome run = RunJob(GetParam().spec, FaultPlan{15, {dup}});
  Check("duplicate push", run, true);
}

// Worker 1 cut off from everything for 300 ms of virtual time in mid-job (less than the
// heartbeat timeout): what was in flight then is lost.
TEST_P(FaultTest, APartitionFailsNamingWhatWasLostOrLosesNothing) {
  FaultRule cut;
  cut.action = FaultAction::kPartition;
  cut.node = "worker#1";
  cut.partition_after_messages = 12;
  cut.partition_length = absl::Milliseconds(300);
  Check("partition", RunJob(GetParam().spec, FaultPlan{16, {cut}}), false);
}

// The same partition outlasting the heartbeat timeout: the worker is declared dead.
TEST_P(FaultTest, ALongPartitionEndsInADeclaredDeath) {
  FaultRule cut;
  cut.action = FaultAction::kPartition;
  cut.node = "worker#1";
  cut.partition_after_messages = 12;
  cut.partition_length = absl::Seconds(5);
  const Outcome run = RunJob(GetParam().spec, FaultPlan{17, {cut}});
  Check("long partition", run, false);
  EXPECT_FALSE(run.status.ok());
}

INSTANTIATE_TEST_SUITE_P(
    Policies, FaultTest,
    ::testing::Values(PolicyCase{"bsp", true}, PolicyCase{"asp", true},
                      PolicyCase{"ssp:s=2", true}, PolicyCase{"dssp", true},
                      PolicyCase{"psp:beta=2,s=1", true}, PolicyCase{"sa-asgd:n=2", false},
                      PolicyCase{"asp+weight=staleness", false}, PolicyCase{"vsgd", false},
                      PolicyCase{"eager", false}, PolicyCase{"saps", false}),
    CaseName);

}  // namespace
}  // namespace kairos
