// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Bad input gets a clear error and loses nothing: a wrong length, an unknown table, a range
// outside the table, a malformed or truncated header, a wrong protocol version, a message
// from a node that never joined, an oversized message, a busy port, a mismatched job, a
// dead server. Each test checks the error says what and where, and that the server keeps
// serving with every earlier update intact.

#include <zmq.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "tests/cluster/cluster_harness.h"
#include "tests/cluster/raw_client.h"
#include "tests/cluster/raw_worker_job.h"
#include "tests/cluster/virtual_time.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;
using internal::Message;

constexpr uint64_t kSize = 100;

JobConfig Job() { return testing::SgdJob(kSize); }

// Sends `frames` from a bare ZeroMQ DEALER to `endpoint` and returns the header of the first
// reply, read with a deadline. Exercises the receiving node without any kairos code on the
// sending side.
std::optional<wire::Header> RawExchange(const std::string& endpoint,
                                        const std::vector<std::string>& messages) {
  void* ctx = zmq_ctx_new();
  void* s = zmq_socket(ctx, ZMQ_DEALER);
  int linger = 0;
  int timeout_ms = 10000;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
  zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout_ms, sizeof(timeout_ms));
  std::optional<wire::Header> reply;
  if (zmq_connect(s, endpoint.c_str()) == 0) {
    for (const std::string& m : messages) zmq_send(s, m.data(), m.size(), 0);
    zmq_msg_t frame;
    zmq_msg_init(&frame);
    if (zmq_msg_recv(&frame, s, 0) >= 0) {
      wire::Header h;
      if (h.ParseFromArray(zmq_msg_data(&frame), static_cast<int>(zmq_msg_size(&frame)))) {
        reply = h;
      }
    }
    zmq_msg_close(&frame);
  }
  zmq_close(s);
  zmq_ctx_term(ctx);
  return reply;
}

// A bare ZeroMQ DEALER of its own context whose connection's end is watched: a monitor
// reports ZMQ_EVENT_DISCONNECTED when the peer drops the connection (ZeroMQ then connects
// again by itself, and what is sent afterwards goes over the new connection).
class MonitoredDealer {
 public:
  explicit MonitoredDealer(const std::string& endpoint) {
    ctx_ = zmq_ctx_new();
    socket_ = zmq_socket(ctx_, ZMQ_DEALER);
    int linger = 0;
    zmq_setsockopt(socket_, ZMQ_LINGER, &linger, sizeof(linger));
    EXPECT_EQ(zmq_socket_monitor(socket_, "inproc://dealer-monitor", ZMQ_EVENT_DISCONNECTED), 0);
    monitor_ = zmq_socket(ctx_, ZMQ_PAIR);
    zmq_setsockopt(monitor_, ZMQ_LINGER, &linger, sizeof(linger));
    EXPECT_EQ(zmq_connect(monitor_, "inproc://dealer-monitor"), 0);
    EXPECT_EQ(zmq_connect(socket_, endpoint.c_str()), 0);
  }
  ~MonitoredDealer() {
    zmq_socket_monitor(socket_, nullptr, 0);
    zmq_close(monitor_);
    zmq_close(socket_);
    zmq_ctx_term(ctx_);
  }

  // Sends a kairos message: its encoded header, then its payload frames.
  void Send(Message m) {
    const std::string header = internal::EncodeHeader(m);
    zmq_send(socket_, header.data(), header.size(), m.payloads.empty() ? 0 : ZMQ_SNDMORE);
    for (size_t i = 0; i < m.payloads.size(); ++i) {
      zmq_send(socket_, m.payloads[i].data(), m.payloads[i].size_bytes(),
               i + 1 < m.payloads.size() ? ZMQ_SNDMORE : 0);
    }
  }

