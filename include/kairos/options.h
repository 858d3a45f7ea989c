// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Options for each kind of node and for each call, with their defaults. The library never
// reads environment variables; the helpers of kairos/run.h (ReadNodeEnvironment,
// WorkerOptionsFromEnvironment) fill these structs from them for a program that wants it.
// docs/configuration.md lists every option and variable.

#ifndef KAIROS_OPTIONS_H_
#define KAIROS_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kairos/env.h"
#include "kairos/export.h"
#include "kairos/job.h"
#include "kairos/keys.h"
#include "kairos/log.h"
#include "kairos/transport_context.h"
#include "kairos/updater.h"

namespace kairos {

// Makes a node's messaging endpoint in place of the ZeroMQ transport: the one seam through
// which tests run nodes over a fault-injecting network. Opaque: a program gets one from
// kairos::testing::FaultyNetwork (kairos/testing/faulty_network.h, the kairos::testing
// library) and gives it to NodeOptions::transport_factory or
// ClusterOptions::transport_factory; production programs leave those null.
class TransportFactory;

// Per-call options of the blocking and asynchronous worker calls.
struct CallOptions {
  // Absolute deadline of the call. Unset: now + WorkerOptions::request_timeout.
  std::optional<absl::Time> deadline;
};

// Options every node has, the coordinator included: its transport, security, time and
// logging.
struct NodeOptions {
  // Largest message the node accepts; bigger ones are refused by the transport itself
  // (ZMQ_MAXMSGSIZE). Default 1 GiB for servers and workers (it must exceed
  // 4 * JobConfig::chunk_elements), 16 MiB for the coordinator (control messages are small).
  int64_t max_message_bytes = int64_t{1} << 30;
  // What the node logs and where (kairos/log.h): lines at log_level or above go to
  // log_sink, or to stderr when it is null. Default: warnings and errors on stderr.
  // KAIROS_LOG_LEVEL sets the level in the programs (ReadNodeEnvironment, kairos/run.h).
  LogLevel log_level = LogLevel::kWarning;
  LogSink log_sink;
  // The messaging context. Null: the node creates its own. Nodes using inproc:// endpoints
  // must share one (LocalCluster does).
  std::shared_ptr<TransportContext> context;
  // Connections to this node's listening endpoint it keeps track of; beyond that the
  // longest-idle ones are forgotten (their later messages count as a new connection), so
  // a flood of connections cannot grow the node's memory. Default 65536.
  int max_peers = 65536;
  // The job's CURVE keys (kairos/keys.h, docs/security.md): every tcp:// and ipc://
  // connection of the node is then encrypted and authenticated, and the node accepts only
  // peers holding the same keys. Every node of a job needs them, or none has any. Unset: no
  // encryption (logged once). ReadNodeEnvironment (kairos/run.h) reads KAIROS_KEYS into it.
  std::optional<CurveKeys> keys;
  // The node's environment (kairos/env.h): the time every timestamp, timeout, heartbeat and
  // deadline reads, the files of its update log, checkpoints and kept state, and its
  // threads. Null (default): Env::Default(). On virtual time (kairos::testing::ManualEnv)
  // the node ticks only when the time moves; the options keep the Env alive as long as
  // the node.
  std::shared_ptr<const Env> env;
  // Makes the node's transport. Null (default): ZeroMQ. For tests: a fault-injecting
  // network (kairos::testing::FaultyNetwork); see TransportFactory above.
  std::shared_ptr<TransportFactory> transport_factory;
  // One-way latency added to every message this node sends, for testbeds (docs/lab.md,
  // "Shaped links"): each message is held this long after Send, then sent; order is kept.
  // A link between two nodes then has this node's delay one way and the peer's the other.
  // Real time, whatever `env`'s time is. Zero (default): messages go at once, and nothing is
  // added to the path. Must not be negative. KAIROS_SEND_DELAY_US sets it from the
  // environment (kairos/run.h).
  absl::Duration send_delay = absl::ZeroDuration();
};

// Options of a node that joins a job through its coordinator: a server or a worker.
struct JoinOptions : NodeOptions {
  // Endpoint of the coordinator, e.g. "tcp://127.0.0.1:7000" or "inproc://job-1/coord".
  std::string coordinator;
  // How long to wait for the coordinator to accept the join and start the job.
  // Default 60 s: every process of a job must be up within this time.
  absl::Duration join_timeout = absl::Seconds(60);
  // How often the node tells the coordinator it is alive. Default 500 ms.
  absl::Duration heartbeat_interval = absl::Milliseconds(500);
};

struct WorkerOptions : JoinOptions {
  // This program's tables and policy; must equal the job's (checked at join).
  JobConfig job;
  // The worker rank to take, or -1 for the next free one. kairos-launch sets it.
  int rank = -1;
  // Default deadline of each call that has no CallOptions::deadline. Default 60 s.
  absl::Duration request_timeout = absl::Seconds(60);
  // Flow control: payload bytes (pushed values and expected pulled values) this worker has
  // in flight to one server at most; further messages wait, in order, on the worker. Bounds
  // what a server buffers for a worker (a 256 MiB pull does not become 256 MiB of queued
  // replies) while keeping enough in flight to fill the link. One request always goes,
  // whatever its size. Default 16 MiB.
  int64_t max_bytes_in_flight_per_server = int64_t{16} << 20;
  // How much longer than a request's deadline the worker waits for its answer before it
  // fails the request itself. A server fails a read it could not serve by the deadline
  // with an error naming the workers the gate waited for; the grace lets that error arrive,
  // so that it (rather than the worker's bare "no answer before the deadline") is what the
  // caller sees. Must not be negative. Default 250 ms.
  absl::Duration deadline_grace = absl::Milliseconds(250);
  // The deadline of the Shutdown that the destructor calls for a worker the program did not
  // shut down (Worker::Shutdown): the destructor blocks at most this long (plus
  // deadline_grace) before it stops the node anyway. Must be positive. Default 5 s.
  absl::Duration destructor_shutdown_timeout = absl::Seconds(5);
  // How long the worker's I/O thread, out of work, keeps polling for the next answer or
  // call before it sleeps. With requests in flight the next one is usually microseconds
  // away, and a sleeping thread must be woken for it (a system call and a context switch,
  // the larger part of a small request's cost). Not while exactly one request is open (the
  // caller of a lone small request spins for the answer itself), nor while one over 64 KiB
  // is (its messages keep the thread busy). A spin that finds nothing is CPU spent for
  // nothing, so the thread backs off: after k >= 2 such spins in a row it sleeps at once
  // through the next 2^(k-1) - 1 idle periods (at most 63), and spins again every time once
  // one finds work. So a worker with sparse traffic spins at most once per 64 idle periods.
  // 0: never spin. Between 0 and 1 ms. Default 25 us (docs/performance.md).
  absl::Duration io_spin = absl::Microseconds(25);
};

struct ServerOptions : JoinOptions {
  // Where to accept workers. "tcp://127.0.0.1:*" (default) binds an OS-chosen port;
  // "tcp://0.0.0.0:*" listens on every interface; "ipc:///path" and "inproc://name" work too.
  std::string listen = "tcp://127.0.0.1:*";
  // Host name or address that workers use to reach a server listening on a wildcard
  // address ("0.0.0.0"/"*"). Empty: the listen address as bound.
  std::string advertise_host;
  // Threads that apply updates; chunks are spread over them (two updates of one chunk
  // never race). 0: one per hardware thread, at most 4. Default 0.
  int apply_threads = 0;
  // Updates smaller than this many bytes are applied on the I/O thread, saving a thread
  // hop on small messages. Default 64 KiB.
  int64_t inline_apply_bytes = int64_t{64} << 10;
  // Pushes kept per worker in WorkerMetrics::push_log, for inspection and tests. Default 0
  // (no log).
  int push_log_size = 0;
  // Builds each table's updater from its UpdaterSpec. Default: the built-in ones (sgd,
  // momentum, nesterov, adagrad, adam, adamw, add, ftrl; docs/optimizers.md). A name the factory
  // does not know makes the server refuse the job at start with the factory's error.
  UpdaterFactory updater_factory = MakeBuiltinUpdater;
  // Called with the keys of the sparse-table rows this server removes (RowEviction,
  // docs/sparse.md), on the thread that removed them (the table's apply lane): must be
  // thread-safe, quick, and must not call into the server. Empty (default): not called; the
  // removals are counted in ServerStats::sparse_tables either way.
  std::function<void(const EvictedRows&)> on_evicted;

