// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A libtorch CNN trained on Fashion-MNIST through kairos (docs/pytorch.md): two convolution
// layers and a linear one, its parameters in one table (kairos::ModuleLayout), each worker
// training on its shard under any policy with kairos::TorchTrainer, the servers' optimizer
// doing the update (or, --worker-optimizer, the program's own torch::optim::Adam). The lab's
// pacing flags make a heterogeneous cluster on one machine (docs/lab.md).
//
//   build/examples/torch_fashion_mnist --policy asp      # 4 workers: 0.906 in 78 s here
//   build/apps/kairos-launch -s 2 -w 4 -- build/examples/torch_fashion_mnist --policy asp
//   mpirun -n 7 build/examples/torch_fashion_mnist --policy bsp     # 1 + 2 servers + 4
//
// Rank 0 evaluates the servers' parameters on the test set after every epoch of its own and
// at the end; the last line is `final test accuracy 0.XXXX`.

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fashion_mnist/data.h"
#include "fashion_mnist/streams.h"
#include "kairos/kairos.h"
#include "kairos/pace.h"
#include "kairos/run.h"
#include "kairos/torch.h"

namespace {

// conv(1 -> 16, 5x5) -> ReLU -> max-pool 2 -> conv(16 -> 32, 5x5) -> ReLU -> max-pool 2 ->
// linear(32 * 7 * 7 -> 10): about 29 000 parameters.
struct Cnn : torch::nn::Module {
  Cnn()
      : conv1(register_module("conv1",
                              torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 5).padding(2)))),
        conv2(register_module("conv2",
                              torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 5).padding(2)))),
        fc(register_module("fc", torch::nn::Linear(32 * 7 * 7, 10))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(conv1->forward(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2->forward(x)), 2);
    return torch::log_softmax(fc->forward(x.flatten(1)), 1);
  }

  torch::nn::Conv2d conv1;
  torch::nn::Conv2d conv2;
  torch::nn::Linear fc;
};

// A data set as tensors: images N x 1 x 28 x 28 (standardized as the loader says), labels N.
struct Tensors {
  torch::Tensor images;
  torch::Tensor labels;
};

Tensors ToTensors(const fmnist::Dataset& d) {
  const int64_t n = d.num_examples();
  // One example per column of 784 bytes in the image's row-major order: N x 784 for torch.
  torch::Tensor pixels =
      torch::from_blob(const_cast<uint8_t*>(d.pixels.data()), {n, 1, 28, 28}, torch::kUInt8);
  torch::Tensor images = pixels.to(torch::kFloat32) * d.scale + d.offset;
  torch::Tensor labels = torch::tensor(d.labels, torch::kInt64);
  return {images, labels};
}

double Accuracy(Cnn& model, const Tensors& test) {
  torch::NoGradGuard no_grad;
  model.eval();
  int64_t correct = 0;
  for (int64_t i = 0; i < test.images.size(0); i += 1000) {
    const int64_t end = std::min<int64_t>(i + 1000, test.images.size(0));
    const torch::Tensor predicted = model.forward(test.images.slice(0, i, end)).argmax(1);
    correct += predicted.eq(test.labels.slice(0, i, end)).sum().item<int64_t>();
  }
  model.train();
  return static_cast<double>(correct) / static_cast<double>(test.images.size(0));
}

