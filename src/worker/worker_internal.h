// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Internal operations on a Worker that are not part of its public interface.

#ifndef KAIROS_WORKER_WORKER_INTERNAL_H_
#define KAIROS_WORKER_WORKER_INTERNAL_H_

#include "kairos/worker.h"

namespace kairos::internal {

// Simulates a crash of `worker` (made by Worker::Create): its node stops at once without
// telling anybody (no FINISH, no more heartbeats), so the coordinator declares it dead after
// its heartbeat timeout. Later calls on it fail with Unavailable. Thread-safe; must not be
// called while another thread is blocked in a call of this worker.
void CrashWorker(Worker& worker);

// Reaches the implementation behind a Worker (friend of Worker).
class WorkerAccess {
 public:
  static Worker::Impl& ImplOf(Worker& worker) { return *worker.impl_; }
};

}  // namespace kairos::internal

#endif  // KAIROS_WORKER_WORKER_INTERNAL_H_