  // Limits on what workers may ask of this server (docs/wire_format.md). A request past
  // one is refused with its own status and counted in ServerStats::refused; the server
  // goes on serving everyone else.
  //
  // Memory the shard may use (values, updater state, round sums, VSGD drift, bookkeeping;
  // docs/configuration.md has the formula). A job whose shard would not fit is refused when
  // it starts: the server answers the coordinator with ResourceExhausted naming the tables
  // and both sizes, and every worker's Create fails with that error. 0 (default): 80 % of
  // the machine's memory (or of the cgroup's limit, when lower). What the dense tables
  // leave of it bounds the rows of sparse tables the shard creates (docs/sparse.md).
  uint64_t memory_budget_bytes = 0;
  // How far ahead of the worker's clock (the last CLOCK this server got from it) a PUSH,
  // PULL or CLOCK may be. A worker's own requests are never ahead by more than the number
  // of its threads calling AdvanceClock() at once; the bound keeps a future round's sum (BSP) from
  // being opened arbitrarily far ahead. Default 4.
  int64_t max_clock_lead = 4;
  // The longest a read may wait in the gate: a PULL whose timeout_ms is 0 or larger waits
  // this long. Default 1 hour.
  absl::Duration max_read_wait = absl::Hours(1);
  // Reads of one worker that may wait in the gate at once. Default 65536.
  int max_waiting_reads_per_worker = 65536;

