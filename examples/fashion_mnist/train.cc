// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The training loop of the Fashion-MNIST example (train.h).

#include "fashion_mnist/train.h"

#include <sys/prctl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "fashion_mnist/data.h"
#include "fashion_mnist/models.h"
#include "fashion_mnist/streams.h"
#include "kairos/eigen.h"
#include "kairos/kairos.h"

namespace fmnist {
namespace {

using SteadyClock = std::chrono::steady_clock;

// How long rank 0 waits in the barrier before it advances its clock again (the coordinator
// answers an expired wait at its next tick, so up to 0.1 s more), and how long it waits for the
// others in all.
constexpr absl::Duration kBarrierSlice = absl::Milliseconds(20);
constexpr absl::Duration kMaxWaitForOthers = absl::Minutes(30);
// Clocks rank 0 adds after each slice: a worker may be far ahead of it (DSSP without a bound
// lets a fast worker lead by hundreds of clocks) and wait for rank 0's clock to come within
// its gate's bound; one clock a slice (some 0.1 s) made such a worker wait tens of seconds
// after the target was reached.
constexpr int kClocksPerSlice = 64;

double SecondsBetween(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Pushes the stop flag right after a read of the control element, so that the push is fresh.
// A straggler policy (SaPS) drops a push whose worker last read the chunk too many versions
// before; rank 0's evaluation between its pull and the flag, or its waiting for the others
// (when it reads nothing), lets the others' pushes of 0 pile up, and a dropped flag would
// leave them training until their epochs run out. The read waits until `deadline` at most
// (in the barrier a gate may hold it); the flag goes either way.
absl::Status RaiseStopFlag(kairos::Worker &worker, std::optional<absl::Time> deadline) {
  float current = 0.0f;
  kairos::CallOptions options;
  options.deadline = deadline;
  absl::Status read = worker.Pull(kControlTable, std::span<float>(&current, 1), options);
  if (!read.ok() && !absl::IsDeadlineExceeded(read)) return read;
  const float flag = -1.0f;
  return worker.Push(kControlTable, std::span<const float>(&flag, 1));
}

// Where the eager schedule keeps the model (kairos::EagerSchedule over several tables): the
// layout's tables one after the other, then the control element.
struct FlatLayout {
  std::vector<std::string> tables;     // the layout's, then the control table
  std::vector<uint64_t> tensor_begin;  // per tensor of the layout: its first value
  uint64_t control = 0;                // the control element
  uint64_t size = 0;
};

FlatLayout Flatten(const kairos::ParameterLayout &layout) {
  FlatLayout f;
  std::vector<uint64_t> table_begin;
  for (const std::string &table : layout.tables()) {
    f.tables.push_back(table);
    table_begin.push_back(f.size);
    f.size += layout.table_size(table);
  }
  for (const kairos::ParameterLayout::Tensor &t : layout.tensors()) {
    const auto at = std::find(layout.tables().begin(), layout.tables().end(), t.table);
    f.tensor_begin.push_back(table_begin[static_cast<size_t>(at - layout.tables().begin())] +
                             t.offset);
  }
  f.tables.push_back(kControlTable);
  f.control = f.size++;
  return f;
}

Eigen::Map<const Eigen::MatrixXf> TensorOf(const FlatLayout &f,
                                           const kairos::ParameterLayout &layout,
                                           std::span<const float> flat, size_t i) {
  const kairos::ParameterLayout::Tensor &t = layout.tensors()[i];
  return Eigen::Map<const Eigen::MatrixXf>(flat.data() + f.tensor_begin[i], t.rows, t.cols);
}

// The model's tensors from the flat values.
void Unpack(const FlatLayout &f, std::span<const float> flat, Model &model) {
  std::vector<Eigen::Ref<Eigen::MatrixXf>> params = model.parameters();
  for (size_t i = 0; i < params.size(); ++i) params[i] = TensorOf(f, model.layout(), flat, i);
}

// The model's gradients into the flat values, with 0 for the control element.
void PackGradients(const FlatLayout &f, Model &model, std::span<float> flat) {
  std::vector<Eigen::Ref<Eigen::MatrixXf>> grads = model.gradients();
  for (size_t i = 0; i < grads.size(); ++i) {
    const kairos::ParameterLayout::Tensor &t = model.layout().tensors()[i];
    Eigen::Map<Eigen::MatrixXf>(flat.data() + f.tensor_begin[i], t.rows, t.cols) = grads[i];
  }
  flat[f.control] = 0.0f;
}

std::vector<Eigen::MatrixXf> CopyOf(const FlatLayout &f, const kairos::ParameterLayout &layout,
                                    std::span<const float> flat) {
  std::vector<Eigen::MatrixXf> copy;
  for (size_t i = 0; i < layout.tensors().size(); ++i) {
    copy.emplace_back(TensorOf(f, layout, flat, i));
  }
  return copy;
}

std::vector<Eigen::MatrixXf> CopyOf(Model &model) {
  std::vector<Eigen::MatrixXf> copy;
  for (const Eigen::Ref<Eigen::MatrixXf> &p : model.parameters()) copy.emplace_back(p);
  return copy;
}

}  // namespace

std::vector<PolicyCounts> ServerPolicyCounts(const kairos::LocalCluster &cluster) {
  std::vector<PolicyCounts> counts(static_cast<size_t>(cluster.num_workers()));
  for (int shard = 0; shard < cluster.num_servers(); ++shard) {
    for (const kairos::WorkerMetrics &m : cluster.server_stats(shard).workers) {
      if (m.rank < 0 || m.rank >= static_cast<int>(counts.size())) continue;
      PolicyCounts &c = counts[static_cast<size_t>(m.rank)];
      c.dropped += m.dropped;
      c.downweighted += m.downweighted;
      c.refreshes += m.refreshes;
      c.zero_answers += m.zero_answers;
      c.grants += m.grants;
      c.granted_reads += m.granted_reads;
    }
  }
  return counts;
}

std::vector<LoggedStaleness> ServerLoggedStaleness(const kairos::LocalCluster &cluster) {
  const auto workers = static_cast<size_t>(cluster.num_workers());
  // Per rank and clock, over the logged pushes of every table and shard: the largest
  // iteration staleness and the sum of the squared value stalenesses (so that a clock's
  // value staleness is the drift of the whole model, not of one chunk).
  std::vector<std::map<int64_t, std::pair<double, double>>> by_clock(workers);
  for (int shard = 0; shard < cluster.num_servers(); ++shard) {
    for (const kairos::WorkerMetrics &m : cluster.server_stats(shard).workers) {
      if (m.rank < 0 || static_cast<size_t>(m.rank) >= workers) continue;
      for (const kairos::PushRecord &p : m.push_log) {
        if (p.dropped) continue;
        std::pair<double, double> &b = by_clock[static_cast<size_t>(m.rank)][p.clock];
        b.first = std::max(b.first, static_cast<double>(p.staleness));
        b.second += p.value_staleness * p.value_staleness;
      }
    }
  }
  std::vector<LoggedStaleness> out(workers);
  for (size_t r = 0; r < workers; ++r) {
    double n = 0, sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
    for (const auto &[clock, b] : by_clock[r]) {
      const double x = b.first;
      const double y = std::sqrt(b.second);
      n += 1;
      sx += x;
      sy += y;
      sxx += x * x;
      syy += y * y;
      sxy += x * y;
    }
    LoggedStaleness &l = out[r];
    l.iterations = static_cast<uint64_t>(n);
    l.value_staleness_mean = n > 0 ? sy / n : 0.0;
    const double vx = n * sxx - sx * sx;
    const double vy = n * syy - sy * sy;
    l.value_iteration_correlation = n >= 3 && vx > 0 && vy > 0
                                        ? (n * sxy - sx * sy) / std::sqrt(vx * vy)
                                        : std::numeric_limits<double>::quiet_NaN();
  }
  return out;
}

absl::Status CheckConfig(const TrainConfig &c) {
  const auto bad = [](const std::string &what) { return absl::InvalidArgumentError(what); };
  if (c.model != "softmax" && c.model != "mlp") {
    return bad(absl::StrCat("--model must be softmax or mlp, got '", c.model, "'"));
  }
  if (c.hidden < 1) return bad(absl::StrCat("--hidden must be at least 1, got ", c.hidden));
  if (c.epochs < 1) return bad(absl::StrCat("--epochs must be at least 1, got ", c.epochs));
  if (c.batch < 1) return bad(absl::StrCat("--batch must be at least 1, got ", c.batch));
  if (!(c.learning_rate > 0.0f) || !std::isfinite(c.learning_rate)) {
    return bad(absl::StrCat("--lr must be a positive number, got ", c.learning_rate));
  }
  for (size_t i = 0; i < c.slowdown.size(); ++i) {
    if (!(c.slowdown[i] >= 1.0) || !std::isfinite(c.slowdown[i])) {
      return bad(absl::StrCat("--slowdown: worker ", i, "'s factor must be at least 1, got ",
                              c.slowdown[i]));
    }
  }
  if (!(c.pace_ms >= 0.0) || !std::isfinite(c.pace_ms)) {
    return bad(absl::StrCat("--pace-ms must be 0 (the measured compute time) or a positive "
                            "number of milliseconds, got ",
                            c.pace_ms));
  }
  if (!(c.jitter_mean >= 0.0) || !std::isfinite(c.jitter_mean)) {
    return bad(absl::StrCat("--jitter must be a number >= 0, got ", c.jitter_mean));
  }
  if (!(c.straggler_prob >= 0.0 && c.straggler_prob <= 1.0)) {
    return bad(absl::StrCat("--straggler-prob must be in [0, 1], got ", c.straggler_prob));
  }
  if (!(c.straggler_factor >= 1.0) || !std::isfinite(c.straggler_factor)) {
    return bad(absl::StrCat("--straggler-factor must be at least 1, got ", c.straggler_factor));
  }
  if (!(c.max_wall_s >= 0.0) || !std::isfinite(c.max_wall_s)) {
    return bad(absl::StrCat("--budget-s must be 0 (none) or a positive number of seconds, got ",
                            c.max_wall_s));
  }
  if (!(c.target_accuracy >= 0.0 && c.target_accuracy <= 1.0)) {
    return bad(absl::StrCat("--target-accuracy must be in [0, 1], got ", c.target_accuracy));
  }
  if (c.eval_every < 0) {
    return bad(absl::StrCat("--eval-every must be 0 (each epoch) or more, got ", c.eval_every));
  }
  if (!(c.snapshot_s >= 0.0) || !std::isfinite(c.snapshot_s)) {
    return bad(absl::StrCat("--snapshot-s must be 0 (every --eval-every iterations) or a "
                            "positive number of seconds, got ",
                            c.snapshot_s));
  }
  if (!(c.average_s >= 0.0) || !std::isfinite(c.average_s)) {
    return bad(absl::StrCat("--average-s must be 0 (each snapshot alone) or a positive "
                            "number of seconds, got ",
                            c.average_s));
  }
  return absl::OkStatus();
}

absl::StatusOr<kairos::PaceModel> MakePaceModel(const TrainConfig &c) {
  KAIROS_RETURN_IF_ERROR(CheckConfig(c));
  kairos::PaceOptions pace;
  pace.iteration_time = absl::Nanoseconds(std::llround(c.pace_ms * 1e6));
  pace.slowdown = c.slowdown;
  pace.jitter_mean = c.jitter_mean;
  pace.straggler_prob = c.straggler_prob;
  pace.straggler_factor = c.straggler_factor;
  pace.seed = c.seed;
  return kairos::PaceModel::Create(std::move(pace));
}

int64_t PlannedIterations(const TrainConfig &config, int num_train_examples, int num_workers) {
  return static_cast<int64_t>(
             ShapeOfEpochs(num_train_examples, num_workers, config.batch).iterations) *
         config.epochs;
}

absl::StatusOr<std::vector<kairos::TableSpec>> JobTables(const TrainConfig &config,
                                                         int num_features,
                                                         int64_t planned_iterations) {
  KAIROS_RETURN_IF_ERROR(CheckConfig(config));
  KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<Model> model,
                          MakeModel(config.model, num_features, config.hidden));
  kairos::UpdaterSpec updater;
  updater.name = config.optimizer;
  updater.learning_rate = config.learning_rate;
  updater.schedule =
      config.schedule == "cosine"
          ? absl::StrCat("cosine:steps=", std::max<int64_t>(1, planned_iterations))
          : config.schedule;
  std::vector<kairos::TableSpec> tables = model->Tables(updater, config.seed);
  for (kairos::TableSpec& t : tables) {
    t.compression = config.compression;
    t.cache_clocks = config.cache_clocks;
    t.write_back_clocks = config.write_back_clocks;
  }
  kairos::TableSpec control;
  control.name = kControlTable;
  control.size = 1;
  control.init = kairos::Initializer::Zeros();
  control.updater = {"sgd", 1.0f};
  tables.push_back(control);
  return tables;
}

Trainer::Trainer(const FashionMnist* data, TrainConfig config, int num_workers, Hooks hooks)
    : data_(data),
      config_(std::move(config)),
      num_workers_(num_workers),
      hooks_(std::move(hooks)),
      pace_(MakePaceModel(config_)),
      start_(SteadyClock::now()),
      blocked_ns_(new std::atomic<int64_t>[static_cast<size_t>(num_workers)]),
      local_(new std::atomic<bool>[static_cast<size_t>(num_workers)]) {
  for (int i = 0; i < num_workers; ++i) {
    blocked_ns_[static_cast<size_t>(i)] = 0;
    local_[static_cast<size_t>(i)] = false;
  }
}

void Trainer::Start() { start_ = SteadyClock::now(); }

double Trainer::Seconds(SteadyClock::time_point t) const { return SecondsBetween(start_, t); }

double Trainer::wall_s() const { return Seconds(SteadyClock::now()); }

absl::Status Trainer::Snapshot(ParameterSum parameters, double taken_s,
                               bool final, int64_t iterations, int iters_per_epoch,
                               double *loss_sum, int64_t *loss_count, Staleness *last) {
  EvalRecord r;
  r.final = final;
  r.iterations = iterations;
  r.epoch = static_cast<double>(iterations) / iters_per_epoch;
  r.wall_s = taken_s;
  if (*loss_count > 0) r.train_loss = *loss_sum / static_cast<double>(*loss_count);
  *loss_sum = 0.0;
  *loss_count = 0;
  r.total_iterations = iterations_.load();
  r.iterations_per_s =
      r.wall_s > 0.0 ? static_cast<double>(r.total_iterations) / r.wall_s : 0.0;
  if (hooks_.staleness) {
    const Staleness now = hooks_.staleness();
    if (final) {
      // The whole run: since the previous snapshot, rank 0's repeated stop flags (pushed while
      // it read nothing) would weigh too much.
      r.staleness_mean =
          now.count > 0 ? static_cast<double>(now.sum) / static_cast<double>(now.count) : 0.0;
    } else if (now.count > last->count) {
      r.staleness_mean =
          static_cast<double>(now.sum - last->sum) / static_cast<double>(now.count - last->count);
    } else {
      r.staleness_mean = 0.0;
    }
    r.staleness_max = static_cast<double>(now.max);
    *last = now;
  }
  if (hooks_.policy_counts) {
    PolicyCounts total;
    for (const PolicyCounts &c : hooks_.policy_counts()) {
      total.grants += c.grants;
      total.zero_answers += c.zero_answers;
      total.dropped += c.dropped;
      total.downweighted += c.downweighted;
    }
    r.grants = static_cast<double>(total.grants);
    r.zero_answers = static_cast<double>(total.zero_answers);
    r.dropped = static_cast<double>(total.dropped);
    r.downweighted = static_cast<double>(total.downweighted);
  }
  r.eager_wait_s = static_cast<double>(eager_wait_ns_.load()) * 1e-9;
  r.overruns = overruns_.load();
  for (int i = 0; i < num_workers_; ++i) {
    const auto k = static_cast<size_t>(i);
    r.blocked_s.push_back(local_[k].load() ? static_cast<double>(blocked_ns_[k].load()) * 1e-9
                                           : kUnknown);
  }
  evaluator_->Add(std::move(r), std::move(parameters));
  return absl::OkStatus();
}

absl::Status Trainer::WaitForOthers(kairos::Worker &worker, bool stopping) {
  const absl::Time give_up = absl::Now() + kMaxWaitForOthers;
  while (true) {
    kairos::CallOptions slice;
    slice.deadline = absl::Now() + kBarrierSlice;
    absl::Status s = worker.Barrier(slice);
    if (s.ok()) return s;
    if (!absl::IsDeadlineExceeded(s)) return s;
    if (absl::Now() > give_up) {
      return absl::DeadlineExceededError(
          absl::StrCat("rank 0 waited ", absl::FormatDuration(kMaxWaitForOthers),
                       " for the other workers to finish: ", s.message()));
    }
    // Keep the gates of the others open, and the flag coming.
    if (stopping) {
      KAIROS_RETURN_IF_ERROR(RaiseStopFlag(worker, absl::Now() + kBarrierSlice));
    }
    for (int i = 0; i < kClocksPerSlice; ++i) KAIROS_RETURN_IF_ERROR(worker.AdvanceClock());
  }
}

// One worker's run (Trainer::Run): its replica, its data order, the eager schedule, and what
// it measured so far; each phase of an iteration is one method.
class Trainer::WorkerRun {
 public:
  WorkerRun(Trainer &trainer, kairos::Worker &worker)
      : t_(trainer), worker_(worker), rank_(worker.rank()) {}

