// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// RawWorkerJobTest: the fixture of the tests that send bad fields to a server with a valid
// credential. A job over tcp of one server, one real worker (rank 0) and a RawClient
// (raw_client.h) that joined as worker 1; the test sends the raw client's requests to the
// server and reads the table as the real worker sees it.

#ifndef KAIROS_TESTS_CLUSTER_RAW_WORKER_JOB_H_
#define KAIROS_TESTS_CLUSTER_RAW_WORKER_JOB_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "tests/cluster/raw_client.h"

namespace kairos::testing {

class RawWorkerJobTest : public ::testing::Test {
 protected:
  // Starts the job `job` (its first table is the one Read and Filled size): `co` and `so`
  // as given but for the job's shape and the coordinator's address.
  void StartJob(const JobConfig& job, CoordinatorOptions co = {}, ServerOptions so = {}) {
    job_ = job;
    co.num_servers = 1;
    co.num_workers = 2;
    co.job = job_;
    coordinator_ = *Coordinator::Create(co);
    so.coordinator = coordinator_->endpoint();
    server_ = *Server::Create(so);
    std::thread join([&] {
      WorkerOptions wo;
      wo.coordinator = coordinator_->endpoint();
      wo.job = job_;
      wo.rank = 0;
      wo.request_timeout = absl::Seconds(10);
      auto w = Worker::Create(wo);
      ASSERT_TRUE(w.ok()) << w.status();
      worker_ = *std::move(w);
    });
    auto start = raw_.JoinAsWorker(coordinator_->endpoint(), job_, 1);
    join.join();
    ASSERT_TRUE(start.has_value());
    ASSERT_NE(worker_, nullptr);
    server_peer_ = raw_.Connect(server_->endpoint());
  }

  // Both workers finish; the job's end is waited for (10 s at most).
  void TearDown() override {
    if (worker_) worker_->Shutdown().IgnoreError();
    internal::Message finish;
    finish.header.set_kind(wire::FINISH);
    raw_.Stamp(&finish.header);
    finish.header.set_request_id(next_id_++);
    raw_.Send(raw_.coordinator(), std::move(finish));
    worker_.reset();
    if (coordinator_) coordinator_->Wait(absl::Seconds(10)).IgnoreError();
  }

  // A request of `kind` from the raw client: a new request id, its sender and credential.
  internal::Message Stamped(wire::Kind kind) {
    internal::Message m;
    m.header.set_kind(kind);
    m.header.set_request_id(next_id_++);
    raw_.Stamp(&m.header);
    return m;
  }

  // A payload of the first table's size, every element `value`.
  Buffer Filled(float value) const {
    Buffer b = Buffer::Zeros(job_.tables[0].size);
    for (float& x : b.span()) x = value;
    return b;
  }

  // Sends `m` to the server and returns its reply, or nullopt after `timeout`.
  std::optional<internal::Message> Exchange(internal::Message m,
                                            absl::Duration timeout = absl::Seconds(10)) {
    const uint64_t id = m.header.request_id();
    raw_.Send(server_peer_, std::move(m));
    return raw_.Reply(id, timeout);
  }

  // Sends `m` to the server and returns its reply's status.
  absl::Status Roundtrip(internal::Message m) {
    std::optional<internal::Message> reply = Exchange(std::move(m));
    if (!reply) return absl::DeadlineExceededError("no reply");
    return internal::StatusOf(reply->header);
  }

  // Every element of the first table as the real worker reads it.
  std::vector<float> Read() {
    std::vector<float> out(job_.tables[0].size);
    EXPECT_TRUE(worker_->Pull(job_.tables[0].name, out).ok());
    return out;
  }

  JobConfig job_;
  std::unique_ptr<Coordinator> coordinator_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<Worker> worker_;
  RawClient raw_;
  internal::PeerId server_peer_ = 0;
  uint64_t next_id_ = 100;
};

}  // namespace kairos::testing

#endif  // KAIROS_TESTS_CLUSTER_RAW_WORKER_JOB_H_
