// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Fashion-MNIST with kairos: softmax regression or a one-hidden-layer MLP, written in Eigen,
// trained by W workers (each on its own shard of the training set) against S servers under any
// policy. Parameters move only through the Eigen-native API (kairos::PullAll/PushAll over a
// kairos::ParameterLayout). Embedded by default (a LocalCluster in this process); under
// `kairos-launch -s S -w W -- fashion_mnist ...` each process is one worker. docs/examples.md
// describes the flags, the models, the sharding, who evaluates and the CSV.
//
// The last line printed is exactly `final test accuracy 0.XXXX`.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "fashion_mnist/data.h"
#include "fashion_mnist/models.h"
#include "fashion_mnist/speed_probe.h"
#include "fashion_mnist/train.h"
#include "kairos/kairos.h"
#include "kairos/run.h"

namespace {

// The wake-up probe's sleep: the lab's pace, long enough for an idle virtual CPU to halt.
constexpr double kWakeProbeSleepMs = 8.0;

struct Flags {
  fmnist::TrainConfig train;
  std::string policy = "bsp";
  int workers = 4;
  int servers = 2;
  std::string slowdown;
  std::string shards = "random";
  std::string compression = "none";
  std::string csv;
  std::string data_dir = fmnist::kDefaultDataDir;
  std::string transport = "inproc";
  int max_train = -1;
  int max_test = -1;
  int log_pushes = 0;
  int speed_probe = 200;
  int wake_probe = 25;
};

// The defaults that meet docs/examples.md's targets on 2 cores (docs/examples.md, "Time to accuracy").
void ApplyModelDefaults(const CLI::App &app, Flags &f) {
  const bool mlp = f.train.model == "mlp";
  if (app.count("--epochs") == 0) f.train.epochs = mlp ? 15 : 30;
  if (app.count("--batch") == 0) f.train.batch = 32;
  if (app.count("--lr") == 0) f.train.learning_rate = mlp ? 0.1f : 0.03f;
}

std::string Number(double v, int decimals) {
  if (std::isnan(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// Per rank, or "?" when the servers cannot be asked (under kairos-launch).
std::string CountList(const std::vector<fmnist::PolicyCounts> &counts, int workers,
                      uint64_t fmnist::PolicyCounts::*field) {
  if (counts.empty()) return absl::StrJoin(std::vector<std::string>(workers, "?"), ",");
  std::vector<std::string> parts;
  for (const fmnist::PolicyCounts &c : counts) parts.push_back(absl::StrCat(c.*field));
  return absl::StrJoin(parts, ",");
}

std::string CountSum(const std::vector<fmnist::PolicyCounts> &counts,
                     uint64_t fmnist::PolicyCounts::*field) {
  if (counts.empty()) return "?";
  uint64_t sum = 0;
  for (const fmnist::PolicyCounts &c : counts) sum += c.*field;
  return absl::StrCat(sum);
}

// ", eager: N steps waited X s for the previous reply" under eager pull.
std::string EagerNote(const fmnist::WorkerSummary &s) {
  if (!s.eager) return "";
  return absl::StrCat(", eager: ", s.eager_waits, " steps waited ", Number(s.eager_wait_s, 2),
                      " s for the previous reply");
}

// ", wire 405.3 KB sent and 406.1 KB received per iteration" (kairos::WorkerStats).
std::string TrafficNote(const fmnist::WorkerSummary &s) {
  if (s.iterations <= 0) return "";
  const double n = static_cast<double>(s.iterations) * 1000.0;
  return absl::StrCat(", wire ", Number(static_cast<double>(s.bytes_sent) / n, 1), " KB sent and ",
                      Number(static_cast<double>(s.bytes_received) / n, 1),
                      " KB received per iteration");
}

// "worker 1: 390 iterations, compute 0.2 s, blocked 0.25 s, pushing 0.28 s, paced 8.2 s,
// 0 overruns, ..." (the worker's line at the end of a run, docs/examples.md).
std::string WorkerLine(const fmnist::WorkerSummary &s) {
  return absl::StrCat("worker ", s.rank, ": ", s.iterations, " iterations, compute ",
                      Number(s.compute_s, 1), " s, blocked ", Number(s.blocked_s, 2),
                      " s, pushing ", Number(s.push_s, 2), " s, paced ", Number(s.slowed_s, 1),
                      " s, ", s.overruns, " overruns", EagerNote(s), TrafficNote(s),
                      s.stopped ? ", stopped" : "");
}

std::string BlockedList(const std::vector<double> &blocked, const char *sep) {
  std::vector<std::string> parts;
  for (double b : blocked) parts.push_back(std::isnan(b) ? "?" : Number(b, 2));
  return absl::StrJoin(parts, sep);
}

// The CSV of the evaluations (docs/examples.md): one row each, written by rank 0's thread.
class CsvWriter {
 public:
  bool Open(const std::string &path, int workers) {
    file_ = std::fopen(path.c_str(), "w");
    if (file_ == nullptr) return false;
    std::fprintf(file_,
                 "event,epoch,iterations,wall_s,train_loss,test_loss,test_accuracy,"
                 "iterations_per_s,staleness_mean,staleness_max,dssp_grants,dssp_zero_answers,"
                 "saps_dropped,saps_downweighted,eager_wait_s,overruns");
    for (int i = 0; i < workers; ++i) std::fprintf(file_, ",blocked_s_%d", i);
    std::fprintf(file_, "\n");
    std::fflush(file_);
    return true;
  }
  void Write(const fmnist::EvalRecord &r) {
    if (file_ == nullptr) return;
    std::fprintf(file_, "%s,%s,%lld,%s,%s,%s,%s,%s,%s,%s", r.final ? "final" : "eval",
                 Number(r.epoch, 3).c_str(), static_cast<long long>(r.iterations),
                 Number(r.wall_s, 3).c_str(), Number(r.train_loss, 5).c_str(),
                 Number(r.test.loss, 5).c_str(), Number(r.test.accuracy, 4).c_str(),
                 Number(r.iterations_per_s, 1).c_str(), Number(r.staleness_mean, 3).c_str(),
                 Number(r.staleness_max, 0).c_str());
    std::fprintf(file_, ",%s,%s,%s,%s,%s,%lld", Number(r.grants, 0).c_str(),
                 Number(r.zero_answers, 0).c_str(), Number(r.dropped, 0).c_str(),
                 Number(r.downweighted, 0).c_str(), Number(r.eager_wait_s, 3).c_str(),
                 static_cast<long long>(r.overruns));
    for (double b : r.blocked_s) std::fprintf(file_, ",%s", Number(b, 3).c_str());
    std::fprintf(file_, "\n");
    std::fflush(file_);
  }
  ~CsvWriter() {
    if (file_ != nullptr) std::fclose(file_);
  }

 private:
  std::FILE *file_ = nullptr;
};

}  // namespace

int main(int argc, char **argv) {
  const auto process_start = std::chrono::steady_clock::now();
  Flags f;
  CLI::App app{
      "kairos example: Fashion-MNIST with softmax regression or an "
      "MLP (Eigen), trained by "
      "workers on shards of the training set under a synchronization "
      "policy. Embedded by "
      "default; under kairos-launch each process is one worker. The "
      "last line is "
      "'final test accuracy 0.XXXX'."};
  app.add_option("--model", f.train.model, "softmax or mlp")
      ->check(CLI::IsMember({"softmax", "mlp"}))
      ->capture_default_str();
  app.add_option("--hidden", f.train.hidden, "hidden units of the MLP")->capture_default_str();
  app.add_option("--policy", f.policy, "the job's policy spec (docs/policies.md)")
      ->capture_default_str();
  app.add_option("--workers,-w", f.workers, "workers (embedded; under kairos-launch: -w)")
      ->capture_default_str();
  app.add_option("--servers,-s", f.servers, "servers (embedded; under kairos-launch: -s)")
      ->capture_default_str();
  app.add_option("--epochs", f.train.epochs,
                 "passes of each worker over its shard (default: softmax 30, mlp 15)");
  app.add_option("--batch", f.train.batch, "examples per iteration and worker (default 32)");
  app.add_option("--lr", f.train.learning_rate,
                 "the tables' learning rate (default: softmax 0.03, mlp 0.1)");
  app.add_option("--schedule", f.train.schedule,
                 "the tables' learning-rate schedule on the servers: cosine (one cycle "
                 "down to 0 over each worker's planned iterations) or any schedule of "
                 "docs/optimizers.md, e.g. constant, step:every=500,gamma=0.5")
      ->capture_default_str();
  app.add_option("--optimizer", f.train.optimizer,
                 "the tables' updater, passed through as UpdaterSpec::name (e.g. sgd)")
      ->capture_default_str();
  app.add_option("--pace-ms", f.train.pace_ms,
                 "paced workers (docs/lab.md): an iteration of a worker of slowdown 1 "
                 "computes for this many milliseconds (the gradient, then a wait); 0: the "
                 "base is the gradient's measured time")
      ->capture_default_str();
  app.add_option("--slowdown", f.slowdown,
                 "comma-separated factor per worker, e.g. 1,1,1,4: worker i's compute "
                 "phase lasts factor x --pace-ms (without --pace-ms: factor x its measured "
                 "compute time)");
  app.add_option("--jitter", f.train.jitter_mean,
                 "each iteration's compute phase is multiplied by 1 + Exp(mean JITTER), "
                 "drawn per worker and iteration from --seed")
      ->capture_default_str();
  app.add_option("--straggler-prob", f.train.straggler_prob,
                 "transient stragglers: each iteration of each worker is, with this "
                 "probability, --straggler-factor times slower (seeded by --seed and the rank)")
      ->capture_default_str();
  app.add_option("--straggler-factor", f.train.straggler_factor,
                 "the slowdown of an iteration that straggles (--straggler-prob)")
      ->capture_default_str();
  app.add_option("--budget-s", f.train.max_wall_s,
                 "stop every worker after this many seconds of training (0: no limit)")
      ->capture_default_str();
  app.add_option("--seed", f.train.seed, "data order, shards and initial values")
      ->capture_default_str();
  app.add_option("--log-pushes", f.log_pushes,
                 "embedded: each server keeps the last N pushes of each worker and the program "
                 "reports, per worker, the mean value staleness and its correlation with the "
                 "iteration staleness (under weight=value; docs/examples.md)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--speed-probe", f.speed_probe,
                 "time this many gradients of the model alone before the cluster starts and "
                 "report their median (the machine's speed, docs/lab.md; 0: no probe)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--wake-probe", f.wake_probe,
                 "then sleep this many times for 8 ms and report the median of how late the "
                 "thread woke (the host's wake-up, docs/lab.md; 0: no probe)")
      ->check(CLI::Range(0, 10000))
      ->capture_default_str();
  app.add_option("--shards", f.shards,
                 "each worker's share of the training set: random (every class in "
                 "proportion) or by-class (sorted by label: each worker holds about 10/W of "
                 "the classes, a non-IID split)")
      ->check(CLI::IsMember({"random", "by-class"}))
      ->capture_default_str();
  app.add_option("--compression", f.compression,
                 "how the model's pushes and pulls travel: none (float32), fp16, bf16 or int8 "
                 "(TableSpec::compression, docs/performance.md)")
      ->check(CLI::IsMember({"none", "fp16", "bf16", "int8"}))
      ->capture_default_str();
  app.add_option("--cache-clocks", f.train.cache_clocks,
                 "serve a pull from the worker's last copy while it is at most this many "
                 "clocks old and within the policy's staleness bound (TableSpec::cache_clocks, "
                 "docs/performance.md; 0: every pull is a message)")
      ->check(CLI::Range(0u, kairos::kMaxCacheClocks))
      ->capture_default_str();
  app.add_option("--write-back-clocks", f.train.write_back_clocks,
                 "hold the model's pushes back and send their sum at the latest this many "
                 "clocks later (TableSpec::write_back_clocks, docs/performance.md; 0: every "
                 "push is sent)")
      ->check(CLI::Range(0u, kairos::kMaxWriteBackClocks))
      ->capture_default_str();
  app.add_option("--csv", f.csv, "write one row per evaluation to FILE (docs/examples.md)");
  app.add_option("--data-dir", f.data_dir, "the directory of the four Fashion-MNIST IDX files")
      ->capture_default_str();
  app.add_option("--target-accuracy", f.train.target_accuracy,
                 "stop every worker once an evaluation reaches this test "
                 "accuracy (0: never)")
      ->capture_default_str();
  app.add_option("--eval-every", f.train.eval_every,
                 "rank 0's iterations between snapshots of the parameters, evaluated off "
                 "the workers' path (0: after each of its epochs)")
      ->capture_default_str();
  app.add_option("--snapshot-s", f.train.snapshot_s,
                 "a snapshot of the parameters every this many seconds of wall time "
                 "instead of every --eval-every iterations (0: use --eval-every)")
      ->capture_default_str();
  app.add_option("--average-s", f.train.average_s,
                 "evaluate the mean of the snapshots of the last this many seconds instead of "
                 "each snapshot alone: SGD's noise averaged out of the accuracy curve "
                 "(docs/lab.md; 0: each alone)")
      ->capture_default_str();
  app.add_option("--transport", f.transport, "inproc, tcp or ipc (embedded)")
      ->check([](const std::string& s) {
        const absl::StatusOr<kairos::TransportKind> kind = kairos::ParseTransportKind(s);
        return kind.ok() ? std::string() : std::string(kind.status().message());
      })
      ->capture_default_str();
  app.add_option("--max-train", f.max_train, "use the first N training examples (-1: all)")
      ->capture_default_str();
  app.add_option("--max-test", f.max_test, "use the first N test examples (-1: all)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  ApplyModelDefaults(app, f);

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
  // Launched, every process is one worker; rank 0 reports.
  const bool reporter = !launched || launch->rank == 0;
  if (f.workers < 1 || f.servers < 1) {
    std::fprintf(stderr, "--workers and --servers must be at least 1\n");
    return 2;
  }
  for (const absl::string_view part : absl::StrSplit(f.slowdown, ',', absl::SkipEmpty())) {
    double factor = 0;
    if (!absl::SimpleAtod(part, &factor)) {
      std::fprintf(stderr, "--slowdown: '%s' is not a number\n", std::string(part).c_str());
      return 2;
    }
    f.train.slowdown.push_back(factor);
  }
  f.train.shards_by_class = f.shards == "by-class";
  f.train.compression = *kairos::ParseCompression(f.compression);  // checked by the flag
  if (f.train.slowdown.size() > static_cast<size_t>(f.workers)) {
    std::fprintf(stderr, "--slowdown has %zu factors for %d workers\n", f.train.slowdown.size(),
                 f.workers);
    return 2;
  }
  if (absl::Status s = fmnist::CheckConfig(f.train); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 2;
  }
  CsvWriter csv;
  if (!f.csv.empty() && reporter && !csv.Open(f.csv, f.workers)) {
    std::fprintf(stderr, "--csv: cannot write %s\n", f.csv.c_str());
    return 2;
  }

  absl::StatusOr<fmnist::FashionMnist> data =
      fmnist::LoadFashionMnist(f.data_dir, f.max_train, f.max_test);
  if (!data.ok()) {
    std::fprintf(stderr, "cannot read Fashion-MNIST: %s\n",
                 std::string(data.status().message()).c_str());
    if (absl::IsNotFound(data.status())) {
      std::fprintf(stderr,
                   "install it with `apt-get install dataset-fashion-mnist` (Debian), "
                   "or "
                   "give --data-dir, a directory holding train-images-idx3-ubyte.gz, "
                   "train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and "
                   "t10k-labels-idx1-ubyte.gz\n");
    }
    return 1;
  }
  if (data->train.num_examples() < f.workers) {
    std::fprintf(stderr, "%d training examples cannot be split over %d workers\n",
                 data->train.num_examples(), f.workers);
    return 2;
  }

  kairos::ClusterOptions options;
  options.num_servers = f.servers;
  options.num_workers = f.workers;
  options.transport = *kairos::ParseTransportKind(f.transport);  // checked by the flag
  options.job.policy = f.policy;
  options.server.push_log_size = f.log_pushes;
  absl::StatusOr<std::vector<kairos::TableSpec>> tables =
      fmnist::JobTables(f.train, data->train.num_features(),
                        fmnist::PlannedIterations(f.train, data->train.num_examples(), f.workers));
  if (!tables.ok()) {
    std::fprintf(stderr, "%s\n", std::string(tables.status().message()).c_str());
    return 2;
  }
  options.job.tables = *tables;

  const int shard = data->train.num_examples() / f.workers;
  const int batch = std::max(1, std::min(f.train.batch, shard));
  if (reporter) {
    std::printf(
        "kairos Fashion-MNIST: model %s, policy %s, %d servers, %d workers%s\n"
        "  %d epochs of %d iterations per worker (batch %d, ~%d examples per "
        "shard), "
        "optimizer %s, lr %g, pace %s, slowdown %s, shards %s, compression %s, cache %u "
        "clocks, write-back %u clocks, seed %llu\n"
        "  data: %d training and %d test examples from %s\n",
        f.train.model == "mlp" ? absl::StrCat("mlp (", f.train.hidden, " hidden)").c_str()
                               : "softmax",
        f.policy.c_str(), f.servers, f.workers, launched ? " (launched)" : "", f.train.epochs,
        std::max(1, shard / batch), batch, shard, f.train.optimizer.c_str(),
        static_cast<double>(f.train.learning_rate),
        f.train.pace_ms > 0 ? absl::StrCat(f.train.pace_ms, " ms").c_str() : "none",
        f.slowdown.empty() ? "none" : f.slowdown.c_str(), f.shards.c_str(), f.compression.c_str(),
        f.train.cache_clocks, f.train.write_back_clocks,
        static_cast<unsigned long long>(f.train.seed), data->train.num_examples(),
        data->test.num_examples(), f.data_dir.c_str());
    std::fflush(stdout);
  }

  // The machine's speed now (fashion_mnist/speed_probe.h), timed before any node starts.
  double probe_ms = fmnist::kUnknown;
  if (reporter && f.speed_probe > 0) {
    absl::StatusOr<std::unique_ptr<fmnist::Model>> model =
        fmnist::MakeModel(f.train.model, data->train.num_features(), f.train.hidden);
    absl::StatusOr<double> ms =
        model.ok() ? fmnist::MedianGradientMs(**model, data->train, batch, f.speed_probe)
                   : absl::StatusOr<double>(model.status());
    if (!ms.ok()) {
      std::fprintf(stderr, "speed probe: %s\n", std::string(ms.status().message()).c_str());
      return 2;
    }
    probe_ms = *ms;
    std::printf("speed probe: a gradient alone takes %.4f ms (median of %d)\n", probe_ms,
                f.speed_probe);
    std::fflush(stdout);
  }
  double wake_ms = fmnist::kUnknown;
  if (reporter && f.wake_probe > 0) {
    absl::StatusOr<double> ms = fmnist::MedianWakeLatenessMs(f.wake_probe, kWakeProbeSleepMs);
    if (!ms.ok()) {
      std::fprintf(stderr, "wake probe: %s\n", std::string(ms.status().message()).c_str());
      return 2;
    }
    wake_ms = *ms;
    std::printf("wake probe: a sleep of %.0f ms wakes %.4f ms late (median of %d)\n",
                kWakeProbeSleepMs, wake_ms, f.wake_probe);
    std::fflush(stdout);
  }

  std::mutex print_mu;
  std::vector<fmnist::WorkerSummary> summaries;
  std::unique_ptr<kairos::LocalCluster> cluster;
  fmnist::Trainer::Hooks hooks;
  hooks.on_eval = [&](const fmnist::EvalRecord &r) {
    csv.Write(r);
    if (r.final) return;  // printed with the summary
    std::lock_guard<std::mutex> lock(print_mu);
    std::printf(
        "epoch %6.2f  wall %7.1f s  train loss %s  test loss %.4f  "
        "test accuracy "
        "%.4f  %6.0f it/s  staleness %s  blocked s %s\n",
        r.epoch, r.wall_s, Number(r.train_loss, 4).c_str(), r.test.loss, r.test.accuracy,
        r.iterations_per_s,
        std::isnan(r.staleness_mean) ? "?" : Number(r.staleness_mean, 2).c_str(),
        BlockedList(r.blocked_s, " ").c_str());
    std::fflush(stdout);
  };
  hooks.on_worker_done = [&](const fmnist::WorkerSummary &s) {
    std::lock_guard<std::mutex> lock(print_mu);
    summaries.push_back(s);
    if (launched && s.rank != 0) {  // printed before this worker finishes, so before rank 0's end
      std::printf("%s\n", WorkerLine(s).c_str());
      std::fflush(stdout);
    }
  };

  fmnist::Trainer *trainer_ptr = nullptr;
  std::function<absl::Status(kairos::Worker &)> body = [&](kairos::Worker &w) {
    return trainer_ptr->Run(w);
  };
  absl::Status status;
  std::vector<fmnist::PolicyCounts> policy_counts;  // per rank; empty: unknown (launched)
  std::vector<fmnist::LoggedStaleness> logged;  // per rank, with --log-pushes (embedded)
  std::unique_ptr<fmnist::Trainer> trainer;
  if (launched) {
    trainer = std::make_unique<fmnist::Trainer>(&*data, f.train, f.workers, hooks);
    trainer_ptr = trainer.get();
    trainer->Start();
    status = kairos::RunWorkers(options, body);
  } else {
    // KAIROS_LOG_LEVEL for every embedded node, as RunWorkers applies it to its own.
    if (const char *name = std::getenv("KAIROS_LOG_LEVEL")) {
      const absl::StatusOr<kairos::LogLevel> level = kairos::ParseLogLevel(name);
      if (!level.ok()) {
        std::fprintf(stderr, "KAIROS_LOG_LEVEL: %s\n",
                     std::string(level.status().message()).c_str());
        return 2;
      }
      options.coordinator.log_level = options.server.log_level = options.worker.log_level = *level;
    }
    absl::StatusOr<std::unique_ptr<kairos::LocalCluster>> created =
        kairos::LocalCluster::Create(options);
    if (!created.ok()) {
      std::fprintf(stderr, "cannot start the cluster: %s\n",
                   std::string(created.status().message()).c_str());
      return 1;
    }
    cluster = *std::move(created);
    // Push staleness as the servers measured it (kairos::WorkerMetrics::staleness).
    hooks.staleness = [&cluster, servers = f.servers]() {
      fmnist::Staleness s;
      for (int shard_index = 0; shard_index < servers; ++shard_index) {
        for (const kairos::WorkerMetrics &m : cluster->server_stats(shard_index).workers) {
          s.count += m.staleness.count();
          s.sum += m.staleness.sum();
          s.max = std::max(s.max, m.staleness.max());
        }
      }
      return s;
    };
    // What the servers' policies did to each worker (kairos::WorkerMetrics).
    hooks.policy_counts = [&cluster]() { return fmnist::ServerPolicyCounts(*cluster); };
    trainer = std::make_unique<fmnist::Trainer>(&*data, f.train, f.workers, hooks);
    trainer_ptr = trainer.get();
    trainer->Start();
    status = cluster->Run(body);
    policy_counts = fmnist::ServerPolicyCounts(*cluster);
    if (f.log_pushes > 0) logged = fmnist::ServerLoggedStaleness(*cluster);
    absl::Status shutdown = cluster->Shutdown();
    if (status.ok()) status = shutdown;
  }
  if (!status.ok()) {
    std::fprintf(stderr, "training failed: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  if (!reporter) return 0;

  const double wall = trainer->wall_s();
  std::vector<double> blocked(static_cast<size_t>(f.workers), fmnist::kUnknown);
  for (const fmnist::WorkerSummary &s : summaries) {
    if (launched && s.rank != 0) continue;
    std::printf("%s\n", WorkerLine(s).c_str());
  }
  int64_t iterations = 0;
  int64_t overruns = 0;
  double blocked_sum = 0.0;
  double train_s = 0.0;     // until the last worker's loop ended (the final evaluation excluded)
  double worker_s = 0.0;    // the workers' loops together
  bool eager = false;
  int64_t eager_waits = 0;
  double eager_wait_s = 0.0;
  for (const fmnist::WorkerSummary &s : summaries) {
    blocked[static_cast<size_t>(s.rank)] = s.blocked_s;
    iterations += s.iterations;
    overruns += s.overruns;
    blocked_sum += s.blocked_s;
    train_s = std::max(train_s, s.end_s);
    worker_s += s.end_s;
    eager = eager || s.eager;
    eager_waits += s.eager_waits;
    eager_wait_s += s.eager_wait_s;
  }
  const double overrun_share =
      iterations > 0 ? static_cast<double>(overruns) / static_cast<double>(iterations) : 0.0;
  if (f.train.pace_ms > 0.0 && overrun_share > 0.01) {
    std::printf(
        "warning: %.1f %% of the paced iterations computed longer than their pace (%lld of "
        "%lld): the workers ran slower than the pace model says; use a larger --pace-ms\n",
        100.0 * overrun_share, static_cast<long long>(overruns),
        static_cast<long long>(iterations));
  }
  if (f.train.target_accuracy > 0.0) {
    if (std::isnan(trainer->time_to_target_s())) {
      std::printf("target accuracy %.4f not reached\n", f.train.target_accuracy);
    } else {
      std::printf("target accuracy %.4f reached after %.2f s (interpolated between snapshots)\n",
                  f.train.target_accuracy, trainer->time_to_target_s());
    }
  }
  const double process_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - process_start).count();
  // Under kairos-launch only rank 0's counts are known here. Rates are over the training
  // loops, not the wall time (which adds the final evaluation and the evaluator's backlog).
  std::printf(
      "summary: model=%s policy=%s workers=%d servers=%d wall_s=%.2f train_s=%.2f "
      "process_s=%.1f time_to_target_s=%s final_accuracy=%.4f iterations=%lld "
      "iterations_per_s=%.1f "
      "blocked_share=%.3f overruns=%lld blocked_s=%s pull=%s eager_waits=%lld "
      "eager_wait_s=%.3f dssp_grants=%s dssp_zero_answers=%s saps_dropped=%s "
      "saps_downweighted=%s probe_ms=%s wake_ms=%s\n",
      f.train.model.c_str(), f.policy.c_str(), f.workers, f.servers, wall, train_s, process_s,
      std::isnan(trainer->time_to_target_s()) ? "none"
                                              : Number(trainer->time_to_target_s(), 2).c_str(),
      trainer->final_accuracy(), static_cast<long long>(iterations),
      train_s > 0 ? static_cast<double>(iterations) / train_s : 0.0,
      worker_s > 0 ? blocked_sum / worker_s : 0.0, static_cast<long long>(overruns),
      BlockedList(blocked, ",").c_str(), eager ? "eager" : "on-demand",
      static_cast<long long>(eager_waits), eager_wait_s,
      CountSum(policy_counts, &fmnist::PolicyCounts::grants).c_str(),
      CountSum(policy_counts, &fmnist::PolicyCounts::zero_answers).c_str(),
      CountList(policy_counts, f.workers, &fmnist::PolicyCounts::dropped).c_str(),
      CountList(policy_counts, f.workers, &fmnist::PolicyCounts::downweighted).c_str(),
      std::isnan(probe_ms) ? "none" : Number(probe_ms, 4).c_str(),
      std::isnan(wake_ms) ? "none" : Number(wake_ms, 4).c_str());
  if (!logged.empty()) {
    std::string pushes;
    for (size_t r = 0; r < logged.size(); ++r) {
      const fmnist::LoggedStaleness &l = logged[r];
      absl::StrAppend(&pushes, r == 0 ? "" : " ", "worker ", r, ": ", l.iterations,
                      " iterations, value staleness ", Number(l.value_staleness_mean, 4),
                      ", correlation with the iteration staleness ",
                      std::isnan(l.value_iteration_correlation)
                          ? "-"
                          : Number(l.value_iteration_correlation, 3),
                      ";");
    }
    std::printf("logged pushes: %s\n", pushes.c_str());
  }
  std::printf("final test accuracy %.4f\n", trainer->final_accuracy());
  return 0;
}
