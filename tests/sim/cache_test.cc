// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The simulated workers' read cache (SimOptions::cache_clocks): over many random jobs no read
// a worker computed on, cached or not, lacks a push the gate's bound promises (checked on the
// read log, independently of policy::CacheBound), and the cache does answer reads where it
// must; exact counts and times in small deterministic runs; write-through keeps a lone
// worker's copy equal to the server's parameters.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "policy/policy.h"
#include "sim/random.h"
#include "sim/simulator.h"
#include "sim_test_util.h"

namespace kairos::sim {
namespace {

using policy::MemberState;
using policy::Tick;

constexpr int64_t kAsp = -1;  // StaleReads: no gate bound

// The reads of `r` (SimOptions::read_log) that computed on parameters staler than allowed,
// each described: for a read at clock c, c - read_clock > cache_clocks; or under a gate of
// staleness s (not kAsp), another worker v whose pushes of the clocks below c - s (those it
// made: its metrics.pushes at the end) were not all taken by the server when it served the
// parameters. Uses only the log, not policy::CacheBound.
std::vector<std::string> StaleReads(const SimResult& r, int64_t s, uint32_t cache_clocks) {
  std::vector<std::string> out;
  for (size_t w = 0; w < r.workers.size(); ++w) {
    for (const SimRead& read : r.workers[w].reads) {
      const std::string which =
          absl::StrCat("worker ", w, "'s ", read.cached ? "cached " : "", "read at ", read.clock);
      if (read.clock - read.read_clock > static_cast<Tick>(cache_clocks)) {
        out.push_back(absl::StrCat(which, " computed on the read at ", read.read_clock));
      }
      if (s == kAsp) continue;
      for (size_t v = 0; v < r.workers.size(); ++v) {
        if (v == w) continue;
        const int64_t made = static_cast<int64_t>(r.workers[v].metrics.pushes);
        const int64_t needed = std::min(read.clock - s, made);
        if (read.pushes.at(v) < needed) {
          out.push_back(absl::StrCat(which, " holds ", read.pushes[v], " of worker ", v,
                                     "'s pushes, not ", needed));
        }
      }
    }
  }
  return out;
}

// Whether any of `stale` is a cached read's.
bool AnyCached(const std::vector<std::string>& stale) {
  return std::any_of(stale.begin(), stale.end(),
                     [](const std::string& s) { return s.find("cached") != std::string::npos; });
}

// Every worker ran its iterations and logged one read per clock, in order; the cached ones
// are counted and were not pulls.
void ExpectCompleteLog(const SimOptions& o, const SimResult& r) {
  for (size_t w = 0; w < r.workers.size(); ++w) {
    const SimWorkerResult& wr = r.workers[w];
    SCOPED_TRACE(absl::StrCat("worker ", w));
    EXPECT_EQ(wr.state, MemberState::kFinished);
    EXPECT_EQ(wr.iterations, o.iterations);
    ASSERT_EQ(wr.reads.size(), static_cast<size_t>(o.iterations));
    int64_t cached = 0;
    for (size_t i = 0; i < wr.reads.size(); ++i) {
      const SimRead& read = wr.reads[i];
      EXPECT_EQ(read.clock, static_cast<Tick>(i));
      EXPECT_EQ(read.pushes.size(), r.workers.size());
      EXPECT_LE(read.min_clock, read.read_clock);
      if (read.cached) {
        ++cached;
        EXPECT_LT(read.read_clock, read.clock);
      } else {
        EXPECT_EQ(read.read_clock, read.clock);
      }
    }
    EXPECT_EQ(wr.reads_cached, cached);
    EXPECT_EQ(static_cast<int64_t>(wr.metrics.pulls), o.iterations - cached);
  }
}

// A job of `workers` workers under ssp:s=`s`, worker 0 four times slower, jitter and
// transient stragglers drawn from `seed`; `variant` picks the network and worker costs.
SimOptions RandomCachedJob(int64_t s, uint32_t cache_clocks, int workers, uint64_t seed,
                           int variant) {
  static const std::shared_ptr<const Model> model = SmallQuadratic(4, 64);
  Rng rng(StreamSeed(seed, 77, static_cast<uint64_t>(variant)));
  SimOptions o;
  o.policy = absl::StrCat("ssp:s=", s);
  o.model = model;
  o.seed = seed;
  o.batch_size = 4;
  o.num_workers = workers;
  o.iterations = 16;
  o.cache_clocks = cache_clocks;
  o.read_log = true;
  o.compute.slowdown = {4.0};
  o.compute.jitter_mean = rng.Uniform();
  o.compute.straggler_prob = 0.2 * rng.Uniform();
  o.network.latency = absl::Milliseconds(1 + 40 * rng.Uniform());
  o.network.bandwidth_bytes_per_s = 16e3;  // 16 bytes: 1 ms a message
  o.network.serialize_links = (variant & 1) != 0;
  o.worker_cost.push_waits = (variant & 2) != 0;
  if ((variant & 4) != 0) {
    o.network.server_shards = 2;
    o.server_cost.apply = absl::Milliseconds(30 * rng.Uniform());
  }
  o.sample_interval = absl::Seconds(100);  // the reads are the point here, not the loss
  return o;
}

TEST(SimReadCacheTest, NoReadIsStalerThanTheGateAndTheCacheAllow) {
  int64_t runs = 0, cached = 0;
  // Per s in {1, 3}: runs where checking against s - 1 catches a cached read.
  int caught[4] = {0, 0, 0, 0};
  for (int64_t s : {0, 1, 3}) {
    for (uint32_t cache_clocks : {1u, 2u, 5u}) {
      for (int workers : {2, 4, 8}) {
        for (int variant = 0; variant < 8; ++variant) {
          for (uint64_t seed = 1; seed <= 3; ++seed) {
            const SimOptions o = RandomCachedJob(s, cache_clocks, workers, seed, variant);
            SCOPED_TRACE(absl::StrCat(o.policy, ", cache_clocks ", cache_clocks, ", ", workers,
                                      " workers, variant ", variant, ", seed ", seed));
            absl::StatusOr<SimResult> r = Simulate(o);
            ASSERT_TRUE(r.ok()) << r.status();
            ExpectCompleteLog(o, *r);
            const std::vector<std::string> stale = StaleReads(*r, s, cache_clocks);
            ASSERT_TRUE(stale.empty()) << stale.front();
            for (const SimWorkerResult& wr : r->workers) {
              if (s == 0) {
                // A copy answers a read at c only if min_clock >= c - 0, but min_clock <=
                // read_clock < c.
                ASSERT_EQ(wr.reads_cached, 0);
              } else {
                // Every read at 0 is served while every clock is 0: the read at 1 may take it.
                ASSERT_TRUE(wr.reads[1].cached);
                ASSERT_EQ(wr.reads[1].read_clock, 0);
              }
              cached += wr.reads_cached;
            }
            if (s > 0 && AnyCached(StaleReads(*r, s - 1, cache_clocks))) ++caught[s];
            ++runs;
          }
        }
      }
    }
  }
  EXPECT_EQ(runs, 3 * 3 * 3 * 8 * 3);
  EXPECT_GT(cached, 0);
  // The cache goes up to the gate's bound: a checker one clock stricter catches it.
  EXPECT_GT(caught[1], 0);
  EXPECT_GT(caught[3], 0);
}

// The checker itself, on hand-made logs: a read lacking a push the bound promises, and one
// older than cache_clocks, are caught; a finished worker's pushes count as all it made.
TEST(SimReadCacheTest, TheStalenessCheckCatchesAViolation) {
  SimResult r;
  r.workers.resize(2);
  r.workers[0].metrics.pushes = 10;
  r.workers[1].metrics.pushes = 4;  // worker 1 made 4 pushes in all
  // Worker 0's cached read at 6 on the read at 4, under s = 2: worker 1's pushes of clocks
  // below 4 must be in; the copy held 3 of them.
  r.workers[0].reads = {
      {.clock = 6, .cached = true, .read_clock = 4, .min_clock = 3, .pushes = {4, 3}}};
  EXPECT_EQ(StaleReads(r, 2, 5).size(), 1u);
  EXPECT_TRUE(AnyCached(StaleReads(r, 2, 5)));
  EXPECT_TRUE(StaleReads(r, 3, 5).empty());  // s = 3 asks for 3
  EXPECT_TRUE(StaleReads(r, kAsp, 5).empty());
  // cache_clocks 1: the read at 6 may not compute on the read at 4.
  EXPECT_EQ(StaleReads(r, kAsp, 1).size(), 1u);
  // With all 4 of worker 1's pushes, no bound asks for more.
  r.workers[0].reads[0].pushes = {4, 4};
  EXPECT_TRUE(StaleReads(r, 0, 2).empty());
}

// One worker under ASP with cache_clocks 3 pulls from the server at clocks 0, 4, 8, ...;
// the others are its copy's.
TEST(SimReadCacheTest, OneAspWorkerPullsEveryFourthClock) {
  for (int64_t iterations : {1, 4, 5, 10, 12}) {
    SimOptions o;
    o.policy = "asp";
    o.num_workers = 1;
    o.model = SmallQuadratic();
    o.iterations = iterations;
    o.cache_clocks = 3;
    o.read_log = true;
    absl::StatusOr<SimResult> r = Simulate(o);
    ASSERT_TRUE(r.ok()) << r.status();
    const SimWorkerResult& wr = r->workers[0];
    const int64_t pulls = (iterations + 3) / 4;
    EXPECT_EQ(static_cast<int64_t>(wr.metrics.pulls), pulls) << iterations;
    EXPECT_EQ(wr.reads_cached, iterations - pulls) << iterations;
    ASSERT_EQ(wr.reads.size(), static_cast<size_t>(iterations));
    for (const SimRead& read : wr.reads) {
      EXPECT_EQ(read.cached, read.clock % 4 != 0) << read.clock;
      EXPECT_EQ(read.read_clock, read.clock - read.clock % 4) << read.clock;
    }
  }
}

// Under BSP (and SSP(0)) a copy answers only a second read at its own clock, which the
// simulated worker never makes: nothing is cached and the run is the one without a cache.
TEST(SimReadCacheTest, BspCachesNothing) {
  for (const char* policy : {"bsp", "ssp:s=0"}) {
    SimOptions o;
    o.policy = policy;
    o.num_workers = 2;
    o.model = SmallQuadratic();
    o.iterations = 30;
    o.compute.slowdown = {2.5};
    o.compute.jitter_mean = 0.5;
    o.compute.straggler_prob = 0.1;
    absl::StatusOr<SimResult> plain = Simulate(o);
    o.cache_clocks = 5;
    absl::StatusOr<SimResult> cached = Simulate(o);
    ASSERT_TRUE(plain.ok()) << plain.status();
    ASSERT_TRUE(cached.ok()) << cached.status();
    SCOPED_TRACE(policy);
    for (const SimWorkerResult& wr : cached->workers) EXPECT_EQ(wr.reads_cached, 0);
    ExpectIdenticalResults(*plain, *cached);
  }
}

// SSP(3), cache_clocks 1, identical workers in lock step: each read at an even clock goes to
// the server (its slowest worker at most one clock behind), the next one to the copy.
TEST(SimReadCacheTest, HomogeneousSspCachesEveryOtherRead) {
  SimOptions o;
  o.policy = "ssp:s=3";
  o.num_workers = 4;
  o.model = SmallQuadratic();
  o.iterations = 12;
  o.cache_clocks = 1;
  o.read_log = true;
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const SimWorkerResult& wr : r->workers) {
    EXPECT_EQ(wr.reads_cached, 6);
    EXPECT_EQ(wr.metrics.pulls, 6u);
    for (const SimRead& read : wr.reads) EXPECT_EQ(read.cached, read.clock % 2 == 1);
  }
  EXPECT_TRUE(StaleReads(*r, 3, 1).empty());
}

// One worker under ASP: its pushes written through keep its copy equal to the server's
// parameters, so computing on the copy changes nothing (exactly: the same float operations
// as the server's sgd updater). Under a staleness weighting nothing is written through, and
// the copy lacks the worker's own updates.
TEST(SimReadCacheTest, WriteThroughKeepsALoneWorkersCopyExact) {
  SimOptions o;
  o.policy = "asp";
  o.num_workers = 1;
  o.model = SmallQuadratic(8, 256);
  o.iterations = 50;
  absl::StatusOr<SimResult> plain = Simulate(o);
  o.cache_clocks = 1000;
  absl::StatusOr<SimResult> cached = Simulate(o);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(cached.ok()) << cached.status();
  EXPECT_EQ(cached->workers[0].reads_cached, 49);
  EXPECT_EQ(cached->workers[0].metrics.pulls, 1u);
  EXPECT_EQ(cached->final_params, plain->final_params);
  EXPECT_LT(cached->end_time, plain->end_time);

  o.policy = "asp+weight=staleness";  // no write-through
  o.cache_clocks = 0;
  absl::StatusOr<SimResult> weighted = Simulate(o);
  o.cache_clocks = 1000;
  absl::StatusOr<SimResult> weighted_cached = Simulate(o);
  ASSERT_TRUE(weighted.ok()) << weighted.status();
  ASSERT_TRUE(weighted_cached.ok()) << weighted_cached.status();
  EXPECT_EQ(weighted->final_params, plain->final_params);  // one worker: every scale is 1
  EXPECT_EQ(weighted_cached->workers[0].reads_cached, 49);
  EXPECT_GT((weighted_cached->final_params - plain->final_params).norm(), 1e-3);
}

absl::Duration Ms(double ms) { return absl::Microseconds(1000 * ms); }

// Latency L = 1 ms, compute C = 10 ms, no transfer time, cache_clocks 3 under ASP: each
// block of 4 iterations is one read from the server and 3 from the copy. Without push_waits
// a read from the server costs 2L (its request rides behind the push), one from the copy
// nothing: a block takes 2L + 4C = 42 ms instead of 4 (2L + C) = 48 ms. With push_waits
// every iteration waits 2L for its acknowledgement, and a read from the server 2L more: a
// block takes 4L + C + 3 (2L + C) = 50 ms instead of 4 (4L + C) = 56 ms. Each run ends one
// latency after its last push (or clock report) left.
TEST(SimReadCacheTest, CachedReadsSaveTheirRoundTrips) {
  constexpr int64_t kIterations = 12;
  struct Case {
    bool push_waits;
    uint32_t cache_clocks;
    absl::Duration end;
  };
  for (bool links : {false, true}) {
    for (int workers : {1, 3}) {
      for (const Case& c : {Case{false, 0, Ms(12 * 12 + 1)}, Case{false, 3, Ms(3 * 42 + 1)},
                            Case{true, 0, Ms(12 * 14 + 1)}, Case{true, 3, Ms(3 * 50 + 1)}}) {
        SCOPED_TRACE(absl::StrCat("links ", links, ", ", workers, " workers, push_waits ",
                                  c.push_waits, ", cache_clocks ", c.cache_clocks));
        SimOptions o;
        o.policy = "asp";
        o.num_workers = workers;
        o.model = SmallQuadratic();
        o.iterations = kIterations;
        o.compute.compute_time = Ms(10);
        o.network.latency = Ms(1);
        o.network.bandwidth_bytes_per_s = 0;
        o.network.serialize_links = links;
        o.worker_cost.push_waits = c.push_waits;
        o.cache_clocks = c.cache_clocks;
        absl::StatusOr<SimResult> r = Simulate(o);
        ASSERT_TRUE(r.ok()) << r.status();
        EXPECT_EQ(r->end_time, c.end);
        const int64_t pulls = c.cache_clocks == 0 ? kIterations : kIterations / 4;
        for (const SimWorkerResult& wr : r->workers) {
          EXPECT_EQ(wr.iterations, kIterations);
          EXPECT_EQ(static_cast<int64_t>(wr.metrics.pulls), pulls);
          EXPECT_EQ(wr.reads_cached, kIterations - pulls);
          EXPECT_EQ(wr.compute_time, kIterations * Ms(10));
          EXPECT_EQ(wr.pull_time, pulls * Ms(2));  // a cached read takes no time
          EXPECT_EQ(wr.push_time, c.push_waits ? kIterations * Ms(2) : absl::ZeroDuration());
        }
      }
    }
  }
}

// Cached reads let a worker send pushes faster than the server applies them: they queue and
// are applied in clock order, one server thread or several shards.
TEST(SimReadCacheTest, QueuedPushesAreAppliedInClockOrder) {
  for (int shards : {1, 3}) {
    for (bool links : {false, true}) {
      SCOPED_TRACE(absl::StrCat(shards, " shards, links ", links));
      SimOptions o;
      o.policy = "asp";
      o.num_workers = 1;
      o.model = SmallQuadratic();
      o.iterations = 40;
      o.compute.compute_time = Ms(1);
      o.network.latency = Ms(10);
      o.network.bandwidth_bytes_per_s = 0;
      o.network.serialize_links = links;
      o.network.server_shards = shards;
      o.server_cost.apply = Ms(2);
      o.cache_clocks = 1000;
      o.push_log_size = 100;
      absl::StatusOr<SimResult> r = Simulate(o);
      ASSERT_TRUE(r.ok()) << r.status();
      const std::vector<PushRecord>& log = r->workers[0].metrics.push_log;
      ASSERT_EQ(log.size(), 40u);
      for (size_t i = 0; i < log.size(); ++i) EXPECT_EQ(log[i].clock, static_cast<int64_t>(i));
      EXPECT_EQ(r->workers[0].reads_cached, 39);
      EXPECT_EQ(r->workers[0].state, MemberState::kFinished);
    }
  }
}

// Eager pull's reads ride on its pushes: a cache is refused, naming the option.
TEST(SimReadCacheTest, EagerPullRefusesTheCache) {
  SimOptions o;
  o.policy = "eager";
  o.cache_clocks = 1;
  EXPECT_EQ(ValidateSimOptions(o).code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("cache_clocks"), std::string::npos) << r.status();
  o.cache_clocks = 0;
  EXPECT_TRUE(ValidateSimOptions(o).ok());
}

// A worker that fails stops reading its copy; the others finish, caching, and no read is
// staler than the bound (the dead worker's pushes count as those the server took).
TEST(SimReadCacheTest, AFailedWorkerStopsReadingItsCopy) {
  SimOptions o;
  o.policy = "ssp:s=2";
  o.num_workers = 3;
  o.model = SmallQuadratic();
  o.iterations = 20;
  o.cache_clocks = 2;
  o.read_log = true;
  o.failures = {{.worker = 1, .at = absl::Milliseconds(750)}};
  o.detection_delay = absl::Milliseconds(300);
  absl::StatusOr<SimResult> r = Simulate(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->workers[1].state, MemberState::kDead);
  EXPECT_LT(r->workers[1].iterations, 20);
  for (int w : {0, 2}) {
    EXPECT_EQ(r->workers[static_cast<size_t>(w)].state, MemberState::kFinished);
    EXPECT_EQ(r->workers[static_cast<size_t>(w)].iterations, 20);
    EXPECT_GT(r->workers[static_cast<size_t>(w)].reads_cached, 0);
  }
  EXPECT_LE(r->workers[1].reads.size(), static_cast<size_t>(r->workers[1].iterations) + 1);
  const std::vector<std::string> stale = StaleReads(*r, 2, 2);
  EXPECT_TRUE(stale.empty()) << stale.front();
}

}  // namespace
}  // namespace kairos::sim
