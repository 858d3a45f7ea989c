// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The simulator's event queue: events in virtual-time order, ties broken by the order in
// which they were scheduled, so that a run is a pure function of its inputs.

#ifndef KAIROS_SIM_EVENT_QUEUE_H_
#define KAIROS_SIM_EVENT_QUEUE_H_

#include <cstdint>
#include <queue>
#include <vector>

#include "absl/time/time.h"
#include "policy/policy.h"

namespace kairos::sim {

enum class EventKind {
  kReadArrives,      // a worker's read (pull) at `clock` reaches the server
  kPushArrives,      // a worker's push at `clock`, then its clock report, reach the server
  kPushSent,         // serialized links only: a worker's push at `clock` leaves it
  kAckArrives,       // push_waits: the acknowledgement of a worker's push at `clock` is back
  kClockArrives,     // push_waits: a worker's clock report (clock + 1) and next read arrive
  kPartArrives,      // shard `shard`'s part of a worker's push arrives
  kPartReceived,     // transport_thread: shard `shard`'s part of a push is taken in
  kCachedRead,       // cache_clocks: a worker's read at `clock`, answered by its copy
  kFailureDetected,  // the server learns that `worker` has died
  kPartApplied,      // eager pull: shard `shard`'s part of `worker`'s latest push is applied
  kJobEnds,          // a job on a shard's thread (sim/lanes.h), `job`, ends
  kHostTick,         // HostOptions: the host's next job ends, if its version is still `job`
  kHostJobStarts  // HostOptions: a job of the host, `job`, starts (a gradient, a transfer's tail)
};

struct Event {
  absl::Time time;
  uint64_t sequence = 0;  // set by EventQueue::Schedule
  EventKind kind = EventKind::kReadArrives;
  policy::WorkerId worker = 0;
  policy::Tick clock = 0;
  int shard = 0;     // kPartArrives, kPartReceived, kPartApplied
  uint64_t job = 0;  // kJobEnds, kHostJobStarts; kHostTick: the host's version
};

// A min-heap on (time, sequence). Thread-safety: none; one simulation owns it.
class EventQueue {
 public:
  // Adds `event`, stamped with the next sequence number.
  void Schedule(Event event);
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  // REQUIRES: !empty().
  const Event& top() const { return heap_.top(); }
  // Removes and returns the earliest event. REQUIRES: !empty().
  Event Pop();

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time != b.time) return a.time > b.time;
      return a.sequence > b.sequence;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_sequence_ = 0;
};

}  // namespace kairos::sim

#endif  // KAIROS_SIM_EVENT_QUEUE_H_
