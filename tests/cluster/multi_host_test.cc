// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Addresses across hosts (docs/multi_host.md), on one host over tcp: a server listening on
// a wildcard address is advertised at the address it joined the coordinator from (or its
// advertise_host), the job runs through that address, listening endpoints take a port
// range, and a worker that cannot reach a server names the address it tried.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "tests/cluster/cluster_harness.h"
#include "tests/cluster/raw_client.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uint64_t kSize = 64;

JobConfig Job() { return testing::SgdJob(kSize); }

std::unique_ptr<Coordinator> MakeCoordinator(int workers) {
  CoordinatorOptions co;
  co.num_servers = 1;
  co.num_workers = workers;
  co.job = Job();
  co.join_timeout = absl::Seconds(20);
  auto coordinator = Coordinator::Create(co);
  EXPECT_TRUE(coordinator.ok()) << coordinator.status();
  return coordinator.ok() ? *std::move(coordinator) : nullptr;
}

std::string PortOf(const std::string& endpoint) {
  return endpoint.substr(endpoint.rfind(':') + 1);
}

// The endpoint START gives the workers for shard 0.
std::string AdvertisedEndpoint(const wire::Start& start) {
  for (const wire::Node& n : start.nodes()) {
    if (n.role() == wire::SERVER && n.rank() == 0) return n.endpoint();
  }
  return "";
}

// A server listening on every interface (with `advertise_host` when not empty) in a job of
// one worker: START gives the worker tcp://`expected_host`:its port.
void ExpectAdvertisedAt(const std::string& advertise_host, const std::string& expected_host) {
  auto coordinator = MakeCoordinator(1);
  ASSERT_NE(coordinator, nullptr);
  ServerOptions so;
  so.coordinator = coordinator->endpoint();
  so.listen = "tcp://0.0.0.0:*";
  so.advertise_host = advertise_host;
  auto server = Server::Create(so);
  ASSERT_TRUE(server.ok()) << server.status();
  if (advertise_host.empty()) {
    EXPECT_THAT((*server)->endpoint(), StartsWith("tcp://0.0.0.0:"));
  }
  testing::RawClient client;
  std::optional<wire::Start> start = client.JoinAsWorker(coordinator->endpoint(), Job(), 0);
  ASSERT_TRUE(start.has_value());
  EXPECT_EQ(AdvertisedEndpoint(*start),
            absl::StrCat("tcp://", expected_host, ":", PortOf((*server)->endpoint())));
  (*server)->Shutdown();
  coordinator->Shutdown();
}

TEST(MultiHostTest, WildcardServerIsAdvertisedAtTheAddressItJoinedFrom) {
  ExpectAdvertisedAt("", "127.0.0.1");
}

TEST(MultiHostTest, AdvertiseHostWinsOverTheAddressSeen) {
  ExpectAdvertisedAt("server-7.example", "server-7.example");
}

// The whole job through the advertised address: exact values after two pushes.
TEST(MultiHostTest, JobRunsWithAServerOnEveryInterface) {
  auto coordinator = MakeCoordinator(2);
  ASSERT_NE(coordinator, nullptr);
  ServerOptions so;
  so.coordinator = coordinator->endpoint();
  so.listen = "tcp://0.0.0.0:*";
  auto server = Server::Create(so);
  ASSERT_TRUE(server.ok()) << server.status();
  WorkerOptions wo;
  wo.coordinator = coordinator->endpoint();
  wo.job = Job();
  wo.request_timeout = absl::Seconds(20);
  auto joined = testing::JoinWorkers(2, wo);
  ASSERT_TRUE(joined.ok()) << joined.status();
  std::vector<std::unique_ptr<Worker>>& workers = *joined;
  std::vector<float> grad(kSize, 1.0f);
  for (auto& w : workers) ASSERT_TRUE(w->Push("w", grad).ok());
  // A returned push is applied on the server: both are in, each a step of -1 (sgd, lr 1).
  std::vector<float> values(kSize, 0.0f);
  ASSERT_TRUE(workers[0]->Pull("w", values).ok());
  EXPECT_EQ(values, std::vector<float>(kSize, -2.0f));
  for (auto& w : workers) EXPECT_TRUE(w->Shutdown().ok());
  EXPECT_TRUE(coordinator->Wait(absl::Seconds(20)).ok());
  EXPECT_TRUE((*server)->Wait(absl::Seconds(20)).ok());
}

TEST(MultiHostTest, PortRangeTakesTheFirstFreePort) {
  // A port the OS gave this test, then a range that starts at it.
  CoordinatorOptions first;
  first.num_servers = 1;
  first.num_workers = 1;
  auto taken = Coordinator::Create(first);
  ASSERT_TRUE(taken.ok()) << taken.status();
  int port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(PortOf((*taken)->endpoint()), &port));
  CoordinatorOptions only_taken = first;
  only_taken.listen = absl::StrCat("tcp://127.0.0.1:", port, "-", port);
  auto refused = Coordinator::Create(only_taken);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr(absl::StrCat("every port of ", port, "-", port,
                                     " on 127.0.0.1 is in use")));
  if (port + 64 > 65535) GTEST_SKIP() << "the OS gave a port too near 65535 for a range";
  CoordinatorOptions range = first;
  range.listen = absl::StrCat("tcp://127.0.0.1:", port, "-", port + 64);
  auto next = Coordinator::Create(range);
  ASSERT_TRUE(next.ok()) << next.status();
  int bound = 0;
  ASSERT_TRUE(absl::SimpleAtoi(PortOf((*next)->endpoint()), &bound));
  EXPECT_GT(bound, port);
  EXPECT_LE(bound, port + 64);
  CoordinatorOptions bad = first;
  bad.listen = "tcp://127.0.0.1:7100-7000";
  auto malformed = Coordinator::Create(bad);
  ASSERT_FALSE(malformed.ok());
  EXPECT_THAT(std::string(malformed.status().message()), HasSubstr("is not a port range"));
}

// A server advertised at an address where nothing listens (127.0.0.2 reaches this host,
// the server listens on 127.0.0.1 only): the worker's request fails at its deadline naming
// the address it tried.
TEST(MultiHostTest, UnreachableServerIsNamedWithItsAddress) {
  auto coordinator = MakeCoordinator(1);
  ASSERT_NE(coordinator, nullptr);
  ServerOptions so;
  so.coordinator = coordinator->endpoint();
  so.listen = "tcp://127.0.0.1:*";
  so.advertise_host = "127.0.0.2";
  auto server = Server::Create(so);
  ASSERT_TRUE(server.ok()) << server.status();
  WorkerOptions wo;
  wo.coordinator = coordinator->endpoint();
  wo.job = Job();
  wo.request_timeout = absl::Seconds(1);
  auto worker = Worker::Create(wo);
  ASSERT_TRUE(worker.ok()) << worker.status();
  std::vector<float> grad(kSize, 1.0f);
  absl::Status s = (*worker)->Push("w", grad);
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  EXPECT_THAT(std::string(s.message()),
              HasSubstr(absl::StrCat("server 0 at tcp://127.0.0.2:", PortOf((*server)->endpoint()),
                                     " (never connected")));
  (*server)->Shutdown();
  coordinator->Shutdown();
}

}  // namespace
}  // namespace kairos
