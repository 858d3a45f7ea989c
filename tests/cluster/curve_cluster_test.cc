// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Jobs with CURVE keys: a LocalCluster with keys over tcp and ipc computes exactly what one
// without keys does; a worker without keys or with another job's keys, and a bare ZeroMQ
// client, are refused by the job (counted, and no reply carrying values), and Worker::Create
// fails with a clear error long before its join deadline; a node with keys facing a job
// without keys fails as clearly; KAIROS_KEYS reaches WorkerOptions.

#include <stdlib.h>
#include <zmq.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "kairos/run.h"
#include "tests/cluster/cluster_harness.h"
#include "tests/common/scratch_dir.h"
#include "wire/message.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kSize = 300;
constexpr float kLearningRate = 0.5f;
// Refusals are reported within a few reconnection intervals; the join deadline is far away.
constexpr absl::Duration kPromptly = absl::Seconds(3);
constexpr absl::Duration kJoinTimeout = absl::Seconds(30);

CurveKeys NewKeys() {
  absl::StatusOr<CurveKeys> keys = GenerateCurveKeys();
  EXPECT_TRUE(keys.ok()) << keys.status();
  return keys.value_or(CurveKeys());
}

float Gradient(int rank, int t, uint64_t i) {
  return static_cast<float>((rank + 1) * (t + 1) + static_cast<int>(i % 7));
}

JobConfig Job(const std::string& policy) {
  JobConfig job;
  job.policy = policy;
  job.chunk_elements = 64;  // several chunks per shard
  job.tables.push_back({"w", kSize, Initializer::Zeros(), {"sgd", kLearningRate}});
  return job;
}

// The table after `rounds` BSP rounds of `workers` workers: exact in float32.
std::vector<float> SequentialBsp(int workers, int rounds) {
  return testing::SequentialBsp(kSize, kLearningRate, workers, rounds, Gradient);
}

TEST(CurveClusterTest, BspWithKeysOverTcpAndIpcGivesTheExactValues) {
  constexpr int kWorkers = 3;
  constexpr int kRounds = 4;
  for (TransportKind transport : {TransportKind::kTcp, TransportKind::kIpc}) {
    ClusterOptions o;
    o.num_servers = 2;
    o.num_workers = kWorkers;
    o.job = Job("bsp");
    o.transport = transport;
    o.keys = NewKeys();
    o.worker.request_timeout = absl::Seconds(30);
    auto cluster = LocalCluster::Create(o);
    ASSERT_TRUE(cluster.ok()) << TransportKindName(transport) << ": " << cluster.status();
    absl::Status s = (*cluster)->Run([&](Worker& w) -> absl::Status {
      std::vector<float> params(kSize), grad(kSize);
      for (int t = 0; t < kRounds; ++t) {
        KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
        if (params != SequentialBsp(kWorkers, t)) {
          return absl::InternalError(absl::StrFormat("round %d differs", t));
        }
        for (uint64_t i = 0; i < kSize; ++i) grad[i] = Gradient(w.rank(), t, i);
        KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
        KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
      }
      std::vector<float> last(kSize);
      KAIROS_RETURN_IF_ERROR(w.Pull("w", last));
      if (last != SequentialBsp(kWorkers, kRounds)) return absl::InternalError("final differs");
      return absl::OkStatus();
    });
    EXPECT_TRUE(s.ok()) << TransportKindName(transport) << ": " << s;
    for (int shard = 0; shard < 2; ++shard) {
      EXPECT_EQ((*cluster)->server_stats(shard).handshakes_refused, 0u)
          << TransportKindName(transport);
    }
    EXPECT_TRUE((*cluster)->Shutdown().ok()) << TransportKindName(transport);
  }
}

