// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A deterministic discrete-event simulator of one data-parallel SGD job on virtual time
// (docs/simulator.md). It drives the same policy objects as a real server shard (built with
// policy::MakeGate etc. from a spec string), computes real gradients of a real model, and
// never touches a socket, a thread or the wall clock. Same options, same result, bit for
// bit.
//
//   SimOptions options;
//   options.policy = "ssp:s=3";
//   options.num_workers = 64;
//   options.compute.slowdown = {4.0};   // worker 0 is four times slower
//   absl::StatusOr<SimResult> result = Simulate(options);
//
// One worker iteration at clock c (0-based):
//   1. its read at clock c reaches the server (a latency after it was sent);
//   2. the gate admits it, now or when a later event lets it;
//   3. the parameters travel back (latency + bytes / bandwidth);
//   4. the worker computes the gradient of a mini-batch at those parameters, taking
//      compute_time * slowdown[w] * jitter * (straggler factor, with a probability), or a
//      draw from its measured profile (ComputeOptions::measured);
//   5. the push travels (latency + bytes / bandwidth); on arrival the server applies it
//      (straggler policy, weighting, aggregation, SGD), then takes the worker's clock c + 1
//      (Gate::OnClock, ready buckets applied, waiting reads re-checked), then the worker's
//      next read, sent right behind on the same ordered link, or its finish. With
//      WorkerCostOptions::push_waits the worker first waits for the push's acknowledgement
//      (a latency back once it is applied); its clock report and next read then travel a
//      latency to the server.
// WorkerCostOptions::local adds the worker's own time per iteration between step 3 and 4.
// Under pull=eager (PS+) a worker does not wait for its own push: its step t (once g_t is
// computed on x_t and the reply to its previous request is back, W_t and the clocks it
// carried) sends the push of g_t at clock t, scaled by policy::EagerLearningRateScale of
// the foreign updates between its two latest reads, asking for the read at clock t + 1 in
// the same request (pull_after: the server applies the push, gates the read like any
// other, and takes clock t + 1 right behind), sets x_{t+1} = W_t - learning_rate * scale *
// g_t, and computes g_{t+1} while the request travels. The read at clock 0 is the initial pull.
// With SimOptions::cache_clocks a worker's read at clock c may be answered by its copy of
// an earlier read (policy::CacheBound, sim_read_cache.h): it is not sent, and the worker
// computes on the copy at once, at the time it would have sent the read (steps 1 to 3 are
// skipped; its clock report still reaches the server as above).
// Under VSGD weighting the server computes each push's value staleness (sim_server.h).
// A worker that fails stops at its failure time (a push not sent by then is lost); the
// server learns of it `detection_delay` later and the gate drops it (kDead).

#ifndef KAIROS_SIM_SIMULATOR_H_
#define KAIROS_SIM_SIMULATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kairos/metrics.h"
#include "kairos/pace.h"
#include "policy/policy.h"
#include "sim/model.h"

