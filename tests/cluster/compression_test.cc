// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Compressed tables through a running job (TableSpec::compression), through the public API
// alone: pulls and pushes of dense and sparse tables within each encoding's bound (exact
// where the values are representable), error feedback keeping a dense table's many small
// pushes within one rounding step of their sum, float32 exact (the positive control), the
// wire bytes following the encoding, and a compression that names nothing refused.

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kSize = 1000;

// The largest error of one encoding of a value of magnitude about `x`.
float Bound(Compression c, float x) {
  switch (c) {
    case Compression::kNone:
      return 0.0f;
    case Compression::kFp16:
      return std::ldexp(std::fabs(x), -11) + 1e-7f;
    case Compression::kBf16:
      return std::ldexp(std::fabs(x), -8) + 1e-7f;
    case Compression::kInt8:
      return 1.0f / 127.0f / 2.0f + 1e-7f;  // values below 1: a block's scale is < 1 / 127
  }
  return 0.0f;
}

ClusterOptions Options(Compression c, const std::string& policy = "bsp") {
  ClusterOptions o;
  o.num_servers = 2;
  o.num_workers = 1;
  o.job.policy = policy;
  o.job.chunk_elements = 300;  // four chunks over two shards
  TableSpec w;
  w.name = "w";
  w.size = kSize;
  w.init = Initializer::Constant(0.5f);
  w.updater.name = "sgd";
  w.updater.learning_rate = 1.0f;
  w.compression = c;
  o.job.tables.push_back(w);
  TableSpec e = TableSpec::Sparse("e", 4, Initializer::Zeros(), w.updater);
  e.compression = c;
  o.job.tables.push_back(e);
  o.worker.log_level = LogLevel::kOff;
  o.server.log_level = LogLevel::kOff;
  o.coordinator.log_level = LogLevel::kOff;
  return o;
}

class CompressionTest : public ::testing::TestWithParam<Compression> {};

TEST_P(CompressionTest, DenseAndSparseValuesTravelWithinTheEncodingsBound) {
  const Compression c = GetParam();
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Create(Options(c));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& worker = (*cluster)->worker(0);
  absl::StatusOr<TableInfo> info = worker.table("w");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->compression, c);

  std::vector<float> w(kSize);
  ASSERT_TRUE(worker.Pull("w", w).ok());
  for (float v : w) ASSERT_EQ(v, 0.5f);  // representable in every encoding

  std::vector<float> g(kSize);
  for (uint64_t i = 0; i < kSize; ++i) g[i] = 0.4f * std::sin(0.37f * static_cast<float>(i));
  ASSERT_TRUE(worker.Push("w", g).ok());
  ASSERT_TRUE(worker.AdvanceClock().ok());
  ASSERT_TRUE(worker.Pull("w", w).ok());
  float worst = 0;
  for (uint64_t i = 0; i < kSize; ++i) {
    const float want = 0.5f - g[i];
    // Rounded twice: the push, then the pull.
    const float err = std::fabs(w[i] - want);
    worst = std::max(worst, err);
    ASSERT_LE(err, Bound(c, g[i]) + Bound(c, want)) << i;
  }
  if (c == Compression::kNone) {
    EXPECT_EQ(worst, 0.0f);
  } else {
    EXPECT_GT(worst, 0.0f);  // it did round
  }

  const std::vector<uint64_t> keys = {7, 1u << 20, 7};
  const std::vector<float> rows = {0.25f, -0.5f, 0.1f, 0.3f,  //
                                   0.2f,  0.2f,  0.2f, 0.2f,  //
                                   0.25f, 0.0f,  0.0f, 0.0f};
  ASSERT_TRUE(worker.PushSparse("e", keys, rows).ok());
  ASSERT_TRUE(worker.AdvanceClock().ok());
  std::vector<float> got(8);
  ASSERT_TRUE(worker.PullSparse("e", std::vector<uint64_t>{7, 1u << 20}, got).ok());
  const std::vector<float> want = {-0.5f, 0.5f, -0.1f, -0.3f, -0.2f, -0.2f, -0.2f, -0.2f};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_LE(std::fabs(got[i] - want[i]), 2 * Bound(c, want[i]) + Bound(c, 0.5f)) << i;
  }
  ASSERT_TRUE((*cluster)->Shutdown().ok());
}