// A bare ZeroMQ DEALER (no CURVE) of its own context, sending kairos messages.
class PlainClient {
 public:
  explicit PlainClient(const std::string& endpoint) {
    ctx_ = zmq_ctx_new();
    socket_ = zmq_socket(ctx_, ZMQ_DEALER);
    int linger = 0;
    zmq_setsockopt(socket_, ZMQ_LINGER, &linger, sizeof(linger));
    EXPECT_EQ(zmq_connect(socket_, endpoint.c_str()), 0);
  }
  ~PlainClient() {
    zmq_close(socket_);
    zmq_ctx_term(ctx_);
  }
  void Send(internal::Message m) {
    const std::string header = internal::EncodeHeader(m);
    zmq_send(socket_, header.data(), header.size(), 0);
  }
  // True when anything arrives within `timeout`.
  bool Receives(absl::Duration timeout) {
    zmq_pollitem_t item = {socket_, 0, ZMQ_POLLIN, 0};
    return zmq_poll(&item, 1, absl::ToInt64Milliseconds(timeout)) > 0;
  }

 private:
  void* ctx_ = nullptr;
  void* socket_ = nullptr;
};

// Waits until `count()` reaches `n` (refusals are counted on a node's I/O thread, with no
// notification) while checking that the plain client gets nothing meanwhile. Fails at the
// deadline or when the client got something.
::testing::AssertionResult AwaitRefusals(const std::function<uint64_t()>& count, uint64_t n,
                                         PlainClient& client) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (count() < n) {
    if (client.Receives(absl::Milliseconds(10))) {
      return ::testing::AssertionFailure() << "a refused client got a reply";
    }
    if (absl::Now() >= deadline) {
      return ::testing::AssertionFailure() << "only " << count() << " refusals, not " << n;
    }
  }
  return ::testing::AssertionSuccess();
}

// True once `count()` is at least 1. A refusal is counted on the refusing node's I/O thread
// and may come a moment after the refused node gave up; the counter has no notification, so
// it is read every few milliseconds until a deadline.
bool Counted(const std::function<uint64_t()>& count) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (count() < 1) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