  // The replica, the shard, the evaluator (rank 0) and, if the policy pulls eagerly, the
  // schedule's first read.
  absl::Status Begin();
  int iters_per_epoch() const { return iters_per_epoch_; }
  bool stopping() const { return stopping_; }
  void Shuffle() { order_->Shuffle(); }
  // Iteration `it` of the epoch: read, (rank 0) snapshot and stop check, gradient and pace,
  // write. False when the worker stopped instead.
  absl::StatusOr<bool> Iterate(int it);
  // The summary; rank 0 then waits for the others and evaluates the final parameters.
  absl::Status End();

 private:
  absl::Status Read();
  void SumRead();
  absl::Status SnapshotAndStop();
  void Compute(int it);
  absl::Status Write();
  void Report() const;
  void AddBlocked(int64_t ns) {
    t_.blocked_ns_[static_cast<size_t>(rank_)] += ns;
    summary_.blocked_s += static_cast<double>(ns) * 1e-9;
  }

  Trainer &t_;
  kairos::Worker &worker_;
  const int rank_;
  std::unique_ptr<Model> model_;
  std::optional<EpochOrder> order_;  // the shard's walk (streams.h)
  int batch_ = 0;
  int iters_per_epoch_ = 0;
  int eval_every_ = 0;
  WorkerSummary summary_;
  // Eager pull: one schedule over the model's tables and the control table (the file comment).
  FlatLayout flat_;
  std::vector<float> values_;    // eager: the next step's parameters
  std::vector<float> gradient_;  // eager: the step's gradient
  std::unique_ptr<kairos::EagerSchedule> schedule_;
  Eigen::MatrixXf x_;
  std::vector<int> y_;
  float stop_ = 0.0f;  // the control element as last read
  double loss_sum_ = 0.0;
  int64_t loss_count_ = 0;
  Staleness staleness_;
  bool stopping_ = false;
  int64_t iterations_ = 0;
  double next_snapshot_s_ = 0.0;  // snapshot_s > 0: the wall time the next one is due
  // Rank 0 with an averaging window (evaluator.h): the parameters read since the last
  // snapshot, summed.
  ParameterSum read_sum_{.sum = {}, .reads = 0};
  // The iteration under way.
  SteadyClock::time_point pull_start_, pulled_at_, push_start_;
  int64_t blocked_ = 0;  // ns
  double compute_s_ = 0.0;
  double slowed_s_ = 0.0;
  double push_s_ = 0.0;  // the last push and clock, on-demand pull only
};

absl::Status Trainer::WorkerRun::Begin() {
  const TrainConfig &config = t_.config_;
  // A paced wait should end when its target passes, not up to the kernel's default timer
  // slack (50 us) later, which adds up over thousands of iterations. Per thread; a refusal
  // leaves the default.
  if (config.pace_ms > 0.0) (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  t_.local_[static_cast<size_t>(rank_)] = true;
  const Dataset &train = t_.data_->train;
  KAIROS_ASSIGN_OR_RETURN(model_, MakeModel(config.model, train.num_features(), config.hidden));
  if (rank_ == 0) {
    KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<Model> replica,
                            MakeModel(config.model, train.num_features(), config.hidden));
    t_.evaluator_ = std::make_unique<SnapshotEvaluator>(&t_.data_->test, std::move(replica),
                                                        config.target_accuracy,
                                                        config.average_s, t_.hooks_.on_eval);
  }
  order_.emplace(config.shards_by_class
                     ? ShardByClass(train.labels, rank_, t_.num_workers_, config.seed)
                     : Shard(train.num_examples(), rank_, t_.num_workers_, config.seed),
                 config.seed, rank_);
  // Every worker runs the same number of iterations per epoch: that of the smallest shard.
  const EpochShape shape = ShapeOfEpochs(train.num_examples(), t_.num_workers_, config.batch);
  batch_ = shape.batch;
  iters_per_epoch_ = shape.iterations;
  eval_every_ = config.eval_every > 0 ? config.eval_every : iters_per_epoch_;
  summary_.rank = rank_;
  KAIROS_ASSIGN_OR_RETURN(summary_.eager, kairos::PullsEagerly(worker_.job().policy));
  if (!summary_.eager) return absl::OkStatus();
  flat_ = Flatten(model_->layout());
  values_.resize(flat_.size);
  gradient_.resize(flat_.size);
  const SteadyClock::time_point start = SteadyClock::now();
  KAIROS_ASSIGN_OR_RETURN(schedule_, kairos::EagerSchedule::Start(worker_, flat_.tables, values_));
  AddBlocked(
      std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - start).count());
  return absl::OkStatus();
}

