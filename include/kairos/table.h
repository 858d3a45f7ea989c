// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Declarations of the tables a job shares: a dense table is a named float32 vector with an
// initialiser and a server-side updater. Tables are part of the job configuration that the
// coordinator checks at every join.

#ifndef KAIROS_TABLE_H_
#define KAIROS_TABLE_H_

#include <cctype>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kairos {

// How a table's elements are set when the servers create it. Element i's value depends only
// on (kind, parameters, seed, i), never on the number of servers, so every partitioning of a
// table starts from the same values.
struct Initializer {
  enum class Kind { kZeros, kConstant, kUniform, kNormal };
  Kind kind = Kind::kZeros;
  float a = 0.0f;      // kConstant: the value; kUniform: low; kNormal: mean
  float b = 0.0f;      // kUniform: high; kNormal: standard deviation
  uint64_t seed = 0;   // kUniform, kNormal

  static Initializer Zeros() { return {}; }
  static Initializer Constant(float v) { return {Kind::kConstant, v, 0.0f, 0}; }
  static Initializer Uniform(float lo, float hi, uint64_t seed) {
    return {Kind::kUniform, lo, hi, seed};
  }
  static Initializer Normal(float mean, float stddev, uint64_t seed) {
    return {Kind::kNormal, mean, stddev, seed};
  }
  friend bool operator==(const Initializer&, const Initializer&) = default;
};

// The server-side optimizer of a table and its learning rate (docs/optimizers.md).
//
// `name` is an optimizer spec, "name[:key=value,...]". Built in, with PyTorch's
// torch.optim update rules and defaults: "sgd", "momentum" (mu=0.9), "nesterov" (mu=0.9),
// "adagrad" (eps=1e-10, lr_decay=0), "adam" and "adamw" (beta1=0.9, beta2=0.999,
// eps=1e-8; adamw's decoupled wd=0.01), each with "wd" (L2 weight decay; 0), "add"
// (w += g: pushes are ready-made deltas; the learning rate is ignored) and "ftrl"
// (FTRL-Proximal, l1=0, l2=0, beta=1: the click-model standard, for sparse tables). E.g.
// "adam:beta1=0.8,eps=1e-7", "momentum:mu=0.95,wd=1e-4". The servers build the updater:
// an embedded server may register more names through ServerOptions::updater_factory, and
// kairos-server loads plugins (--updater-plugin); a name no server knows fails the job's
// start with the server's error.
//
// The policy's factors enter every optimizer the same way: a round's 1 / divisor (BSP,
// n-softsync) multiplies the gradient, the policy's weighting (SA-ASGD, VSGD, SaPS, a
// worker's eager-pull scale) the update's learning rate.
//
// `schedule` multiplies `learning_rate` by a factor of t, the pushing worker's clock (a
// round's sum: the round): "constant" (the default; "" means it too),
// "step:every=N,gamma=G" (gamma^floor(t/N); gamma 0.1), "cosine:steps=T,min=F" (from 1 to
// F over T, then F; min 0), "invsqrt:warmup=W" (sqrt(W / max(t, W))), each with
// "warmup=N" (times t / N for t < N).
struct UpdaterSpec {
  std::string name = "sgd";
  float learning_rate = 0.01f;
  std::string schedule = "constant";
  friend bool operator==(const UpdaterSpec&, const UpdaterSpec&) = default;
};

// What a server does with a push whose gradient holds a NaN or an infinity. Such a value is
// never applied silently: one bad worker would otherwise poison every parameter it touches.
enum class NonFinitePolicy {
  // The push is refused: nothing of it is applied, the worker's call fails with
  // InvalidArgument naming the table and the first bad element. The default.
  kRefuse,
  // The push is skipped: nothing of it is applied, the worker's call succeeds, and the server
  // counts it (ServerStats::refused.nonfinite_skipped, WorkerMetrics::nonfinite_skipped).
  kSkip,
};

// A dense table is a float32 vector addressed by element offset, cut into chunks spread
// over the servers. A sparse table (docs/sparse.md) is a set of rows of `row_width` floats
// addressed by uint64_t keys: a row exists on the server that owns its key (a fixed hash
// of the key, whatever the number of workers) from the first push that touches it, with
// the initial value of element c of row k a function of (init, k, c) alone; memory grows
// with the rows pushed, not with the key space.
enum class TableKind { kDense = 0, kSparse = 1 };