namespace kairos::sim {

// How long a worker computes one gradient: compute_time * slowdown[w] * jitter * straggler,
// or a draw from its measured profile. The model's draws are kairos::PaceModel's
// (kairos/pace.h), keyed by (seed, worker, iteration), so a paced real worker with the same
// seed computes its iteration k for exactly as long as the simulated one.
struct ComputeOptions {
  // Base time of one iteration on a worker of slowdown 1. > 0.
  absl::Duration compute_time = absl::Milliseconds(100);
  // Per-worker multiplier of compute_time (3 = three times slower), each > 0. Shorter than
  // num_workers: the missing ones are 1 (so {4.0} slows worker 0 only).
  std::vector<double> slowdown;
  // Jitter, a shifted exponential: jitter_shift + Exp(mean jitter_mean), drawn per
  // iteration (rate = 1 / jitter_mean). jitter_shift > 0, jitter_mean >= 0 (0: none).
  double jitter_shift = 1.0;
  double jitter_mean = 0.0;
  // Transient stragglers: each iteration is straggler_factor times longer with probability
  // straggler_prob. 0 <= straggler_prob <= 1, straggler_factor >= 1.
  double straggler_prob = 0.0;
  double straggler_factor = 5.0;
  // Measured compute times (a calibration, docs/simulator.md): when not empty, worker w
  // draws each iteration's time from profile measured[w % measured.size()] and the model
  // above (compute_time, slowdown, jitter, stragglers) is not used. A profile is 1 to
  // kMaxProfilePoints equally likely durations, nondecreasing, each > 0 and finite (a
  // calibration's are the means of equal-count slices of the sorted measurements, so the
  // mean is the measured one); each iteration draws one, uniformly. At most kMaxProfiles
  // profiles.
  std::vector<std::vector<absl::Duration>> measured;
};

inline constexpr size_t kMaxProfilePoints = 1025;
inline constexpr int kMaxServerShards = 1024;
inline constexpr size_t kMaxProfiles = 65536;

// The network between each worker and the server: a fixed latency plus the payload
// (4 bytes per parameter) over a bandwidth, per message; no loss, and each worker's link is
// ordered (FIFO). Without serialize_links there is no contention: every message takes
// latency + bytes / bandwidth whatever else is in flight. With it, each node's link carries
// one message at a time each way and the server's link is shared by every worker
// (sim/links.h): BSP's replies, released together, leave the server one after the other.
struct NetworkOptions {
  absl::Duration latency = absl::Microseconds(500);  // one way, >= 0
  double bandwidth_bytes_per_s = 1.25e9;               // 10 Gbit/s; 0: infinite
  bool serialize_links = false;
  // The server's link under serialize_links, bytes per second (0: infinite); < 0: the
  // workers' bandwidth_bytes_per_s.
  double server_bandwidth_bytes_per_s = -1.0;
  // Added to the latency of every message a worker sends, and of every message the server
  // sends: a link whose delay sits on one side, as the lab's shaped links add theirs at the
  // sender (docs/lab.md). >= 0 and finite.
  absl::Duration worker_send_delay = absl::ZeroDuration();
  absl::Duration server_send_delay = absl::ZeroDuration();
  // The parameters are split evenly over this many server shards, each with a link and a
  // thread of its own (ServerCostOptions are one shard's costs for its part): a push or a
  // reply is one part per shard, and each shard applies and serves its part on its own.
  // With serialize_links the parts queue on the worker's link one after the other, so a
  // shard's reply can come down it while the push's later parts still go up, as on a real
  // job of several servers; without, a message's parts together take the message's time.
  // 1 to kMaxServerShards.
  int server_shards = 1;

