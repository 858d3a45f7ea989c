// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Sparse logistic regression with kairos: click-like data with sparse binary features (a
// million feature ids), the weights in a sparse table, trained by W workers (each on its own
// shard of the training set) against S servers under any policy. The data is generated in
// memory (the default, with a known true weight vector whose AUC is the reference), written
// to libsvm files with --generate, or read from libsvm files (--train, --test). Embedded by
// default (a LocalCluster in this process); under `kairos-launch -s S -w W -- sparse_logreg
// ...` each process is one worker. docs/examples.md describes the flags, the generator, the
// model and the output.
//
// The last line printed is exactly `final test auc 0.XXXX`.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "kairos/kairos.h"
#include "kairos/run.h"
#include "sparse_logreg/data.h"
#include "sparse_logreg/train.h"

namespace {

struct Flags {
  logreg::TrainConfig train;
  logreg::GeneratorConfig gen;
  std::string policy = "asp";
  int workers = 4;
  int servers = 2;
  std::string csv;
  std::string train_file;
  std::string test_file;
  std::string weights_file;
  bool generate = false;
  std::string transport = "inproc";
  std::string compression = "none";
  uint64_t evict_mb = 0;
};

std::string Number(double v, int decimals) {
  if (std::isnan(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string OrNone(double v, int decimals) { return std::isnan(v) ? "none" : Number(v, decimals); }

// "worker 1: 937 iterations, compute 0.4 s, blocked 0.12 s, wire 2.1 KB sent and 1.9 KB
// received per iteration" (kairos::WorkerStats).
std::string WorkerLine(const logreg::WorkerSummary &s) {
  std::string line =
      absl::StrCat("worker ", s.rank, ": ", s.iterations, " iterations, compute ",
                   Number(s.compute_s, 1), " s, blocked ", Number(s.blocked_s, 2), " s");
  if (s.iterations > 0) {
    const double n = static_cast<double>(s.iterations) * 1000.0;
    absl::StrAppend(&line, ", wire ", Number(static_cast<double>(s.bytes_sent) / n, 1),
                    " KB sent and ", Number(static_cast<double>(s.bytes_received) / n, 1),
                    " KB received per iteration");
  }
  if (s.rows_cached > 0 && s.rows_pushed > 0) {
    absl::StrAppend(
        &line, ", ",
        Number(100.0 * static_cast<double>(s.rows_cached) / static_cast<double>(s.rows_pushed), 1),
        " % of weight rows read from its cache");
  }
  return line;
}

// The CSV of the evaluations (docs/examples.md): one row each, written by rank 0's thread.
class CsvWriter {
 public:
  bool Open(const std::string &path) {
    file_ = std::fopen(path.c_str(), "w");
    if (file_ == nullptr) return false;
    std::fprintf(file_,
                 "event,epoch,iterations,wall_s,train_loss,test_loss,test_auc,reference_loss,"
                 "reference_auc,iterations_per_s\n");
    std::fflush(file_);
    return true;
  }
  void Write(const logreg::EvalRecord &r) {
    if (file_ == nullptr) return;
    std::fprintf(file_, "%s,%d,%lld,%s,%s,%s,%s,%s,%s,%s\n", r.final ? "final" : "eval", r.epoch,
                 static_cast<long long>(r.iterations), Number(r.wall_s, 3).c_str(),
                 Number(r.train_loss, 5).c_str(), Number(r.test.loss, 5).c_str(),
                 Number(r.test.auc, 4).c_str(), Number(r.reference.loss, 5).c_str(),
                 Number(r.reference.auc, 4).c_str(), Number(r.iterations_per_s, 1).c_str());
    std::fflush(file_);
  }
  ~CsvWriter() {
    if (file_ != nullptr) std::fclose(file_);
  }

 private:
  std::FILE *file_ = nullptr;
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// The most weight rows, and their bytes, any one server held while an embedded job ran
// (ServerStats::sparse_tables, sampled every 100 ms and at the end).
struct RowPeak {
  uint64_t rows = 0;
  uint64_t bytes = 0;
};

// Runs `fn` on every worker of an embedded cluster of `options`, sampling its servers'
// weight rows into *peak. As kairos::RunWorkers does for an embedded run, only the log
// level is taken from the environment (KAIROS_LOG_LEVEL): the cluster is kept here so that
// its servers' stats can be read.
absl::Status RunEmbedded(kairos::ClusterOptions options,
                         const std::function<absl::Status(kairos::Worker&)>& fn, RowPeak* peak) {
  kairos::NodeOptions from_environment;
  if (absl::Status s = kairos::ReadNodeEnvironment(from_environment); !s.ok()) return s;
  for (kairos::NodeOptions* node : std::initializer_list<kairos::NodeOptions*>{
           &options.coordinator, &options.server, &options.worker}) {
    node->log_level = from_environment.log_level;
  }
  absl::StatusOr<std::unique_ptr<kairos::LocalCluster>> cluster =
      kairos::LocalCluster::Create(options);
  if (!cluster.ok()) return cluster.status();
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  auto sample = [&] {
    for (int s = 0; s < (*cluster)->num_servers(); ++s) {
      for (const kairos::SparseTableStats& t : (*cluster)->server_stats(s).sparse_tables) {
        peak->rows = std::max(peak->rows, t.rows);
        peak->bytes = std::max(peak->bytes, t.bytes);
      }
    }
  };
  std::thread sampler([&] {
    std::unique_lock<std::mutex> lock(mu);
    while (!done_cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return done; })) {
      sample();
    }
  });
  absl::Status status = (*cluster)->Run(fn);
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  done_cv.notify_one();
  sampler.join();
  sample();
  absl::Status shutdown = (*cluster)->Shutdown();
  return status.ok() ? shutdown : status;
}

}  // namespace

int main(int argc, char **argv) {
  const auto process_start = std::chrono::steady_clock::now();
  Flags f;
  CLI::App app{
      "kairos example: logistic regression on sparse binary features, the weights in a sparse "
      "table, trained by workers on shards of the training set under a synchronization "
      "policy. The data is generated in memory (a million feature ids with power-law "
      "frequencies and known true weights), written to libsvm files with --generate, or read "
      "from libsvm files with --train and --test. Embedded by default; under kairos-launch "
      "each process is one worker. The last line is 'final test auc 0.XXXX'."};
  app.add_option("--policy", f.policy, "the job's policy spec (docs/policies.md)")
      ->capture_default_str();
  app.add_option("--workers,-w", f.workers, "workers (embedded; under kairos-launch: -w)")
      ->capture_default_str();
  app.add_option("--servers,-s", f.servers, "servers (embedded; under kairos-launch: -s)")
      ->capture_default_str();
  app.add_option("--optimizer", f.train.optimizer,
                 "the tables' updater, passed through as UpdaterSpec::name (ftrl, "
                 "ftrl:l1=1, adagrad, ...)")
      ->capture_default_str();
  app.add_option("--lr", f.train.learning_rate, "the tables' learning rate")->capture_default_str();
  app.add_option("--epochs", f.train.epochs, "passes of each worker over its shard")
      ->capture_default_str();
  app.add_option("--batch", f.train.batch, "examples per iteration and worker")
      ->capture_default_str();
  app.add_option("--seed", f.train.seed, "the generated data, the shards and the batch order")
      ->capture_default_str();
  app.add_option("--csv", f.csv, "write one row per evaluation to FILE (docs/examples.md)");
  app.add_option("--train", f.train_file, "read the training set from this libsvm file");
  app.add_option("--test", f.test_file, "read the test set from this libsvm file");
  app.add_option("--true-weights", f.weights_file,
                 "the weights file of the data (written by --generate): its AUC is the "
                 "reference");
  app.add_flag("--generate", f.generate,
               "write generated data to the --train and --test files (and --true-weights if "
               "given), then exit");
  app.add_option("--ids", f.gen.num_ids, "generator: feature ids (1..N)")->capture_default_str();
  app.add_option("--train-examples", f.gen.train_examples, "generator: training examples")
      ->capture_default_str();
  app.add_option("--test-examples", f.gen.test_examples, "generator: test examples")
      ->capture_default_str();
  app.add_option("--exponent", f.gen.exponent,
                 "generator: the power law's exponent (id r drawn with probability ~ r^-exponent)")
      ->capture_default_str();
  app.add_option("--drift", f.gen.drift,
                 "generator: the popular ids move by D x --ids over the training set (a click "
                 "stream whose items change; the test set is at its end); with D > 0 each "
                 "worker trains its examples in the stream's order")
      ->check(CLI::Range(0.0, 64.0))
      ->capture_default_str();
  app.add_option("--weight-stddev", f.gen.weight_stddev,
                 "generator: the true weights' standard deviation")
      ->capture_default_str();
  app.add_option("--admit", f.train.admission.min_count,
                 "give an id its weight row at its N-th push (0, 1: at once; docs/sparse.md)")
      ->check(CLI::Range(0, 255))
      ->capture_default_str();
  app.add_option("--evict-idle", f.train.eviction.max_idle_clocks,
                 "remove weight rows not updated for N clocks (0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--evict-mb", f.evict_mb,
                 "bound each server's weight rows to N MiB, least recently updated go (0: none)")
      ->capture_default_str();
  app.add_option("--compression", f.compression,
                 "how the tables' pushes and pulls travel: none (float32), fp16, bf16 or int8 "
                 "(TableSpec::compression, docs/performance.md)")
      ->check(CLI::IsMember({"none", "fp16", "bf16", "int8"}))
      ->capture_default_str();
  app.add_option("--cache-clocks", f.train.cache_clocks,
                 "workers answer pulls from their copies while at most N clocks old and within "
                 "the policy's staleness bound (TableSpec::cache_clocks; 0: none)")
      ->capture_default_str();
  app.add_option("--cache-rows", f.train.cache_rows,
                 "with --cache-clocks: the most weight rows each worker keeps, the most often "
                 "pulled (TableSpec::cache_rows)")
      ->capture_default_str();
  app.add_option("--write-back-clocks", f.train.write_back_clocks,
                 "hold pushes back and send their sum at the latest N clocks later "
                 "(TableSpec::write_back_clocks; 0: every push is sent)")
      ->capture_default_str();
  app.add_option("--transport", f.transport, "inproc, tcp or ipc (embedded)")
      ->check([](const std::string& s) {
        const absl::StatusOr<kairos::TransportKind> kind = kairos::ParseTransportKind(s);
        return kind.ok() ? std::string() : std::string(kind.status().message());
      })
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  f.gen.seed = f.train.seed;
  f.train.in_order = f.gen.drift > 0;

  absl::StatusOr<kairos::LaunchEnvironment> launch = kairos::DetectLaunch();
  if (!launch.ok()) {
    std::fprintf(stderr, "%s\n", std::string(launch.status().message()).c_str());
    return 2;
  }
  using Role = kairos::LaunchEnvironment::Role;
  if (launch->role == Role::kCoordinator || launch->role == Role::kServer) {
    // Under mpirun or srun this rank is the job's coordinator or a server
    // (docs/multi_host.md): it needs no data.
    absl::Status s = kairos::RunWorkers(kairos::ClusterOptions(), nullptr);
    if (!s.ok()) std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return s.ok() ? 0 : 1;
  }
  const bool launched = launch->role == Role::kWorker;
  if (launched) {  // the job's shape comes from the launcher
    f.workers = std::max(1, launch->num_workers);
    f.servers = std::max(1, launch->num_servers);
  }
  const bool reporter = !launched || launch->rank == 0;
  if (f.workers < 1 || f.servers < 1) {
    std::fprintf(stderr, "--workers and --servers must be at least 1\n");
    return 2;
  }
  if (absl::Status s = logreg::CheckConfig(f.train); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 2;
  }
  if (f.train_file.empty() != f.test_file.empty()) {
    std::fprintf(stderr, "--train and --test go together\n");
    return 2;
  }
  if (!f.weights_file.empty() && f.train_file.empty()) {
    std::fprintf(stderr,
                 "--true-weights goes with --train and --test (generated data in memory has "
                 "its own)\n");
    return 2;
  }
  const bool from_files = !f.train_file.empty() && !f.generate;
  if (!from_files) {
    if (absl::Status s = logreg::CheckGeneratorConfig(f.gen); !s.ok()) {
      std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
      return 2;
    }
  }

  if (f.generate) {
    if (f.train_file.empty()) {
      std::fprintf(stderr, "--generate needs --train and --test (the files to write)\n");
      return 2;
    }
    absl::StatusOr<logreg::Generated> g = logreg::Generate(f.gen);
    absl::Status s = g.status();
    if (s.ok()) s = logreg::WriteLibsvm(f.train_file, g->train);
    if (s.ok()) s = logreg::WriteLibsvm(f.test_file, g->test);
    if (s.ok() && !f.weights_file.empty()) s = logreg::WriteTrueModel(f.weights_file, g->truth);
    if (!s.ok()) {
      std::fprintf(stderr, "--generate: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    const logreg::Evaluation ref = logreg::EvaluateTruth(g->truth, g->test);
    std::printf(
        "wrote %zu training examples to %s and %zu test examples to %s%s%s (ids 1..%llu, "
        "positives %.3f); the true weights' test log-loss %.4f, auc %.4f\n",
        g->train.num_examples(), f.train_file.c_str(), g->test.num_examples(), f.test_file.c_str(),
        f.weights_file.empty() ? "" : ", the true weights to ", f.weights_file.c_str(),
        static_cast<unsigned long long>(f.gen.num_ids), g->train.PositiveRate(), ref.loss, ref.auc);
    return 0;
  }

  // The data: read, or generated in memory.
  logreg::Dataset train;
  logreg::Dataset test;
  std::optional<logreg::TrueModel> truth;
  std::string source;
  if (from_files) {
    absl::StatusOr<logreg::Dataset> tr = logreg::ReadLibsvm(f.train_file);
    absl::StatusOr<logreg::Dataset> te =
        tr.ok() ? logreg::ReadLibsvm(f.test_file) : absl::StatusOr<logreg::Dataset>(tr.status());
    if (!tr.ok() || !te.ok()) {
      std::fprintf(stderr, "cannot read the data: %s\n",
                   std::string((tr.ok() ? te.status() : tr.status()).message()).c_str());
      return 1;
    }
    train = *std::move(tr);
    test = *std::move(te);
    if (!f.weights_file.empty()) {
      absl::StatusOr<logreg::TrueModel> t = logreg::ReadTrueModel(f.weights_file);
      if (!t.ok()) {
        std::fprintf(stderr, "cannot read the true weights: %s\n",
                     std::string(t.status().message()).c_str());
        return 1;
      }
      truth = *std::move(t);
    }
    source = f.train_file + " and " + f.test_file;
  } else {
    absl::StatusOr<logreg::Generated> g = logreg::Generate(f.gen);
    if (!g.ok()) {
      std::fprintf(stderr, "%s\n", std::string(g.status().message()).c_str());
      return 2;
    }
    train = std::move(g->train);
    test = std::move(g->test);
    truth = std::move(g->truth);
    source = "generated in memory (ids 1.." + std::to_string(f.gen.num_ids) + ", seed " +
             std::to_string(f.gen.seed) + ")";
  }
  if (train.num_examples() < static_cast<size_t>(f.workers)) {
    std::fprintf(stderr, "%zu training examples cannot be split over %d workers\n",
                 train.num_examples(), f.workers);
    return 2;
  }
  if (test.num_examples() == 0) {
    std::fprintf(stderr, "the test set has no examples\n");
    return 2;
  }
  if (train.num_examples() >= (size_t{1} << 32) || test.ids.size() >= (size_t{1} << 32)) {
    std::fprintf(stderr,
                 "the example handles fewer than 2^32 training examples and test features\n");
    return 2;
  }
  const logreg::Evaluation reference =
      truth.has_value() ? logreg::EvaluateTruth(*truth, test) : logreg::Evaluation{};
  const double data_s = Seconds(process_start);

  CsvWriter csv;
  if (!f.csv.empty() && reporter && !csv.Open(f.csv)) {
    std::fprintf(stderr, "--csv: cannot write %s\n", f.csv.c_str());
    return 2;
  }

  kairos::ClusterOptions options;
  options.num_servers = f.servers;
  options.num_workers = f.workers;
  options.transport = *kairos::ParseTransportKind(f.transport);  // checked by the flag
  options.job.policy = f.policy;
  f.train.eviction.max_bytes = f.evict_mb << 20;
  f.train.compression = *kairos::ParseCompression(f.compression);  // checked by the flag
  options.job.tables = logreg::JobTables(f.train);
  // Embedded servers report their removed rows here (launched ones count them in metrics).
  std::atomic<uint64_t> evicted{0};
  options.server.on_evicted = [&evicted](const kairos::EvictedRows& e) {
    evicted.fetch_add(e.keys.size(), std::memory_order_relaxed);
  };

  std::mutex print_mu;
  std::vector<logreg::WorkerSummary> summaries;
  logreg::Trainer::Hooks hooks;
  hooks.on_eval = [&](const logreg::EvalRecord &r) {
    csv.Write(r);
    if (r.final) return;  // printed with the summary
    std::lock_guard<std::mutex> lock(print_mu);
    std::printf(
        "epoch %3d  wall %6.1f s  train loss %s  test loss %.4f  test auc %.4f  "
        "(true weights: loss %s, auc %s; %s %%)  %6.0f it/s\n",
        r.epoch, r.wall_s, Number(r.train_loss, 4).c_str(), r.test.loss, r.test.auc,
        OrNone(r.reference.loss, 4).c_str(), OrNone(r.reference.auc, 4).c_str(),
        OrNone(100.0 * r.test.auc / r.reference.auc, 1).c_str(), r.iterations_per_s);
    std::fflush(stdout);
  };
  hooks.on_worker_done = [&](const logreg::WorkerSummary &s) {
    std::lock_guard<std::mutex> lock(print_mu);
    summaries.push_back(s);
    if (launched && s.rank != 0) {  // printed before this worker finishes, so before rank 0's end
      std::printf("%s\n", WorkerLine(s).c_str());
      std::fflush(stdout);
    }
  };
  logreg::Trainer trainer(&train, &test, reference, f.train, f.workers, hooks);
  if (reporter) {
    std::printf(
        "kairos sparse logistic regression: policy %s, %d servers, %d workers%s\n"
        "  %d epochs of %d iterations per worker (batch %d), optimizer %s, lr %g, seed %llu\n"
        "  data: %zu training examples (positives %.3f), %zu test examples, %s, ready after "
        "%.1f s\n"
        "  reference (the true weights on the test set): loss %s, auc %s\n",
        f.policy.c_str(), f.servers, f.workers, launched ? " (launched)" : "", f.train.epochs,
        trainer.IterationsPerEpoch(), f.train.batch, f.train.optimizer.c_str(),
        static_cast<double>(f.train.learning_rate), static_cast<unsigned long long>(f.train.seed),
        train.num_examples(), train.PositiveRate(), test.num_examples(), source.c_str(), data_s,
        OrNone(reference.loss, 4).c_str(), OrNone(reference.auc, 4).c_str());
    std::fflush(stdout);
  }

  trainer.Start();
  const auto run = [&](kairos::Worker& w) { return trainer.Run(w); };
  RowPeak peak;
  const absl::Status status =
      launched ? kairos::RunWorkers(options, run) : RunEmbedded(options, run, &peak);
  if (!status.ok()) {
    std::fprintf(stderr, "training failed: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  if (!reporter) return 0;

  const double wall = trainer.wall_s();
  int64_t rows_pushed = 0;
  for (const logreg::WorkerSummary &s : summaries) {
    rows_pushed += s.rows_pushed;
    if (launched && s.rank != 0) continue;
    std::printf("%s\n", WorkerLine(s).c_str());
  }
  const logreg::EvalRecord &final_eval = trainer.final_eval();
  std::printf(
      "summary: policy=%s workers=%d servers=%d optimizer=%s wall_s=%.1f process_s=%.1f "
      "final_loss=%.4f final_auc=%.4f reference_auc=%s auc_ratio=%s\n",
      f.policy.c_str(), f.workers, f.servers, f.train.optimizer.c_str(), wall,
      Seconds(process_start), final_eval.test.loss, final_eval.test.auc,
      OrNone(reference.auc, 4).c_str(), OrNone(final_eval.test.auc / reference.auc, 4).c_str());
  if (!launched) {
    std::printf(
        "weight rows pushed: %lld, removed: %llu; most held by one server: %llu rows, %.1f MiB\n",
        static_cast<long long>(rows_pushed),
        static_cast<unsigned long long>(evicted.load(std::memory_order_relaxed)),
        static_cast<unsigned long long>(peak.rows), static_cast<double>(peak.bytes) / (1 << 20));
  }
  std::printf("final test auc %.4f\n", final_eval.test.auc);
  return 0;
}
