// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos::Worker: the training program's client. It pushes gradients to and pulls
// parameters from the server shards that own them, and marks the end of each iteration
// (Clock) so that the job's synchronization policy can gate the reads.
//
//   auto worker = kairos::Worker::Create(options);   // joins the job
//   for (int it = 0; it < n; ++it) {
//     KAIROS_RETURN_IF_ERROR((*worker)->Pull("w", params));
//     ComputeGradient(params, grad);
//     KAIROS_RETURN_IF_ERROR((*worker)->Push("w", grad));
//     KAIROS_RETURN_IF_ERROR((*worker)->Clock());
//   }
//   (*worker)->Finish();
//
// Semantics: a worker's requests to one shard are handled in order, so a Pull sees the
// worker's own earlier Pushes (read-my-writes). A Pull issued at clock c is served when the
// policy's gate admits clock c on every shard it reads from (BSP: when every live worker has
// finished clock c - 1). Pushes are never gated.
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

class KAIROS_EXPORT Worker {
 public:
  // Joins the job through options.coordinator and waits (up to options.join_timeout) until
  // the job starts. Errors: InvalidArgument for a configuration the job refuses (the
  // message names the field), DeadlineExceeded when the job does not start in time,
  // Unavailable when the coordinator cannot be reached.
  static absl::StatusOr<std::unique_ptr<Worker>> Create(const WorkerOptions& options);

  virtual ~Worker() = default;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  virtual int rank() const = 0;
  virtual int num_workers() const = 0;
  virtual int num_servers() const = 0;
  // The job's configuration, as agreed with the coordinator.
  virtual const JobConfig& job() const = 0;
  // The current clock: the number of completed Clock() calls. A worker that joined a
  // running job again with its rank (a restart; docs/design.md, "Failures") starts from the
  // clock the job counts it from (docs/policies.md, "Membership"), not 0: continue the
  // training loop from it, after a Pull of the current parameters.
  virtual int64_t clock() const = 0;
  // The table named `name`, or NotFound.
  virtual absl::StatusOr<TableInfo> table(std::string_view name) const = 0;

  // Sends `gradient` for the whole table (gradient.size() == the table's size) and waits
  // until every shard has accepted it.
  virtual absl::Status Push(std::string_view table, std::span<const float> gradient,
                            const CallOptions& options = {}) = 0;
  // Sends the gradient of elements [offset, offset + gradient.size()).
  virtual absl::Status PushRange(std::string_view table, uint64_t offset,
                                 std::span<const float> gradient,
                                 const CallOptions& options = {}) = 0;
  // Fills `out` with the whole table (out.size() == the table's size), as the gate allows.
  virtual absl::Status Pull(std::string_view table, std::span<float> out,
                            const CallOptions& options = {}) = 0;
  // Fills `out` with elements [offset, offset + out.size()).
  virtual absl::Status PullRange(std::string_view table, uint64_t offset,
                                 std::span<float> out, const CallOptions& options = {}) = 0;

  // Asynchronous forms: errors (including bad arguments) are reported by Request::Wait.
  // The span forms copy the gradient when they are called.
  virtual Request PushAsync(std::string_view table, uint64_t offset,
                            std::span<const float> gradient,
                            const CallOptions& options = {}) = 0;
  // Zero-copy push: the buffer's storage is handed to the transport and shared until the
  // shards have received it; the caller must not modify it until the request completes.
  virtual Request PushAsync(std::string_view table, uint64_t offset, Buffer gradient,
                            const CallOptions& options = {}) = 0;
  virtual Request PullAsync(std::string_view table, uint64_t offset, std::span<float> out,
                            const CallOptions& options = {}) = 0;
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
  virtual Request PullAsync(std::string_view table, uint64_t offset, uint64_t length,
                            ConstBuffer* out, const CallOptions& options = {}) = 0;

  // Eager pull (PS+): one request per chunk carries the push of `gradient` for
  // [offset, offset + gradient.size()) and asks for that range as it is once the push is
  // applied and the gate admits this worker's next clock; `out` receives it and `reply`
  // what the shards said. Ends the iteration like Clock(). `scale` (> 0) multiplies this
  // worker's update on the servers (eager pull's learning-rate modulation). The caller
  // must not touch `out` or `reply` until the request completes.
  virtual Request PushPullAsync(std::string_view table, uint64_t offset, Buffer gradient,
                                std::span<float> out, PushPullReply* reply, float scale = 1.0f,
                                const CallOptions& options = {}) = 0;
  // The eager step of a model whose parameters span several tables: one push+pull per part,
  // as above, all at the current clock, then the iteration ends once (a step is one
  // iteration however many tables it touches; one PushPullAsync per table would end one per
  // table). `reply` merges what the shards of every part said. Returns one Request per part,
  // in order. Every part is checked before anything is sent: a refused step sends nothing,
  // does not end the iteration, and every Request fails with the error. The caller must not
  // touch the parts' `out` or `reply` until every Request completed.
  virtual std::vector<Request> PushPullAsync(std::span<PushPullPart> parts, PushPullReply* reply,
                                             float scale = 1.0f,
                                             const CallOptions& options = {}) = 0;

