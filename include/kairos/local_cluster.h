// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos::LocalCluster: a whole job inside one process: a coordinator, S servers and W
// workers, each a node with its own I/O thread, talking over inproc:// (default), tcp:// on
// 127.0.0.1 or ipc://. Several clusters can live in one process.
//
// Thread-safety: worker(i) may be used from any thread (Worker is thread-safe); Run and
// Shutdown must not be called concurrently.

#ifndef KAIROS_LOCAL_CLUSTER_H_
#define KAIROS_LOCAL_CLUSTER_H_

#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kairos/export.h"
#include "kairos/options.h"
#include "kairos/server.h"
#include "kairos/worker.h"

namespace kairos {

class KAIROS_EXPORT LocalCluster {
 public:
  // Starts every node and waits until the job has started (all joined).
  static absl::StatusOr<std::unique_ptr<LocalCluster>> Create(const ClusterOptions& options);

  // Shuts down (Shutdown()) if still running.
  virtual ~LocalCluster() = default;
  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;

  virtual int num_workers() const = 0;
  virtual int num_servers() const = 0;
  // REQUIRES: 0 <= rank < num_workers(). The cluster owns the worker.
  virtual Worker& worker(int rank) = 0;
  virtual ServerStats server_stats(int shard) const = 0;
  // The coordinator's straggler report (Coordinator::stragglers()).
  virtual std::vector<int> stragglers() const = 0;

  // Runs fn(worker) for every worker, each on its own thread, and calls Shutdown() on each
  // worker after its fn returns. Returns the first error (with the worker rank prefixed),
  // or OK when every fn returned OK.
  virtual absl::Status Run(const std::function<absl::Status(Worker&)>& fn) = 0;

  // Fault injection: simulates the crash of worker `rank`. Its node stops at once without
  // telling anybody (no Shutdown, no more heartbeats); the coordinator declares it dead after
  // CoordinatorOptions::heartbeat_timeout and the servers' gates stop waiting for it. Later
  // calls on worker(rank) fail with Unavailable. Must not be called while another thread is
  // blocked in a call of that worker.
  virtual void KillWorker(int rank) = 0;

  // Starts a new incarnation of worker `rank` (after KillWorker): a Worker created with the
  // cluster's worker options and that rank, which joins the running job again and replaces
  // worker(rank) (the killed object is destroyed). Returns once it has rejoined; its
  // clock() is the clock it continues from (docs/policies.md, "Membership"). Must not be
  // called while another thread uses worker(rank).
  virtual absl::Status RestartWorker(int rank) = 0;

  // Finishes every worker, waits for the job to end, and stops every node.
  virtual absl::Status Shutdown() = 0;

 protected:
  LocalCluster() = default;
};

}  // namespace kairos

#endif  // KAIROS_LOCAL_CLUSTER_H_