  // True once the monitor reported the connection dropped, within `timeout`.
  bool AwaitDisconnected(absl::Duration timeout) {
    zmq_pollitem_t item = {monitor_, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, absl::ToInt64Milliseconds(timeout)) <= 0) return false;
    std::vector<std::string> frames = ReceiveAll(monitor_);  // event id and value, address
    uint16_t event = 0;
    if (!frames.empty() && frames[0].size() >= sizeof(event)) {
      std::memcpy(&event, frames[0].data(), sizeof(event));
    }
    return event == ZMQ_EVENT_DISCONNECTED;
  }

  // The header of the next message that arrives within `timeout` (its other frames are
  // read and dropped), or nullopt.
  std::optional<wire::Header> NextReply(absl::Duration timeout) {
    zmq_pollitem_t item = {socket_, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, absl::ToInt64Milliseconds(timeout)) <= 0) return std::nullopt;
    std::vector<std::string> frames = ReceiveAll(socket_);
    wire::Header h;
    if (frames.empty() || !h.ParseFromString(frames[0])) return std::nullopt;
    return h;
  }

 private:
  // Every frame of the next message of `s`, which is waiting.
  static std::vector<std::string> ReceiveAll(void* s) {
    std::vector<std::string> frames;
    int more = 1;
    while (more != 0) {
      zmq_msg_t frame;
      zmq_msg_init(&frame);
      if (zmq_msg_recv(&frame, s, 0) < 0) {
        zmq_msg_close(&frame);
        break;
      }
      frames.emplace_back(static_cast<const char*>(zmq_msg_data(&frame)), zmq_msg_size(&frame));
      more = zmq_msg_more(&frame);
      zmq_msg_close(&frame);
    }
    return frames;
  }

  void* ctx_ = nullptr;
  void* socket_ = nullptr;
  void* monitor_ = nullptr;
};

// A job over tcp with one server, one real worker (rank 0) and one raw client (rank 1)
// (raw_worker_job.h); the server takes messages of at most 1 MiB.
class BadInputTest : public testing::RawWorkerJobTest {
 protected:
  void SetUp() override {
    ServerOptions so;
    so.max_message_bytes = int64_t{1} << 20;
    StartJob(Job(), {}, so);
  }

  Message Request(wire::Kind kind, uint32_t table, uint64_t offset, uint64_t length) {
    Message m = Stamped(kind);
    m.header.set_table(table);
    m.header.set_offset(offset);
    m.header.set_length(length);
    return m;
  }

  // A valid push of `value` to every element, through the raw client.
  void PushAll(float value) {
    Message m = Request(wire::PUSH, 0, 0, kSize);
    m.payloads.push_back(Filled(value));
    ASSERT_TRUE(Roundtrip(std::move(m)).ok());
  }
};

TEST_F(BadInputTest, PushWithWrongLengthIsRefusedAndNothingIsLost) {
  PushAll(1.0f);
  Message bad = Request(wire::PUSH, 0, 0, 10);
  bad.payloads.push_back(Buffer::Zeros(5));
  absl::Status s = Roundtrip(std::move(bad));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("header says 10 values"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("server 0"));
  PushAll(1.0f);
  EXPECT_EQ(Read(), std::vector<float>(kSize, -2.0f));
  // Through the API the wrong length never leaves the worker.
  std::vector<float> short_grad(kSize - 1);
  absl::Status api = worker_->Push("w", short_grad);
  EXPECT_EQ(api.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(api.message()), HasSubstr("99 values given for a table of 100"));
}

TEST_F(BadInputTest, UnknownTableIsNotFound) {
  absl::Status s = Roundtrip(Request(wire::PULL, 7, 0, 1));
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("unknown table id 7"));
  std::vector<float> out(kSize);
  absl::Status api = worker_->Pull("nope", out);
  EXPECT_EQ(api.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(api.message()), HasSubstr("unknown table 'nope'"));
  EXPECT_THAT(std::string(api.message()), HasSubstr("the job has: w"));
}

TEST_F(BadInputTest, RangeOutsideTheTableIsOutOfRange) {
  absl::Status s = Roundtrip(Request(wire::PULL, 0, kSize - 2, 5));
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("range of 5 values at offset 98 is outside table 'w'"));
  std::vector<float> out(5);
  absl::Status api = worker_->Pull("w", kSize - 2, out);
  EXPECT_EQ(api.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(api.message()), HasSubstr("does not fit the table's 100 elements"));
}

TEST_F(BadInputTest, MalformedAndTruncatedHeadersAreDroppedAndCounted) {
  PushAll(1.0f);
  Message valid = Request(wire::PULL, 0, 0, kSize);
  const std::string header = internal::EncodeHeader(valid);
  // The server answers the last, valid request from the same socket, so the bad ones
  // before it were handled (and dropped) without stopping it.
  std::optional<wire::Header> reply = RawExchange(
      server_->endpoint(), {"\xff\xff\xff\xff not a protobuf header",
                            header.substr(0, header.size() / 2), header});
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->kind(), wire::PULL_REPLY);
  EXPECT_GE(server_->stats().dropped, 2u);
  EXPECT_EQ(Read(), std::vector<float>(kSize, -1.0f));
}