  // Sets elements [offset, offset + values.size()) of the table on the servers to `values`
  // (e.g. pretrained weights) and waits until every shard has them. Not a gradient: no
  // gate, aggregation, weighting or updater is involved; each chunk's values are replaced
  // in order with the updates around it, the updater state of the range (optimizer
  // moments) becomes zero, and it counts as one update of each chunk it touches. A value
  // that is NaN or infinite is InvalidArgument here, before anything is sent. To give
  // every worker the assigned values, pair it with a barrier:
  //
  //   if (worker.rank() == 0) KAIROS_RETURN_IF_ERROR(worker.Assign("w", 0, pretrained));
  //   KAIROS_RETURN_IF_ERROR(worker.Barrier());
  //   KAIROS_RETURN_IF_ERROR(worker.Pull("w", params));
  //
  // Under BSP a round's pushes still pending on a shard are applied on top of the assigned
  // values when the round completes (docs/design.md, "Assign and the learning rate").
  virtual absl::Status Assign(std::string_view table, uint64_t offset,
                              std::span<const float> values, const CallOptions& options = {}) = 0;
  // Asynchronous forms (errors, including bad arguments, are reported by Request::Wait).
  // The span form copies the values when called; the Buffer form shares them with the
  // transport until the request completes (the caller must not modify them until then).
  virtual Request AssignAsync(std::string_view table, uint64_t offset,
                              std::span<const float> values, const CallOptions& options = {}) = 0;
  virtual Request AssignAsync(std::string_view table, uint64_t offset, Buffer values,
                              const CallOptions& options = {}) = 0;

  // Sets the table's base learning rate on every server that owns part of it, for the
  // updates each applies from then on (in order with the updates around the change), and
  // waits until every such server acknowledged. `learning_rate` must be finite and >= 0
  // (else InvalidArgument, nothing sent). Any worker may call it; when several do, the
  // last change a server receives wins there. table(name).learning_rate keeps the job's
  // configured value. Affects the built-in updaters; an updater of the program's own
  // factory keeps its own rate.
  virtual absl::Status SetLearningRate(std::string_view table, float learning_rate,
                                       const CallOptions& options = {}) = 0;

  // Sparse tables (TableSpec::Sparse; docs/sparse.md). Rows are addressed by uint64_t
  // keys; `gradients` and `out` are keys.size() x row_width floats, row-major (row i
  // belongs to keys[i]). A push sums the rows of a repeated key before sending (one update
  // of that row); a pull fetches a repeated key once and fills every row of it. The keys
  // are sent in one message per shard that owns any of them, both ways. A push waits until
  // every shard applied (or, under BSP, summed) its rows; a pull is gated like Pull (the
  // worker's clock). Errors (nothing sent): NotFound for an unknown table,
  // InvalidArgument for a dense table, a size that is not keys.size() x row_width, more
  // than kMaxSparseKeys keys or more than kMaxChunkElements values (job.h). No keys: OK at
  // once. A row never pushed reads as its initial values (TableSpec::init of its key).
  virtual absl::Status PushSparse(std::string_view table, std::span<const uint64_t> keys,
                                  std::span<const float> gradients,
                                  const CallOptions& options = {}) = 0;
  virtual absl::Status PullSparse(std::string_view table, std::span<const uint64_t> keys,
                                  std::span<float> out, const CallOptions& options = {}) = 0;
  // Asynchronous forms: errors are reported by Request::Wait. The keys and gradients are
  // copied when called; `out` is written by Wait and must stay valid until then.
  virtual Request PushSparseAsync(std::string_view table, std::span<const uint64_t> keys,
                                  std::span<const float> gradients,
                                  const CallOptions& options = {}) = 0;
  virtual Request PullSparseAsync(std::string_view table, std::span<const uint64_t> keys,
                                  std::span<float> out, const CallOptions& options = {}) = 0;

  // Ends the current iteration: the clock advances and every shard learns it.
  virtual absl::Status Clock() = 0;
  // Waits until every live worker reaches the barrier (or the deadline passes).
  virtual absl::Status Barrier(const CallOptions& options = {}) = 0;
  // Declares that this worker has no more data: it leaves every gate, so the others never
  // wait for it. Further pushes and pulls are refused. Called by the destructor if needed.
  virtual absl::Status Finish(const CallOptions& options = {}) = 0;

 protected:
  Worker() = default;
};

}  // namespace kairos

#endif  // KAIROS_WORKER_H_
