// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// How large an embedded cluster may be: one past ZeroMQ's default of 1023 sockets per
// context runs and gives exact BSP values (the cluster sizes its context); one that needs
// more file descriptors than the process may open fails up front, naming both numbers and
// `ulimit -n`, with a smaller cluster under the same limit as the positive control. Public
// API only.

#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kSize = 8;

ClusterOptions Bsp(int workers) {
  ClusterOptions o;
  o.num_servers = 2;
  o.num_workers = workers;
  o.job.policy = "bsp";
  o.job.chunk_elements = 4;  // one chunk per server
  o.job.tables.push_back({"w", kSize, Initializer::Zeros(), {"sgd", 1.0f}});
  o.worker.request_timeout = absl::Seconds(60);
  o.worker.join_timeout = absl::Seconds(60);
  o.coordinator.join_timeout = absl::Seconds(60);
  return o;
}

// 400 workers and 2 servers over inproc hold about 1220 sockets, past the 1023 a ZeroMQ
// context allows by default. Each round every worker pushes rank + 1 into every element;
// SGD at rate 1 on the round's average moves each element by -(W + 1) / 2 per round (exact
// in float32: halves of small integers).
TEST(ClusterSizeTest, AClusterPastZeroMqsDefaultSocketLimitRunsAndIsExact) {
  constexpr int kWorkers = 400;
  constexpr int kRounds = 2;
  auto cluster = LocalCluster::Create(Bsp(kWorkers));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const absl::Status s = (*cluster)->Run([](Worker& w) -> absl::Status {
    std::vector<float> params(kSize);
    const std::vector<float> grad(kSize, static_cast<float>(w.rank() + 1));
    for (int t = 0; t < kRounds; ++t) {
      KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
      const float want = -static_cast<float>(t) * (kWorkers + 1) / 2.0f;
      if (params != std::vector<float>(kSize, want)) {
        return absl::InternalError(
            absl::StrCat("round ", t, ": w[0] = ", params[0], ", want ", want));
      }
      KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
      KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

// Lowers this process's descriptor limit for the test's lifetime.
class DescriptorLimit {
 public:
  explicit DescriptorLimit(rlim_t soft) {
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit lowered = saved_;
    lowered.rlim_cur = soft;
    ok_ = ::setrlimit(RLIMIT_NOFILE, &lowered) == 0;
  }
  ~DescriptorLimit() { ::setrlimit(RLIMIT_NOFILE, &saved_); }
  bool ok() const { return ok_; }

 private:
  rlimit saved_{};
  bool ok_ = false;
};

TEST(ClusterSizeTest, TooFewDescriptorsFailUpFrontNamingTheLimit) {
  DescriptorLimit limit(512);
  ASSERT_TRUE(limit.ok());
  auto refused = LocalCluster::Create(Bsp(300));  // about 1300 descriptors
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("300 workers and 2 servers over inproc"));
  EXPECT_THAT(refused.status().message(), HasSubstr("this process may open 512"));
  EXPECT_THAT(refused.status().message(), HasSubstr("ulimit -n"));
  // Positive control: a cluster that fits runs under the same limit.
  auto fits = LocalCluster::Create(Bsp(20));
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_TRUE((*fits)->Shutdown().ok());
}

}  // namespace
}  // namespace kairos