  // Checkpoints (docs/durability.md). Where this server writes its shard's checkpoints, as
  // DIR/clock-<N>/shard-<i>-of-<S>.kcp, each file written atomically; empty (default):
  // none, and Server::Checkpoint fails.
  std::string checkpoint_dir;
  // Take one each time the smallest clock of the active workers reaches a multiple of this
  // (0, default: not by clocks). Every server of a job names it by the same clock, so under
  // BSP the shards' files form one consistent checkpoint.
  int64_t checkpoint_every_clocks = 0;
  // Take one every this long (0, default: not by time). Shards take these independently.
  absl::Duration checkpoint_every = absl::ZeroDuration();
  // Take a last one when every worker has finished (or died), before the server ends.
  // Default true (with a checkpoint_dir).
  bool checkpoint_at_end = true;
  // fsync each file and its directory (default true). false only for tests.
  bool checkpoint_sync = true;
  // Delta checkpoints (docs/durability.md, "Delta checkpoints"): after each whole checkpoint,
  // this many checkpoints hold of the sparse tables only the rows changed and the keys
  // removed since the checkpoint before (dense tables whole), each chained to that one; then
  // a whole one again. A restore loads the chain. 0 (default): every checkpoint is whole.
  int checkpoint_deltas = 0;
  // Start the job from a checkpoint: a clock-<N> directory, or a directory of them (the
  // complete one of the highest clock). It must hold every shard's file (a shared file
  // system, or copied there); the job's tables must match, the number of servers may
  // differ. The workers' clocks start at 0; checkpoints of the new job are named from the
  // restored clock on. Empty (default): fresh initial values.
  std::string restore_from;

  // The update log and server restarts (docs/durability.md, "The update log"). Where this
  // server keeps its shard's update log, STATE_DIR/shard-<i>.kul: every event the shard
  // acts on is appended before it acts, so before it answers. A server started again with
  // the same state_dir and `shard` after a crash finds the log of its running job, replays
  // it and rejoins the job (the coordinator needs server_restart_timeout). Empty (default):
  // no log; a crashed server's updates since the last checkpoint are lost.
  std::string state_dir;
  // When an update is safe: kProcess (default) survives the server process's crash (the
  // record is written to the operating system before the shard acts on it), kMachine also
  // a machine crash (fdatasync first; records that arrive together share one sync).
  enum class LogSync { kProcess, kMachine };
  LogSync log_sync = LogSync::kProcess;
  // Once the update log's current segment holds this many bytes, the server starts a new
  // segment from a snapshot of the shard (a base) at the next moment the shard holds
  // nothing beyond its values and the workers' clocks, and drops the older segments once
  // the snapshot is on disk: the log, and a restart's replay, stay about this size
  // (docs/durability.md, "Bases"; policies that keep state of their own never allow a
  // base). 0: never. Default 1 GiB.
  uint64_t log_rebase_bytes = uint64_t{1} << 30;
  // The shard this server asks for: -1 (default) takes the next free one; a restarted
  // server names the shard it served (kairos-server --shard).
  int shard = -1;
  // Where to serve the server's metrics over HTTP, GET /metrics in the Prometheus text
  // format (docs/operations.md lists every metric): "HOST:PORT", e.g. "127.0.0.1:9100",
  // "0.0.0.0:9100" (every interface) or "[::1]:9100"; port 0 picks a free port
  // (Server::metrics_endpoint() tells which). Empty (default): no metrics endpoint. A port
  // that cannot be bound makes Server::Create fail with Unavailable naming the address.
  std::string metrics_listen;
};

// How long a job waits for a dead server that keeps an update log to restart, when
// CoordinatorOptions::server_restart_timeout is 0.
inline constexpr absl::Duration kDefaultServerRestartWait = absl::Seconds(60);
// How long the nodes of a job whose coordinator keeps its state wait for it to come back
// (CoordinatorOptions::restart_timeout's default).
inline constexpr absl::Duration kDefaultCoordinatorRestartWait = absl::Seconds(60);

struct CoordinatorOptions : NodeOptions {
  CoordinatorOptions() { max_message_bytes = int64_t{16} << 20; }

