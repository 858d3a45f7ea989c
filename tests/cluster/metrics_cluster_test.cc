// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// GET /metrics of a running job: a coordinator, two servers and two workers in this process
// (inproc), each node serving its metrics on 127.0.0.1 at an OS-chosen port
// (metrics_listen "127.0.0.1:0", metrics_endpoint()). The workers push, pull and meet at a
// barrier; the scrapes, made during the job with httplib's client, must show exactly the
// requests made, consistent histograms, and the coordinator's view of the job. A busy port
// fails Create with an error naming the address. The public API alone.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "kairos/kairos.h"
#include "kairos/testing/manual_env.h"
#include "tests/cluster/cluster_harness.h"
#include "tests/metrics/busy_port.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;

constexpr int kSize = 8;

JobConfig Job() { return testing::SgdJob(kSize); }

using Samples = std::map<std::string, std::string>;

// GET http://<address>/metrics: the samples, "name{labels}" -> value.
Samples Scrape(const std::string& address) {
  httplib::Client client("http://" + address);
  client.set_connection_timeout(10);
  client.set_read_timeout(10);
  httplib::Result r = client.Get("/metrics");
  EXPECT_TRUE(r) << address << ": " << httplib::to_string(r.error());
  Samples samples;
  if (!r) return samples;
  EXPECT_EQ(r->status, 200);
  std::istringstream in(r->body);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    samples[line.substr(0, space)] = line.substr(space + 1);
  }
  return samples;
}

std::string At(const Samples& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? "<missing " + key + ">" : it->second;
}

// Histogram `name` of `labels` (`shard="0",worker="1"`): 18 cumulative buckets (17 bounds
// and +Inf), non-decreasing in the bound, the +Inf one equal to _count.
void ExpectConsistentHistogram(const Samples& m, const std::string& name,
                               const std::string& labels) {
  SCOPED_TRACE(name + "{" + labels + "}");
  const std::string prefix = name + "_bucket{" + labels + ",le=\"";
  std::vector<std::pair<double, uint64_t>> buckets;  // (bound, count)
  for (auto it = m.lower_bound(prefix); it != m.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    const std::string le = it->first.substr(prefix.size(), it->first.size() - prefix.size() - 2);
    buckets.emplace_back(le == "+Inf" ? std::numeric_limits<double>::infinity() : std::stod(le),
                         std::stoull(it->second));
  }
  std::sort(buckets.begin(), buckets.end());
  ASSERT_EQ(buckets.size(), 18u);
  for (size_t i = 1; i < buckets.size(); ++i) {
    EXPECT_GE(buckets[i].second, buckets[i - 1].second) << "le=" << buckets[i].first;
  }
  EXPECT_EQ(std::to_string(buckets.back().second), At(m, name + "_count{" + labels + "}"));
}


class MetricsClusterTest : public ::testing::Test {
 protected:
  // A coordinator (on `env_`, so its uptime is exact) and two servers, each serving its
  // metrics; then two workers, which join in parallel (Create returns once the job runs).
  void SetUp() override {
    const std::string base = "inproc://metrics-cluster-" + std::to_string(::getpid());
    CoordinatorOptions co;
    co.listen = base + "/coordinator";
    co.num_servers = 2;
    co.num_workers = 2;
    co.job = Job();
    co.context = context_;
    co.env = env_;
    co.metrics_listen = "127.0.0.1:0";
    auto coordinator = Coordinator::Create(co);
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    coordinator_ = *std::move(coordinator);
    for (int s = 0; s < 2; ++s) {
      ServerOptions so;
      so.coordinator = coordinator_->endpoint();
      so.listen = base + "/server-" + std::to_string(s);
      so.context = context_;
      so.metrics_listen = "127.0.0.1:0";
      auto server = Server::Create(so);
      ASSERT_TRUE(server.ok()) << server.status();
      servers_.push_back(*std::move(server));
    }
    WorkerOptions wo;
    wo.coordinator = coordinator_->endpoint();
    wo.context = context_;
    wo.job = Job();
    auto workers = testing::JoinWorkers(2, wo);
    ASSERT_TRUE(workers.ok()) << workers.status();
    workers_ = *std::move(workers);
  }

  // The address of shard `s`'s metrics (servers join in any order).
  std::string ShardMetrics(int s) {
    for (const auto& server : servers_) {
      if (server->stats().shard == s) return server->metrics_endpoint();
    }
    ADD_FAILURE() << "no server has shard " << s;
    return "";
  }

