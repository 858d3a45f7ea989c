// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the public <-> wire conversions: statuses and job configurations survive a round
// trip, including through serialized bytes.

#include "wire/convert.h"

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

absl::Status RoundTrip(const absl::Status& status) {
  wire::Status w;
  ToWire(status, &w);
  wire::Status parsed;
  EXPECT_TRUE(parsed.ParseFromString(w.SerializeAsString()));
  return FromWire(parsed);
}

TEST(ConvertTest, StatusRoundTripsKeepCodeAndMessage) {
  for (const absl::Status& s :
       {absl::InvalidArgumentError("bad table 'w'"), absl::NotFoundError("no table 7"),
        absl::UnavailableError("server 1 is down"), absl::DeadlineExceededError(""),
        absl::CancelledError("shutdown"), absl::InternalError("invariant broken")}) {
    EXPECT_EQ(RoundTrip(s), s);
  }
}

TEST(ConvertTest, OkStatusRoundTrips) {
  EXPECT_TRUE(RoundTrip(absl::OkStatus()).ok());
  wire::Status w;
  ToWire(absl::OkStatus(), &w);
  EXPECT_EQ(w.code(), 0);
}

TEST(ConvertTest, StatusOfHeaderWithoutStatusIsOk) {
  wire::Header h;
  EXPECT_TRUE(StatusOf(h).ok());
  ToWire(absl::OutOfRangeError("range [5, 9) is outside"), h.mutable_status());
  EXPECT_EQ(StatusOf(h), absl::OutOfRangeError("range [5, 9) is outside"));
}

JobConfig SampleJob() {
  JobConfig job;
  job.policy = "ssp:s=3";
  job.chunk_elements = 4096;
  job.tables.push_back({"w", 1000, Initializer::Uniform(-0.5f, 0.25f, 17), {"sgd", 0.125f}});
  job.tables.push_back({"b", 3, Initializer::Constant(2.0f), {"sgd", 0.5f}});
  job.tables.push_back({"e",
                        1u << 20,
                        Initializer::Normal(0.0f, 0.01f, 99),
                        {"adam:beta1=0.8", 1e-3f, "cosine:steps=100,warmup=5"}});
  job.tables.push_back({"z", 1, Initializer::Zeros(), {}});
  job.tables.push_back(TableSpec::Sparse("emb", 64, Initializer::Normal(0.0f, 0.1f, 5),
                                         {"adagrad", 0.05f}));
  job.tables.back().policy = "ssp:s=8";
  job.tables.back().admission = {3, 0.5f, 4096, false};
  job.tables.back().eviction = {10, 0.25f, 2, 1 << 20, RowEviction::Order::kLeastFrequent};
  job.tables.back().eviction.max_idle_seconds = 2.5;  // with clocks too: not validated here
  job.tables.back().compression = Compression::kBf16;
  job.tables[0].compression = Compression::kInt8;
  job.tables[1].merge_pushes = true;
  job.tables[1].cache_clocks = 7;
  job.tables[1].write_back_clocks = 2;
  job.tables.back().cache_clocks = 3;
  job.tables.back().cache_rows = 1000;
  return job;
}

TEST(ConvertTest, JobConfigRoundTripsThroughBytes) {
  const JobConfig job = SampleJob();
  wire::JobConfig w;
  ToWire(job, &w);
  wire::JobConfig parsed;
  ASSERT_TRUE(parsed.ParseFromString(w.SerializeAsString()));
  EXPECT_EQ(FromWire(parsed), job);
}