// Which new keys of a sparse table get a row (docs/sparse.md, "Admission and eviction").
// The defaults admit every key at its first push. A key without a row costs no row: its
// pushes are counted (SparseTableStats::pushes_unadmitted), not applied, and its pulls read
// its initial values (or zeros) without creating one.
struct RowAdmission {
  // A key gets a row at its min_count-th pushed row, counted in a counting filter of
  // `filter_slots` one-byte counters per table and shard (a few bytes per key, shared by
  // colliding keys, so a key may be admitted early, never late). 0 or 1: at the first push;
  // at most 255.
  uint32_t min_count = 0;
  // Each push of a key without a row creates it with this probability, in (0, 1]; the draws
  // are a fixed sequence per table and shard (reproducible). Applies after min_count.
  float probability = 1.0f;
  // Counters of min_count's filter, 1..2^30 (1 MiB by default; none when min_count <= 1).
  uint32_t filter_slots = uint32_t{1} << 20;
  // A pull of a key without a row reads its initial values (true) or zeros (false).
  bool read_initial = true;
  friend bool operator==(const RowAdmission&, const RowAdmission&) = default;
};

// Which rows of a sparse table a shard removes (docs/sparse.md, "Admission and eviction"). A
// removed row's values, optimizer state and update count go together; a later push of its
// key goes through admission again. Removal runs on the table's lane in order with its
// updates and reads, and the removed keys are reported (ServerOptions::on_evicted) and
// counted (SparseTableStats). The defaults remove nothing.
struct RowEviction {
  // Rows not updated while the slowest active worker advanced more than this many clocks
  // are removed at a sweep. 0: never.
  int64_t max_idle_clocks = 0;
  // Rows whose L2 norm is below this are removed at a sweep. 0: never.
  float min_norm = 0.0f;
  // A sweep (idle, norm) runs whenever the slowest active worker's clock has advanced by
  // this many clocks since the last one; >= 1.
  int64_t sweep_every = 1;
  // Bytes the table's rows may take on one shard (rows x SparseTableStats::bytes_per_row);
  // when a push takes them past it, rows are removed down to 90 % of it, the least recently
  // updated first (kLeastRecent), or the least often updated (kLeastFrequent). 0: no bound.
  uint64_t max_bytes = 0;
  enum class Order { kLeastRecent = 0, kLeastFrequent = 1 };
  Order order = Order::kLeastRecent;
  // Idleness by time instead of clocks: rows not updated for more than this many seconds
  // are removed at a sweep. The time is the one the server hands its shard with each
  // request (the update log keeps it, so a restarted server's replay removes the same rows;
  // virtual in the simulator); rows not updated since the shard's first sweep (restored
  // ones) count as updated then. At most one of max_idle_clocks and max_idle_seconds; the
  // one set also orders kLeastRecent. 0: never.
  double max_idle_seconds = 0.0;
  friend bool operator==(const RowEviction&, const RowEviction&) = default;
};

// Why rows were removed (RowEviction).
enum class EvictionReason { kIdle = 0, kNorm = 1, kBudget = 2 };

// Rows one shard removed at once, for ServerOptions::on_evicted. The views are valid during
// the call only.
struct EvictedRows {
  std::string_view table;
  int shard = 0;
  EvictionReason reason = EvictionReason::kIdle;
  std::span<const uint64_t> keys;
};

// How a table's values travel (docs/performance.md, "Compression"): pushes from the workers
// and the values of pulls, never assigns, checkpoints or the update log. kNone (the
// default) is exact float32. kFp16 (IEEE half, saturating at +-65504) and kBf16 (bfloat16)
// halve the bytes; kInt8 quarters them with a float scale per block of 256 values (the
// block's largest magnitude / 127). A dense table's pushes keep error feedback on the worker:
// what the rounding took from one push is added to the next push of the same elements, so
// the server's sum of the pushes stays within one rounding step of the true sum.
enum class Compression : uint8_t { kNone = 0, kFp16 = 1, kBf16 = 2, kInt8 = 3 };

