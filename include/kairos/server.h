// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos::Server: one shard of the job's tables. `kairos-server` is a thin program around
// this class, and LocalCluster runs S of them as threads; a program with its own updater
// embeds one through Create.
//
// Thread-safety: all methods may be called from any thread.

#ifndef KAIROS_SERVER_H_
#define KAIROS_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kairos/export.h"
#include "kairos/metrics.h"
#include "kairos/options.h"

namespace kairos {

// Counters of one server, readable while it runs.
struct ServerStats {
  int shard = -1;
  uint64_t pushes = 0;          // push messages applied or accumulated
  uint64_t pulls = 0;           // pull messages served
  uint64_t bytes_in = 0;        // payload bytes received
  uint64_t bytes_out = 0;       // payload bytes sent
  uint64_t errors_replied = 0;  // requests answered with an error
  uint64_t dropped = 0;         // messages dropped with nobody to answer (malformed, ...)
  uint64_t version = 0;         // updates applied to this shard's chunks, all together
  // Pushes applied in one pass over a chunk together with an earlier push of the same range
  // (they had queued up while the chunk's apply lane was busy).
  uint64_t coalesced = 0;
  // Sparse tables (docs/sparse.md): the rows this shard holds, all tables together, and
  // the bytes they take (row blocks with values, optimizer state and step counts, and the
  // key index); they grow with the rows pushed, never with the key space.
  uint64_t sparse_rows = 0;
  uint64_t sparse_bytes = 0;
  // Each sparse table's rows, admissions and removals on this shard, in table order.
  std::vector<SparseTableStats> sparse_tables;
  // Requests refused, by reason (docs/wire_format.md).
  RefusalCounts refused;
  // Connections to this server refused at the security handshake: a client without the
  // job's CURVE keys (or using CURVE at a server without keys), or one that closed the
  // connection during the handshake. ZeroMQ clients retry, so each attempt counts.
  uint64_t handshakes_refused = 0;
  // Checkpoints (docs/durability.md): written, failed (the error is logged), and not taken
  // because the one before was still being written; the clock of the last one written
  // (-1: none), and the clock the job was restored from (-1: not restored).
  uint64_t checkpoints_written = 0;
  uint64_t checkpoints_failed = 0;
  uint64_t checkpoints_skipped = 0;
  // Of checkpoints_written, the deltas (ServerOptions::checkpoint_deltas).
  uint64_t checkpoint_deltas_written = 0;
  int64_t last_checkpoint_clock = -1;
  int64_t restored_clock = -1;
  // The update log (ServerOptions::state_dir): records and bytes appended by this process,
  // the writes (group commits) and syncs that carried them, the events replayed from the
  // log when this server restarted into its running job, the bytes of a torn tail cut off
  // then, and the requests a worker sent again after the restart that the replay had
  // already taken (answered, not applied twice).
  uint64_t log_records = 0;
  uint64_t log_bytes = 0;
  uint64_t log_commits = 0;
  uint64_t log_syncs = 0;
  uint64_t log_replayed = 0;
  uint64_t log_torn_bytes = 0;
  uint64_t retries_answered = 0;
  // New bases of the update log written (ServerOptions::log_rebase_bytes): each let the
  // segments before it go.
  uint64_t log_rebases = 0;
  // Wire bytes through the server's socket, every peer together: each message's header and
  // payloads as they travelled (encoded where a table compresses), without ZeroMQ's or
  // TCP's framing. bytes_in and bytes_out above count float32 payload values after decoding.
  uint64_t wire_bytes_in = 0;
  uint64_t wire_bytes_out = 0;
  std::vector<WorkerMetrics> workers;  // per worker rank, once the job has started
  std::vector<int> stragglers;         // workers the straggler policy flags (SaPS), sorted
};

class KAIROS_EXPORT Server {
 public:
  // Binds options.listen and joins the job through options.coordinator. Returns once the
  // listening socket is bound and the join is sent; the shard's tables are created when the
  // job starts. Errors: Unavailable for an endpoint that cannot be bound (options.listen,
  // or options.metrics_listen: the message names the address); InvalidArgument for a
  // metrics_listen that is not HOST:PORT.
  static absl::StatusOr<std::unique_ptr<Server>> Create(const ServerOptions& options);

  virtual ~Server() = default;
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The endpoint workers connect to (the bound port filled in).
  virtual std::string endpoint() const = 0;
  // Where GET /metrics is served (ServerOptions::metrics_listen), "HOST:PORT" with the
  // bound port filled in; empty when the server serves no metrics.
  virtual std::string metrics_endpoint() const = 0;
  // Waits until the job ends (the coordinator says so) or `timeout` passes
  // (DeadlineExceeded). Returns the reason the server stopped.
  virtual absl::Status Wait(absl::Duration timeout) = 0;
  // Ends this server's part in the job now: it stops serving, and pending requests are
  // answered with Cancelled. Wait then returns. The destructor calls it.
  virtual void Shutdown() = 0;
  virtual ServerStats stats() const = 0;
  // Writes a checkpoint of this server's shard now (ServerOptions::checkpoint_dir;
  // docs/durability.md) and returns its path once it is written and synced. The snapshot
  // holds every update decided before the call; if a checkpoint is being written already,
  // that one answers. Errors: FailedPrecondition without a checkpoint_dir or before the job
  // started, DeadlineExceeded after `timeout` (the checkpoint still completes), the file
  // system's error. Do not call it from a lane or an updater.
  virtual absl::StatusOr<std::string> Checkpoint(absl::Duration timeout) = 0;
  // Starts a checkpoint and returns at once; the server logs its outcome (kairos-server's
  // SIGUSR1).
  virtual void RequestCheckpoint() = 0;

 protected:
  Server() = default;
};

}  // namespace kairos

#endif  // KAIROS_SERVER_H_
