// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The smallest kairos example: linear regression on synthetic data, trained by W workers
// against S servers under each policy in turn (parameters moved with kairos/eigen.h),
// printing the loss as it trains and a closing comparison. Embedded by default (a
// LocalCluster in this process); under
// `kairos-launch -s S -w W -- linear_regression --policy bsp` each process is one worker.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_split.h"
#include "kairos/eigen.h"
#include "kairos/kairos.h"
#include "kairos/run.h"

namespace {

struct Flags {
  int servers = 2;
  int workers = 4;
  int iterations = 1000;
  int dim = 2048;
  int samples_per_worker = 4096;
  int batch = 64;
  float learning_rate = 0.03f;
  int print_every = 200;
  // Extra compute time per iteration of the last worker: a simulated straggler, so that
  // the comparison shows what a policy does about a slow worker.
  double straggler_ms = 1.0;
  std::string policies = "bsp,asp";
  std::string transport = "inproc";
  uint64_t seed = 1;
};

// A worker's slice of the synthetic data set: y = X w* + noise, the same for a given seed
// and rank in every run.
struct Data {
  Eigen::MatrixXf x;  // samples x dim
  Eigen::VectorXf y;
};

Eigen::VectorXf TrueWeights(const Flags& f) {
  std::mt19937_64 rng(f.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Eigen::VectorXf w(f.dim);
  for (int i = 0; i < f.dim; ++i) w[i] = normal(rng);
  return w;
}

Data MakeData(const Flags& f, int rank) {
  std::mt19937_64 rng(f.seed * 1000003 + static_cast<uint64_t>(rank) + 1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Data d{Eigen::MatrixXf(f.samples_per_worker, f.dim), Eigen::VectorXf(f.samples_per_worker)};
  for (int i = 0; i < d.x.size(); ++i) d.x.data()[i] = normal(rng);
  d.y = d.x * TrueWeights(f);
  for (int i = 0; i < d.y.size(); ++i) d.y[i] += 0.01f * normal(rng);
  return d;
}

float MeanSquaredError(const Data& d, const Eigen::VectorXf& w) {
  return (d.x * w - d.y).squaredNorm() / (2.0f * static_cast<float>(d.y.size()));
}

struct Result {
  std::string policy;
  float final_loss = 0;
  double seconds = 0;
  double iterations_per_second = 0;
};

absl::Status TrainWorker(const Flags& f, const std::string& policy, kairos::Worker& w,
                         std::mutex& print_mu, float* final_loss) {
  const Data data = MakeData(f, w.rank());
  Eigen::VectorXf params(f.dim), grad(f.dim);
  std::mt19937_64 rng(f.seed + static_cast<uint64_t>(w.rank()));
  std::uniform_int_distribution<int> pick(0, f.samples_per_worker - f.batch);
  for (int it = 0; it < f.iterations; ++it) {
    KAIROS_RETURN_IF_ERROR(kairos::Pull(w, "w", params));
    const int start = pick(rng);
    const auto xb = data.x.middleRows(start, f.batch);
    const Eigen::VectorXf residual = xb * params - data.y.segment(start, f.batch);
    grad = xb.transpose() * residual / static_cast<float>(f.batch);
    if (w.rank() == w.num_workers() - 1 && f.straggler_ms > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(f.straggler_ms));
    }
    KAIROS_RETURN_IF_ERROR(kairos::Push(w, "w", grad));
    KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
    if (w.rank() == 0 && (it % f.print_every == 0 || it == f.iterations - 1)) {
      std::lock_guard<std::mutex> lock(print_mu);
      std::printf("  %-4s iteration %4d  loss %.6f\n", policy.c_str(), it,
                  MeanSquaredError(data, params));
      std::fflush(stdout);
    }
  }
  if (w.rank() == 0) {
    KAIROS_RETURN_IF_ERROR(kairos::Pull(w, "w", params));
    *final_loss = MeanSquaredError(data, params);
  }
  return absl::OkStatus();
}

absl::StatusOr<Result> Train(const Flags& f, const std::string& policy) {
  kairos::ClusterOptions options;
  options.num_servers = f.servers;
  options.num_workers = f.workers;
  options.transport = *kairos::ParseTransportKind(f.transport);  // checked by the flag
  options.job.policy = policy;
  options.job.tables.push_back(
      {"w", static_cast<uint64_t>(f.dim), kairos::Initializer::Zeros(), {"sgd", f.learning_rate}});
  std::mutex print_mu;
  Result r;
  r.policy = policy;
  const auto start = std::chrono::steady_clock::now();
  absl::Status s = kairos::RunWorkers(options, [&](kairos::Worker& w) {
    return TrainWorker(f, policy, w, print_mu, &r.final_loss);
  });
  if (!s.ok()) return s;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Iterations of all workers together per second.
  r.iterations_per_second = static_cast<double>(f.iterations) * f.workers / r.seconds;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{"kairos example: distributed linear regression under several policies"};
  app.add_option("--servers,-s", f.servers, "server shards (embedded mode)");
  app.add_option("--workers,-w", f.workers, "workers (embedded mode)");
  app.add_option("--iterations", f.iterations, "iterations per worker");
  app.add_option("--dim", f.dim, "number of model parameters");
  app.add_option("--samples", f.samples_per_worker, "training samples per worker");
  app.add_option("--batch", f.batch, "mini-batch size");
  app.add_option("--lr", f.learning_rate, "server SGD learning rate");
  app.add_option("--print-every", f.print_every, "iterations between loss lines");
  app.add_option("--straggler-ms", f.straggler_ms,
                 "extra milliseconds per iteration of the last worker (0: none)");
  app.add_option("--policy", f.policies, "comma-separated policy specs to compare");
  app.add_option("--transport", f.transport, "inproc, tcp or ipc (embedded mode)")
      ->check([](const std::string& s) {
        const absl::StatusOr<kairos::TransportKind> kind = kairos::ParseTransportKind(s);
        return kind.ok() ? std::string() : std::string(kind.status().message());
      });
  app.add_option("--seed", f.seed, "data seed");
  CLI11_PARSE(app, argc, argv);

  std::vector<std::string> policies = absl::StrSplit(f.policies, ',', absl::SkipEmpty());
  absl::StatusOr<kairos::LaunchEnvironment> launch = kairos::DetectLaunch();
  if (!launch.ok()) {
    std::fprintf(stderr, "%s\n", std::string(launch.status().message()).c_str());
    return 2;
  }
  const bool launched = launch->role != kairos::LaunchEnvironment::Role::kEmbedded;
  if (launched && policies.size() != 1) {
    std::fprintf(stderr, "launched as one process of a job, give exactly one --policy\n");
    return 2;
  }
  // Under kairos-launch, mpirun or srun every process is one node of the job; the worker of
  // rank 0 reports.
  const bool reporter =
      !launched || (launch->role == kairos::LaunchEnvironment::Role::kWorker && launch->rank == 0);
  if (launched) {
    // The job's shape comes from the launcher; -s/-w of this program do not apply.
    f.workers = std::max(1, launch->num_workers);
    f.servers = std::max(1, launch->num_servers);
  }
  if (reporter) {
    std::printf("kairos linear regression: %d servers, %d workers, %d parameters, %d "
                "iterations per worker, last worker %.1f ms slower per iteration\n",
                f.servers, f.workers, f.dim, f.iterations, f.straggler_ms);
  }
  std::vector<Result> results;
  for (const std::string& policy : policies) {
    if (reporter) std::printf("training under %s\n", policy.c_str());
    absl::StatusOr<Result> r = Train(f, policy);
    if (!r.ok()) {
      std::fprintf(stderr, "%s: %s\n", policy.c_str(), r.status().ToString().c_str());
      return 1;
    }
    results.push_back(*r);
  }
  if (!reporter) return 0;
  std::printf("\n%-8s %12s %10s %14s\n", "policy", "final loss", "wall s", "iterations/s");
  for (const Result& r : results) {
    std::printf("%-8s %12.6f %10.2f %14.0f\n", r.policy.c_str(), r.final_loss, r.seconds,
                r.iterations_per_second);
  }
  return 0;
}