TEST(ConvertTest, JobConfigToWireFieldsAreExact) {
  wire::JobConfig w;
  ToWire(SampleJob(), &w);
  EXPECT_EQ(w.policy(), "ssp:s=3");
  EXPECT_EQ(w.chunk_elements(), 4096u);
  ASSERT_EQ(w.tables_size(), 5);
  EXPECT_EQ(w.tables(0).name(), "w");
  EXPECT_EQ(w.tables(0).size(), 1000u);
  EXPECT_EQ(w.tables(0).init().kind(), static_cast<int>(Initializer::Kind::kUniform));
  EXPECT_EQ(w.tables(0).init().a(), -0.5f);
  EXPECT_EQ(w.tables(0).init().b(), 0.25f);
  EXPECT_EQ(w.tables(0).init().seed(), 17u);
  EXPECT_EQ(w.tables(0).updater().name(), "sgd");
  EXPECT_EQ(w.tables(0).updater().learning_rate(), 0.125f);
  EXPECT_EQ(w.tables(0).updater().schedule(), "constant");
  EXPECT_EQ(w.tables(2).updater().name(), "adam:beta1=0.8");
  EXPECT_EQ(w.tables(2).updater().schedule(), "cosine:steps=100,warmup=5");
  EXPECT_EQ(w.tables(0).kind(), 0);
  EXPECT_EQ(w.tables(0).row_width(), 0u);
  EXPECT_EQ(w.tables(4).kind(), static_cast<int>(TableKind::kSparse));
  EXPECT_EQ(w.tables(4).row_width(), 64u);
  EXPECT_EQ(w.tables(4).size(), 0u);
  EXPECT_EQ(w.tables(4).policy(), "ssp:s=8");
  EXPECT_EQ(w.tables(0).policy(), "") << "the job's";
  EXPECT_EQ(w.tables(4).admit_min_count(), 3u);
  EXPECT_EQ(w.tables(4).admit_probability(), 0.5f);
  EXPECT_EQ(w.tables(4).admit_filter_slots(), 4096u);
  EXPECT_TRUE(w.tables(4).admit_read_zeros());
  EXPECT_EQ(w.tables(4).evict_idle_clocks(), 10);
  EXPECT_EQ(w.tables(4).evict_min_norm(), 0.25f);
  EXPECT_EQ(w.tables(4).evict_sweep_every(), 2);
  EXPECT_EQ(w.tables(4).evict_max_bytes(), 1u << 20);
  EXPECT_EQ(w.tables(4).evict_order(), 1);
  EXPECT_EQ(w.tables(4).evict_idle_seconds(), 2.5);
  EXPECT_EQ(w.tables(4).compression(), 2);
  EXPECT_EQ(w.tables(0).compression(), 3);
  EXPECT_EQ(w.tables(1).compression(), 0);
  EXPECT_TRUE(w.tables(1).merge_pushes());
  EXPECT_FALSE(w.tables(0).merge_pushes());
  EXPECT_EQ(w.tables(1).cache_clocks(), 7u);
  EXPECT_EQ(w.tables(0).cache_clocks(), 0u);
  EXPECT_EQ(w.tables(1).write_back_clocks(), 2u);
  EXPECT_EQ(w.tables(4).cache_rows(), 1000u);
  EXPECT_FALSE(w.tables(0).admit_read_zeros()) << "the defaults: initial values";
}

// A compression value wider than the enum's 8 bits becomes 255, which ValidateJobConfig
// refuses as naming nothing, as it refuses 4 to 254.
TEST(ConvertTest, ACompressionBeyondEightBitsNamesNothing) {
  wire::JobConfig w;
  ToWire(SampleJob(), &w);
  w.mutable_tables(0)->set_compression(300);
  EXPECT_EQ(static_cast<int>(FromWire(w).tables[0].compression), 255);
  w.mutable_tables(0)->set_compression(-1);
  EXPECT_EQ(static_cast<int>(FromWire(w).tables[0].compression), 255);
  w.mutable_tables(0)->set_compression(2);
  EXPECT_EQ(FromWire(w).tables[0].compression, Compression::kBf16);
}

// A peer that sends no schedule (an empty field) means the constant one.
TEST(ConvertTest, EmptyScheduleIsConstant) {
  wire::JobConfig w;
  ToWire(SampleJob(), &w);
  w.mutable_tables(0)->mutable_updater()->clear_schedule();
  EXPECT_EQ(FromWire(w).tables[0].updater.schedule, "constant");
}

TEST(ConvertTest, JobConfigToWireReplacesPreviousContent) {
  wire::JobConfig w;
  ToWire(SampleJob(), &w);
  JobConfig small;
  small.tables.push_back({"only", 5, Initializer::Zeros(), {}});
  ToWire(small, &w);
  EXPECT_EQ(w.tables_size(), 1);
  EXPECT_EQ(FromWire(w), small);
}

TEST(ConvertTest, DefaultJobConfigRoundTrips) {
  wire::JobConfig w;
  ToWire(JobConfig{}, &w);
  EXPECT_EQ(FromWire(w), JobConfig{});
}

// A code from the network is any int32; one absl does not define becomes UNKNOWN.
TEST(ConvertTest, StatusCodesOutsideAbslsBecomeUnknown) {
  for (int32_t code : {-1, 17, 1000, INT32_MIN, INT32_MAX}) {
    wire::Status w;
    w.set_code(code);
    w.set_message("from a stranger");
    const absl::Status s = FromWire(w);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnknown) << code;
    EXPECT_EQ(s.message(), "from a stranger");
  }
  wire::Status last;
  last.set_code(static_cast<int32_t>(absl::StatusCode::kUnauthenticated));
  EXPECT_EQ(FromWire(last).code(), absl::StatusCode::kUnauthenticated);
}

TEST(ConvertTest, NonFinitePolicyRoundTrips) {
  JobConfig job;
  job.tables.push_back({"w", 4, {}, {}, NonFinitePolicy::kSkip});
  wire::JobConfig w;
  ToWire(job, &w);
  EXPECT_EQ(w.tables(0).nonfinite(), 1);
  EXPECT_EQ(FromWire(w), job);
}

}  // namespace
}  // namespace kairos::internal
