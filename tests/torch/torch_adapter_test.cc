// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The libtorch adapter (kairos/torch.h) on whole clusters: exact values of tensors pushed and
// pulled (in place when contiguous, in logical order when not), refusals before anything is
// sent, a module's layout, and TorchTrainer against libtorch's own optimizers: the servers'
// SGD gives what torch::optim::SGD gives on the same gradients, and the worker-optimizer mode
// keeps a torch::optim optimizer's trajectory.

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "kairos/torch.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;

ClusterOptions OneTable(int workers, const std::string& policy, uint64_t size,
                        const UpdaterSpec& updater) {
  ClusterOptions o;
  o.num_servers = 2;
  o.num_workers = workers;
  o.job.policy = policy;
  o.job.chunk_elements = 4;  // several chunks over both servers
  o.job.tables.push_back({"t", size, Initializer::Constant(1.0f), updater});
  o.worker.request_timeout = absl::Seconds(30);
  return o;
}

std::vector<float> Values(const ::torch::Tensor& t) {
  const ::torch::Tensor c = t.contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

// A push of g[i] = i (a 2 x 3 tensor, row-major) with sgd at lr 0.5 leaves 1 - 0.5 i; the
// pull writes a contiguous tensor in place (the same storage), and a transposed view in its
// own logical order.
TEST(TorchTensorTest, PushAndPullGiveExactValues) {
  auto cluster = LocalCluster::Create(OneTable(1, "asp", 6, {"sgd", 0.5f}));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  const ::torch::Tensor g = ::torch::arange(6, ::torch::kFloat32).reshape({2, 3});
  ASSERT_TRUE(Push(w, "t", g).ok());
  ::torch::Tensor out = ::torch::zeros({2, 3});
  const float* storage = out.data_ptr<float>();
  ASSERT_TRUE(Pull(w, "t", out).ok());
  EXPECT_EQ(out.data_ptr<float>(), storage);
  EXPECT_EQ(Values(out), (std::vector<float>{1.0f, 0.5f, 0.0f, -0.5f, -1.0f, -1.5f}));
  // A 3 x 2 view of a 2 x 3 tensor (not contiguous): element k of the view's row-major order
  // is table element k.
  ::torch::Tensor base = ::torch::zeros({2, 3});
  ::torch::Tensor view = base.t();
  ASSERT_FALSE(view.is_contiguous());
  ASSERT_TRUE(Pull(w, "t", view).ok());
  EXPECT_EQ(Values(view), (std::vector<float>{1.0f, 0.5f, 0.0f, -0.5f, -1.0f, -1.5f}));
  // A pushed view is read in its logical order too, at an offset: elements 2..5 (0, -0.5,
  // -1, -1.5) get 0, 2, 1, 3 (the transpose of [[0, 1], [2, 3]]) at lr 0.5.
  const ::torch::Tensor square = ::torch::arange(4, ::torch::kFloat32).reshape({2, 2});
  ASSERT_TRUE(Push(w, "t", 2, square.t()).ok());
  ::torch::Tensor tail = ::torch::zeros({4});
  ASSERT_TRUE(Pull(w, "t", 2, tail).ok());
  EXPECT_EQ(Values(tail), (std::vector<float>{0.0f, -1.5f, -1.5f, -3.0f}));
  ASSERT_TRUE((*cluster)->Shutdown().ok());
}

// Tensors kairos cannot hold are refused with the reason, before anything is sent.
TEST(TorchTensorTest, RefusesOtherTypesAndChangesNothing) {
  auto cluster = LocalCluster::Create(OneTable(1, "asp", 6, {"sgd", 0.5f}));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  const absl::Status doubles = Push(w, "t", ::torch::ones({6}, ::torch::kFloat64));
  EXPECT_EQ(doubles.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(doubles.message(), HasSubstr("float32"));
  EXPECT_THAT(doubles.message(), HasSubstr("Double"));
  EXPECT_EQ(Pull(w, "t", ::torch::Tensor()).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Push(w, "t", ::torch::ones({5})).code(), absl::StatusCode::kInvalidArgument);
  ::torch::Tensor out = ::torch::zeros({6});
  ASSERT_TRUE(Pull(w, "t", out).ok());
  EXPECT_EQ(Values(out), std::vector<float>(6, 1.0f));  // the positive control: unchanged
  ASSERT_TRUE((*cluster)->Shutdown().ok());
}

// -------------------------------------------------------------------------- modules

struct TinyNet : ::torch::nn::Module {
  TinyNet() {
    fc1 = register_module("fc1", ::torch::nn::Linear(3, 4));
    fc2 = register_module("fc2", ::torch::nn::Linear(4, 2));
  }
  ::torch::Tensor forward(const ::torch::Tensor& x) {
    return fc2->forward(::torch::tanh(fc1->forward(x)));
  }
  ::torch::nn::Linear fc1{nullptr};
  ::torch::nn::Linear fc2{nullptr};
};

TEST(ModuleLayoutTest, OneVectorPerParameterInItsOrder) {
  TinyNet net;
  absl::StatusOr<ModuleLayout> one = ModuleLayout::Of(net);
  ASSERT_TRUE(one.ok()) << one.status();
  const std::vector<ParameterLayout::Tensor>& t = one->layout().tensors();
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].name, "fc1.weight");
  EXPECT_EQ(t[1].name, "fc1.bias");
  EXPECT_EQ(t[2].name, "fc2.weight");
  EXPECT_EQ(t[3].name, "fc2.bias");
  EXPECT_EQ(t[1].offset, 12u);
  EXPECT_EQ(t[3].offset, 12u + 4u + 8u);
  EXPECT_EQ(one->tables(), std::vector<std::string>{"model"});
  EXPECT_EQ(one->layout().table_size("model"), 12u + 4u + 8u + 2u);
  // One table per layer.
  absl::StatusOr<ModuleLayout> per_layer = ModuleLayout::Of(
      net, "", [](const std::string& name) { return name.substr(0, name.find('.')); });
  ASSERT_TRUE(per_layer.ok()) << per_layer.status();
  EXPECT_EQ(per_layer->tables(), (std::vector<std::string>{"fc1", "fc2"}));
  absl::StatusOr<std::vector<TableSpec>> specs = per_layer->Tables({"sgd", 0.1f});
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[1].size, 10u);
  // A module of doubles is refused, naming the parameter.
  TinyNet doubles;
  doubles.to(::torch::kFloat64);
  const absl::Status refused = ModuleLayout::Of(doubles).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("fc1.weight"));
}

