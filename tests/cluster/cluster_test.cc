// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Whole clusters in one process: exact results for BSP and ASP over S servers and W
// workers, with tables cut into several chunks per shard.

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "engine/initializer.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "tests/cluster/cluster_harness.h"
#include "transport/faulty_transport.h"

namespace kairos {
namespace {

constexpr uint64_t kSize = 1000;
constexpr float kLearningRate = 0.5f;

// Small integers: every sum and every division by W in {1, 2, 4} is exact in float32.
float Gradient(int rank, int iteration, uint64_t i) {
  return static_cast<float>((rank + 1) * (iteration + 1) + static_cast<int>(i % 7));
}

JobConfig Job(const std::string& policy) {
  JobConfig job;
  job.policy = policy;
  job.chunk_elements = 64;  // several chunks per shard
  job.tables.push_back({"w", kSize, Initializer::Zeros(), {"sgd", kLearningRate}});
  job.tables.push_back({"b", 3, Initializer::Constant(2.0f), {"sgd", kLearningRate}});
  return job;
}

ClusterOptions Options(int servers, int workers, const std::string& policy) {
  ClusterOptions o;
  o.num_servers = servers;
  o.num_workers = workers;
  o.job = Job(policy);
  o.worker.request_timeout = absl::Seconds(30);
  return o;
}

// The parameters after `rounds` BSP rounds: each round subtracts lr * mean gradient.
std::vector<float> SequentialBsp(int workers, int rounds) {
  return testing::SequentialBsp(kSize, kLearningRate, workers, rounds, Gradient);
}

class ClusterShapeTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(ClusterShapeTest, BspRoundEqualsSequentialAverage) {
  // Not a structured binding: clang 14 cannot capture one in a lambda.
  const int servers = std::get<0>(GetParam());
  const int workers = std::get<1>(GetParam());
  constexpr int kRounds = 5;
  auto cluster = LocalCluster::Create(Options(servers, workers, "bsp"));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  absl::Status s = (*cluster)->Run([&](Worker& w) -> absl::Status {
    std::vector<float> params(kSize), grad(kSize);
    for (int t = 0; t < kRounds; ++t) {
      KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
      // BSP: the read at clock t sees exactly t rounds.
      const std::vector<float> expected = SequentialBsp(workers, t);
      for (uint64_t i = 0; i < kSize; ++i) {
        if (params[i] != expected[i]) {
          return absl::InternalError(absl::StrFormat(
              "rank %d round %d element %d: got %g, want %g", w.rank(), t, i, params[i],
              expected[i]));
        }
      }
      for (uint64_t i = 0; i < kSize; ++i) grad[i] = Gradient(w.rank(), t, i);
      KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
      KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
    }
    KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
    const std::vector<float> expected = SequentialBsp(workers, kRounds);
    for (uint64_t i = 0; i < kSize; ++i) {
      if (params[i] != expected[i]) {
        return absl::InternalError(absl::StrFormat("final element %d: got %g, want %g", i,
                                                   params[i], expected[i]));
      }
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

TEST_P(ClusterShapeTest, AspAppliesEveryPushOnce) {
  const auto [servers, workers] = GetParam();
  constexpr int kIterations = 6;
  auto cluster = LocalCluster::Create(Options(servers, workers, "asp"));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // Every push applied exactly once, in some order: the sum does not depend on it.
  std::vector<float> expected(kSize, 0.0f);
  for (uint64_t i = 0; i < kSize; ++i) {
    for (int r = 0; r < workers; ++r) {
      for (int t = 0; t < kIterations; ++t) expected[i] -= kLearningRate * Gradient(r, t, i);
    }
  }
  absl::Status s = (*cluster)->Run([&](Worker& w) -> absl::Status {
    std::vector<float> params(kSize), grad(kSize);
    for (int t = 0; t < kIterations; ++t) {
      KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
      for (uint64_t i = 0; i < kSize; ++i) grad[i] = Gradient(w.rank(), t, i);
      KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
      KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
    }
    // Pushes return once applied; after the barrier every worker's pushes are in.
    KAIROS_RETURN_IF_ERROR(w.Barrier());
    KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
    for (uint64_t i = 0; i < kSize; ++i) {
      if (params[i] != expected[i]) {
        return absl::InternalError(absl::StrFormat("element %d: got %g, want %g", i,
                                                   params[i], expected[i]));
      }
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
  uint64_t applied = 0;
  for (int shard = 0; shard < servers; ++shard) {
    applied += (*cluster)->server_stats(shard).version;
  }
  // 1000 elements in chunks of <= 64: 16 chunks, rounded up to a multiple of S.
  const uint64_t chunks = (16 + servers - 1) / servers * servers;
  EXPECT_EQ(applied, chunks * workers * kIterations);
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

TEST(ClusterTest, InitializerValuesDoNotDependOnTheShardCount) {
  JobConfig job = Job("asp");
  job.tables[0].init = Initializer::Uniform(-1.0f, 1.0f, 7);
  for (int servers : {1, 3}) {
    ClusterOptions o = Options(servers, 1, "asp");
    o.job = job;
    auto cluster = LocalCluster::Create(o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    std::vector<float> params(kSize);
    ASSERT_TRUE((*cluster)->worker(0).Pull("w", params).ok());
    for (uint64_t i = 0; i < kSize; ++i) {
      ASSERT_EQ(params[i], internal::InitialValue(job.tables[0].init, i)) << i;
      ASSERT_GE(params[i], -1.0f);
      ASSERT_LE(params[i], 1.0f);
    }
    std::vector<float> b(3);
    ASSERT_TRUE((*cluster)->worker(0).Pull("b", b).ok());
    EXPECT_EQ(b, std::vector<float>(3, 2.0f));
    EXPECT_TRUE((*cluster)->Shutdown().ok());
  }
}

TEST(ClusterTest, FlowControlKeepsBspExactWithATinyWindow) {
  // 256 bytes in flight per server: one chunk message at a time, so every push waits on
  // the worker and its Clock() queues behind it; the rounds must still be exact.
  ClusterOptions o = Options(2, 4, "bsp");
  o.worker.max_bytes_in_flight_per_server = 256;
  auto cluster = LocalCluster::Create(o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  absl::Status s = (*cluster)->Run([&](Worker& w) -> absl::Status {
    std::vector<float> params(kSize);
    std::vector<Buffer> grads;
    std::vector<Request> pushes;
    for (int t = 0; t < 3; ++t) {
      KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
      if (params != SequentialBsp(4, t)) return absl::InternalError("round differs");
      grads.push_back(Buffer::Allocate(kSize));
      for (uint64_t i = 0; i < kSize; ++i) grads.back()[i] = Gradient(w.rank(), t, i);
      pushes.push_back(w.PushAsync("w", 0, grads.back()));  // not waited for
      KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
    }
    for (const Request& r : pushes) KAIROS_RETURN_IF_ERROR(r.Wait());
    KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
    return params == SequentialBsp(4, 3) ? absl::OkStatus()
                                         : absl::InternalError("final parameters differ");
  });
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

TEST(ClusterTest, TcpAndIpcTransportsGiveTheSameBspResult) {
  for (TransportKind transport : {TransportKind::kTcp, TransportKind::kIpc}) {
    ClusterOptions o = Options(2, 2, "bsp");
    o.transport = transport;
    auto cluster = LocalCluster::Create(o);
    ASSERT_TRUE(cluster.ok()) << TransportKindName(transport) << ": " << cluster.status();
    absl::Status s = (*cluster)->Run([&](Worker& w) -> absl::Status {
      std::vector<float> params(kSize), grad(kSize);
      for (int t = 0; t < 3; ++t) {
        KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
        for (uint64_t i = 0; i < kSize; ++i) grad[i] = Gradient(w.rank(), t, i);
        KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
        KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
      }
      KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
      return params == SequentialBsp(2, 3) ? absl::OkStatus()
                                            : absl::InternalError("parameters differ");
    });
    EXPECT_TRUE(s.ok()) << TransportKindName(transport) << ": " << s;
    EXPECT_TRUE((*cluster)->Shutdown().ok());
  }
}

// Pulls into a ConstBuffer: one chunk arrives as the received message itself, several are
// joined; a value pulled earlier never changes under its holder when the server updates
// the chunk (over inproc the two may share memory until then); a copy made to write into
// leaves the server's values alone.
TEST(ClusterTest, PullIntoBufferGivesTheValuesAndKeepsEarlierPullsIntact) {
  for (TransportKind transport : {TransportKind::kInproc, TransportKind::kTcp}) {
    ClusterOptions o = Options(2, 1, "asp");
    o.transport = transport;
    auto cluster = LocalCluster::Create(o);
    ASSERT_TRUE(cluster.ok()) << TransportKindName(transport) << ": " << cluster.status();
    Worker& w = (*cluster)->worker(0);
    std::vector<float> grad(kSize);
    for (uint64_t i = 0; i < kSize; ++i) grad[i] = Gradient(0, 0, i);
    ASSERT_TRUE(w.Push("w", grad).ok());

    ConstBuffer whole, one_chunk;
    ASSERT_TRUE(w.PullAsync("w", 0, kSize, &whole).Wait().ok()) << TransportKindName(transport);
    ASSERT_TRUE(w.PullAsync("w", 128, 64, &one_chunk).Wait().ok()) << TransportKindName(transport);
    ASSERT_EQ(whole.size(), kSize);
    ASSERT_EQ(one_chunk.size(), 64u);
    for (uint64_t i = 0; i < kSize; ++i) {
      ASSERT_EQ(whole[i], -kLearningRate * Gradient(0, 0, i))
          << TransportKindName(transport) << " " << i;
    }
    for (uint64_t i = 0; i < 64; ++i) ASSERT_EQ(one_chunk[i], whole[128 + i]) << i;
    ConstBuffer mine = Buffer::Zeros(kSize);  // a pull over many chunks lands in it
    const float* storage = mine.data();
    ASSERT_TRUE(w.PullAsync("w", 0, kSize, &mine).Wait().ok());
    EXPECT_EQ(mine.data(), storage);
    EXPECT_EQ(std::vector<float>(mine.data(), mine.data() + kSize),
              std::vector<float>(whole.data(), whole.data() + kSize));

    // Writing means copying: the copy is the caller's, the server's chunk stays as it is.
    Buffer writable = Buffer::CopyOf(one_chunk.span());
    writable[0] = 12345.0f;
    ConstBuffer again;
    ASSERT_TRUE(w.PullAsync("w", 128, 64, &again).Wait().ok());
    EXPECT_EQ(again[0], one_chunk[0]);
    EXPECT_NE(again[0], writable[0]);

    ASSERT_TRUE(w.Push("w", grad).ok());  // the server updates the chunks we hold
    ConstBuffer after;
    ASSERT_TRUE(w.PullAsync("w", 128, 64, &after).Wait().ok());
    for (uint64_t i = 0; i < 64; ++i) {
      ASSERT_EQ(one_chunk[i], -kLearningRate * Gradient(0, 0, 128 + i)) << "changed: " << i;
      ASSERT_EQ(after[i], 2 * one_chunk[i]) << i;
    }

    ConstBuffer untouched = Buffer::CopyOf(std::vector<float>{7.0f});
    const absl::Status outside = w.PullAsync("w", kSize - 1, 2, &untouched).Wait();
    EXPECT_EQ(outside.code(), absl::StatusCode::kInvalidArgument) << outside;
    EXPECT_EQ(untouched[0], 7.0f);
    EXPECT_EQ(w.PullAsync("w", 0, 1, nullptr).Wait().code(),
              absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(w.PullAsync("nope", 0, 1, &untouched).Wait().code(), absl::StatusCode::kNotFound);
    EXPECT_TRUE((*cluster)->Shutdown().ok());
  }
}

// SGD (w -= lr * scale * g, element by element) whose first call says it has started and
// waits until the test opens the gate, so that later pushes queue up behind it; records
// each batch's size.
class GatedSgd final : public Updater {
 public:
  struct Shared {
    absl::Notification entered;
    absl::Notification open;
    std::atomic<bool> first{true};
    absl::Mutex mu;
    std::vector<std::size_t> batches ABSL_GUARDED_BY(mu);
  };
  GatedSgd(std::shared_ptr<Shared> shared, float lr) : shared_(std::move(shared)), lr_(lr) {}

  void Apply(std::span<float> values, std::span<float>, const Update& u) const override {
    Gate();
    Record(1);
    const float scale = u.gradient_scale * u.step_scale;
    for (std::size_t i = 0; i < values.size(); ++i) values[i] -= lr_ * scale * u.gradient[i];
  }
  void ApplyMany(std::span<float> values, std::span<float>,
                 std::span<const Update> updates) const override {
    Gate();
    Record(updates.size());
    for (const Update& u : updates) {
      const float scale = u.gradient_scale * u.step_scale;
      for (std::size_t i = 0; i < values.size(); ++i) values[i] -= lr_ * scale * u.gradient[i];
    }
  }

 private:
  void Gate() const {
    if (!shared_->first.exchange(false)) return;
    shared_->entered.Notify();
    shared_->open.WaitForNotificationWithTimeout(absl::Seconds(60));
  }
  void Record(std::size_t n) const {
    absl::MutexLock lock(&shared_->mu);
    shared_->batches.push_back(n);
  }
  std::shared_ptr<Shared> shared_;
  float lr_;
};

// One server with one apply lane that every chunk goes through (none is worked on the I/O
// thread), whose updater holds the lane inside the first update until `shared` opens it.
// Every node's transport is watched (a FaultyTransport without faults), so that the test
// can wait until nothing is in flight: every message sent has been received and handled,
// every request posted to a worker's I/O thread has gone (FaultLog::in_flight).
ClusterOptions GatedLaneOptions(const std::shared_ptr<GatedSgd::Shared>& shared,
                                uint64_t chunk, uint64_t size,
                                const std::shared_ptr<internal::FaultyTransportFactory>& watch) {
  ClusterOptions o = Options(1, 1, "asp");
  o.transport_factory = watch;
  o.job.chunk_elements = chunk;
  o.job.tables = {{"w", size, Initializer::Zeros(), {"sgd", kLearningRate}}};
  o.server.apply_threads = 1;
  o.server.inline_apply_bytes = 0;
  o.server.updater_factory = [shared](const UpdaterSpec& spec)
      -> absl::StatusOr<std::unique_ptr<Updater>> {
    return std::make_unique<GatedSgd>(shared, spec.learning_rate);
  };
  return o;
}

TEST(ClusterTest, PushesThatQueueUpBehindABusyLaneAreAppliedInOnePass) {
  constexpr uint64_t kChunk = 256;
  constexpr int kPushes = 10;
  auto shared = std::make_shared<GatedSgd::Shared>();
  auto watch = std::make_shared<internal::FaultyTransportFactory>(internal::FaultPlan{});
  auto cluster = LocalCluster::Create(GatedLaneOptions(shared, kChunk, kChunk, watch));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  std::vector<Buffer> grads;
  std::vector<Request> pushes;
  for (int k = 0; k < kPushes; ++k) {
    grads.push_back(Buffer::Allocate(kChunk));
    for (uint64_t i = 0; i < kChunk; ++i) grads.back()[i] = Gradient(0, k, i);
    pushes.push_back(w.PushAsync("w", 0, grads.back()));
    // The first push alone occupies the lane; the others then queue up behind it.
    if (k == 0) {
      ASSERT_TRUE(shared->entered.WaitForNotificationWithTimeout(absl::Seconds(60)));
    }
  }
  // Every push has reached the server before the gate opens: each was counted in flight
  // from its PushAsync on, until the server had handled it.
  ASSERT_TRUE(watch->log()->AwaitInFlightAtMost(0, absl::Seconds(60)))
      << watch->log()->in_flight() << " messages still in flight";
  ASSERT_EQ((*cluster)->server_stats(0).pushes, static_cast<uint64_t>(kPushes));
  shared->open.Notify();
  for (const Request& r : pushes) ASSERT_TRUE(r.Wait().ok());

  {
    absl::MutexLock lock(&shared->mu);
    EXPECT_EQ(shared->batches, (std::vector<std::size_t>{1, kPushes - 1}));
  }
  EXPECT_EQ((*cluster)->server_stats(0).coalesced, static_cast<uint64_t>(kPushes - 2));
  EXPECT_EQ((*cluster)->server_stats(0).version, static_cast<uint64_t>(kPushes));
  std::vector<float> params(kChunk);
  ASSERT_TRUE(w.Pull("w", params).ok());
  for (uint64_t i = 0; i < kChunk; ++i) {
    float expected = 0;
    for (int k = 0; k < kPushes; ++k) expected -= kLearningRate * Gradient(0, k, i);
    ASSERT_EQ(params[i], expected) << i;
  }
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

// A pull is served on the server's I/O thread unless its chunk's lane has work of that chunk
// to finish first. With one lane held inside a push of chunk 0: a pull of chunk 1 is
// answered at once (before, it waited behind the held job), and a pull of chunk 0 waits
// for the push and returns its result.
TEST(ClusterTest, PullOfAnIdleChunkSkipsTheLaneAndAPullBehindAPushWaitsForIt) {
  constexpr uint64_t kChunk = 256;
  auto shared = std::make_shared<GatedSgd::Shared>();  // both chunks share its one lane
  auto watch = std::make_shared<internal::FaultyTransportFactory>(internal::FaultPlan{});
  auto cluster = LocalCluster::Create(GatedLaneOptions(shared, kChunk, 2 * kChunk, watch));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  Buffer grad = Buffer::Allocate(kChunk);
  for (uint64_t i = 0; i < kChunk; ++i) grad[i] = Gradient(0, 0, i);
  Request push = w.PushAsync("w", 0, grad);
  ASSERT_TRUE(shared->entered.WaitForNotificationWithTimeout(absl::Seconds(60)));

  std::vector<float> idle(kChunk, -1.0f);
  CallOptions soon;  // the lane is held for as long as the test lets it: do not wait on it
  soon.deadline = absl::Now() + absl::Seconds(10);
  absl::Status idle_pulled = w.Pull("w", kChunk, idle, soon);
  if (!idle_pulled.ok()) shared->open.Notify();  // let the held push finish before failing
  ASSERT_TRUE(idle_pulled.ok()) << idle_pulled;
  EXPECT_EQ(idle, std::vector<float>(kChunk, 0.0f));

  std::vector<float> behind(kChunk, -1.0f);
  Request pull = w.PullAsync("w", 0, behind);
  // Nothing in flight: the server has handled the pull, and an answer, had it sent one,
  // would have been handled by the worker too.
  ASSERT_TRUE(watch->log()->AwaitInFlightAtMost(0, absl::Seconds(60)))
      << watch->log()->in_flight() << " messages still in flight";
  ASSERT_EQ((*cluster)->server_stats(0).pulls, 2u);
  EXPECT_FALSE(pull.done());  // queued behind the held push
  shared->open.Notify();
  ASSERT_TRUE(push.Wait().ok());
  ASSERT_TRUE(pull.Wait().ok());
  for (uint64_t i = 0; i < kChunk; ++i) {
    ASSERT_EQ(behind[i], -kLearningRate * Gradient(0, 0, i)) << i;
  }
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

INSTANTIATE_TEST_SUITE_P(Shapes, ClusterShapeTest,
                         ::testing::Combine(::testing::Values(1, 2, 3), ::testing::Values(1, 4)),
                         [](const auto& info) -> std::string {
                           return absl::StrFormat("S%dW%d", std::get<0>(info.param),
                                                  std::get<1>(info.param));
                         });

}  // namespace
}  // namespace kairos
