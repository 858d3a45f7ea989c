// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The model, metrics and training loop of the sparse logistic-regression example (train.h).

#include "sparse_logreg/train.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "kairos/kairos.h"
#include "sparse_logreg/data.h"

namespace logreg {
namespace {

using SteadyClock = std::chrono::steady_clock;

// How long rank 0 waits in the barrier before it advances its clock again, and in all.
constexpr absl::Duration kBarrierSlice = absl::Milliseconds(20);
constexpr absl::Duration kMaxWaitForOthers = absl::Minutes(30);

double SecondsBetween(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// log(1 + e^z) without overflow.
double Softplus(double z) { return std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z))); }

double Sigmoid(double z) {
  if (z >= 0.0) return 1.0 / (1.0 + std::exp(-z));
  const double e = std::exp(z);
  return e / (1.0 + e);
}

// The distinct ids of `examples`' features, sorted, into *keys, and each feature's index among
// them into *index (in the order of the examples and their features).
void CollectKeys(const Dataset &data, std::span<const uint32_t> examples,
                 std::vector<uint64_t> *keys, std::vector<uint32_t> *index) {
  keys->clear();
  for (uint32_t e : examples) {
    const std::span<const uint64_t> ids = data.example_ids(e);
    keys->insert(keys->end(), ids.begin(), ids.end());
  }
  std::sort(keys->begin(), keys->end());
  keys->erase(std::unique(keys->begin(), keys->end()), keys->end());
  index->clear();
  for (uint32_t e : examples) {
    for (uint64_t id : data.example_ids(e)) {
      index->push_back(
          static_cast<uint32_t>(std::lower_bound(keys->begin(), keys->end(), id) - keys->begin()));
    }
  }
}

// Pulls the weights of `keys` and the bias: every request issued before any is waited for.
absl::Status PullModel(kairos::Worker &worker, std::span<const uint64_t> keys,
                       std::vector<float> *weights, float *bias) {
  weights->resize(keys.size());
  std::vector<kairos::Request> requests;
  requests.push_back(worker.PullAsync(kBiasTable, 0, std::span<float>(bias, 1)));
  for (size_t at = 0; at < keys.size(); at += kKeysPerCall) {
    const size_t n = std::min(kKeysPerCall, keys.size() - at);
    requests.push_back(worker.PullSparseAsync(kWeightsTable, keys.subspan(at, n),
                                              std::span<float>(weights->data() + at, n)));
  }
  absl::Status first;
  for (kairos::Request &r : requests) first.Update(r.Wait());
  return first;
}

absl::Status PushGradient(kairos::Worker &worker, std::span<const uint64_t> keys,
                          std::span<const float> gradient, float bias_gradient) {
  std::vector<kairos::Request> requests;
  requests.push_back(worker.PushAsync(kBiasTable, 0, std::span<const float>(&bias_gradient, 1)));
  for (size_t at = 0; at < keys.size(); at += kKeysPerCall) {
    const size_t n = std::min(kKeysPerCall, keys.size() - at);
    requests.push_back(
        worker.PushSparseAsync(kWeightsTable, keys.subspan(at, n), gradient.subspan(at, n)));
  }
  absl::Status first;
  for (kairos::Request &r : requests) first.Update(r.Wait());
  return first;
}

}  // namespace

double Auc(std::span<const double> scores, std::span<const float> labels) {
  const size_t n = scores.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return scores[a] < scores[b]; });
  double positives = 0.0;
  double rank_sum = 0.0;  // of the positives, 1-based, ties at their midrank
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    double group_positives = 0.0;
    while (j < n && scores[order[j]] == scores[order[i]]) {
      group_positives += labels[order[j]] > 0.5f ? 1.0 : 0.0;
      ++j;
    }
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    rank_sum += group_positives * midrank;
    positives += group_positives;
    i = j;
  }
  const double negatives = static_cast<double>(n) - positives;
  if (positives == 0.0 || negatives == 0.0) return kUnknown;
  return (rank_sum - positives * (positives + 1.0) / 2.0) / (positives * negatives);
}

double LogLoss(std::span<const double> scores, std::span<const float> labels) {
  if (scores.empty()) return kUnknown;
  double sum = 0.0;
  for (size_t i = 0; i < scores.size(); ++i) {
    sum += Softplus(scores[i]) - (labels[i] > 0.5f ? scores[i] : 0.0);
  }
  return sum / static_cast<double>(scores.size());
}

Evaluation EvaluateTruth(const TrueModel &truth, const Dataset &data) {
  std::vector<double> scores(data.num_examples());
  for (size_t i = 0; i < scores.size(); ++i) scores[i] = truth.Score(data, i);
  return {LogLoss(scores, data.labels), Auc(scores, data.labels)};
}