  // One way, worker to server and server to worker.
  absl::Duration to_server() const { return latency + worker_send_delay; }
  absl::Duration to_worker() const { return latency + server_send_delay; }
};

// What a shard's thread spends per request (a calibration, docs/simulator.md). The thread
// does one thing at a time, in the order things became ready (sim/lanes.h): a push's part
// reaches it `receive` after the part arrived (the transport taking it in, beside the
// thread) and keeps it busy for `apply`; each served read keeps it busy for `read` before
// its part of the reply leaves (`queued_read` when it queued behind other work: reads
// served back to back, as at a BSP release). A round's sum (agg=round, as under bsp),
// applied when the clock that completes it arrives, keeps it busy for another `apply`
// before the reads that clock released. Under eager pull the read a push carries is placed
// on the thread when the shard's part of the push is applied. Zero (the default): the
// server is free.
struct ServerCostOptions {
  absl::Duration apply = absl::ZeroDuration();    // >= 0
  absl::Duration read = absl::ZeroDuration();     // >= 0
  absl::Duration receive = absl::ZeroDuration();  // >= 0
  // >= 0; unset: `read`.
  std::optional<absl::Duration> queued_read;
  // Value weighting's bookkeeping (VSGD, engine/shard.h: ShardTable::ApplyTracked): one
  // pass over a shard's part of the parameters. An apply under value weighting also copies
  // the part before it and adds the change to every worker's drift (exact: 1 + num_workers
  // passes) or sums its square (the bound: 2 passes), and a read there zeroes its worker's
  // drift (exact: 1 pass). >= 0; no effect under any other weighting.
  absl::Duration drift_pass = absl::ZeroDuration();
  // Two threads per shard, as a real server has (the transport's and an apply thread,
  // engine/chunk_work.h): a push's part is taken in on the transport's thread (`receive`
  // holds it, rather than running beside) and applied on the apply thread; a read is served
  // on the transport's thread when the apply thread has no work, else on the apply thread
  // behind that work. false: one thread does both.
  bool transport_thread = false;
};

// What the worker does around its computation (a calibration, docs/simulator.md). The
// defaults are a worker that costs nothing and sends its next read right behind its push.
struct WorkerCostOptions {
  // The worker waits for each push's acknowledgement before it reports its clock and sends
  // its next read, as a program that calls the blocking Worker::Push does (the lab's
  // trainer): the acknowledgement leaves once the server has applied the push and takes a
  // latency back (its few bytes are not serialized on the links), then the clock report
  // and the read take a latency to the server, where the gate sees the clock. No effect
  // under eager pull, whose push carries the next read.
  bool push_waits = false;
  // The worker's own time per iteration outside its gradient and its requests (batch
  // gathering, bookkeeping), the same on every worker (not scaled by slowdowns), spent
  // between the reply and the computation. >= 0 and finite.
  absl::Duration local = absl::ZeroDuration();
  // Under eager pull, the worker's own time per step instead of `local` (an eager step also
  // corrects the parameters locally and copies them in and out); unset: `local`. >= 0 and
  // finite.
  std::optional<absl::Duration> eager_local;
  // The worker's CPU to take in a reply once its last part is back (the copy out of its
  // socket, the parse), before it goes on: its pull returns at the end. A job on the host
  // when there is one (HostOptions), so that it is stretched by the load, else a plain
  // delay. It moves part of a read's cost off the server's thread: the server's reply shares
  // the parameters with the transport, so a burst of reads released at once costs the
  // server little each while every worker takes in its own. >= 0 and finite.
  absl::Duration receive = absl::ZeroDuration();
};

// The machine the job's nodes share (a calibration, docs/simulator.md), as the lab's
// workers and servers share one. With cores > 0 the shards' threads' costs
// (ServerCostOptions read, queued_read and apply) and the transport's (receive) are CPU
// work on a Host (sim/host.h) of `cores` cores, as are each worker's gradient
// (gradient_cpu) and its take-in of each reply (WorkerCostOptions::receive). The jobs
// running share the cores evenly (or run to completion: run_to_completion) with a
// background job of weight `background` that runs at a lower priority (a thread at nice 10:
// about 0.11): a job ends once its work is done at the rate the host's load leaves it, and
// what it does (a reply part leaving, a push's part applied and, with its last part, taking
// effect) happens at its end. A worker's iteration still takes its drawn compute time (a
// paced worker sleeps what its gradient left): its gradient only loads the host, from the
// start of its computation. A transfer may cost CPU too (transfer_cpu_per_mb). 0 (the
// default): every node has a CPU of its own, and the costs are plain durations
// (docs/simulator.md, "A shared host").
struct HostOptions {
  double cores = 0.0;       // >= 0 and finite
  double background = 0.0;  // >= 0 and finite
  // Needs cores > 0 (as transfer_cpu_per_mb). >= 0 and finite.
  absl::Duration gradient_cpu = absl::ZeroDuration();
  // The CPU a message's transfer takes per megabyte (1e6 bytes) of its payload: the
  // kernel's work on the lab's links between network namespaces. A job on the host from
  // when the message leaves, beside its crossing of the links: it has arrived once both are
  // done. Needs network.serialize_links. >= 0 and finite.
  absl::Duration transfer_cpu_per_mb = absl::ZeroDuration();
  // The share of that CPU that runs once the message has crossed its links, after the
  // rest, adding to the message's time (on the lab's loaded host all of it does: its
  // iteration through a shaped link is its unshaped one plus the link's time). 0: all of it
  // beside the crossing; 1: all of it after. In [0, 1].
  double transfer_cpu_after_link = 0.0;
  // Each job runs alone on a core until it is done, the others waiting for one in the order
  // they came (sim/host.h), as Linux's scheduler treats jobs shorter than its time slice;
  // false: the jobs share the cores evenly (processor sharing).
  bool run_to_completion = false;
};

// Worker `worker` stops at virtual time `at` (since the start).
struct WorkerFailure {
  int worker = 0;
  absl::Duration at = absl::ZeroDuration();
};

// The model's state at one virtual time: every event up to and including that time.
struct SimSample {
  absl::Duration time;       // since the start
  uint64_t version = 0;      // updates applied so far
  int64_t iterations = 0;    // sum of the workers' clocks at the server
  double loss = 0.0;
  double accuracy = 0.0;     // classification models only
};

struct SimOptions {
  // The policy spec string (docs/policies.md), parsed with policy::ParsePolicySpec.
  std::string policy = "bsp";
  // Number of virtual workers, >= 1.
  int num_workers = 4;
  // The model to train. Null: MakeQuadraticModel with default options and `seed`.
  std::shared_ptr<const Model> model;
  // SGD on the server: w -= learning_rate * scale * g (scale from the policy). > 0.
  float learning_rate = 0.1f;
  // Examples per gradient, drawn with replacement (SampleBatch). >= 1.
  int batch_size = 16;
  // Iterations each worker runs before it finishes, >= 0; iterations_per_worker, when not
  // empty, overrides it per worker (size num_workers).
  int64_t iterations = 100;
  std::vector<int64_t> iterations_per_worker;
  // The run stops at this virtual time even if workers have iterations left.
  absl::Duration max_time = absl::InfiniteDuration();