TEST_F(BadInputTest, WrongProtocolVersionIsAnsweredWithTheVersions) {
  wire::Header h;
  h.set_protocol_version(99);
  h.set_kind(wire::PULL);
  h.set_request_id(5);
  h.set_sender(raw_.node_id());
  h.set_length(1);
  std::optional<wire::Header> reply = RawExchange(server_->endpoint(), {h.SerializeAsString()});
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->kind(), wire::ERROR);
  EXPECT_THAT(reply->status().message(),
              HasSubstr(absl::StrCat("protocol version 99, this node speaks ", kProtocolVersion)));
}

TEST_F(BadInputTest, MessageFromANodeThatNeverJoinedIsRefused) {
  Message m = Request(wire::PUSH, 0, 0, kSize);
  m.header.set_sender(999);
  m.payloads.push_back(Buffer::Zeros(kSize));
  absl::Status s = Roundtrip(std::move(m));
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(s.message()), HasSubstr("node 999 is not a worker of this job"));
  EXPECT_EQ(Read(), std::vector<float>(kSize, 0.0f));
}

// The oversized message is sent (with the raw worker's credential) by a bare DEALER whose
// connection's end is watched, so the test waits for what it expects instead of for a
// reply that must not come.
TEST_F(BadInputTest, OversizedMessageIsRefusedByTheTransportAndServingGoesOn) {
  PushAll(1.0f);
  MonitoredDealer client(server_->endpoint());
  Message huge = Request(wire::PUSH, 0, 0, kSize);
  huge.payloads.push_back(Buffer::Zeros((2 << 20) / sizeof(float)));  // 2 MiB > 1 MiB limit
  client.Send(std::move(huge));
  // ZeroMQ drops the connection instead of delivering the message.
  ASSERT_TRUE(client.AwaitDisconnected(absl::Seconds(10)))
      << "the server kept the connection of an oversized message";
  // The client connects again; a small request sent now is answered, and its answer is the
  // first the client gets: one connection's requests are handled, and answered, in order,
  // so an answer to the oversized message would have come before it.
  Message marker = Request(wire::PULL, 0, 0, 1);
  const uint64_t marker_id = marker.header.request_id();
  client.Send(std::move(marker));
  std::optional<wire::Header> first = client.NextReply(absl::Seconds(10));
  ASSERT_TRUE(first.has_value()) << "the client's connection did not come back";
  EXPECT_EQ(first->request_id(), marker_id);
  EXPECT_EQ(first->kind(), wire::PULL_REPLY);
  EXPECT_FALSE(client.NextReply(absl::ZeroDuration()).has_value());
  // No state change, and the job serves its clients as before.
  EXPECT_EQ(Read(), std::vector<float>(kSize, -1.0f));
  PushAll(1.0f);
  EXPECT_EQ(Read(), std::vector<float>(kSize, -2.0f));
}

TEST(CoordinatorTest, SecondCoordinatorOnATakenPortIsUnavailable) {
  CoordinatorOptions co;
  co.job = Job();
  auto first = Coordinator::Create(co);
  ASSERT_TRUE(first.ok()) << first.status();
  co.listen = (*first)->endpoint();
  auto second = Coordinator::Create(co);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(second.status().message()), HasSubstr((*first)->endpoint()));
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("in use"));
}

TEST(CoordinatorTest, WorkerWithAnotherConfigurationIsRefusedNamingTheField) {
  CoordinatorOptions co;
  co.job = Job();
  auto coordinator = Coordinator::Create(co);
  ASSERT_TRUE(coordinator.ok());
  WorkerOptions wo;
  wo.coordinator = (*coordinator)->endpoint();
  wo.job = Job();
  wo.job.tables[0].size = 200;
  auto worker = Worker::Create(wo);
  ASSERT_FALSE(worker.ok());
  EXPECT_EQ(worker.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(worker.status().message()),
              HasSubstr("table 0 ('w') size is 200 here but 100 in the job"));
  wo.job = Job();
  wo.job.policy = "bsp";
  worker = Worker::Create(wo);
  ASSERT_FALSE(worker.ok());
  EXPECT_THAT(std::string(worker.status().message()),
              HasSubstr("policy is 'bsp' here but 'asp' in the job"));
}