// A job over tcp with the keys `keys` (or none): a coordinator and one server, waiting for
// one worker.
class CurveJobTest : public ::testing::Test {
 protected:
  void StartJob(std::optional<CurveKeys> keys) {
    keys_ = keys;
    CoordinatorOptions co;
    co.num_servers = 1;
    co.num_workers = 1;
    co.job = Job("asp");
    co.keys = keys;
    absl::StatusOr<std::unique_ptr<Coordinator>> coordinator = Coordinator::Create(co);
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    coordinator_ = *std::move(coordinator);
    ServerOptions so;
    so.coordinator = coordinator_->endpoint();
    so.keys = keys;
    absl::StatusOr<std::unique_ptr<Server>> server = Server::Create(so);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  WorkerOptions WorkerWith(std::optional<CurveKeys> keys) const {
    WorkerOptions wo;
    wo.coordinator = coordinator_->endpoint();
    wo.job = Job("asp");
    wo.keys = std::move(keys);
    wo.join_timeout = kJoinTimeout;
    wo.request_timeout = absl::Seconds(10);
    return wo;
  }

  // Worker::Create with `keys` must fail promptly with Unauthenticated naming the
  // coordinator; returns the error.
  absl::Status RefusedWorker(std::optional<CurveKeys> keys) {
    const absl::Time start = absl::Now();
    absl::StatusOr<std::unique_ptr<kairos::Worker>> worker =
        kairos::Worker::Create(WorkerWith(keys));
    const absl::Duration took = absl::Now() - start;
    EXPECT_FALSE(worker.ok()) << "a worker with the wrong keys joined the job";
    if (worker.ok()) return absl::OkStatus();
    EXPECT_LT(took, kPromptly) << "the refusal took " << took;
    EXPECT_TRUE(absl::IsUnauthenticated(worker.status())) << worker.status();
    EXPECT_THAT(worker.status().message(),
                HasSubstr("worker: the coordinator at " + coordinator_->endpoint()));
    return worker.status();
  }

  void TearDown() override {
    if (coordinator_ != nullptr) coordinator_->Shutdown();
    if (server_ != nullptr) server_->Shutdown();
  }

  std::optional<CurveKeys> keys_;
  std::unique_ptr<Coordinator> coordinator_;
  std::unique_ptr<Server> server_;
};

TEST_F(CurveJobTest, AWorkerWithoutKeysIsRefusedAtOnce) {
  StartJob(NewKeys());
  absl::Status s = RefusedWorker(std::nullopt);
  EXPECT_THAT(s.message(), HasSubstr("this node has no keys"));
  EXPECT_TRUE(Counted([this] { return coordinator_->handshakes_refused(); }));
}

TEST_F(CurveJobTest, AWorkerWithAnotherJobsKeysIsRefusedAtOnce) {
  StartJob(NewKeys());
  absl::Status s = RefusedWorker(NewKeys());
  EXPECT_THAT(s.message(), HasSubstr("refused this node's CURVE keys"));
  EXPECT_TRUE(Counted([this] { return coordinator_->handshakes_refused(); }));
}

// What the bare clients below send: a pull of values the job holds, as if from its real
// worker (node 1) but without its credential, and a worker's JOIN.
internal::Message PlainPull() {
  internal::Message pull;
  pull.header.set_kind(wire::PULL);
  pull.header.set_request_id(1);
  pull.header.set_sender(1);  // the real worker's node id
  pull.header.set_table(0);
  pull.header.set_offset(0);
  pull.header.set_length(64);
  return pull;
}

internal::Message PlainJoin() {
  internal::Message join;
  join.header.set_kind(wire::JOIN);
  join.header.set_request_id(1);
  join.header.mutable_join()->set_role(wire::WORKER);
  return join;
}

// How long a refused client must get nothing. Its messages never reach a node's handler (a
// refused connection carries nothing), so no answer is on its way; the control below shows
// that the same client, sending the same messages, is answered where it is let in.
constexpr absl::Duration kNothingWindow = absl::Milliseconds(300);

// A bare ZeroMQ client at a keyed job's server and coordinator gets nothing: no reply to a
// pull of values the job holds, none to a join. The job goes on for its real worker.
TEST_F(CurveJobTest, APlainZeroMqClientGetsNoValuesAndTheJobGoesOn) {
  StartJob(NewKeys());
  absl::StatusOr<std::unique_ptr<kairos::Worker>> worker =
      kairos::Worker::Create(WorkerWith(keys_));
  ASSERT_TRUE(worker.ok()) << worker.status();
  std::vector<float> ones(kSize, 1.0f);
  ASSERT_TRUE((*worker)->Push("w", ones).ok());

  PlainClient at_server(server_->endpoint());
  at_server.Send(PlainPull());
  EXPECT_TRUE(AwaitRefusals([this] { return server_->stats().handshakes_refused; }, 1, at_server));
  EXPECT_FALSE(at_server.Receives(kNothingWindow)) << "a refused client got values";

  PlainClient at_coordinator(coordinator_->endpoint());
  at_coordinator.Send(PlainJoin());
  EXPECT_TRUE(
      AwaitRefusals([this] { return coordinator_->handshakes_refused(); }, 1, at_coordinator));
  EXPECT_FALSE(at_coordinator.Receives(kNothingWindow)) << "a refused client joined";

  std::vector<float> values(kSize);
  ASSERT_TRUE((*worker)->Pull("w", values).ok());
  EXPECT_EQ(values, std::vector<float>(kSize, -kLearningRate));
  EXPECT_TRUE((*worker)->Shutdown().ok());
  EXPECT_TRUE(coordinator_->Wait(absl::Seconds(10)).ok());
}

// The control of the test above: at a job without keys, the same bare clients sending the
// same pull and JOIN are answered (with an error: the pull lacks the worker's credential,
// the job has its one worker), so Receives sees what a node sends, and the test above fails
// should a refused client ever be answered.
TEST_F(CurveJobTest, APlainZeroMqClientOfAJobWithoutKeysIsAnswered) {
  StartJob(std::nullopt);
  absl::StatusOr<std::unique_ptr<kairos::Worker>> worker =
      kairos::Worker::Create(WorkerWith(std::nullopt));
  ASSERT_TRUE(worker.ok()) << worker.status();
  std::vector<float> ones(kSize, 1.0f);
  ASSERT_TRUE((*worker)->Push("w", ones).ok());

  PlainClient at_server(server_->endpoint());
  at_server.Send(PlainPull());
  EXPECT_TRUE(at_server.Receives(absl::Seconds(10))) << "the server did not answer the pull";
  PlainClient at_coordinator(coordinator_->endpoint());
  at_coordinator.Send(PlainJoin());
  EXPECT_TRUE(at_coordinator.Receives(absl::Seconds(10))) << "the coordinator did not answer";
  EXPECT_EQ(server_->stats().handshakes_refused, 0u);
  EXPECT_EQ(coordinator_->handshakes_refused(), 0u);

  EXPECT_TRUE((*worker)->Shutdown().ok());
  EXPECT_TRUE(coordinator_->Wait(absl::Seconds(10)).ok());
}

TEST_F(CurveJobTest, AWorkerWithKeysFailsClearlyAtAJobWithoutKeys) {
  StartJob(std::nullopt);
  absl::Status s = RefusedWorker(NewKeys());
  EXPECT_THAT(s.message(), HasSubstr("CURVE"));
  EXPECT_TRUE(Counted([this] { return coordinator_->handshakes_refused(); }));
}

TEST_F(CurveJobTest, AServerWithKeysFailsClearlyAtAJobWithoutKeys) {
  StartJob(std::nullopt);
  ServerOptions so;
  so.coordinator = coordinator_->endpoint();
  so.keys = NewKeys();
  so.join_timeout = kJoinTimeout;
  absl::StatusOr<std::unique_ptr<Server>> server = Server::Create(so);
  ASSERT_TRUE(server.ok()) << server.status();
  const absl::Time start = absl::Now();
  absl::Status s = (*server)->Wait(absl::Seconds(10));
  EXPECT_LT(absl::Now() - start, kPromptly);
  EXPECT_TRUE(absl::IsUnauthenticated(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("server: the coordinator at " + coordinator_->endpoint()));
  EXPECT_THAT(s.message(), HasSubstr("CURVE"));
}

// ---------------------------------------------------------------------- KAIROS_KEYS
class KeysEnvironmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    ::setenv("KAIROS_COORDINATOR", "tcp://127.0.0.1:1", 1);
  }
  void TearDown() override {
    ::unsetenv("KAIROS_COORDINATOR");
    ::unsetenv("KAIROS_KEYS");
  }
  testing::UniqueTempDir temp_{"kairos-keys-env-"};
  const std::string dir_ = temp_.path();
};