absl::Status CheckConfig(const TrainConfig &c) {
  const auto bad = [](const std::string &what) { return absl::InvalidArgumentError(what); };
  if (c.epochs < 1) return bad(absl::StrCat("--epochs must be at least 1, got ", c.epochs));
  if (c.batch < 1) return bad(absl::StrCat("--batch must be at least 1, got ", c.batch));
  if (!(c.learning_rate > 0.0f) || !std::isfinite(c.learning_rate)) {
    return bad(absl::StrCat("--lr must be a positive number, got ", c.learning_rate));
  }
  if (c.optimizer.empty()) return bad("--optimizer must not be empty");
  if (c.cache_clocks > 0 && c.cache_rows == 0) {
    return bad("--cache-clocks needs --cache-rows, the most weight rows a worker keeps");
  }
  return absl::OkStatus();
}

std::vector<kairos::TableSpec> JobTables(const TrainConfig &config) {
  const kairos::UpdaterSpec updater{config.optimizer, config.learning_rate, "constant"};
  std::vector<kairos::TableSpec> tables;
  tables.push_back(
      kairos::TableSpec::Sparse(kWeightsTable, 1, kairos::Initializer::Zeros(), updater));
  tables.back().admission = config.admission;
  tables.back().eviction = config.eviction;
  tables.back().compression = config.compression;
  tables.back().cache_clocks = config.cache_clocks;
  tables.back().cache_rows = config.cache_clocks > 0 ? config.cache_rows : 0;
  tables.back().write_back_clocks = config.write_back_clocks;
  kairos::TableSpec bias;
  bias.name = kBiasTable;
  bias.size = 1;
  bias.init = kairos::Initializer::Zeros();
  bias.updater = updater;
  bias.compression = config.compression;
  bias.cache_clocks = config.cache_clocks;
  bias.write_back_clocks = config.write_back_clocks;
  tables.push_back(bias);
  return tables;
}

std::vector<uint32_t> Shard(size_t num_examples, int rank, int num_workers, uint64_t seed,
                            bool in_order) {
  if (in_order) {
    std::vector<uint32_t> mine;
    for (size_t i = static_cast<size_t>(rank); i < num_examples;
         i += static_cast<size_t>(num_workers)) {
      mine.push_back(static_cast<uint32_t>(i));
    }
    return mine;
  }
  std::vector<uint32_t> all(num_examples);
  std::iota(all.begin(), all.end(), 0u);
  std::mt19937_64 rng(seed);
  // A Fisher-Yates shuffle of our own: std::shuffle's result differs between standard
  // libraries, and every process of a job must draw the same shards.
  for (size_t i = num_examples; i > 1; --i) std::swap(all[i - 1], all[rng() % i]);
  const size_t w = static_cast<size_t>(num_workers);
  const size_t r = static_cast<size_t>(rank);
  const size_t begin = num_examples * r / w;
  const size_t end = num_examples * (r + 1) / w;
  return std::vector<uint32_t>(all.begin() + static_cast<std::ptrdiff_t>(begin),
                               all.begin() + static_cast<std::ptrdiff_t>(end));
}

Trainer::Trainer(const Dataset* train, const Dataset* test, Evaluation reference,
                 TrainConfig config, int num_workers, Hooks hooks)
    : train_(train),
      test_(test),
      reference_(reference),
      config_(std::move(config)),
      num_workers_(num_workers),
      hooks_(std::move(hooks)),
      start_(SteadyClock::now()) {
  std::vector<uint32_t> all(test_->num_examples());
  std::iota(all.begin(), all.end(), 0u);
  CollectKeys(*test_, all, &test_keys_, &test_key_index_);
}

void Trainer::Start() { start_ = SteadyClock::now(); }

double Trainer::wall_s() const { return SecondsBetween(start_, SteadyClock::now()); }

int Trainer::IterationsPerEpoch() const {
  const size_t smallest = train_->num_examples() / static_cast<size_t>(std::max(1, num_workers_));
  const size_t batch = std::max<size_t>(1, std::min<size_t>(config_.batch, smallest));
  return static_cast<int>(std::max<size_t>(1, smallest / batch));
}

absl::Status Trainer::Evaluate(kairos::Worker &worker, bool final, int epoch, int64_t iterations,
                               double *loss_sum, int64_t *loss_examples) {
  std::vector<float> weights;
  float bias = 0.0f;
  KAIROS_RETURN_IF_ERROR(PullModel(worker, test_keys_, &weights, &bias));
  std::vector<double> scores(test_->num_examples());
  for (size_t e = 0; e < scores.size(); ++e) {
    double z = bias;
    const std::span<const float> values = test_->example_values(e);
    const uint64_t first = test_->offsets[e];
    for (size_t f = 0; f < values.size(); ++f) {
      z += static_cast<double>(weights[test_key_index_[first + f]]) * values[f];
    }
    scores[e] = z;
  }
  EvalRecord r;
  r.final = final;
  r.epoch = epoch;
  r.iterations = iterations;
  r.test = {LogLoss(scores, test_->labels), Auc(scores, test_->labels)};
  r.reference = reference_;
  r.keys = static_cast<int64_t>(test_keys_.size());
  r.wall_s = wall_s();
  if (*loss_examples > 0) r.train_loss = *loss_sum / static_cast<double>(*loss_examples);
  *loss_sum = 0.0;
  *loss_examples = 0;
  r.iterations_per_s = r.wall_s > 0.0 ? static_cast<double>(iterations_.load()) / r.wall_s : 0.0;
  if (final) final_ = r;
  if (hooks_.on_eval) hooks_.on_eval(r);
  return absl::OkStatus();
}