TEST(CoordinatorTest, JoinWithAnotherProtocolVersionIsRefusedNamingBoth) {
  CoordinatorOptions co;
  co.job = Job();
  auto coordinator = Coordinator::Create(co);
  ASSERT_TRUE(coordinator.ok());
  wire::Header h;
  h.set_protocol_version(kProtocolVersion + 1);
  h.set_kind(wire::JOIN);
  h.set_request_id(1);
  h.mutable_join()->set_role(wire::WORKER);
  std::optional<wire::Header> reply =
      RawExchange((*coordinator)->endpoint(), {h.SerializeAsString()});
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->kind(), wire::JOIN_REPLY);
  EXPECT_EQ(reply->status().code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(reply->status().message(),
              HasSubstr(absl::StrCat("protocol version ", kProtocolVersion + 1,
                                     ", this node speaks ", kProtocolVersion)));
}

TEST(CoordinatorTest, JobThatNeverStartsEndsWithADeadlineNamingWhoIsMissing) {
  CoordinatorOptions co;
  co.job = Job();
  co.num_servers = 2;
  co.num_workers = 3;
  co.join_timeout = absl::Milliseconds(300);
  // On a manual clock: the deadline passes when the test moves the clock past it.
  auto env = std::make_shared<kairos::testing::ManualEnv>(absl::FromUnixSeconds(1000));
  co.env = env;
  auto coordinator = Coordinator::Create(co);
  ASSERT_TRUE(coordinator.ok());
  env->Advance(absl::Milliseconds(301));
  absl::Status s = (*coordinator)->Wait(absl::Seconds(10));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(s.message()), HasSubstr("0 of 2 servers and 0 of 3 workers"));
}

// A worker's join deadline is on its clock: on a kairos::testing::ManualEnv moved past it, Create
// fails although far less real time passed than the join_timeout.
TEST(CoordinatorTest, WorkerJoinDeadlineFollowsItsClock) {
  CoordinatorOptions co;
  co.job = Job();
  co.num_workers = 2;  // the job never starts: only one worker comes
  auto coordinator = Coordinator::Create(co);
  ASSERT_TRUE(coordinator.ok());
  auto env = std::make_shared<kairos::testing::ManualEnv>(absl::FromUnixSeconds(1000));
  WorkerOptions wo;
  wo.coordinator = (*coordinator)->endpoint();
  wo.job = *co.job;
  wo.env = env;
  wo.join_timeout = absl::Seconds(30);
  absl::Notification created;
  absl::Status status;
  std::thread joiner([&] {
    status = Worker::Create(wo).status();
    created.Notify();
  });
  // The worker reads its deadline when it starts, so the clock moves until Create returns,
  // in steps shorter than the coordinator's silence limit (20 heartbeat intervals of
  // 500 ms: the worker heartbeats at each step and the coordinator answers at once).
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  while (!created.WaitForNotificationWithTimeout(absl::Milliseconds(10)) &&
         absl::Now() < give_up) {
    env->Advance(absl::Seconds(1));
  }
  joiner.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("did not start within 30s"));
}

TEST(DeadPeerTest, DeadServerFailsPendingRequestsInsteadOfHanging) {
  CoordinatorOptions co;
  co.job = Job();
  co.job->policy = "bsp";
  co.num_workers = 2;
  co.heartbeat_timeout = absl::Milliseconds(500);
  // Virtual time (virtual_time.h): the server's silence passes in 50 ms steps.
  test_support::VirtualTime time(absl::Milliseconds(50));
  time.ApplyTo(co);
  auto coordinator = Coordinator::Create(co);
  ASSERT_TRUE(coordinator.ok());
  ServerOptions so;
  so.coordinator = (*coordinator)->endpoint();
  so.heartbeat_interval = absl::Milliseconds(50);
  time.ApplyTo(so);
  auto server = Server::Create(so);
  ASSERT_TRUE(server.ok());
  WorkerOptions wo;
  wo.coordinator = (*coordinator)->endpoint();
  wo.job = *co.job;
  wo.heartbeat_interval = absl::Milliseconds(50);
  time.ApplyTo(wo);
  auto joined = testing::JoinWorkers(2, wo);
  ASSERT_TRUE(joined.ok()) << joined.status();
  std::vector<std::unique_ptr<Worker>>& workers = *joined;
  time.Start();
  std::vector<float> out(kSize);
  ASSERT_TRUE(workers[0]->Pull("w", out).ok());
  ASSERT_TRUE(workers[0]->AdvanceClock().ok());
  // Worker 0 is now a clock ahead: under BSP its read waits for worker 1. Kill the server.
  Request pending = workers[0]->PullAsync("w", 0, out);
  (*server)->Shutdown();
  absl::Status s = pending.Wait();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("server 0"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("silent"));
  absl::Status job = (*coordinator)->Wait(absl::Seconds(10));
  EXPECT_EQ(job.code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace kairos