struct Flags {
  std::string policy = "asp";
  int workers = 4;
  int servers = 2;
  int epochs = 8;
  int batch = 64;
  float lr = 0.0005f;
  std::string optimizer = "adam";
  bool worker_optimizer = false;
  double pace_ms = 0.0;
  std::vector<double> slowdown;
  double jitter = 0.0;
  double straggler_prob = 0.0;
  double straggler_factor = 4.0;
  int max_train = -1;
  int max_test = -1;
  uint64_t seed = 1;
  std::string data_dir = fmnist::kDefaultDataDir;
};

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{"A libtorch CNN on Fashion-MNIST through kairos (docs/pytorch.md)"};
  app.add_option("--policy", f.policy, "synchronization policy (docs/policies.md)");
  app.add_option("--workers", f.workers, "workers (embedded runs)")->check(CLI::Range(1, 64));
  app.add_option("--servers", f.servers, "servers (embedded runs)")->check(CLI::Range(1, 16));
  app.add_option("--epochs", f.epochs, "passes of each worker over its shard")
      ->check(CLI::Range(1, 1000));
  app.add_option("--batch", f.batch, "examples per iteration")->check(CLI::Range(1, 4096));
  app.add_option("--lr", f.lr, "learning rate")->check(CLI::PositiveNumber);
  app.add_option("--optimizer", f.optimizer,
                 "the servers' updater: sgd, momentum (0.9) or adam (docs/optimizers.md)")
      ->check(CLI::IsMember({"sgd", "momentum", "adam"}));
  app.add_flag("--worker-optimizer", f.worker_optimizer,
               "each worker steps its own torch::optim::Adam and pushes the change (the "
               "servers add it)");
  app.add_option("--pace-ms", f.pace_ms,
                 "paced workers: an iteration of a worker of slowdown 1 lasts this long "
                 "(docs/lab.md); 0: as fast as it computes")
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--slowdown", f.slowdown, "per-rank pace factors (4 = four times slower)")
      ->delimiter(',');
  app.add_option("--jitter", f.jitter,
                 "each iteration's paced time is multiplied by 1 + Exp(mean JITTER)");
  app.add_option("--straggler-prob", f.straggler_prob,
                 "transient stragglers: each iteration is, with this probability, "
                 "--straggler-factor times slower");
  app.add_option("--straggler-factor", f.straggler_factor, "the slowdown of a straggling iteration")
      ->capture_default_str();
  app.add_option("--max-train", f.max_train, "use the first N training examples (-1: all)");
  app.add_option("--max-test", f.max_test, "use the first N test examples (-1: all)");
  app.add_option("--seed", f.seed, "model initialization, shards and batches");
  app.add_option("--data-dir", f.data_dir, "Fashion-MNIST's IDX files");
  CLI11_PARSE(app, argc, argv);

  absl::StatusOr<kairos::LaunchEnvironment> launch = kairos::DetectLaunch();
  if (!launch.ok()) {
    std::fprintf(stderr, "%s\n", std::string(launch.status().message()).c_str());
    return 2;
  }
  using Role = kairos::LaunchEnvironment::Role;
  if (launch->role == Role::kCoordinator || launch->role == Role::kServer) {
    // Under mpirun or srun this rank is the coordinator or a server: it needs no data.
    const absl::Status s = kairos::RunWorkers(kairos::ClusterOptions(), nullptr);
    if (!s.ok()) std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return s.ok() ? 0 : 1;
  }
  // Launched, every process is one worker; rank 0 reports.
  const bool reporter = launch->role != Role::kWorker || launch->rank == 0;

  absl::StatusOr<fmnist::FashionMnist> data =
      fmnist::LoadFashionMnist(f.data_dir, f.max_train, f.max_test);
  if (!data.ok()) {
    std::fprintf(stderr, "%s (install the Debian package dataset-fashion-mnist)\n",
                 std::string(data.status().message()).c_str());
    return 1;
  }
  const Tensors train = ToTensors(data->train);
  const Tensors test = ToTensors(data->test);

  kairos::PaceOptions pace_options;
  pace_options.iteration_time = absl::Microseconds(static_cast<int64_t>(f.pace_ms * 1000));
  pace_options.slowdown = f.slowdown;
  pace_options.jitter_mean = f.jitter;
  pace_options.straggler_prob = f.straggler_prob;
  pace_options.straggler_factor = f.straggler_factor;
  pace_options.seed = f.seed;
  absl::StatusOr<kairos::PaceModel> pace = kairos::PaceModel::Create(pace_options);
  if (!pace.ok()) {
    std::fprintf(stderr, "%s\n", std::string(pace.status().message()).c_str());
    return 2;
  }

  torch::manual_seed(f.seed);
  const Cnn shape;  // every worker's module has this layout
  absl::StatusOr<kairos::ModuleLayout> layout = kairos::ModuleLayout::Of(shape);
  if (!layout.ok()) {
    std::fprintf(stderr, "%s\n", std::string(layout.status().message()).c_str());
    return 1;
  }
  kairos::ClusterOptions options;
  options.num_workers = f.workers;
  options.num_servers = f.servers;
  options.job.policy = f.policy;
  kairos::UpdaterSpec updater{f.optimizer == "momentum" ? "sgd" : f.optimizer, f.lr};
  if (f.optimizer == "momentum") updater = {"momentum", f.lr};
  if (f.worker_optimizer) updater = {"add", 1.0f};
  options.job.tables = *layout->Tables(updater);

  if (reporter) {
    std::printf("kairos + libtorch: CNN (%lld parameters), policy %s, %s, batch %d, lr %g\n",
                static_cast<long long>(layout->layout().total_size()), f.policy.c_str(),
                f.worker_optimizer ? "worker-side Adam" : ("servers' " + f.optimizer).c_str(),
                f.batch, f.lr);
    std::fflush(stdout);
  }
  const auto start = std::chrono::steady_clock::now();
  double final_accuracy = -1.0;
  const absl::Status status = kairos::RunWorkers(options, [&](kairos::Worker& w) -> absl::Status {
    torch::set_num_threads(1);  // several workers share the machine's cores
    torch::manual_seed(f.seed);
    Cnn model;
    std::unique_ptr<torch::optim::Adam> adam;
    if (f.worker_optimizer) {
      adam =
          std::make_unique<torch::optim::Adam>(model.parameters(), torch::optim::AdamOptions(f.lr));
    }
    kairos::TorchTrainer trainer(w, *layout, model,
                                 f.worker_optimizer ? kairos::TorchTrainer::Mode::kWorkerOptimizer
                                                    : kairos::TorchTrainer::Mode::kServerOptimizer);
    KAIROS_RETURN_IF_ERROR(trainer.Init());
    const std::vector<int> shard =
        fmnist::Shard(data->train.num_examples(), w.rank(), w.num_workers(), f.seed);
    const int64_t per_epoch = static_cast<int64_t>(shard.size()) / f.batch;
    const torch::Tensor order = torch::tensor(shard, torch::kInt64);
    int64_t iteration = 0;
    for (int epoch = 0; epoch < f.epochs; ++epoch) {
      for (int64_t b = 0; b < per_epoch; ++b, ++iteration) {
        const torch::Tensor idx = order.slice(0, b * f.batch, (b + 1) * f.batch);
        const torch::Tensor x = train.images.index_select(0, idx);
        const torch::Tensor y = train.labels.index_select(0, idx);
        KAIROS_RETURN_IF_ERROR(trainer.Step([&] {
          // The compute phase, paced as the lab's workers are (docs/lab.md).
          const auto began = std::chrono::steady_clock::now();
          torch::nll_loss(model.forward(x), y).backward();
          if (adam) adam->step();
          const absl::Duration target = pace->IterationTime(w.rank(), iteration);
          std::this_thread::sleep_until(began + absl::ToChronoNanoseconds(target));
        }));
      }
      if (w.rank() == 0) {
        KAIROS_RETURN_IF_ERROR(layout->PullParameters(w, model));
        std::printf("epoch %d  wall %.1f s  test accuracy %.4f\n", epoch + 1,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                    Accuracy(model, test));
        std::fflush(stdout);
      }
    }
    // Everyone's last push is in once all have passed the barrier.
    KAIROS_RETURN_IF_ERROR(w.Barrier());
    if (w.rank() == 0) {
      KAIROS_RETURN_IF_ERROR(layout->PullParameters(w, model));
      final_accuracy = Accuracy(model, test);
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    std::fprintf(stderr, "training failed: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  if (final_accuracy >= 0.0) std::printf("final test accuracy %.4f\n", final_accuracy);
  return 0;
}
