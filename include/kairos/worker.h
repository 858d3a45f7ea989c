// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos::Worker: the training program's client. It pushes gradients to and pulls
// parameters from the server shards that own them, and advances its clock at the end of
// each iteration (AdvanceClock) so that the job's synchronization policy can gate the reads.
//
//   auto worker = kairos::Worker::Create(options);   // joins the job
//   for (int it = 0; it < n; ++it) {
//     KAIROS_RETURN_IF_ERROR((*worker)->Pull("w", params));
//     ComputeGradient(params, grad);
//     KAIROS_RETURN_IF_ERROR((*worker)->Push("w", grad));
//     KAIROS_RETURN_IF_ERROR((*worker)->AdvanceClock());
//   }
//   KAIROS_RETURN_IF_ERROR((*worker)->Shutdown());
//
// Semantics: a worker's requests to one shard are handled in order, so a Pull sees the
// worker's own earlier Pushes (read-my-writes; a Pull that a table's read cache answers,
// TableSpec::cache_clocks, holds them only where the cache writes them through). A Pull
// issued at clock c is served when the policy's gate admits clock c on every shard it reads
// from (BSP: when every live worker has finished clock c - 1). Pushes are never gated.
//
// Thread-safety: a Worker is safe for concurrent use from several threads; calls from one
// thread are issued in order. Memory passed to a call must stay valid (and, for a push,
// unchanged) until the call returns or its Request completes.

#ifndef KAIROS_WORKER_H_
#define KAIROS_WORKER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kairos/buffer.h"
#include "kairos/export.h"
#include "kairos/options.h"

namespace kairos {

namespace internal {
class RequestState;
class WorkerAccess;
}  // namespace internal

// The handle of an asynchronous push or pull. Copyable (copies share the request).
// A default-constructed Request is complete with an OK status.
class KAIROS_EXPORT Request {
 public:
  Request() = default;
  explicit Request(std::shared_ptr<internal::RequestState> state);

  // Waits until the request completes or its deadline (set when it was issued) passes,
  // and returns its status: DeadlineExceeded names the shards that have not answered.
  absl::Status Wait() const;
  // As Wait(), but gives up after `timeout` with DeadlineExceeded (the request goes on).
  absl::Status WaitFor(absl::Duration timeout) const;
  // True once the request has completed (successfully or not). The values of a pull are
  // copied into the caller's memory by Wait (on the waiting thread), so read them only
  // after Wait returned OK.
  bool done() const;

 private:
  std::shared_ptr<internal::RequestState> state_;
};

// Waits for every request in `requests` (all of them, also after one failed) and returns
// the first error in their order, or OK: the end of a batch of calls issued together.
inline absl::Status WaitAll(std::span<const Request> requests) {
  absl::Status first;
  for (const Request& r : requests) first.Update(r.Wait());  // keeps the first error
  return first;
}

// What a worker knows about one table.
struct TableInfo {
  uint32_t id = 0;
  std::string name;
  uint64_t size = 0;
  // The table's server-side learning rate as the job configured it (TableSpec). It stays
  // that value when a worker changes the servers' rate (SetLearningRate).
  float learning_rate = 0.0f;
  // A sparse table (docs/sparse.md): rows of row_width floats by uint64_t key; size is 0.
  bool sparse = false;
  uint32_t row_width = 0;
  // How its pushes and pulls travel (TableSpec::compression).
  Compression compression = Compression::kNone;
  // Pushes waiting to be sent are summed into one message (TableSpec::merge_pushes).
  bool merge_pushes = false;
  // Pulls are served from the worker's last copy within this many clocks
  // (TableSpec::cache_clocks; 0: never), of at most cache_rows rows of a sparse table.
  uint32_t cache_clocks = 0;
  uint64_t cache_rows = 0;
};

// What a worker has sent and received so far (Worker::stats()), to the servers and the
// coordinator together. Bytes are wire bytes: each message's header and payloads as they
// crossed the socket (encoded where the table compresses), without ZeroMQ's or TCP's
// framing; zeros under a transport of the program's own that does not count them.
struct WorkerStats {
  uint64_t messages_sent = 0;
  uint64_t bytes_sent = 0;
  uint64_t messages_received = 0;
  uint64_t bytes_received = 0;
  // Pushes summed into another push's message instead of being sent
  // (TableSpec::merge_pushes).
  uint64_t pushes_merged = 0;
  // Pull messages served from the worker's read cache instead of being sent
  // (TableSpec::cache_clocks), and rows of sparse pulls served from it (a message that
  // fetches the other rows of its keys is sent and not counted in reads_cached).
  uint64_t reads_cached = 0;
  uint64_t rows_cached = 0;
};

// What the shards said about an eager push+pull (PushPullAsync); filled by the time its
// Request completes.
struct PushPullReply {
  std::vector<int64_t> clocks;  // every worker's clock, the latest any shard reported
  bool dropped = false;         // a shard dropped the push as too stale (SaPS)
  bool refresh = false;         // a shard asks for fresh parameters before the next step
};

// One table's part of an eager step over several tables (Worker::PushPullAsync of parts):
// the push of `gradient` for [offset, offset + gradient.size()) of `table`, and `out`
// (out.size() == gradient.size()) to receive that range once the push is applied.
struct PushPullPart {
  std::string table;
  uint64_t offset = 0;
  Buffer gradient;
  std::span<float> out;
};

// Options of an eager push+pull (Worker::PushPullAsync): the call's deadline, and `scale`
// (> 0), which multiplies this worker's update on the servers (eager pull's learning-rate
// modulation; docs/policies.md, "Eager pull").
struct PushPullOptions : CallOptions {
  float scale = 1.0f;
};

class KAIROS_EXPORT Worker final {
 public:
  // Joins the job through options.coordinator and waits (up to options.join_timeout) until
  // the job starts. Errors: InvalidArgument for a configuration the job refuses (the
  // message names the field), DeadlineExceeded when the job does not start in time,
  // Unavailable when the coordinator cannot be reached.
  static absl::StatusOr<std::unique_ptr<Worker>> Create(const WorkerOptions& options);

