// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// MetricsExporter over real sockets on 127.0.0.1: GET /metrics answers the render
// function's text, any other path 404; a busy port is a clear Unavailable naming the
// address; a malformed address is InvalidArgument; after Stop nothing is served.

#include "metrics/exporter.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/metrics/busy_port.h"
#include "httplib.h"

namespace kairos::internal {
namespace {

using ::testing::HasSubstr;

// A client of `address` ("HOST:PORT") with short timeouts.
httplib::Client ClientOf(const std::string& address) {
  httplib::Client client("http://" + address);
  client.set_connection_timeout(5);
  client.set_read_timeout(5);
  client.set_write_timeout(5);
  return client;
}


TEST(ExporterTest, ServesTheRenderedTextAtMetrics) {
  std::atomic<int> calls{0};
  auto exporter = MetricsExporter::Start(
      "127.0.0.1:0", [&calls] { return "kairos_x " + std::to_string(++calls) + "\n"; });
  ASSERT_TRUE(exporter.ok()) << exporter.status();
  const std::string address = (*exporter)->address();
  EXPECT_THAT(address, ::testing::StartsWith("127.0.0.1:"));
  EXPECT_NE(address, "127.0.0.1:0");
  httplib::Client client = ClientOf(address);
  for (int i = 1; i <= 3; ++i) {
    httplib::Result r = client.Get("/metrics");
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "kairos_x " + std::to_string(i) + "\n");
    EXPECT_EQ(r->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  }
}

TEST(ExporterTest, AnyOtherPathIsNotFound) {
  auto exporter = MetricsExporter::Start("127.0.0.1:0", [] { return std::string("x 1\n"); });
  ASSERT_TRUE(exporter.ok()) << exporter.status();
  httplib::Client client = ClientOf((*exporter)->address());
  for (const char* path : {"/", "/metric", "/metrics/x", "/favicon.ico"}) {
    httplib::Result r = client.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 404) << path;
    EXPECT_THAT(r->body, HasSubstr("serves GET /metrics only")) << path;
  }
  httplib::Result post = client.Post("/metrics", "x", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 404);
}

TEST(ExporterTest, ServesScrapesInParallelWithBoundedThreads) {
  auto exporter = MetricsExporter::Start("127.0.0.1:0", [] { return std::string("x 1\n"); },
                                         {.threads = 2, .max_queued_connections = 2});
  ASSERT_TRUE(exporter.ok()) << exporter.status();
  const std::string address = (*exporter)->address();
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&] {
      httplib::Client client = ClientOf(address);
      for (int i = 0; i < 10; ++i) {
        httplib::Result r = client.Get("/metrics");
        if (r && r->status == 200 && r->body == "x 1\n") ++ok;
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(ok.load(), 80);
}

TEST(ExporterTest, ABusyPortIsUnavailableNamingTheAddress) {
  testing_util::BusyPort busy;
  const std::string address = "127.0.0.1:" + std::to_string(busy.port());
  auto exporter = MetricsExporter::Start(address, [] { return std::string(); });
  ASSERT_FALSE(exporter.ok());
  EXPECT_EQ(exporter.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(exporter.status().message(),
            "metrics: cannot listen on " + address + ": Address already in use");
}

TEST(ExporterTest, AnAddressOfNoInterfaceHereIsUnavailable) {
  // 192.0.2.1 is TEST-NET-1 (RFC 5737): no interface of a test machine has it.
  auto exporter = MetricsExporter::Start("192.0.2.1:0", [] { return std::string(); });
  ASSERT_FALSE(exporter.ok());
  EXPECT_EQ(exporter.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(exporter.status().message(),
            "metrics: cannot listen on 192.0.2.1:0: Cannot assign requested address");
  auto unknown = MetricsExporter::Start("no-such-host.invalid:0", [] { return std::string(); });
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("metrics: cannot listen on no-such-host.invalid:0: host "
                        "'no-such-host.invalid': "));
}

TEST(ExporterTest, TwoExportersCannotShareAPort) {
  auto first = MetricsExporter::Start("127.0.0.1:0", [] { return std::string("a 1\n"); });
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = MetricsExporter::Start((*first)->address(), [] { return std::string(); });
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr((*first)->address()));
}

TEST(ExporterTest, RefusesAddressesThatAreNotHostPort) {
  for (const char* address : {"", "9100", "127.0.0.1", ":9100", "127.0.0.1:", "127.0.0.1:x",
                              "127.0.0.1:65536", "127.0.0.1:-1", "::1:9100", "h:123456"}) {
    auto exporter = MetricsExporter::Start(address, [] { return std::string(); });
    ASSERT_FALSE(exporter.ok()) << address;
    EXPECT_EQ(exporter.status().code(), absl::StatusCode::kInvalidArgument) << address;
    EXPECT_THAT(exporter.status().message(),
                HasSubstr(std::string("metrics_listen '") + address + "' is not HOST:PORT"));
  }
  absl::StatusOr<HostPort> v6 = ParseHostPort("[::1]:9100", "x");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 9100);
  absl::StatusOr<HostPort> any = ParseHostPort("0.0.0.0:0", "x");
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_EQ(any->host, "0.0.0.0");
  EXPECT_EQ(any->port, 0);
}

TEST(ExporterTest, NothingIsServedAfterStop) {
  std::atomic<int> calls{0};
  auto exporter = MetricsExporter::Start("127.0.0.1:0", [&calls] {
    ++calls;
    return std::string("x 1\n");
  });
  ASSERT_TRUE(exporter.ok()) << exporter.status();
  const std::string address = (*exporter)->address();
  httplib::Client client = ClientOf(address);
  ASSERT_TRUE(client.Get("/metrics"));
  (*exporter)->Stop();
  (*exporter)->Stop();  // idempotent
  httplib::Result r = client.Get("/metrics");
  EXPECT_FALSE(r);
  EXPECT_EQ(calls.load(), 1);
  // The port is free again.
  auto again = MetricsExporter::Start(address, [] { return std::string(); });
  EXPECT_TRUE(again.ok()) << again.status();
}

// Connects to `address` (127.0.0.1:PORT), sends GET /metrics, reads a little of the reply
// and closes the connection with a reset.
void HangUpMidReply(const std::string& address) {
  const int port = std::stoi(address.substr(address.rfind(':') + 1));
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  timeval timeout = {5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  char buffer[256];
  EXPECT_GT(::recv(fd, buffer, sizeof(buffer), 0), 0);
  linger reset = {1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  ::close(fd);
}

TEST(ExporterTest, AScraperThatHangsUpDoesNotEndTheProcess) {
  // A reply far larger than the socket buffers: the server is still writing when the
  // connection is reset, and its next write fails with EPIPE (SIGPIPE unless blocked).
  auto exporter = MetricsExporter::Start("127.0.0.1:0", [] { return std::string(16 << 20, 'x'); });
  ASSERT_TRUE(exporter.ok()) << exporter.status();
  for (int i = 0; i < 4; ++i) HangUpMidReply((*exporter)->address());
  httplib::Client client = ClientOf((*exporter)->address());
  httplib::Result r = client.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body.size(), size_t{16} << 20);
}

TEST(ExporterTest, LeavesTheProgramsSigpipeDispositionAlone) {
  // httplib's server constructor ignores SIGPIPE process-wide; Start puts the program's
  // disposition back (its own threads block the signal instead).
  struct sigaction before = {}, after = {};
  ASSERT_EQ(::sigaction(SIGPIPE, nullptr, &before), 0);
  auto exporter = MetricsExporter::Start("127.0.0.1:0", [] { return std::string(); });
  ASSERT_TRUE(exporter.ok()) << exporter.status();
  ASSERT_EQ(::sigaction(SIGPIPE, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

TEST(ExporterTest, StopsRightAfterStart) {
  for (int i = 0; i < 20; ++i) {
    auto exporter = MetricsExporter::Start("127.0.0.1:0", [] { return std::string(); });
    ASSERT_TRUE(exporter.ok()) << exporter.status();
  }
}

}  // namespace
}  // namespace kairos::internal
