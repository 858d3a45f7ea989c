// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The notice that traffic is not encrypted: once per TransportContext (the nodes of one
// process's job share one), never for inproc:// endpoints, never with CURVE keys.

#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "kairos/keys.h"
#include "kairos/transport_context.h"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"
#include "transport/transport.h"

namespace kairos::internal {
namespace {

constexpr char kLogger[] = "plain-notice-test";
constexpr char kNotice[] = "traffic is not encrypted";

// Captures what the transports log under kLogger (GetLogger finds a registered logger by
// name); dropped at the end.
class PlainNoticeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logger_ = std::make_shared<spdlog::logger>(
        kLogger, std::make_shared<spdlog::sinks::ostream_sink_mt>(log_));
    spdlog::register_logger(logger_);
  }
  void TearDown() override {
    for (auto& t : transports_) t->Stop();
    spdlog::drop(kLogger);
  }

  // A transport of `context` listening at `endpoint`.
  void Listen(const std::shared_ptr<TransportContext>& context, const std::string& endpoint,
              std::optional<CurveKeys> keys = std::nullopt) {
    TransportOptions options;
    options.name = "node";
    options.logger = kLogger;
    options.context = context;
    options.keys = std::move(keys);
    absl::StatusOr<std::unique_ptr<Transport>> t = MakeZmqTransport(options);
    ASSERT_TRUE(t.ok()) << t.status();
    ASSERT_TRUE((*t)->Listen(endpoint).ok());
    transports_.push_back(*std::move(t));
  }

  int Notices() const {
    const std::string text = log_.str();
    int n = 0;
    for (size_t at = text.find(kNotice); at != std::string::npos; at = text.find(kNotice, at + 1)) {
      ++n;
    }
    return n;
  }

  std::ostringstream log_;
  std::shared_ptr<spdlog::logger> logger_;
  std::vector<std::unique_ptr<Transport>> transports_;
};

TEST_F(PlainNoticeTest, OncePerContextNotPerNode) {
  auto shared = TransportContext::Create();
  Listen(shared, "tcp://127.0.0.1:*");
  Listen(shared, "tcp://127.0.0.1:*");
  Listen(shared, "tcp://127.0.0.1:*");
  EXPECT_EQ(Notices(), 1) << log_.str();
  // Positive control: a node of another context gives its own notice.
  Listen(TransportContext::Create(), "tcp://127.0.0.1:*");
  EXPECT_EQ(Notices(), 2) << log_.str();
}

TEST_F(PlainNoticeTest, NeverForInprocOrWithKeys) {
  auto context = TransportContext::Create();
  Listen(context, "inproc://plain-notice-test");
  absl::StatusOr<CurveKeys> keys = GenerateCurveKeys();
  ASSERT_TRUE(keys.ok()) << keys.status();
  Listen(context, "tcp://127.0.0.1:*", *keys);
  EXPECT_EQ(Notices(), 0) << log_.str();
  // Positive control: a plain tcp endpoint in the same context does notice.
  Listen(context, "tcp://127.0.0.1:*");
  EXPECT_EQ(Notices(), 1) << log_.str();
}

}  // namespace
}  // namespace kairos::internal