  // Shuts the worker down (Shutdown, with WorkerOptions::destructor_shutdown_timeout) if the
  // program did not.
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  int rank() const;
  int num_workers() const;
  int num_servers() const;
  // The job's configuration, as agreed with the coordinator.
  const JobConfig& job() const;
  // The worker's clock: the number of completed iterations (AdvanceClock calls; docs/
  // policies.md). A worker that joined a running job again with its rank (a restart;
  // docs/design.md, "Failures") starts from the clock the job counts it from
  // (docs/policies.md, "Membership"), not 0: continue the training loop from it, after a
  // Pull of the current parameters.
  int64_t clock() const;
  // The table named `name`, or NotFound.
  absl::StatusOr<TableInfo> table(std::string_view name) const;
  // What this worker has sent and received so far (WorkerStats). Thread-safe.
  WorkerStats stats() const;

  // Dense tables. Every verb has a whole-table form (the span's size must be the table's
  // size, else InvalidArgument) and a range form (elements [offset, offset + size)), each
  // blocking and asynchronous. A blocking call returns once done; an asynchronous one
  // returns a Request at once and reports every error, bad arguments included, through
  // Request::Wait.
  //
  // Push sends a gradient and completes when every shard accepted it. The span forms of
  // PushAsync copy the gradient when called.
  absl::Status Push(std::string_view table, std::span<const float> gradient,
                    const CallOptions& options = {});
  absl::Status Push(std::string_view table, uint64_t offset, std::span<const float> gradient,
                    const CallOptions& options = {});
  Request PushAsync(std::string_view table, std::span<const float> gradient,
                    const CallOptions& options = {});
  Request PushAsync(std::string_view table, uint64_t offset, std::span<const float> gradient,
                    const CallOptions& options = {});
  // Zero-copy push: the buffer's storage is handed to the transport and shared until the
  // shards have received it; the caller must not modify it until the request completes.
  Request PushAsync(std::string_view table, uint64_t offset, Buffer gradient,
                    const CallOptions& options = {});

  // Pull fills `out` as the gate allows (docs/policies.md). `out` must stay valid until
  // the call returns or its Request completes.
  absl::Status Pull(std::string_view table, std::span<float> out, const CallOptions& options = {});
  absl::Status Pull(std::string_view table, uint64_t offset, std::span<float> out,
                    const CallOptions& options = {});
  Request PullAsync(std::string_view table, std::span<float> out, const CallOptions& options = {});
  Request PullAsync(std::string_view table, uint64_t offset, std::span<float> out,
                    const CallOptions& options = {});
  // Zero-copy pull: once Request::Wait returned OK, *out holds elements
  // [offset, offset + length), read-only. When the range lies within one chunk
  // (JobConfig::chunk_elements) *out is the received message itself, not a copy: in one
  // process (inproc) it may be the server's own copy of the parameters, which the server
  // never modifies while it is shared; hence a ConstBuffer, through which the values cannot
  // be written. A range over several chunks is joined by Wait: into *out's storage itself
  // when it already holds `length` values of memory from Buffer::Allocate/Zeros/CopyOf that
  // no other Buffer shares (`ConstBuffer out = Buffer::Allocate(n);`), else into a new
  // buffer. To modify the values, copy them: Buffer::CopyOf(out->span()). The caller must
  // not touch *out until Wait returned OK.
  Request PullAsync(std::string_view table, uint64_t offset, uint64_t length, ConstBuffer* out,
                    const CallOptions& options = {});

