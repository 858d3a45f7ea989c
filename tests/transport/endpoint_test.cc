// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Endpoint strings: port ranges, wildcard hosts, a host put in place of another.

#include "transport/endpoint.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

using ::testing::HasSubstr;

TEST(EndpointTest, PortRange) {
  auto r = ParsePortRange("tcp://0.0.0.0:7000-7099");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->host, "0.0.0.0");
  EXPECT_EQ((*r)->first, 7000);
  EXPECT_EQ((*r)->last, 7099);
  r = ParsePortRange("tcp://[::]:7000-7000");
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->host, "[::]");
  for (const char* none : {"tcp://127.0.0.1:*", "tcp://127.0.0.1:7000", "tcp://h:0",
                           "ipc:///tmp/a-b", "inproc://job-1/s-2"}) {
    r = ParsePortRange(none);
    ASSERT_TRUE(r.ok()) << none << ": " << r.status();
    EXPECT_FALSE(r->has_value()) << none;
  }
  for (const char* bad : {"tcp://h:7099-7000", "tcp://h:0-10", "tcp://h:1-65536", "tcp://h:a-b",
                          "tcp://h:7000-", "tcp://:1-2"}) {
    r = ParsePortRange(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("is not a port range")) << bad;
  }
}

TEST(EndpointTest, WildcardHost) {
  EXPECT_TRUE(HasWildcardHost("tcp://0.0.0.0:7000"));
  EXPECT_TRUE(HasWildcardHost("tcp://*:7000"));
  EXPECT_TRUE(HasWildcardHost("tcp://[::]:7000"));
  EXPECT_FALSE(HasWildcardHost("tcp://127.0.0.1:7000"));
  EXPECT_FALSE(HasWildcardHost("tcp://node-0.kairos:7000"));
  EXPECT_FALSE(HasWildcardHost("ipc:///tmp/0.0.0.0"));
  EXPECT_FALSE(HasWildcardHost("inproc://x"));
}

TEST(EndpointTest, WithHost) {
  EXPECT_EQ(WithHost("tcp://0.0.0.0:7001", "10.0.0.2"), "tcp://10.0.0.2:7001");
  EXPECT_EQ(WithHost("tcp://[::]:7001", "fd00::2"), "tcp://[fd00::2]:7001");
  EXPECT_EQ(WithHost("tcp://0.0.0.0:7001", "[fd00::2]"), "tcp://[fd00::2]:7001");
  EXPECT_EQ(WithHost("tcp://0.0.0.0:7001", ""), "tcp://0.0.0.0:7001");
  EXPECT_EQ(WithHost("ipc:///tmp/s", "10.0.0.2"), "ipc:///tmp/s");
}

}  // namespace
}  // namespace kairos::internal
