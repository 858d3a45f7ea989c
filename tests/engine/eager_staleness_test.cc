// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// How the engine measures an eager push's staleness (docs/policies.md, PS+): EagerSchedule
// computes step c + 1 on the read that answered push c - 1 (plus its own update c), so an
// eager push after an eager read counts its version staleness and VSGD's drift from the
// read before the worker's latest; any other push from the latest read.

#include <cmath>
#include <string>
#include <vector>

#include "engine/shard_engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/metrics.h"
#include "tests/engine/engine_fixture.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;
using Kind = EngineAnswer::Kind;

EngineOptions WithPushLog() {
  EngineOptions options;
  options.push_log_size = 16;
  return options;
}

// Worker 0's pushes, eager (`eager`: each asks for the read at its next clock) or each
// followed by a plain read at its next clock, with two pushes of worker 1 between its first
// and second: the versions each push of worker 0 was measured against.
std::vector<uint64_t> StalenessOfWorker0(const std::string& policy, bool eager) {
  EngineFixture f(policy, 2, 4, 4, WithPushLog());
  f.Pull(0, 0);  // the initial read, as EagerSchedule::Start's
  const auto push0 = [&](int64_t clock) {
    EngineRequest r = f.Req(EngineRequest::Kind::kPush, 0, clock);
    r.pull_after = eager;
    f.engine->OnPush(r, Buffer::CopyOf(std::vector<float>{1, 1, 1, 1}), kT0);
    f.Clock(0, clock + 1);
    if (!eager) f.Pull(0, clock + 1);
  };
  push0(0);                    // version 1
  f.Push(1, 0, {1, 1, 1, 1});  // versions 2 and 3
  f.Push(1, 1, {1, 1, 1, 1});
  push0(1);  // computed on the read after push 0 (eager: on the initial read)
  push0(2);
  std::vector<uint64_t> out;
  const std::vector<WorkerMetrics> metrics = f.engine->metrics();  // a copy
  for (const PushRecord& p : metrics[0].push_log) out.push_back(p.staleness);
  return out;
}

TEST(EagerStalenessTest, AnEagerPushCountsFromTheReadBeforeTheLatest) {
  // Push 1 (version 3 when it arrives) was computed on the initial read (version 0) plus
  // its own push 0: 3. Push 2 (version 4) on the read after push 0 (version 1): 3.
  EXPECT_THAT(StalenessOfWorker0("asp+pull=eager", /*eager=*/true), ElementsAre(0u, 3u, 3u));
  // Positive control: the same pushes with a plain read after each count from that read.
  EXPECT_THAT(StalenessOfWorker0("asp", /*eager=*/false), ElementsAre(0u, 2u, 0u));
}

TEST(EagerStalenessTest, APlainReadBetweenEagerPushesIsTheOneCountedFrom) {
  EngineFixture f("asp+pull=eager", 2, 4, 4, WithPushLog());
  f.Pull(0, 0);
  EngineRequest r = f.Req(EngineRequest::Kind::kPush, 0, 0);
  r.pull_after = true;
  f.engine->OnPush(r, Buffer::CopyOf(std::vector<float>{1, 1, 1, 1}), kT0);  // version 1
  f.Push(1, 0, {1, 1, 1, 1});                                                // version 2
  f.Pull(0, 1);  // a plain read (a refresh, or a restart of the schedule) at version 2
  f.Push(1, 1, {1, 1, 1, 1});  // version 3
  r = f.Req(EngineRequest::Kind::kPush, 0, 1);
  r.pull_after = true;
  f.engine->OnPush(r, Buffer::CopyOf(std::vector<float>{1, 1, 1, 1}), kT0);
  const std::vector<PushRecord> log = f.engine->metrics()[0].push_log;
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1].staleness, 1u);  // from the plain read, not from the eager one before it
}

// VSGD: an eager push's value staleness is the drift since the read before the latest,
// ||D_before + D||; the bound mode adds the two bounds.
TEST(EagerStalenessTest, AnEagerPushsDriftSpansBothReads) {
  struct Case {
    const char* policy;
    double expected;
  };
  for (const Case& c : {Case{"asp+weight=value+pull=eager", std::sqrt(5.0)},
                        Case{"asp+weight=value:mode=bound+pull=eager", 3.0}}) {
    SCOPED_TRACE(c.policy);
    EngineFixture f(c.policy, 2, 4, 4, WithPushLog());
    f.Pull(0, 0);
    EngineRequest r = f.Req(EngineRequest::Kind::kPush, 0, 0);
    r.pull_after = true;
    // Applied as -[1, 0, 0, 0]; the read after it keeps that as worker 0's drift before.
    f.engine->OnPush(r, Buffer::CopyOf(std::vector<float>{1, 0, 0, 0}), kT0);
    f.Clock(0, 1);
    f.Push(1, 0, {0, 2, 0, 0});  // worker 0's drift since its latest read: -[0, 2, 0, 0]
    ShardTable& t = f.engine->shard().tables()[0];
    EXPECT_DOUBLE_EQ(t.ValueStaleness(t.chunks[0], 0, /*on_read_before=*/false), 2.0);
    EXPECT_DOUBLE_EQ(t.ValueStaleness(t.chunks[0], 0, /*on_read_before=*/true), c.expected);
    r = f.Req(EngineRequest::Kind::kPush, 0, 1);
    r.pull_after = true;
    f.engine->OnPush(r, Buffer::CopyOf(std::vector<float>{0, 0, 0, 0}), kT0);
    const std::vector<PushRecord> log = f.engine->metrics()[0].push_log;
    ASSERT_EQ(log.size(), 2u);
    EXPECT_DOUBLE_EQ(log[0].value_staleness, 0.0);
    EXPECT_DOUBLE_EQ(log[1].value_staleness, c.expected);
  }
}

// SaPS under eager pull: lock-step eager pushes (2N - 1 versions stale) stay under the
// default S_max, 2(N - 1) + N; the on-demand default, 2(N - 1), would drop some of them.
TEST(EagerStalenessTest, SapsKeepsLockStepEagerPushes) {
  constexpr int kWorkers = 3;
  const auto run = [](const char* policy) {
    EngineFixture f(policy, kWorkers, 4, 4, WithPushLog());
    for (int w = 0; w < kWorkers; ++w) f.Pull(w, 0);
    for (int64_t clock = 0; clock < 6; ++clock) {
      for (int w = 0; w < kWorkers; ++w) {
        EngineRequest r = f.Req(EngineRequest::Kind::kPush, w, clock);
        r.pull_after = true;
        f.engine->OnPush(r, Buffer::CopyOf(std::vector<float>{1, 1, 1, 1}), kT0);
        f.Clock(w, clock + 1);
      }
    }
    return f.engine->metrics();
  };
  uint64_t dropped = 0;
  for (const WorkerMetrics& m : run("saps+pull=eager")) {
    ASSERT_EQ(m.push_log.size(), 6u);
    EXPECT_EQ(m.push_log.back().staleness, 2u * kWorkers - 1) << m.rank;
    dropped += m.dropped;
  }
  EXPECT_EQ(dropped, 0u);
  dropped = 0;
  for (const WorkerMetrics& m : run("asp+straggler=saps:smax=4+pull=eager")) dropped += m.dropped;
  EXPECT_GT(dropped, 0u);  // the control: the threshold is what keeps them
}

}  // namespace
}  // namespace kairos::internal
