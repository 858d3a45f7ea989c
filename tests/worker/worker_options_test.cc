// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The worker's own options: their defaults, and Worker::Create refusing bad values by name
// before it contacts anybody.

#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/options.h"
#include "kairos/worker.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;

WorkerOptions Options() {
  WorkerOptions o;
  // Nothing listens there: a check that failed to refuse would time out joining instead.
  o.coordinator = "inproc://kairos-worker-options-test-nobody";
  o.join_timeout = absl::Milliseconds(1);
  TableSpec w;
  w.name = "w";
  w.size = 4;
  o.job.tables.push_back(w);
  return o;
}

TEST(WorkerOptionsTest, Defaults) {
  const WorkerOptions o;
  EXPECT_EQ(o.deadline_grace, absl::Milliseconds(250));
  EXPECT_EQ(o.destructor_shutdown_timeout, absl::Seconds(5));
  EXPECT_EQ(o.request_timeout, absl::Seconds(60));
  EXPECT_EQ(o.max_bytes_in_flight_per_server, int64_t{16} << 20);
  EXPECT_EQ(o.io_spin, absl::Microseconds(25));
}

TEST(WorkerOptionsTest, AnIoSpinOutsideZeroToOneMillisecondIsRefusedByName) {
  for (absl::Duration bad : {absl::Microseconds(-1), absl::Microseconds(1001)}) {
    WorkerOptions o = Options();
    o.io_spin = bad;
    const absl::Status s = Worker::Create(o).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("WorkerOptions.io_spin must be between 0 and 1ms (it is " +
                                       absl::FormatDuration(bad) + ")"));
  }
  for (absl::Duration good : {absl::ZeroDuration(), absl::Milliseconds(1)}) {
    WorkerOptions o = Options();
    o.io_spin = good;
    // Past the checks: the join times out, as nobody listens.
    EXPECT_EQ(Worker::Create(o).status().code(), absl::StatusCode::kDeadlineExceeded);
  }
}

TEST(WorkerOptionsTest, ANegativeDeadlineGraceIsRefusedByName) {
  WorkerOptions o = Options();
  o.deadline_grace = absl::Milliseconds(-1);
  const absl::Status s = Worker::Create(o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("WorkerOptions.deadline_grace is negative (-1ms)"));
}

TEST(WorkerOptionsTest, ADestructorFinishTimeoutThatIsNotPositiveIsRefusedByName) {
  WorkerOptions o = Options();
  o.destructor_shutdown_timeout = absl::ZeroDuration();
  const absl::Status s = Worker::Create(o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("WorkerOptions.destructor_shutdown_timeout must be positive"));
}

TEST(WorkerOptionsTest, AZeroGraceIsAllowed) {
  WorkerOptions o = Options();
  o.deadline_grace = absl::ZeroDuration();
  // Past the checks: the join times out, as nobody listens.
  EXPECT_EQ(Worker::Create(o).status().code(), absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace kairos