absl::StatusOr<bool> Trainer::WorkerRun::Iterate(int it) {
  KAIROS_RETURN_IF_ERROR(Read());
  if (rank_ == 0 && t_.config_.average_s > 0.0) SumRead();
  if (rank_ == 0) KAIROS_RETURN_IF_ERROR(SnapshotAndStop());
  if (stop_ > 0.0f) stopping_ = true;
  if (stopping_) return false;
  Compute(it);
  KAIROS_RETURN_IF_ERROR(Write());
  Report();
  ++iterations_;
  ++t_.iterations_;
  return true;
}

// The parameters and the control element: pulled, or, eager, those the last step left (its
// wait is counted there).
absl::Status Trainer::WorkerRun::Read() {
  pull_start_ = SteadyClock::now();
  blocked_ = 0;
  if (schedule_ != nullptr) {
    Unpack(flat_, values_, *model_);
    stop_ = values_[flat_.control];
  } else {
    kairos::Request control = worker_.PullAsync(kControlTable, 0, std::span<float>(&stop_, 1));
    absl::Status pulled = model_->Pull(worker_);
    absl::Status controlled = control.Wait();
    KAIROS_RETURN_IF_ERROR(pulled);
    KAIROS_RETURN_IF_ERROR(controlled);
    blocked_ =
        std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - pull_start_)
            .count();
    AddBlocked(blocked_);
  }
  pulled_at_ = SteadyClock::now();
  return absl::OkStatus();
}