TEST_F(KeysEnvironmentTest, KairosKeysFillsTheWorkersKeys) {
  const CurveKeys keys = NewKeys();
  ASSERT_TRUE(WriteCurveKeys(dir_ + "/keys", keys, false).ok());
  ::setenv("KAIROS_KEYS", (dir_ + "/keys").c_str(), 1);
  absl::StatusOr<WorkerOptions> options = WorkerOptionsFromEnvironment(WorkerOptions());
  ASSERT_TRUE(options.ok()) << options.status();
  ASSERT_TRUE(options->keys.has_value());
  EXPECT_EQ(*options->keys, keys);
}

TEST_F(KeysEnvironmentTest, WithoutKairosKeysTheWorkerHasNone) {
  absl::StatusOr<WorkerOptions> options = WorkerOptionsFromEnvironment(WorkerOptions());
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_FALSE(options->keys.has_value());
}

TEST_F(KeysEnvironmentTest, AnUnusableKairosKeysIsAnErrorNamingIt) {
  ::setenv("KAIROS_KEYS", (dir_ + "/none").c_str(), 1);
  absl::StatusOr<WorkerOptions> options = WorkerOptionsFromEnvironment(WorkerOptions());
  EXPECT_TRUE(absl::IsNotFound(options.status())) << options.status();
  EXPECT_THAT(options.status().message(), HasSubstr("KAIROS_KEYS: "));
  EXPECT_THAT(options.status().message(), HasSubstr(dir_ + "/none"));
}

}  // namespace
}  // namespace kairos
