// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// VirtualTime: runs a LocalCluster on one ManualClock, moved by a pacer thread, so that
// heartbeats, timeouts and deadlines pass in virtual time and no test sleeps.
//
// Every node's transport is a FaultyTransport (with the plan's faults, or none), which the
// pacer watches. The pacer moves the clock one step only when no message is in flight
// between the nodes (every message sent has been received and handled), then waits until
// every running node has run its tick at the new time. So within one step every heartbeat
// arrives before the next tick of the coordinator, a node silent for the heartbeat timeout
// is one that sent nothing for that many steps, and a wait of N ms ends at the first tick
// at or after it: a test's expectations hold exactly, whatever the machine's load.
//
// A function posted to a node's I/O thread (a worker's request on its way) counts as in
// flight until it ran. A test thread that "computes" for a while in virtual time calls
// SleepFor; the pacer does not move the clock again until every sleeper it woke sleeps
// again.
// Messages sent to a node that stopped (a killed worker) never arrive; when the in-flight
// count does not fall for kStuckWait of real time, the pacer takes the count it stays at as
// lost and goes on (it only ever lowers that allowance again). Time also passes while a
// worker thread computes between two calls, or a server's apply thread works (nothing is
// in flight then): tests keep every deadline they do not mean to expire long, hundreds of
// steps.

#ifndef KAIROS_TESTS_CLUSTER_VIRTUAL_TIME_H_
#define KAIROS_TESTS_CLUSTER_VIRTUAL_TIME_H_

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kairos/clock.h"
#include "kairos/options.h"
#include "transport/faulty_transport.h"

namespace kairos::test_support {

class VirtualTime {
 public:
  // When the in-flight count stays up this long (real time), the pacer goes on without it.
  static constexpr absl::Duration kStuckWait = absl::Milliseconds(20);
  // How long the pacer waits for every node's tick before it goes on regardless (only a
  // node stuck in a handler takes that long).
  static constexpr absl::Duration kTickWait = absl::Seconds(10);

  explicit VirtualTime(absl::Duration step, internal::FaultPlan plan = {})
      : step_(step),
        factory_(std::make_shared<internal::FaultyTransportFactory>(std::move(plan))) {
    // A sleeper whose time has come is awake from the moment the clock moves (not from
    // when its thread runs), so the pacer never sees it idle before it acted.
    watch_ = clock_->Watch([this] {
      absl::MutexLock lock(&mu_);
      now_ = clock_->Now();
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
    clock_->Unwatch(watch_);
  }
  VirtualTime(const VirtualTime&) = delete;
  VirtualTime& operator=(const VirtualTime&) = delete;

  // Puts every node of the cluster on the clock and the watched transports. The pacer is
  // started (Start) once the cluster is created: joining needs no time, and a clock
  // running while the nodes are being made would pass the join timeout.
  void Apply(ClusterOptions& options) {
    options.clock = clock_;
    options.transport_factory = factory_;
  }

  // The same for one node made by hand (NodeOptions, CoordinatorOptions).
  template <typename NodeOptionsT>
  void ApplyTo(NodeOptionsT& options) {
    options.clock = clock_;
    options.transport_factory = factory_;
  }

  // Starts the pacer (or, after StartForJoin, lets it move the clock whenever nothing is in
  // flight).
  void Start() {
    only_for_held_.store(false);
    if (pacer_.joinable()) return;
    stop_.store(false);
    pacer_ = std::thread([this] { Run(); });
  }
  // Starts the pacer for the making of a cluster whose JOINs, STARTs and their replies may
  // be delayed or held: it moves the clock only while a fault holds a message. Making the
  // nodes takes real time in which nothing is in flight; moving the clock then would pass
  // the heartbeat and silence timeouts of the nodes already made. Start() once it is made.
  void StartForJoin() {
    only_for_held_.store(true);
    if (pacer_.joinable()) return;
    stop_.store(false);
    pacer_ = std::thread([this] { Run(); });
  }
  // Stops moving the clock; nodes then stand still in time.
  void Stop() {
    stop_.store(true);
    if (pacer_.joinable()) pacer_.join();
  }

  // A worker's "computation" of `d` in virtual time: returns once the clock has moved by
  // `d`, or false after `real_timeout`. A thread it woke counts as busy until it sleeps
  // again, and the pacer does not move the clock while one is busy (for at most
  // kStuckWait: a thread that finished, or waits in a gate, does not come back), so a
  // worker that computes 1 ms per iteration does 8 of them while one that computes 8 ms
  // does one. Meant for threads that sleep every iteration and are never held by a gate.
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

  ManualClock& clock() { return *clock_; }
  internal::FaultLog& log() { return *factory_->log(); }
  absl::Time Now() const { return clock_->Now(); }

 private:
  // Waits until every sleeper woken by a move sleeps again (or kStuckWait passed: a thread
  // that finished after its sleep never comes back).
  void AwaitWokenActed() {
    absl::MutexLock lock(&mu_);
    auto acted = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return awake_.empty(); };
    if (!mu_.AwaitWithTimeout(absl::Condition(&acted), kStuckWait)) awake_.clear();
  }

  void Run() {
    internal::FaultLog& log = *factory_->log();
    int64_t lost = 0;
    while (!stop_.load()) {
      // Woken sleepers first: a busy one has requests to make.
      AwaitWokenActed();
      if (!log.AwaitInFlightAtMost(lost, kStuckWait)) lost = log.in_flight();
      lost = std::min(lost, std::max<int64_t>(0, log.in_flight()));
      if (stop_.load()) break;
      if (only_for_held_.load() && log.held() == 0) {
        // Nothing waits for time: wait for a held message (or a change of mode) instead.
        log.AwaitHeld(kStuckWait);
        continue;
      }
      clock_->Advance(step_);
      log.AwaitTicked(clock_->Now(), kTickWait);
    }
  }

  const absl::Duration step_;
  // Any fixed start; far from the real time, so that a real-time stamp shows up as wrong.
  const std::shared_ptr<ManualClock> clock_ =
      std::make_shared<ManualClock>(absl::FromUnixSeconds(1'000'000));
  const std::shared_ptr<internal::FaultyTransportFactory> factory_;
  uint64_t watch_ = 0;
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_) = clock_->Now();  // as of the clock's last move
  absl::flat_hash_map<std::thread::id, absl::Time> sleepers_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::thread::id> awake_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> stop_{false};
  std::atomic<bool> only_for_held_{false};
  std::thread pacer_;
};

}  // namespace kairos::test_support

#endif  // KAIROS_TESTS_CLUSTER_VIRTUAL_TIME_H_