  // Where to listen. Default "tcp://127.0.0.1:0" (an OS-chosen port); a fixed port that is
  // already taken is a clear Unavailable error from Coordinator::Create.
  std::string listen = "tcp://127.0.0.1:0";
  // Number of servers and workers the job waits for before it starts; each 1..kMaxNodes.
  int num_servers = 1;
  int num_workers = 1;
  // The job's configuration. Unset: the first worker to join defines it, and every later
  // worker must match it.
  std::optional<JobConfig> job;
  // How long every node has to join once the coordinator is up. Default 120 s.
  absl::Duration join_timeout = absl::Seconds(120);
  // A node silent for this long is declared dead. Default 10 s.
  absl::Duration heartbeat_timeout = absl::Seconds(10);
  // The job's verdict when workers were declared dead and never rejoined (docs/design.md,
  // "Failures"). false (default): the job fails (Unavailable naming them) once the others
  // are done. true: it succeeds when at least one worker finished and every other one
  // finished or is dead; the dead ones are logged. Either way a worker that rejoined with
  // its rank counts as that rank.
  bool tolerate_worker_failures = false;
  // A worker rank may be joined again by a new process (a restart) while the coordinator
  // still counts the old one active, once the old one has been silent this long; until
  // then the new one's JOIN is refused with Unavailable and the worker asks again at each
  // tick. Longer than the workers' heartbeat interval. Default 1 s.
  absl::Duration rejoin_silence = absl::Seconds(1);
  // How long the job waits for a server declared dead to come back (docs/durability.md,
  // "Server restarts"): a server started again with its shard and state_dir rejoins the
  // running job, and the workers send it again what it had not answered. 0 (default): a
  // server that keeps an update log (ServerOptions::state_dir) is waited for
  // kDefaultServerRestartWait, so durability is the server's one switch; a dead server
  // without one ends the job at once. Set: every server is waited for this long. Past it the
  // job ends with an error naming the server. A server that comes back sooner than
  // heartbeat_timeout replaces the old one once that one has been silent for rejoin_silence.
  absl::Duration server_restart_timeout = absl::ZeroDuration();
  // The longest a barrier may wait: a BARRIER whose timeout_ms is 0 or larger waits this
  // long. Default 1 hour.
  absl::Duration max_barrier_wait = absl::Hours(1);
  // Where the coordinator keeps the job's state (docs/durability.md, "Coordinator
  // restarts"): membership, credentials, the job, the server addresses, the barriers passed,
  // in <state_dir>/coordinator.state, written before any message that depends on it goes
  // out. A coordinator created with a state_dir that holds a running job's state resumes
  // that job (listening where it listened before) instead of starting a new one, and the
  // nodes, which go on training while it is away, bind to it again. Empty (default): the
  // state lives in memory, and a coordinator that dies ends the job.
  std::string state_dir;
  // With state_dir: how long the nodes wait for a silent coordinator to come back before
  // they end (told to them in START). Default kDefaultCoordinatorRestartWait.
  absl::Duration restart_timeout = kDefaultCoordinatorRestartWait;
  // As ServerOptions::metrics_listen: the coordinator's metrics over HTTP (the job's
  // phase, the nodes that joined, finished or died, barriers; docs/operations.md).
  // Coordinator::metrics_endpoint() tells the bound address. Empty (default): none.
  std::string metrics_listen;
};

// How the nodes of a LocalCluster talk: kInproc (in memory, the default), kTcp (127.0.0.1,
// OS-chosen ports) or kIpc (Unix sockets in a fresh temporary directory).
enum class TransportKind { kInproc, kTcp, kIpc };

// "inproc", "tcp" or "ipc".
KAIROS_EXPORT std::string_view TransportKindName(TransportKind kind);
// The kind of one of those names, in any case ("TCP"); InvalidArgument naming the three
// otherwise.
KAIROS_EXPORT absl::StatusOr<TransportKind> ParseTransportKind(std::string_view name);

// LocalCluster: a coordinator, servers and workers inside this process.
struct ClusterOptions {
  int num_servers = 2;
  int num_workers = 4;
  JobConfig job;
  // How the cluster's nodes talk (TransportKind).
  TransportKind transport = TransportKind::kInproc;
  // Applied to every worker (rank, coordinator and context are set by the cluster).
  WorkerOptions worker;
  // Applied to every server (listen, coordinator and context are set by the cluster).
  ServerOptions server;
  // Applied to the coordinator (listen, counts, job and context are set by the cluster).
  CoordinatorOptions coordinator;
  // The job's CURVE keys, given to every node of the cluster (it replaces the nodes' own
  // `keys`). Over "inproc" they change nothing: inproc never leaves the process, and
  // ZeroMQ applies no security mechanism to it.
  std::optional<CurveKeys> keys;
  // When set, given to every node of the cluster (replacing the nodes' own): one
  // environment for the whole job (a kairos::testing::ManualEnv runs it on virtual time),
  // and the factory of every node's transport (NodeOptions::transport_factory).
  std::shared_ptr<const Env> env;
  std::shared_ptr<TransportFactory> transport_factory;
};

}  // namespace kairos

#endif  // KAIROS_OPTIONS_H_