  std::shared_ptr<TransportContext> context_ = TransportContext::Create();
  std::shared_ptr<kairos::testing::ManualEnv> env_ = std::make_shared<kairos::testing::ManualEnv>();
  std::unique_ptr<Coordinator> coordinator_;
  std::vector<std::unique_ptr<Server>> servers_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

TEST_F(MetricsClusterTest, ScrapesExactCountersDuringTheJob) {
  std::vector<float> values(kSize), gradient(kSize, 1.0f);
  // Worker 1: a pull, three pushes, a pull; worker 0: a push and a pull. The table has one
  // chunk per shard, so each call is one message to each shard.
  Worker& w0 = *workers_[0];
  Worker& w1 = *workers_[1];
  ASSERT_TRUE(w1.Pull("w", values).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(w1.Push("w", gradient).ok());
  ASSERT_TRUE(w1.Pull("w", values).ok());
  ASSERT_TRUE(w0.Push("w", gradient).ok());
  ASSERT_TRUE(w0.Pull("w", values).ok());

  for (int s = 0; s < 2; ++s) {
    SCOPED_TRACE("shard " + std::to_string(s));
    const Samples m = Scrape(ShardMetrics(s));
    const std::string shard = "shard=\"" + std::to_string(s) + "\"";
    const std::string w0l = shard + ",worker=\"0\"", w1l = shard + ",worker=\"1\"";
    EXPECT_EQ(At(m, "kairos_pushes_total{" + w1l + "}"), "3");
    EXPECT_EQ(At(m, "kairos_pushes_total{" + w0l + "}"), "1");
    EXPECT_EQ(At(m, "kairos_pulls_total{" + w1l + "}"), "2");
    EXPECT_EQ(At(m, "kairos_pulls_total{" + w0l + "}"), "1");
    EXPECT_EQ(At(m, "kairos_server_pushes_total{" + shard + "}"), "4");
    EXPECT_EQ(At(m, "kairos_server_pulls_total{" + shard + "}"), "3");
    EXPECT_EQ(At(m, "kairos_server_updates_total{" + shard + "}"), "4");  // ASP: one a push
    EXPECT_EQ(At(m, "kairos_dropped_pushes_total{" + w1l + "}"), "0");
    EXPECT_EQ(At(m, "kairos_refused_total{" + shard + ",reason=\"bad_range\"}"), "0");
    // Each chunk holds kSize / 2 floats: 4 pushes in, 3 pulls out.
    EXPECT_EQ(At(m, "kairos_server_received_bytes_total{" + shard + "}"),
              std::to_string(4 * kSize / 2 * 4));
    EXPECT_EQ(At(m, "kairos_server_sent_bytes_total{" + shard + "}"),
              std::to_string(3 * kSize / 2 * 4));
    for (const std::string& labels : {w0l, w1l}) {
      ExpectConsistentHistogram(m, "kairos_push_staleness", labels);
      ExpectConsistentHistogram(m, "kairos_push_scale", labels);
      ExpectConsistentHistogram(m, "kairos_push_value_staleness", labels);
    }
    // Worker 1 read before its pushes, each of which then found the one before it applied:
    // staleness 0, 1, 2. ASP applies every push with scale 1.
    EXPECT_EQ(At(m, "kairos_push_staleness_count{" + w1l + "}"), "3");
    EXPECT_EQ(At(m, "kairos_push_staleness_sum{" + w1l + "}"), "3");
    EXPECT_EQ(At(m, "kairos_push_staleness_bucket{" + w1l + ",le=\"0\"}"), "1");
    EXPECT_EQ(At(m, "kairos_push_staleness_bucket{" + w1l + ",le=\"1\"}"), "2");
    EXPECT_EQ(At(m, "kairos_push_staleness_bucket{" + w1l + ",le=\"3\"}"), "3");
    EXPECT_EQ(At(m, "kairos_push_scale_bucket{" + w1l + ",le=\"0.25\"}"), "0");
    EXPECT_EQ(At(m, "kairos_push_scale_bucket{" + w1l + ",le=\"1\"}"), "3");
    EXPECT_EQ(At(m, "kairos_push_scale_sum{" + w1l + "}"), "3");
    EXPECT_EQ(At(m, "kairos_push_scale_count{" + w0l + "}"), "1");
    EXPECT_EQ(At(m, "kairos_push_value_staleness_count{" + w1l + "}"), "0");
    EXPECT_EQ(At(m, "kairos_build_info{version=\"" KAIROS_TEST_VERSION "\",build_type=\"" +
                        std::string(KAIROS_TEST_BUILD_TYPE) + "\"}"),
              "1");
    EXPECT_EQ(m.count("kairos_uptime_seconds"), 1u);
  }

  // The coordinator: the job runs with every node; then a barrier of both workers.
  Samples c = Scrape(coordinator_->metrics_endpoint());
  EXPECT_EQ(At(c, "kairos_coordinator_phase{phase=\"running\"}"), "1");
  EXPECT_EQ(At(c, "kairos_coordinator_phase{phase=\"joining\"}"), "0");
  EXPECT_EQ(At(c, "kairos_coordinator_joined_nodes{role=\"server\"}"), "2");
  EXPECT_EQ(At(c, "kairos_coordinator_joined_nodes{role=\"worker\"}"), "2");
  EXPECT_EQ(At(c, "kairos_coordinator_ready_servers"), "2");
  EXPECT_EQ(At(c, "kairos_coordinator_active_workers"), "2");
  EXPECT_EQ(At(c, "kairos_coordinator_barriers_total"), "0");
  EXPECT_EQ(At(c, "kairos_uptime_seconds"), "0");  // the coordinator's clock stands still
  std::thread other([&w0] { EXPECT_TRUE(w0.Barrier().ok()); });
  EXPECT_TRUE(w1.Barrier().ok());
  other.join();
  env_->Advance(absl::Milliseconds(2500));
  c = Scrape(coordinator_->metrics_endpoint());
  EXPECT_EQ(At(c, "kairos_coordinator_barriers_total"), "1");
  EXPECT_EQ(At(c, "kairos_coordinator_barrier_waiting"), "0");
  EXPECT_EQ(At(c, "kairos_uptime_seconds"), "2.5");

  // The job ends; the nodes serve their last counts until they are destroyed.
  for (auto& w : workers_) ASSERT_TRUE(w->Shutdown().ok());
  ASSERT_TRUE(coordinator_->Wait(absl::Seconds(30)).ok());
  c = Scrape(coordinator_->metrics_endpoint());
  EXPECT_EQ(At(c, "kairos_coordinator_phase{phase=\"done\"}"), "1");
  EXPECT_EQ(At(c, "kairos_coordinator_phase{phase=\"running\"}"), "0");
  EXPECT_EQ(At(c, "kairos_coordinator_finished_workers"), "2");
  EXPECT_EQ(At(c, "kairos_coordinator_active_workers"), "0");
  EXPECT_EQ(At(c, "kairos_coordinator_dead_nodes{role=\"worker\"}"), "0");
  const ServerStats stats = servers_[0]->stats();
  const Samples m = Scrape(servers_[0]->metrics_endpoint());
  EXPECT_EQ(At(m, "kairos_server_pushes_total{shard=\"" + std::to_string(stats.shard) + "\"}"),
            std::to_string(stats.pushes));
}

TEST(MetricsEndpointTest, OffUnlessAsked) {
  CoordinatorOptions co;
  co.job = Job();
  auto coordinator = Coordinator::Create(co);
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();
  EXPECT_EQ((*coordinator)->metrics_endpoint(), "");
  ServerOptions so;
  so.coordinator = (*coordinator)->endpoint();
  auto server = Server::Create(so);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->metrics_endpoint(), "");
}

TEST(MetricsEndpointTest, ABusyPortFailsCreateNamingTheAddress) {
  testing_util::BusyPort busy;
  const std::string want =
      "metrics: cannot listen on " + busy.address() + ": Address already in use";
  CoordinatorOptions co;
  co.job = Job();
  co.metrics_listen = busy.address();
  auto coordinator = Coordinator::Create(co);
  ASSERT_FALSE(coordinator.ok());
  EXPECT_EQ(coordinator.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(coordinator.status().message(), want);

  co.metrics_listen = "";
  coordinator = Coordinator::Create(co);
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();
  ServerOptions so;
  so.coordinator = (*coordinator)->endpoint();
  so.metrics_listen = busy.address();
  auto server = Server::Create(so);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(server.status().message(), want);
  so.metrics_listen = "localhost";
  server = Server::Create(so);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(server.status().message(), HasSubstr("metrics_listen 'localhost' is not HOST:PORT"));
}

}  // namespace
}  // namespace kairos