absl::Status Trainer::WaitForOthers(kairos::Worker &worker) {
  const absl::Time give_up = absl::Now() + kMaxWaitForOthers;
  while (true) {
    kairos::CallOptions slice;
    slice.deadline = absl::Now() + kBarrierSlice;
    absl::Status s = worker.Barrier(slice);
    if (s.ok() || !absl::IsDeadlineExceeded(s)) return s;
    if (absl::Now() > give_up) {
      return absl::DeadlineExceededError(
          absl::StrCat("rank 0 waited ", absl::FormatDuration(kMaxWaitForOthers),
                       " for the other workers to finish: ", s.message()));
    }
    KAIROS_RETURN_IF_ERROR(worker.AdvanceClock());  // keep the others' gates open
  }
}

absl::Status Trainer::Run(kairos::Worker &worker) {
  const int rank = worker.rank();
  if (rank < 0 || rank >= num_workers_ || worker.num_workers() != num_workers_) {
    return absl::InvalidArgumentError(absl::StrCat("worker ", rank, " of ", worker.num_workers(),
                                                   " in a trainer made for ", num_workers_));
  }
  std::vector<uint32_t> shard =
      Shard(train_->num_examples(), rank, num_workers_, config_.seed, config_.in_order);
  const int iters_per_epoch = IterationsPerEpoch();
  const size_t batch =
      std::max<size_t>(1, std::min<size_t>(config_.batch, train_->num_examples() / num_workers_));
  std::mt19937_64 rng(config_.seed * 1000003 + static_cast<uint64_t>(rank));

  WorkerSummary summary;
  summary.rank = rank;
  std::vector<uint64_t> keys;
  std::vector<uint32_t> index;
  std::vector<float> weights;
  std::vector<float> gradient;
  double loss_sum = 0.0;
  int64_t loss_examples = 0;
  int64_t iterations = 0;
  for (int epoch = 0; epoch < config_.epochs; ++epoch) {
    if (!config_.in_order) {
      for (size_t i = shard.size(); i > 1; --i) std::swap(shard[i - 1], shard[rng() % i]);
    }
    if (rank == 0 && epoch > 0) {
      KAIROS_RETURN_IF_ERROR(Evaluate(worker, false, epoch, iterations, &loss_sum, &loss_examples));
    }
    for (int it = 0; it < iters_per_epoch; ++it) {
      const std::span<const uint32_t> examples(shard.data() + static_cast<size_t>(it) * batch,
                                               batch);
      CollectKeys(*train_, examples, &keys, &index);

      const SteadyClock::time_point pull_start = SteadyClock::now();
      float bias = 0.0f;
      KAIROS_RETURN_IF_ERROR(PullModel(worker, keys, &weights, &bias));
      const SteadyClock::time_point compute_start = SteadyClock::now();
      summary.blocked_s += SecondsBetween(pull_start, compute_start);

      // The gradient of the batch's summed log-loss: per key, the sum over the batch's
      // features with that id of (p - y) x.
      gradient.assign(keys.size(), 0.0f);
      double bias_gradient = 0.0;
      size_t feature = 0;
      for (uint32_t e : examples) {
        const std::span<const float> values = train_->example_values(e);
        double z = bias;
        for (size_t f = 0; f < values.size(); ++f) {
          z += static_cast<double>(weights[index[feature + f]]) * values[f];
        }
        const double y = train_->labels[e];
        loss_sum += Softplus(z) - y * z;
        const double residual = Sigmoid(z) - y;
        for (size_t f = 0; f < values.size(); ++f) {
          gradient[index[feature + f]] += static_cast<float>(residual * values[f]);
        }
        bias_gradient += residual;
        feature += values.size();
      }
      loss_examples += static_cast<int64_t>(examples.size());
      summary.compute_s += SecondsBetween(compute_start, SteadyClock::now());

      KAIROS_RETURN_IF_ERROR(
          PushGradient(worker, keys, gradient, static_cast<float>(bias_gradient)));
      summary.rows_pushed += static_cast<int64_t>(keys.size());
      KAIROS_RETURN_IF_ERROR(worker.AdvanceClock());
      ++iterations;
      ++iterations_;
    }
  }
  summary.iterations = iterations;
  const kairos::WorkerStats traffic = worker.stats();
  summary.bytes_sent = traffic.bytes_sent;
  summary.bytes_received = traffic.bytes_received;
  summary.rows_cached = traffic.rows_cached;
  if (hooks_.on_worker_done) hooks_.on_worker_done(summary);
  if (rank != 0) return absl::OkStatus();  // the caller finishes it

  // Rank 0: the final evaluation, once every other worker has finished.
  KAIROS_RETURN_IF_ERROR(WaitForOthers(worker));
  return Evaluate(worker, true, config_.epochs, iterations, &loss_sum, &loss_examples);
}

}  // namespace logreg