  // Assign sets elements of the table on the servers to `values` (e.g. pretrained weights)
  // and completes when every shard has them. Not a gradient: no gate, aggregation,
  // weighting or updater is involved; each chunk's values are replaced in order with the
  // updates around it, the updater state of the range (optimizer moments) becomes zero,
  // and it counts as one update of each chunk it touches. A value that is NaN or infinite
  // is InvalidArgument, before anything is sent. The span forms copy the values when
  // called; the Buffer form shares them with the transport until the request completes.
  // To give every worker the assigned values, pair it with a barrier:
  //
  //   if (worker.rank() == 0) KAIROS_RETURN_IF_ERROR(worker.Assign("w", pretrained));
  //   KAIROS_RETURN_IF_ERROR(worker.Barrier());
  //   KAIROS_RETURN_IF_ERROR(worker.Pull("w", params));
  //
  // Under BSP a round's pushes still pending on a shard are applied on top of the assigned
  // values when the round completes (docs/design.md, "Assign and the learning rate").
  absl::Status Assign(std::string_view table, std::span<const float> values,
                      const CallOptions& options = {});
  absl::Status Assign(std::string_view table, uint64_t offset, std::span<const float> values,
                      const CallOptions& options = {});
  Request AssignAsync(std::string_view table, std::span<const float> values,
                      const CallOptions& options = {});
  Request AssignAsync(std::string_view table, uint64_t offset, std::span<const float> values,
                      const CallOptions& options = {});
  Request AssignAsync(std::string_view table, uint64_t offset, Buffer values,
                      const CallOptions& options = {});

  // Eager pull (PS+; docs/policies.md, "Eager pull"): one request per chunk carries the
  // push of part.gradient for [part.offset, part.offset + part.gradient.size()) and asks
  // for that range as it is once the push is applied and the gate admits this worker's
  // next clock; part.out receives it and `reply` what the shards said. Ends the iteration
  // like AdvanceClock. The caller must not touch part.out or `reply` until the request
  // completes.
  Request PushPullAsync(PushPullPart part, PushPullReply* reply,
                        const PushPullOptions& options = {});
  // The eager step of a model whose parameters span several tables: one push+pull per part,
  // as above, all at the current clock, then the iteration ends once (a step is one
  // iteration however many tables it touches). `reply` merges what the shards of every part
  // said. Returns one Request per part, in order. Every part is checked before anything is
  // sent: a refused step sends nothing, does not end the iteration, and every Request fails
  // with the error. The caller must not touch the parts' `out` or `reply` until every
  // Request completed.
  std::vector<Request> PushPullAsync(std::span<PushPullPart> parts, PushPullReply* reply,
                                     const PushPullOptions& options = {});

  // Sets the table's base learning rate on every server that owns part of it, for the
  // updates each applies from then on (in order with the updates around the change), and
  // waits until every such server acknowledged. `learning_rate` must be finite and >= 0
  // (else InvalidArgument, nothing sent). Any worker may call it; when several do, the
  // last change a server receives wins there. table(name).learning_rate keeps the job's
  // configured value. Affects the built-in updaters; an updater of the program's own
  // factory keeps its own rate.
  absl::Status SetLearningRate(std::string_view table, float learning_rate,
                               const CallOptions& options = {});

  // Sparse tables (TableSpec::Sparse; docs/sparse.md). Rows are addressed by uint64_t
  // keys; `gradients` and `out` are keys.size() x row_width floats, row-major (row i
  // belongs to keys[i]). A push sums the rows of a repeated key before sending (one update
  // of that row); a pull fetches a repeated key once and fills every row of it. The keys
  // are sent in one message per shard that owns any of them, both ways. A push completes
  // when every shard applied (or, under BSP, summed) its rows; a pull is gated like Pull
  // (the worker's clock). Errors (nothing sent): NotFound for an unknown table,
  // InvalidArgument for a dense table, a size that is not keys.size() x row_width, more
  // than kMaxSparseKeys keys or more than kMaxChunkElements values (job.h). No keys: OK at
  // once. A row never pushed reads as its initial values (TableSpec::init of its key). The
  // asynchronous forms copy the keys and gradients when called; `out` is written by Wait.
  absl::Status PushSparse(std::string_view table, std::span<const uint64_t> keys,
                          std::span<const float> gradients, const CallOptions& options = {});
  absl::Status PullSparse(std::string_view table, std::span<const uint64_t> keys,
                          std::span<float> out, const CallOptions& options = {});
  Request PushSparseAsync(std::string_view table, std::span<const uint64_t> keys,
                          std::span<const float> gradients, const CallOptions& options = {});
  Request PullSparseAsync(std::string_view table, std::span<const uint64_t> keys,
                          std::span<float> out, const CallOptions& options = {});

  // Ends the current iteration: the worker's clock advances by one and every shard learns
  // it (docs/policies.md: the gates count these clocks).
  absl::Status AdvanceClock();
  // Waits until every live worker reaches the barrier (or the deadline passes).
  absl::Status Barrier(const CallOptions& options = {});
  // Ends this worker's part in the job: it has no more data, leaves every gate (so the
  // others never wait for it) and tells every server (in order after its last push) and
  // the coordinator. Further requests are refused with FailedPrecondition; a second call
  // returns OK at once. The destructor calls it if the program did not.
  absl::Status Shutdown(const CallOptions& options = {});

 private:
  class Impl;
  friend class internal::WorkerAccess;
  explicit Worker(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

}  // namespace kairos

#endif  // KAIROS_WORKER_H_
