// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Worker's verb forms through a whole cluster (LocalCluster, ASP, add updater): every dense
// verb has a whole-table and a range form, blocking and asynchronous, and they agree
// exactly; a whole-table form given a span of another size is refused, naming both sizes,
// and sends nothing (positive control: the right size goes through). Public API only.

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"

namespace kairos {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Table "w" of 4 elements, initial 0, chunks of 3 over 2 servers; the add updater makes the
// table the sum of the gradients (and Assign sets it), exact in float32.
ClusterOptions OneTable() {
  ClusterOptions o;
  o.num_servers = 2;
  o.num_workers = 1;
  o.job.policy = "asp";
  o.job.chunk_elements = 3;
  o.job.tables.push_back({"w", 4, Initializer::Zeros(), {"add", 1.0f}});
  o.worker.request_timeout = absl::Seconds(30);
  return o;
}

TEST(WorkerFormsTest, WholeAndRangeFormsBlockingAndAsyncAgree) {
  auto cluster = LocalCluster::Create(OneTable());
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  std::vector<float> out(4);

  ASSERT_TRUE(w.Push("w", std::vector<float>{1, 2, 3, 4}).ok());
  ASSERT_TRUE(w.Pull("w", out).ok());
  EXPECT_THAT(out, ElementsAre(1, 2, 3, 4));
  ASSERT_TRUE(w.PushAsync("w", std::vector<float>{1, 1, 1, 1}).Wait().ok());
  ASSERT_TRUE(w.PullAsync("w", out).Wait().ok());
  EXPECT_THAT(out, ElementsAre(2, 3, 4, 5));

  ASSERT_TRUE(w.Push("w", 2, std::vector<float>{10, 10}).ok());
  ASSERT_TRUE(w.PushAsync("w", 1, std::vector<float>{100}).Wait().ok());
  std::vector<float> middle(2);
  ASSERT_TRUE(w.Pull("w", 1, middle).ok());
  EXPECT_THAT(middle, ElementsAre(103, 14));
  ASSERT_TRUE(w.PullAsync("w", 2, middle).Wait().ok());
  EXPECT_THAT(middle, ElementsAre(14, 15));

  ASSERT_TRUE(w.Assign("w", std::vector<float>{-1, -2, -3, -4}).ok());
  ASSERT_TRUE(w.Pull("w", out).ok());
  EXPECT_THAT(out, ElementsAre(-1, -2, -3, -4));
  ASSERT_TRUE(w.AssignAsync("w", std::vector<float>{5, 6, 7, 8}).Wait().ok());
  ASSERT_TRUE(w.Assign("w", 3, std::vector<float>{9}).ok());
  ASSERT_TRUE(w.AssignAsync("w", 0, std::vector<float>{0}).Wait().ok());
  ASSERT_TRUE(w.Pull("w", out).ok());
  EXPECT_THAT(out, ElementsAre(0, 6, 7, 9));
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

TEST(WorkerFormsTest, WholeTableFormsRefuseAnotherSizeAndSendNothing) {
  auto cluster = LocalCluster::Create(OneTable());
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  const std::vector<float> three{1, 1, 1};
  std::vector<float> out3(3);
  const std::vector<absl::Status> refused = {
      w.Push("w", three),   w.PushAsync("w", three).Wait(),
      w.Pull("w", out3),    w.PullAsync("w", out3).Wait(),
      w.Assign("w", three), w.AssignAsync("w", three).Wait()};
  for (const absl::Status& s : refused) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("3 values given for a table of 4 elements"));
  }
  std::vector<float> out(4);
  ASSERT_TRUE(w.Pull("w", out).ok());
  EXPECT_THAT(out, ElementsAre(0, 0, 0, 0)) << "a refused push or assign sent nothing";
  ASSERT_TRUE(w.Push("w", std::vector<float>{1, 1, 1, 1}).ok());  // positive control
  ASSERT_TRUE(w.Pull("w", out).ok());
  EXPECT_THAT(out, ElementsAre(1, 1, 1, 1));
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

}  // namespace
}  // namespace kairos