// Rank 0 with an averaging window: adds the global parameters just read (under eager pull
// those the last step fetched) into read_sum_.
void Trainer::WorkerRun::SumRead() {
  using ConstRef = Eigen::Ref<const Eigen::MatrixXf>;
  const std::vector<Eigen::Ref<Eigen::MatrixXf>> own = model_->parameters();
  for (size_t i = 0; i < own.size(); ++i) {
    const ConstRef read =
        schedule_ != nullptr
            ? ConstRef(TensorOf(flat_, model_->layout(), schedule_->fetched(), i))
            : ConstRef(own[i]);
    if (read_sum_.reads == 0) {
      read_sum_.sum.emplace_back(read);
    } else {
      read_sum_.sum[i] += read;
    }
  }
  ++read_sum_.reads;
}

// Rank 0: a snapshot when one is due; the stop flag once the target was reached or the budget
// spent.
absl::Status Trainer::WorkerRun::SnapshotAndStop() {
  const TrainConfig &config = t_.config_;
  bool due = false;
  if (config.snapshot_s > 0.0) {
    const double now = t_.Seconds(pulled_at_);
    if (now >= next_snapshot_s_) {
      due = true;
      while (next_snapshot_s_ <= now) next_snapshot_s_ += config.snapshot_s;
    }
  } else {
    due = iterations_ > 0 && iterations_ % eval_every_ == 0;
  }
  if (due) {
    // The global parameters: under eager pull those the last step fetched, not the locally
    // corrected ones; with an averaging window, their sum since the last snapshot.
    ParameterSum parameters;
    if (config.average_s > 0.0) {
      parameters = std::exchange(read_sum_, ParameterSum{.sum = {}, .reads = 0});
    } else {
      parameters.sum = schedule_ != nullptr
                           ? CopyOf(flat_, model_->layout(), schedule_->fetched())
                           : CopyOf(*model_);
    }
    KAIROS_RETURN_IF_ERROR(t_.Snapshot(std::move(parameters), t_.Seconds(pulled_at_), false,
                                       iterations_, iters_per_epoch_, &loss_sum_, &loss_count_,
                                       &staleness_));
  }
  const bool budget_spent = config.max_wall_s > 0.0 && t_.wall_s() >= config.max_wall_s;
  if (!stopping_ && (t_.evaluator_->reached() || budget_spent)) {
    stopping_ = true;
    KAIROS_RETURN_IF_ERROR(RaiseStopFlag(worker_, std::nullopt));
  }
  return absl::OkStatus();
}

