// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ReadNodeEnvironment (kairos/run.h): the variables a launcher or an operator sets fill the
// fields every node has, for any kind of node; an unset variable leaves its field alone; a
// malformed one is InvalidArgument naming it, and changes nothing after it.

#include <cstdlib>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/options.h"
#include "kairos/run.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;

class NodeEnvironmentTest : public ::testing::Test {
 protected:
  void TearDown() override {
    ::unsetenv("KAIROS_LOG_LEVEL");
    ::unsetenv("KAIROS_SEND_DELAY_US");
  }
};

TEST_F(NodeEnvironmentTest, TheVariablesFillEveryKindOfNodesOptions) {
  ::setenv("KAIROS_LOG_LEVEL", "info", 1);
  ::setenv("KAIROS_SEND_DELAY_US", "250", 1);
  CoordinatorOptions coordinator;
  ServerOptions server;
  WorkerOptions worker;
  for (NodeOptions* node :
       {static_cast<NodeOptions*>(&coordinator), static_cast<NodeOptions*>(&server),
        static_cast<NodeOptions*>(&worker)}) {
    ASSERT_TRUE(ReadNodeEnvironment(*node).ok());
    EXPECT_EQ(node->log_level, LogLevel::kInfo);
    EXPECT_EQ(node->send_delay, absl::Microseconds(250));
  }
  absl::StatusOr<WorkerOptions> joined = WorkerOptionsFromEnvironment([] {
    WorkerOptions o;
    o.coordinator = "tcp://127.0.0.1:1";
    return o;
  }());
  EXPECT_EQ(joined.status().code(), absl::StatusCode::kInvalidArgument)
      << "KAIROS_COORDINATOR is still required";
}

TEST_F(NodeEnvironmentTest, UnsetVariablesLeaveTheFieldsAlone) {
  WorkerOptions worker;
  worker.log_level = LogLevel::kDebug;
  worker.send_delay = absl::Milliseconds(2);
  ASSERT_TRUE(ReadNodeEnvironment(worker).ok());
  EXPECT_EQ(worker.log_level, LogLevel::kDebug);
  EXPECT_EQ(worker.send_delay, absl::Milliseconds(2));
}

TEST_F(NodeEnvironmentTest, AMalformedLogLevelIsAnErrorNamingTheVariable) {
  ::setenv("KAIROS_LOG_LEVEL", "chatty", 1);
  ServerOptions server;
  const absl::Status s = ReadNodeEnvironment(server);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("KAIROS_LOG_LEVEL"));
  EXPECT_THAT(s.message(), HasSubstr("'chatty'"));
  EXPECT_EQ(server.log_level, LogLevel::kWarning);
}

}  // namespace
}  // namespace kairos