  ComputeOptions compute;
  NetworkOptions network;
  ServerCostOptions server_cost;
  WorkerCostOptions worker_cost;
  HostOptions host;
  std::vector<WorkerFailure> failures;  // at most one per worker
  // How long after a failure the server is told (a heartbeat timeout). >= 0.
  absl::Duration detection_delay = absl::Seconds(1);

  // Loss (and accuracy) are evaluated every sample_interval of virtual time (and at the
  // start and the end). Each sample costs one full evaluation of the model. > 0.
  absl::Duration sample_interval = absl::Seconds(1);
  // > 0: what a sample evaluates is not the server's parameters but the mean of every read
  // worker 0 was served in the last average_window (tail averaging, as the lab's evaluator
  // does with rank 0's reads, docs/lab.md): each sample takes the reads since the previous
  // one, and the reads of samples older than the window drop out. A sample with no read in
  // the window evaluates the server's parameters. >= 0 and finite; 0: no averaging.
  absl::Duration average_window = absl::ZeroDuration();
  // Seeds the compute-time draws, the mini-batches and a default model.
  uint64_t seed = 1;
  // Worker w's mini-batch for its iteration k (the iteration that starts with the read at
  // clock k): example indices in [0, model's num_examples()), not empty. Called in
  // increasing k per worker, once per iteration, from the simulating thread; what it returns
  // is used before the next call. Empty: SampleBatch(seed, w, k, batch_size, ...), uniform
  // with replacement. A replay of a real run gives it the run's own order
  // (kairos_policy_sim --example-streams).
  std::function<std::span<const int>(int worker, int64_t iteration)> batches;
  // The parameters the run starts from, the model's size; empty: the model's
  // InitialParams().
  Eigen::VectorXf initial_params;
  // > 0: the run stops at the first sample (at most sample_interval after the fact) whose
  // accuracy reaches this, for a classifier (a time-to-target run needs nothing after it).
  // In [0, 1]; 0: never.
  double stop_at_accuracy = 0.0;
  // Called with each sample as it is taken during the run; true stops the run at that
  // sample, as stop_at_accuracy does (e.g. once a smoothed crossing of the target is known,
  // kairos_policy_sim --smoothed-target). Empty: never.
  std::function<bool(const SimSample&)> stop_after;
  // Pushes kept per worker in the result's WorkerMetrics::push_log (0: none), as
  // ServerOptions::push_log_size does on a real server.
  int push_log_size = 0;
  // > 0: each worker keeps a copy of the parameters its latest read from the server
  // brought, with that read's clock and the smallest clock of an active worker when the
  // server served it, and a read at clock c that policy::CacheBound{cache_clocks, the gate's
  // policy::GateStaleness}.Serves is answered by the copy instead of the server, as
  // TableSpec::cache_clocks does on a real worker (docs/performance.md, "The read cache").
  // The worker's own pushes go into its copy (copy -= learning_rate * g) under constant
  // weighting and immediate aggregation, where the server applies them as exactly that.
  // Must be 0 under pull=eager, whose reads ride on the pushes and are never cached.
  uint32_t cache_clocks = 0;
  // Record every read a worker computed on, cached or not, in SimWorkerResult::reads (for
  // tests: memory grows with the iterations times the workers squared).
  bool read_log = false;
};

// One read a worker computed its gradient on (SimOptions::read_log; on-demand pulls only:
// none under pull=eager).
struct SimRead {
  policy::Tick clock = 0;  // the read's clock: the iteration it starts
  bool cached = false;     // answered by the worker's copy (SimOptions::cache_clocks)
  // The server's read whose parameters it computed on (this one when not cached): its clock
  // and the smallest clock of an active worker when the server served it.
  policy::Tick read_clock = 0;
  policy::Tick min_clock = 0;
  // Per worker v: how many of v's pushes the server had taken when it served those
  // parameters. A worker's pushes reach the server in clock order, so these are v's pushes
  // of the clocks below pushes[v]; under immediate aggregation each was applied then (or
  // dropped by a straggler policy). A cached read lacks the other workers' pushes since.
  std::vector<int64_t> pushes;
};

struct SimWorkerResult {
  // What the server saw of this worker: pushes, pulls, reads that waited, time blocked in
  // the gate (served, dropped or still waiting at the end), largest read lead, version
  // staleness of each push, and under VSGD weighting value staleness and scale of each push.
  WorkerMetrics metrics;
  int64_t iterations = 0;           // clock the server last took from it
  policy::MemberState state = policy::MemberState::kActive;  // at the end
  absl::Duration compute_time;      // time spent computing the gradients it pushed
  // Its time in pulls as a real worker measures it (the lab's "blocked" share, docs/lab.md):
  // per read, the request's latency, the gate's wait, the server's queue and read cost and
  // the reply's transfer; under eager pull, each step's wait for the previous reply after
  // its gradient was done.
  absl::Duration pull_time;
  // With WorkerCostOptions::push_waits, its time waiting for pushes to be acknowledged (the
  // push's transfer, the server's queue and apply, the acknowledgement's latency); else 0.
  absl::Duration push_time;
  uint64_t dropped_pushes = 0;      // pushes the straggler policy dropped
  // Reads its copy answered (SimOptions::cache_clocks): sent to nobody, so not in
  // metrics.pulls, and no pull_time.
  int64_t reads_cached = 0;
  std::vector<SimRead> reads;  // SimOptions::read_log: its reads in clock order
};

struct SimResult {
  std::string policy;       // canonical spec (policy::ToString)
  std::string model;        // Model::name()
  bool has_accuracy = false;
  double optimal_loss = 0.0;  // Model::optimal_loss()
  absl::Duration end_time;  // time of the last event (or max_time)
  bool time_limited = false;  // stopped by max_time with work left
  bool stopped_at_target = false;  // stopped by stop_at_accuracy (at end_time, a sample)
  uint64_t events = 0;      // events processed
  uint64_t version = 0;     // updates applied
  // Pushes whose gradient held NaN or Inf: refused (never applied), as a real server does
  // by default. Any is a sign that the run diverged.
  uint64_t nonfinite_pushes = 0;
  std::vector<SimSample> samples;  // increasing time, first at 0, last at end_time
  std::vector<SimWorkerResult> workers;
  Histogram staleness;      // every worker's pushes together
  int64_t max_read_lead = 0;  // over all workers: bounded by s under SSP(s)
  absl::Duration total_blocked_time;
  Eigen::VectorXf final_params;

  int64_t total_iterations() const;
};

// OK iff every field of `options` is in its documented range (the policy spec is checked
// by Simulate, which parses it; here it only refuses cache_clocks under pull=eager).
// InvalidArgument names the first field that is not.
absl::Status ValidateSimOptions(const SimOptions& options);

// The pace model (kairos/pace.h) of `options`' compute model and seed: the compute times
// the simulator draws when no measured profile is given.
PaceOptions PaceOptionsOf(const SimOptions& options);

// Runs one simulation. InvalidArgument for bad options (the message names the field) or a
// spec that does not parse; FailedPrecondition if the run
// stalls: reads wait and no event is left that could admit them (the message says who
// waits for whom).
absl::StatusOr<SimResult> Simulate(const SimOptions& options);

}  // namespace kairos::sim

#endif  // KAIROS_SIM_SIMULATOR_H_