// The gradient of the iteration's batch, then the wait that makes the compute phase last what
// the pace model says (the file comment).
void Trainer::WorkerRun::Compute(int it) {
  const kairos::PaceModel &pace = *t_.pace_;
  const std::span<const int> examples = order_->Batch(it, batch_);
  t_.data_->train.Gather(examples, &x_, &y_);
  const SteadyClock::time_point compute_start = SteadyClock::now();
  const float loss = model_->Loss(x_, y_, /*gradient=*/true);
  const SteadyClock::time_point computed = SteadyClock::now();
  compute_s_ = SecondsBetween(compute_start, computed);
  summary_.compute_s += compute_s_;
  loss_sum_ += loss;
  ++loss_count_;
  if (pace.Straggles(rank_, iterations_)) ++summary_.straggled;
  const bool paced = t_.config_.pace_ms > 0.0;
  const double target_s = paced ? absl::ToDoubleSeconds(pace.IterationTime(rank_, iterations_))
                                : pace.Factor(rank_, iterations_) * compute_s_;
  slowed_s_ = 0.0;
  if (target_s > compute_s_) {
    std::this_thread::sleep_until(compute_start + std::chrono::duration_cast<SteadyClock::duration>(
                                                      std::chrono::duration<double>(target_s)));
    slowed_s_ = SecondsBetween(computed, SteadyClock::now());
    summary_.slowed_s += slowed_s_;
  } else if (paced) {
    ++summary_.overruns;
    ++t_.overruns_;
  }
}

