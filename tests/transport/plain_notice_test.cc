// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The notice that traffic is not encrypted: once per TransportContext (the nodes of one
// process's job share one), never for inproc:// endpoints, never with CURVE keys.

#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "kairos/keys.h"
#include "kairos/transport_context.h"
#include "transport/transport.h"

namespace kairos::internal {
namespace {

constexpr char kNotice[] = "traffic is not encrypted";

// Captures what the transports log (TransportOptions::log_sink).
class PlainNoticeTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (auto& t : transports_) t->Stop();
  }

  // A transport of `context` listening at `endpoint`.
  void Listen(const std::shared_ptr<TransportContext>& context, const std::string& endpoint,
              std::optional<CurveKeys> keys = std::nullopt) {
    TransportOptions options;
    options.name = "node";
    options.log_sink = [this](LogLevel, std::string_view line) {
      absl::MutexLock lock(&mu_);
      log_ << line << "\n";
    };
    options.context = context;
    options.keys = std::move(keys);
    absl::StatusOr<std::unique_ptr<Transport>> t = MakeZmqTransport(options);
    ASSERT_TRUE(t.ok()) << t.status();
    ASSERT_TRUE((*t)->Listen(endpoint).ok());
    transports_.push_back(*std::move(t));
  }

  int Notices() {
    const std::string text = Text();
    int n = 0;
    for (size_t at = text.find(kNotice); at != std::string::npos; at = text.find(kNotice, at + 1)) {
      ++n;
    }
    return n;
  }

  std::string Text() {
    absl::MutexLock lock(&mu_);
    return log_.str();
  }

  absl::Mutex mu_;
  std::ostringstream log_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Transport>> transports_;
};

TEST_F(PlainNoticeTest, OncePerContextNotPerNode) {
  auto shared = TransportContext::Create();
  Listen(shared, "tcp://127.0.0.1:*");
  Listen(shared, "tcp://127.0.0.1:*");
  Listen(shared, "tcp://127.0.0.1:*");
  EXPECT_EQ(Notices(), 1) << Text();
  // Positive control: a node of another context gives its own notice.
  Listen(TransportContext::Create(), "tcp://127.0.0.1:*");
  EXPECT_EQ(Notices(), 2) << Text();
}

TEST_F(PlainNoticeTest, NeverForInprocOrWithKeys) {
  auto context = TransportContext::Create();
  Listen(context, "inproc://plain-notice-test");
  absl::StatusOr<CurveKeys> keys = GenerateCurveKeys();
  ASSERT_TRUE(keys.ok()) << keys.status();
  Listen(context, "tcp://127.0.0.1:*", *keys);
  EXPECT_EQ(Notices(), 0) << Text();
  // Positive control: a plain tcp endpoint in the same context does notice.
  Listen(context, "tcp://127.0.0.1:*");
  EXPECT_EQ(Notices(), 1) << Text();
}

}  // namespace
}  // namespace kairos::internal