// "none", "fp16", "bf16", "int8" (and "unknown" for a value that names none of them).
inline std::string_view CompressionName(Compression c) {
  switch (c) {
    case Compression::kNone:
      return "none";
    case Compression::kFp16:
      return "fp16";
    case Compression::kBf16:
      return "bf16";
    case Compression::kInt8:
      return "int8";
  }
  return "unknown";
}

// The inverse of CompressionName, in any case ("BF16"); InvalidArgument naming the choices
// for anything else.
inline absl::StatusOr<Compression> ParseCompression(std::string_view name) {
  std::string lower(name);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (Compression c :
       {Compression::kNone, Compression::kFp16, Compression::kBf16, Compression::kInt8}) {
    if (lower == CompressionName(c)) return c;
  }
  return absl::InvalidArgumentError("unknown compression '" + std::string(name) +
                                    "'; use none, fp16, bf16 or int8");
}

struct TableSpec {
  std::string name;       // unique within the job; 1..128 printable characters
  // Dense: number of float32 elements, 1..kMaxTableElements (job.h). Sparse: 0 (every
  // uint64_t key is a row).
  uint64_t size = 0;
  Initializer init;
  UpdaterSpec updater;
  NonFinitePolicy nonfinite = NonFinitePolicy::kRefuse;
  TableKind kind = TableKind::kDense;
  // Sparse: the floats of one row, 1..kMaxRowWidth (job.h). Dense: 0.
  uint32_t row_width = 0;
  // The table's own synchronization policy, a spec string like JobConfig::policy
  // (docs/policies.md, "A policy per table"): its gate, aggregation and weighting, e.g.
  // dense layers under "bsp" and an embedding under "ssp:s=8" in one job. "" (the default):
  // the job's. It may not name a pull schedule or a straggler policy: those act on whole
  // workers and are the job's.
  std::string policy{};
  // Sparse: which keys get a row, and which rows are removed. Dense: the defaults.
  RowAdmission admission{};
  RowEviction eviction{};
  // How its pushes and pulls travel (Compression above); kNone: exact float32.
  Compression compression = Compression::kNone;
  // Uncompressed: a worker sums pushes to the same range (a sparse table: to its keys on
  // one shard) that wait to be sent into one message (docs/performance.md, "Merged
  // pushes"). The servers apply the sum as one push: exactly the separate pushes' result
  // under "sgd" without momentum or weight decay and "add", one step on the summed gradient
  // under the other updaters.
  bool merge_pushes = false;
  // A worker serves a pull of this table from the values it pulled before, without a
  // message, while that copy is at most `cache_clocks` clocks older than the read and still
  // within the table's staleness bound (docs/performance.md, "The read cache"): per pull
  // message (a chunk's range) of a dense table, per row of a sparse one, which also needs
  // `cache_rows`. 0 (the default): every pull goes to the servers.
  uint32_t cache_clocks = 0;
  // Sparse, with cache_clocks: the most rows a worker keeps, the most frequently pulled
  // (docs/performance.md, "Hot rows"). 1..kMaxCacheRows; 0 with a dense table.
  uint64_t cache_rows = 0;
  // A worker holds this table's pushes back and sums them per range (dense) or key
  // (sparse), sending a push's sum at the latest when its clock is `write_back_clocks`
  // behind the worker's, before a pull of its range goes to the servers, and before an
  // assign of its table or the finish (docs/performance.md, "Write-back"). The push's request
  // completes as it is held; a held push the servers refuse ends the worker. 1 sums the
  // pushes of one clock; N > 1 also lags the clock the worker reports by up to N - 1, which
  // every table's gate must allow (N <= s + 1). Not under eager pull. 0 (the
  // default): every push is sent as it is issued.
  uint32_t write_back_clocks = 0;

  // A sparse table of rows of `row_width` floats.
  static TableSpec Sparse(std::string name, uint32_t row_width, Initializer init = {},
                          UpdaterSpec updater = {}) {
    TableSpec t;
    t.name = std::move(name);
    t.init = init;
    t.updater = std::move(updater);
    t.kind = TableKind::kSparse;
    t.row_width = row_width;
    return t;
  }
  bool sparse() const { return kind == TableKind::kSparse; }
  friend bool operator==(const TableSpec&, const TableSpec&) = default;
};

}  // namespace kairos

#endif  // KAIROS_TABLE_H_