// The options of a job for TinyNet's layout (one table).
ClusterOptions NetJob(int workers, const std::string& policy, const UpdaterSpec& updater) {
  TinyNet net;
  ClusterOptions o;
  o.num_servers = 2;
  o.num_workers = workers;
  o.job.policy = policy;
  o.job.chunk_elements = 8;
  o.job.tables = *ModuleLayout::Of(net)->Tables(updater);
  o.worker.request_timeout = absl::Seconds(30);
  return o;
}

using Batch = std::pair<::torch::Tensor, ::torch::Tensor>;

// `steps` batches of 5 examples per worker, drawn up front: libtorch's generator is global,
// so the worker threads must not draw while they run.
std::vector<std::vector<Batch>> Batches(int workers, int steps) {
  ::torch::manual_seed(1000);
  std::vector<std::vector<Batch>> out(static_cast<size_t>(workers));
  for (std::vector<Batch>& own : out) {
    for (int it = 0; it < steps; ++it)
      own.emplace_back(::torch::randn({5, 3}), ::torch::randn({5, 2}));
  }
  return out;
}

::torch::Tensor Loss(TinyNet& net, const Batch& b) {
  return ::torch::mse_loss(net.forward(b.first), b.second);
}

void ExpectSameParameters(TinyNet& a, TinyNet& b, float tolerance) {
  const std::vector<::torch::Tensor> pa = a.parameters();
  const std::vector<::torch::Tensor> pb = b.parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    EXPECT_TRUE(::torch::allclose(pa[i], pb[i], /*rtol=*/0, /*atol=*/tolerance))
        << "parameter " << i << ": " << (pa[i] - pb[i]).abs().max().item<float>();
  }
}