// The gradients and the control element's 0: through the eager schedule (whose step waits
// for the previous step's reply), or pushed, then the clock.
absl::Status Trainer::WorkerRun::Write() {
  push_start_ = SteadyClock::now();
  if (schedule_ != nullptr) {
    PackGradients(flat_, *model_, gradient_);
    KAIROS_RETURN_IF_ERROR(schedule_->Step(gradient_, values_));
    blocked_ = absl::ToInt64Nanoseconds(schedule_->last_wait());
    if (schedule_->last_waited()) ++summary_.eager_waits;
    summary_.eager_wait_s += static_cast<double>(blocked_) * 1e-9;
    t_.eager_wait_ns_ += blocked_;
    AddBlocked(blocked_);
    return absl::OkStatus();
  }
  const float zero = 0.0f;
  kairos::Request pushed_control =
      worker_.PushAsync(kControlTable, 0, std::span<const float>(&zero, 1));
  absl::Status pushed = model_->Push(worker_);
  absl::Status control_pushed = pushed_control.Wait();
  KAIROS_RETURN_IF_ERROR(pushed);
  KAIROS_RETURN_IF_ERROR(control_pushed);
  KAIROS_RETURN_IF_ERROR(worker_.AdvanceClock());
  push_s_ = SecondsBetween(push_start_, SteadyClock::now());
  summary_.push_s += push_s_;
  return absl::OkStatus();
}

