// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// VirtualTime: runs a LocalCluster on one kairos::testing::ManualEnv, moved by a pacer thread, so
// that heartbeats, timeouts and deadlines pass in virtual time and no test sleeps.
//
// Every node's transport is a FaultyTransport (with the plan's faults, or none) around a
// WatchedTransport (watched_transport.h), which the pacer watches. The pacer moves the clock
// one step only when nothing is in flight to a running node (every message sent to one has
// been received and handled, every function posted to one has run), then waits until every
// running node has run its tick at the new time. So within one step every heartbeat
// arrives before the next tick of the coordinator, a node silent for the heartbeat timeout
// is one that sent nothing for that many steps, and a wait of N ms ends at the first tick
// at or after it: a test's expectations hold exactly, whatever the machine's load. What is
// sent to a node that stopped (a killed worker) never arrives, and is not waited for.
//
// A test thread that "computes" for a while in virtual time calls SleepFor; the pacer does
// not move the clock again until every sleeper it woke sleeps again or leaves (Leave: its
// last sleep is over, it returns). A thread that must be counted from its start, before its
// first sleep, calls Enter before the pacer starts. Time also passes while a thread that
// never sleeps computes between two calls, or a server's apply thread works (nothing is in
// flight then): tests keep every deadline they do not mean to expire long, hundreds of
// steps.
//
// The pacer waits on conditions only. Should one not come within kStuckLimit of real time
// (a thread woken from SleepFor that neither sleeps again nor leaves, a message that never
// arrives, a node that does not tick), it fails the test, saying what it waited for, and
// goes on.

#ifndef KAIROS_TESTS_CLUSTER_VIRTUAL_TIME_H_
#define KAIROS_TESTS_CLUSTER_VIRTUAL_TIME_H_

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "kairos/options.h"
#include "kairos/testing/manual_env.h"
#include "tests/cluster/watched_transport.h"
#include "transport/faulty_transport.h"

namespace kairos::test_support {

class VirtualTime {
 public:
  // How long (real time) the pacer waits for what it needs before it fails the test and
  // goes on without it: never reached by a test that works.
  static constexpr absl::Duration kStuckLimit = absl::Seconds(30);

  explicit VirtualTime(absl::Duration step, internal::FaultPlan plan = {})
      : step_(step),
        watched_(std::make_shared<WatchedTransportFactory>()),
        factory_(std::make_shared<internal::FaultyTransportFactory>(std::move(plan), watched_)) {
    // A sleeper whose time has come is awake from the moment the clock moves (not from
    // when its thread runs), so the pacer never sees it idle before it acted.
    watch_ = env_->Watch([this] {
      absl::MutexLock lock(&mu_);
      now_ = env_->Now();
      for (auto it = sleepers_.begin(); it != sleepers_.end();) {
        if (it->second <= now_) {
          awake_.insert(it->first);
          sleepers_.erase(it++);
        } else {
          ++it;
        }
      }
    });
  }
  ~VirtualTime() {
    Stop();
    env_->Unwatch(watch_);
  }
  VirtualTime(const VirtualTime&) = delete;
  VirtualTime& operator=(const VirtualTime&) = delete;

  // Puts every node of the cluster on the clock and the watched transports. The pacer is
  // started (Start) once the cluster is created: joining needs no time, and a clock
  // running while the nodes are being made would pass the join timeout.
  void Apply(ClusterOptions& options) {
    options.env = env_;
    options.transport_factory = factory_;
  }

  // The same for one node made by hand (NodeOptions, CoordinatorOptions).
  template <typename NodeOptionsT>
  void ApplyTo(NodeOptionsT& options) {
    options.env = env_;
    options.transport_factory = factory_;
  }

  // Starts the pacer (or, after StartForJoin, lets it move the clock whenever nothing is in
  // flight). Not thread-safe: call it from one thread.
  void Start() {
    only_for_held_.store(false);
    factory_->log()->Wake();
    if (pacer_.joinable()) return;
    stop_.store(false);
    pacer_ = std::thread([this] { Run(); });
  }
  // Starts the pacer for the making of a cluster whose JOINs, STARTs and their replies may
  // be delayed or held: it moves the clock only while a fault holds a message of the join
  // (JoinKinds). Making the nodes takes real time in which nothing is in flight; moving the
  // clock then, for a held heartbeat say, would pass the heartbeat and silence timeouts of
  // the nodes already made, by as much as the machine is slow. Start() once it is made.
  void StartForJoin() {
    only_for_held_.store(true);
    if (pacer_.joinable()) return;
    stop_.store(false);
    pacer_ = std::thread([this] { Run(); });
  }
  // Stops moving the clock; nodes then stand still in time.
  void Stop() {
    stop_.store(true);
    { absl::MutexLock lock(&mu_); }  // wakes the waits of the pacer, which look at stop_
    watched_->watch().Wake();
    factory_->log()->Wake();
    if (pacer_.joinable()) pacer_.join();
  }