// Init puts rank 0's initial values on every worker; 5 BSP steps of two workers through the
// servers' SGD equal torch::optim::SGD on the mean of the two workers' gradients.
TEST(TorchTrainerTest, ServerSgdFollowsTorchSgd) {
  constexpr float kLr = 0.1f;
  constexpr int kSteps = 5;
  auto cluster = LocalCluster::Create(NetJob(2, "bsp", {"sgd", kLr}));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // The reference: rank 0's initial module, stepped locally.
  const std::vector<std::vector<Batch>> batches = Batches(2, kSteps);
  ::torch::manual_seed(7);
  TinyNet reference;
  std::vector<std::unique_ptr<TinyNet>> nets;
  for (int r = 0; r < 2; ++r) {
    ::torch::manual_seed(7 + static_cast<uint64_t>(r));  // rank 1 starts elsewhere
    nets.push_back(std::make_unique<TinyNet>());
  }
  const absl::Status run = (*cluster)->Run([&](Worker& w) -> absl::Status {
    TinyNet& net = *nets[static_cast<size_t>(w.rank())];
    absl::StatusOr<ModuleLayout> layout = ModuleLayout::Of(net);
    if (!layout.ok()) return layout.status();
    TorchTrainer trainer(w, *layout, net);
    KAIROS_RETURN_IF_ERROR(trainer.Init());
    for (const Batch& batch : batches[static_cast<size_t>(w.rank())]) {
      KAIROS_RETURN_IF_ERROR(trainer.Step([&] { Loss(net, batch).backward(); }));
    }
    return layout->PullParameters(w, net);
  });
  ASSERT_TRUE(run.ok()) << run;
  ::torch::optim::SGD sgd(reference.parameters(), ::torch::optim::SGDOptions(kLr));
  for (int it = 0; it < kSteps; ++it) {
    sgd.zero_grad();
    // The mean of the two workers' gradients (BSP's aggregation).
    (0.5 * (Loss(reference, batches[0][static_cast<size_t>(it)]) +
            Loss(reference, batches[1][static_cast<size_t>(it)])))
        .backward();
    sgd.step();
  }
  ExpectSameParameters(*nets[0], reference, 1e-6f);
  ExpectSameParameters(*nets[1], reference, 1e-6f);
}

// The worker-optimizer mode: one worker with torch::optim::SGD with momentum pushes the
// change its optimizer made, which the servers add ("add"): the servers' parameters follow
// the local optimizer's trajectory (up to the rounding of new - old + old).
TEST(TorchTrainerTest, WorkerOptimizerModeKeepsTheLocalTrajectory) {
  constexpr int kSteps = 6;
  auto cluster = LocalCluster::Create(NetJob(1, "asp", {"add", 1.0f}));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::vector<std::vector<Batch>> batches = Batches(1, kSteps);
  ::torch::manual_seed(3);
  TinyNet net;
  ::torch::manual_seed(3);
  TinyNet reference;
  const ::torch::optim::SGDOptions options = ::torch::optim::SGDOptions(0.05).momentum(0.9);
  ::torch::optim::SGD local(net.parameters(), options);
  ::torch::optim::SGD alone(reference.parameters(), options);
  Worker& w = (*cluster)->worker(0);
  absl::StatusOr<ModuleLayout> layout = ModuleLayout::Of(net);
  ASSERT_TRUE(layout.ok()) << layout.status();
  TorchTrainer trainer(w, *layout, net, TorchTrainer::Mode::kWorkerOptimizer);
  ASSERT_TRUE(trainer.Init().ok());
  for (const Batch& batch : batches[0]) {
    ASSERT_TRUE(trainer
                    .Step([&] {
                      Loss(net, batch).backward();
                      local.step();
                    })
                    .ok());
    alone.zero_grad();
    Loss(reference, batch).backward();
    alone.step();
  }
  TinyNet pulled;
  ASSERT_TRUE(layout->PullParameters(w, pulled).ok());
  ExpectSameParameters(pulled, reference, 1e-5f);
  ASSERT_TRUE((*cluster)->Shutdown().ok());
}

// A module that is not the layout's is refused before anything is sent.
TEST(TorchTrainerTest, AnotherModuleIsRefused) {
  auto cluster = LocalCluster::Create(NetJob(1, "asp", {"sgd", 0.1f}));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  TinyNet net;
  absl::StatusOr<ModuleLayout> layout = ModuleLayout::Of(net);
  ASSERT_TRUE(layout.ok());
  ::torch::nn::Linear other(3, 4);
  const absl::Status s = layout->PullParameters((*cluster)->worker(0), *other);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("same module"));
  ASSERT_TRUE((*cluster)->Shutdown().ok());
}

}  // namespace
}  // namespace kairos