// Error feedback through the job: a thousand pushes of 0.0007 (asynchronous, so each is
// applied at once) move every element by 0.7 to within the pull's rounding and one push's.
// Without the residual, bf16 would add 1.9e-6 too much a push (0.0007 rounds to
// 0.00070190), 1.9e-3 in all: beyond this bound (wire/encoding_test.cc tests the residual
// exactly).
TEST_P(CompressionTest, ManySmallPushesAddUpToTheirSum) {
  const Compression c = GetParam();
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Create(Options(c, "asp"));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& worker = (*cluster)->worker(0);
  const std::vector<float> g(kSize, 0.0007f);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(worker.Push("w", g).ok());
  std::vector<float> w(kSize);
  ASSERT_TRUE(worker.Pull("w", w).ok());
  for (uint64_t i = 0; i < kSize; ++i) {
    ASSERT_NEAR(w[i], 0.5f - 0.7f, Bound(c, 0.2f) + 2 * Bound(c, 0.0007f) + 1e-4f) << i;
  }
  ASSERT_TRUE((*cluster)->Shutdown().ok());
}

// The wire-byte meters (Worker::stats, ServerStats::wire_bytes_*) see the encoding: a push
// of the 1000 values moves their encoded size (4000 B in float32, 2000 in fp16 and bf16,
// 1000 and a scale per block of 256 in int8: 6 blocks in the 4 chunks of 300 and 200
// values) plus the messages' headers and the encoded payloads' counts and padding, well
// under 1000 B for the 4 messages (and a heartbeat that may fall in between); a pull brings
// as much back, and the servers count what the worker sent.
TEST_P(CompressionTest, TheWireBytesAreTheEncodedValuesAndTheHeaders) {
  const Compression c = GetParam();
  const uint64_t body = c == Compression::kNone                              ? 4000
                        : c == Compression::kFp16 || c == Compression::kBf16 ? 2000
                                                                             : 1000 + 6 * 4;
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Create(Options(c, "asp"));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& worker = (*cluster)->worker(0);
  auto server_in = [&] {
    return (*cluster)->server_stats(0).wire_bytes_in + (*cluster)->server_stats(1).wire_bytes_in;
  };
  const std::vector<float> g(kSize, 0.25f);
  const WorkerStats before = worker.stats();
  const uint64_t server_before = server_in();
  ASSERT_TRUE(worker.Push("w", g).ok());
  const WorkerStats pushed = worker.stats();
  EXPECT_GE(pushed.messages_sent - before.messages_sent, 4u);
  EXPECT_GE(pushed.bytes_sent - before.bytes_sent, body);
  EXPECT_LT(pushed.bytes_sent - before.bytes_sent, body + 1000);
  EXPECT_GE(server_in() - server_before, body) << "the servers count what reached them";
  EXPECT_LT(server_in() - server_before, body + 1000);
  std::vector<float> w(kSize);
  ASSERT_TRUE(worker.Pull("w", w).ok());
  const WorkerStats pulled = worker.stats();
  EXPECT_GE(pulled.messages_received - pushed.messages_received, 4u);
  EXPECT_GE(pulled.bytes_received - pushed.bytes_received, body);
  EXPECT_LT(pulled.bytes_received - pushed.bytes_received, body + 1000);
  EXPECT_EQ(pulled.pushes_merged, 0u);
  ASSERT_TRUE((*cluster)->Shutdown().ok());
}

INSTANTIATE_TEST_SUITE_P(Encodings, CompressionTest,
                         ::testing::Values(Compression::kNone, Compression::kFp16,
                                           Compression::kBf16, Compression::kInt8),
                         [](const auto& info) { return std::string(CompressionName(info.param)); });

// Every Parse* of the API takes a name in any case and names the choices otherwise.
TEST(OptionNamesTest, ParseTakesAnyCaseAndNamesTheChoices) {
  for (Compression c :
       {Compression::kNone, Compression::kFp16, Compression::kBf16, Compression::kInt8}) {
    EXPECT_EQ(*ParseCompression(CompressionName(c)), c);
  }
  EXPECT_EQ(*ParseCompression("INT8"), Compression::kInt8);
  EXPECT_THAT(ParseCompression("fp8").status().message(), HasSubstr("use none, fp16"));
  for (TransportKind t : {TransportKind::kInproc, TransportKind::kTcp, TransportKind::kIpc}) {
    EXPECT_EQ(*ParseTransportKind(TransportKindName(t)), t);
  }
  EXPECT_EQ(*ParseTransportKind("TCP"), TransportKind::kTcp);
  EXPECT_THAT(ParseTransportKind("udp").status().message(), HasSubstr("use inproc, tcp or ipc"));
  EXPECT_EQ(*ParseLogLevel("Warning"), LogLevel::kWarning);
}

TEST(CompressionOptionTest, AValueThatNamesNothingIsRefused) {
  ClusterOptions o = Options(Compression::kNone);
  o.job.tables[0].compression = static_cast<Compression>(7);
  absl::StatusOr<std::unique_ptr<LocalCluster>> c = LocalCluster::Create(o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("table 'w': unknown compression 7"));
}

}  // namespace
}  // namespace kairos