  // A worker's "computation" of `d` in virtual time: returns once the clock has moved by
  // `d`, or false after `real_timeout`. A thread it woke counts as busy until it sleeps
  // again or leaves, and the pacer does not move the clock while one is busy, so a worker
  // that computes 1 ms per iteration does 8 of them while one that computes 8 ms does one.
  // Meant for threads that sleep every iteration and are never held by a gate; such a
  // thread calls Leave once it sleeps no more (absl::Cleanup at its start does it).
  bool SleepFor(absl::Duration d, absl::Duration real_timeout = absl::Seconds(60)) {
    absl::MutexLock lock(&mu_);
    const std::thread::id self = std::this_thread::get_id();
    awake_.erase(self);
    const absl::Time until = now_ + d;
    if (until <= now_) return true;
    sleepers_[self] = until;
    auto woken = [this, self]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !sleepers_.contains(self);
    };
    const bool ok = mu_.AwaitWithTimeout(absl::Condition(&woken), real_timeout);
    sleepers_.erase(self);
    return ok;
  }
  // The calling thread counts as busy from now until it sleeps (SleepFor) or leaves: for a
  // thread that must not miss the first steps (called before Start).
  void Enter() {
    absl::MutexLock lock(&mu_);
    awake_.insert(std::this_thread::get_id());
  }
  // The calling thread sleeps no more: the pacer stops waiting for it.
  void Leave() {
    absl::MutexLock lock(&mu_);
    awake_.erase(std::this_thread::get_id());
  }

  // The messages by which nodes join and the job starts: what the making of a cluster
  // waits for.
  static const std::vector<wire::Kind>& JoinKinds() {
    static const std::vector<wire::Kind> kinds = {wire::JOIN, wire::JOIN_REPLY, wire::START,
                                                  wire::READY};
    return kinds;
  }

  kairos::testing::ManualEnv& env() { return *env_; }
  internal::FaultLog& log() { return *factory_->log(); }
  absl::Time Now() const { return env_->Now(); }

 private:
  // Waits until every thread woken by a move (or entered) sleeps again or left.
  void AwaitWokenActed() {
    absl::MutexLock lock(&mu_);
    auto acted = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return awake_.empty() || stop_.load();
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&acted), kStuckLimit)) {
      ADD_FAILURE() << "virtual time: " << awake_.size()
                    << " thread(s) woken from VirtualTime::SleepFor (or entered) neither slept "
                       "again nor left (VirtualTime::Leave) within "
                    << kStuckLimit;
      awake_.clear();
    }
  }

  void Run() {
    internal::FaultLog& log = *factory_->log();
    MessageWatch& watch = watched_->watch();
    while (!stop_.load()) {
      // Woken sleepers first: a busy one has requests to make.
      AwaitWokenActed();
      if (!watch.AwaitNothingInFlight(kStuckLimit, stop_) && !stop_.load()) {
        ADD_FAILURE() << "virtual time: in flight for " << kStuckLimit << ": " << watch.Describe();
        watch.Forget();
      }
      if (stop_.load()) break;
      if (only_for_held_.load() && log.held(JoinKinds()) == 0) {
        // Nothing the making of the cluster waits for needs time: wait for a held message
        // of the join (or a change of mode) instead.
        auto mode_changed = [this] { return stop_.load() || !only_for_held_.load(); };
        log.AwaitHeld(absl::InfiniteDuration(), mode_changed, JoinKinds());
        continue;
      }
      env_->Advance(step_);
      if (!log.AwaitTicked(env_->Now(), kStuckLimit) && !stop_.load()) {
        ADD_FAILURE() << "virtual time: a running node did not tick at " << env_->Now()
                      << " within " << kStuckLimit;
      }
    }
  }

  const absl::Duration step_;
  // Any fixed start; far from the real time, so that a real-time stamp shows up as wrong.
  const std::shared_ptr<kairos::testing::ManualEnv> env_ =
      std::make_shared<kairos::testing::ManualEnv>(absl::FromUnixSeconds(1'000'000));
  const std::shared_ptr<WatchedTransportFactory> watched_;
  const std::shared_ptr<internal::FaultyTransportFactory> factory_;
  uint64_t watch_ = 0;
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_) = env_->Now();  // as of the clock's last move
  absl::flat_hash_map<std::thread::id, absl::Time> sleepers_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::thread::id> awake_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> stop_{false};
  std::atomic<bool> only_for_held_{false};
  std::thread pacer_;
};

}  // namespace kairos::test_support

#endif  // KAIROS_TESTS_CLUSTER_VIRTUAL_TIME_H_