void Trainer::WorkerRun::Report() const {
  if (!t_.hooks_.on_iteration) return;
  const double step_s = SecondsBetween(push_start_, SteadyClock::now());
  const double blocked_s = static_cast<double>(blocked_) * 1e-9;
  t_.hooks_.on_iteration(
      {.rank = rank_,
       .iteration = iterations_,
       .start_s = t_.Seconds(pull_start_),
       .pull_s = blocked_s,
       .local_s = SecondsBetween(pulled_at_, push_start_),
       .compute_s = compute_s_,
       .slowed_s = slowed_s_,
       .push_s = schedule_ != nullptr ? std::max(0.0, step_s - blocked_s) : push_s_});
}

absl::Status Trainer::WorkerRun::End() {
  summary_.iterations = iterations_;
  summary_.stopped = stopping_;
  summary_.end_s = t_.wall_s();
  const kairos::WorkerStats traffic = worker_.stats();
  summary_.bytes_sent = traffic.bytes_sent;
  summary_.bytes_received = traffic.bytes_received;
  if (t_.hooks_.on_worker_done) t_.hooks_.on_worker_done(summary_);
  if (rank_ != 0) {
    // The last step's request, before the caller finishes the worker.
    if (schedule_ != nullptr) KAIROS_RETURN_IF_ERROR(schedule_->Finish(values_));
    return absl::OkStatus();  // the caller finishes it
  }
  // Rank 0: the final evaluation, once every other worker has finished (its own last eager
  // request may wait in a gate for them, so it is collected after).
  KAIROS_RETURN_IF_ERROR(t_.WaitForOthers(worker_, stopping_));
  if (schedule_ != nullptr) KAIROS_RETURN_IF_ERROR(schedule_->Finish(values_));
  KAIROS_RETURN_IF_ERROR(model_->Pull(worker_));
  KAIROS_RETURN_IF_ERROR(t_.Snapshot({.sum = CopyOf(*model_)}, t_.wall_s(), true, iterations_,
                                     iters_per_epoch_, &loss_sum_, &loss_count_, &staleness_));
  t_.evaluator_->Drain();
  t_.final_accuracy_ = t_.evaluator_->last_accuracy();
  t_.time_to_target_s_ = t_.evaluator_->time_to_target_s();
  return absl::OkStatus();
}

absl::Status Trainer::Run(kairos::Worker &worker) {
  const int rank = worker.rank();
  if (rank < 0 || rank >= num_workers_ || worker.num_workers() != num_workers_) {
    return absl::InvalidArgumentError(absl::StrCat("worker ", rank, " of ", worker.num_workers(),
                                                   " in a trainer made for ", num_workers_));
  }
  KAIROS_RETURN_IF_ERROR(pace_.status());
  WorkerRun run(*this, worker);
  KAIROS_RETURN_IF_ERROR(run.Begin());
  for (int epoch = 0; epoch < config_.epochs && !run.stopping(); ++epoch) {
    run.Shuffle();
    for (int it = 0; it < run.iters_per_epoch(); ++it) {
      KAIROS_ASSIGN_OR_RETURN(const bool more, run.Iterate(it));
      if (!more) break;
    }
  }
  return run.End();
}

}  // namespace fmnist
