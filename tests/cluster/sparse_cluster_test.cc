// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Sparse tables through a whole cluster (docs/sparse.md): exact values of per-row
// optimizers (sgd, adam with per-row step counts, and the others) against a reference
// computed here; BSP's per-row average over the distinct workers that pushed each row;
// initial rows independent of the number of servers; memory proportional to the rows
// touched in a 2^64 key space; bad input refused with nothing applied; policies that do not
// support sparse tables refused at start.

#include <cmath>
#include <cstdint>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/eigen.h"
#include "kairos/kairos.h"
#include "tests/common/param_name.h"
#include "tests/engine/optimizer_reference.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t kWidth = 3;

float Gradient(int iteration, uint64_t key, uint32_t c) {
  return std::sin(0.37f * static_cast<float>(key % 1000) + 1.3f * static_cast<float>(iteration) +
                  0.5f * static_cast<float>(c)) +
         0.1f * static_cast<float>(c);
}

ClusterOptions Options(const std::string& policy, int servers, int workers, TableSpec table) {
  ClusterOptions o;
  o.num_servers = servers;
  o.num_workers = workers;
  o.job.policy = policy;
  o.job.tables.push_back(std::move(table));
  o.worker.request_timeout = absl::Seconds(30);
  return o;
}

// The keys a worker pushes at iteration t: some in every iteration, one every other
// iteration (its step count lags), and a repeated key (its rows are summed into one update).
std::vector<uint64_t> KeysAt(int t) {
  std::vector<uint64_t> keys = {5, (uint64_t{1} << 63) + 7, 12345678901ULL, 5};
  if (t % 2 == 0) keys.push_back(~uint64_t{0});
  return keys;
}

struct OptCase {
  std::string spec;
  std::string kind;
  reference::RefParams params;
  friend void PrintTo(const OptCase& c, std::ostream* os) { *os << c.spec; }
};

class SparseOptimizerTest : public ::testing::TestWithParam<std::tuple<std::string, OptCase>> {};

TEST_P(SparseOptimizerTest, RowsMatchThePerRowReference) {
  const std::string policy = std::get<0>(GetParam());
  const OptCase c = std::get<1>(GetParam());
  constexpr float kLr = 0.05f;
  constexpr int kIterations = 5;
  auto cluster = LocalCluster::Create(
      Options(policy, 2, 1, TableSpec::Sparse("emb", kWidth, Initializer::Zeros(), {c.spec, kLr})));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::vector<uint64_t> all = KeysAt(0);  // every key, 5 twice
  std::vector<float> got(all.size() * kWidth);
  ASSERT_TRUE((*cluster)
                  ->Run([&](Worker& w) -> absl::Status {
                    for (int t = 0; t < kIterations; ++t) {
                      const std::vector<uint64_t> keys = KeysAt(t);
                      std::vector<float> g(keys.size() * kWidth);
                      for (size_t i = 0; i < keys.size(); ++i) {
                        for (uint32_t col = 0; col < kWidth; ++col) {
                          g[i * kWidth + col] = Gradient(t, keys[i], col);
                        }
                      }
                      KAIROS_RETURN_IF_ERROR(w.PushSparse("emb", keys, g));
                      KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
                    }
                    return w.PullSparse("emb", all, got);
                  })
                  .ok());
  const reference::RefStep ref = reference::Reference(c.kind, c.params);
  for (size_t i = 0; i < all.size(); ++i) {
    const uint64_t key = all[i];
    for (uint32_t col = 0; col < kWidth; ++col) {
      double w = 0;
      std::vector<double> s(2, 0.0);
      uint64_t step = 0;
      for (int t = 0; t < kIterations; ++t) {
        const std::vector<uint64_t> keys = KeysAt(t);
        double g = 0;
        int n = 0;
        for (uint64_t k : keys) {
          if (k == key) {
            g += Gradient(t, k, col);
            ++n;
          }
        }
        if (n == 0) continue;  // the row is not pushed: no update, no step
        ref(w, s, g, kLr, ++step);
      }
      ASSERT_NEAR(got[i * kWidth + col], w, 1e-5 * (1 + std::abs(w)))
          << c.spec << " key " << key << " column " << col;
    }
  }
}

std::vector<OptCase> OptCases() {
  reference::RefParams adam;
  adam.beta1 = 0.8;
  adam.eps = 1e-7;
  reference::RefParams ftrl;
  ftrl.l1 = 0.01;
  ftrl.l2 = 0.1;
  return {{"sgd", "sgd", {}},           {"momentum", "momentum", {}},
          {"nesterov", "nesterov", {}}, {"adagrad", "adagrad", {0.9, 0.9, 0.999, 1e-10}},
          {"adam", "adam", {}},         {"adam:beta1=0.8,eps=1e-7", "adam", adam},
          {"adamw", "adamw", {0.9, 0.9, 0.999, 1e-8, 0.01}}, {"add", "add", {}},
          {"ftrl", "ftrl", {}},         {"ftrl:l1=0.01,l2=0.1", "ftrl", ftrl}};
}

INSTANTIATE_TEST_SUITE_P(Optimizers, SparseOptimizerTest,
                         ::testing::Combine(::testing::Values("asp", "bsp"),
                                            ::testing::ValuesIn(OptCases())),
                         [](const auto& info) {
                           return testing::ParamName(std::get<0>(info.param) + "_" +
                                                     std::get<1>(info.param).spec);
                         });

// Two workers push overlapping key sets for two BSP rounds; each row moves by the average
// over the workers that pushed that row (sgd, lr 1: w = -sum of the averages).
TEST(SparseBspTest, RoundAverageIsPerRowOverItsDistinctWorkers) {
  auto cluster = LocalCluster::Create(
      Options("bsp", 2, 2, TableSpec::Sparse("emb", 2, Initializer::Zeros(), {"sgd", 1.0f})));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // Worker 0: keys 1, 2 (and 2 again: summed, still one worker). Worker 1: keys 2, 3.
  auto keys_of = [](int rank) {
    return rank == 0 ? std::vector<uint64_t>{1, 2, 2} : std::vector<uint64_t>{2, 3};
  };
  auto grad = [](int rank, int round, uint64_t key, int col) {
    return static_cast<float>(1 + rank * 10 + round * 100 + key * 1000 + col);
  };
  const std::vector<uint64_t> all = {1, 2, 3};
  std::vector<std::vector<float>> pulled(2, std::vector<float>(6));
  ASSERT_TRUE((*cluster)
                  ->Run([&](Worker& w) -> absl::Status {
                    const std::vector<uint64_t> keys = keys_of(w.rank());
                    for (int round = 0; round < 2; ++round) {
                      std::vector<float> g;
                      for (uint64_t k : keys) {
                        for (int col = 0; col < 2; ++col) {
                          g.push_back(grad(w.rank(), round, k, col));
                        }
                      }
                      KAIROS_RETURN_IF_ERROR(w.PushSparse("emb", keys, g));
                      KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
                    }
                    // At clock 2 the pull waits for round 1 of every worker.
                    return w.PullSparse("emb", all, pulled[w.rank()]);
                  })
                  .ok());
  std::vector<double> want(6, 0.0);
  for (int round = 0; round < 2; ++round) {
    for (int col = 0; col < 2; ++col) {
      // Row 1: worker 0 alone. Row 2: worker 0 (twice, summed) and worker 1, over 2. Row 3:
      // worker 1 alone.
      want[0 + col] -= grad(0, round, 1, col);
      want[2 + col] -= (2.0 * grad(0, round, 2, col) + grad(1, round, 2, col)) / 2.0;
      want[4 + col] -= grad(1, round, 3, col);
    }
  }
  for (int r = 0; r < 2; ++r) {
    for (int i = 0; i < 6; ++i) {
      EXPECT_FLOAT_EQ(pulled[r][i], want[i]) << "worker " << r << " " << i;
    }
  }
}

// A row's initial values depend on (initializer, key) only: one server or three give the
// same rows, and a pull creates nothing.
TEST(SparseInitTest, InitialRowsDoNotDependOnTheNumberOfServers) {
  const std::vector<uint64_t> keys = {0, 1, 42, uint64_t{1} << 40, ~uint64_t{0}};
  std::map<int, std::vector<float>> rows;
  for (int servers : {1, 3}) {
    auto cluster = LocalCluster::Create(Options(
        "asp", servers, 1,
        TableSpec::Sparse("emb", 4, Initializer::Uniform(-1.0f, 1.0f, 99), {"sgd", 0.1f})));
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    std::vector<float> out(keys.size() * 4);
    ASSERT_TRUE((*cluster)->worker(0).PullSparse("emb", keys, out).ok());
    rows[servers] = out;
    uint64_t held = 0;
    for (int s = 0; s < servers; ++s) held += (*cluster)->server_stats(s).sparse_rows;
    EXPECT_EQ(held, 0u) << "a pull creates no row";
    ASSERT_TRUE((*cluster)->Shutdown().ok());
  }
  EXPECT_EQ(rows[1], rows[3]);
  for (float v : rows[1]) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LE(v, 1.0f);
  }
  EXPECT_NE(rows[1][0], rows[1][1]);
  EXPECT_NE(rows[1][0], rows[1][4]);
}

// 100k rows touched in a key space of 2^64 (keys spread over all of it): the servers hold
// exactly those rows, in memory close to their raw bytes.
TEST(SparseMemoryTest, MemoryIsProportionalToTheRowsTouched) {
  constexpr uint32_t kW = 8;
  constexpr uint64_t kRows = 100'000;
  auto cluster = LocalCluster::Create(
      Options("asp", 2, 1, TableSpec::Sparse("emb", kW, Initializer::Zeros(), {"sgd", 0.1f})));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::vector<uint64_t> keys(kRows);
  uint64_t x = 1;
  for (uint64_t& k : keys) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;  // distinct (a full-period LCG)
    k = x;
  }
  std::vector<float> g(kRows * kW, 1.0f);
  Worker& w = (*cluster)->worker(0);
  ASSERT_TRUE(w.PushSparse("emb", keys, g).ok());
  std::vector<float> out(kRows * kW);
  ASSERT_TRUE(w.PullSparse("emb", keys, out).ok());
  for (float v : out) ASSERT_FLOAT_EQ(v, -0.1f);
  uint64_t rows = 0, bytes = 0;
  for (int s = 0; s < 2; ++s) {
    const ServerStats st = (*cluster)->server_stats(s);
    EXPECT_GT(st.sparse_rows, kRows / 3) << "the keys spread over both servers";
    rows += st.sparse_rows;
    bytes += st.sparse_bytes;
  }
  EXPECT_EQ(rows, kRows);
  const uint64_t raw = kRows * kW * sizeof(float);
  EXPECT_LT(bytes, 2 * raw + (uint64_t{1} << 20)) << bytes << " bytes for " << raw << " raw";
  RecordProperty("sparse_bytes", std::to_string(bytes));
  RecordProperty("raw_bytes", std::to_string(raw));
}

// The server's memory budget bounds the rows: a push whose new rows do not fit what the
// budget leaves after the dense tables is refused whole; one that fits is applied.
TEST(SparseMemoryTest, RowsPastTheMemoryBudgetAreRefused) {
  ClusterOptions o =
      Options("asp", 1, 1, TableSpec::Sparse("emb", 8, Initializer::Zeros(), {"sgd", 1.0f}));
  o.server.memory_budget_bytes = 1 << 20;
  auto cluster = LocalCluster::Create(o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  std::vector<uint64_t> keys(100'000);
  for (uint64_t i = 0; i < keys.size(); ++i) keys[i] = i * 977;
  absl::Status s = w.PushSparse("emb", keys, std::vector<float>(keys.size() * 8, 1.0f));
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("memory_budget_bytes"));
  EXPECT_EQ((*cluster)->server_stats(0).sparse_rows, 0u) << "nothing was applied";
  keys.resize(1000);
  ASSERT_TRUE(w.PushSparse("emb", keys, std::vector<float>(keys.size() * 8, 1.0f)).ok());
  EXPECT_EQ((*cluster)->server_stats(0).sparse_rows, 1000u);
}

TEST(SparseBadInputTest, RefusedWithClearErrorsAndNothingApplied) {
  ClusterOptions o =
      Options("asp", 2, 1, TableSpec::Sparse("emb", 4, Initializer::Constant(0.5f), {"sgd", 1.0f}));
  o.job.tables.push_back({"dense", 10, Initializer::Zeros(), {"sgd", 1.0f}});
  auto cluster = LocalCluster::Create(o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  const std::vector<uint64_t> keys = {1, 2};
  std::vector<float> g(8, 1.0f);

  absl::Status s = w.PushSparse("emb", keys, std::span<const float>(g.data(), 7));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("7 values for 2 keys of rows of 4"));
  std::vector<float> small(7);
  EXPECT_EQ(w.PullSparse("emb", keys, small).code(), absl::StatusCode::kInvalidArgument);

  s = w.Push("emb", std::vector<float>(4, 1.0f));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("is sparse"));
  std::vector<float> dense_out(4);
  EXPECT_THAT(w.Pull("emb", 0, dense_out).message(), HasSubstr("is sparse"));
  EXPECT_THAT(w.Assign("emb", 0, dense_out).message(), HasSubstr("is sparse"));

  s = w.PushSparse("dense", keys, std::vector<float>(2, 1.0f));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("is dense"));

  std::vector<uint64_t> many(kMaxSparseKeys + 1);
  for (uint64_t i = 0; i < many.size(); ++i) many[i] = i;
  s = w.PushSparse("emb", many, std::vector<float>(many.size() * 4, 1.0f));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("kMaxSparseKeys"));

  EXPECT_TRUE(w.PushSparse("emb", {}, {}).ok()) << "no keys: nothing to do";

  // Nothing was applied: the rows are still their initial values, and no server holds any.
  std::vector<float> out(8);
  ASSERT_TRUE(w.PullSparse("emb", keys, out).ok());
  for (float v : out) EXPECT_EQ(v, 0.5f);
  for (int srv = 0; srv < 2; ++srv) {
    EXPECT_EQ((*cluster)->server_stats(srv).sparse_rows, 0u);
    EXPECT_EQ((*cluster)->server_stats(srv).pushes, 0u);
  }
}

TEST(SparsePolicyTest, UnsupportedPoliciesAreRefusedAtStart) {
  for (const std::string policy : {"vsgd", "sa-asgd:n=2"}) {
    auto cluster = LocalCluster::Create(
        Options(policy, 1, 2, TableSpec::Sparse("emb", 4, Initializer::Zeros(), {"sgd", 0.1f})));
    ASSERT_FALSE(cluster.ok()) << policy;
    EXPECT_THAT(cluster.status().message(), HasSubstr("sparse")) << policy;
  }
}

// The classic hybrid in one job (docs/policies.md, "A policy per table"): the dense table
// under the job's BSP, the embedding under its own ASP. Both workers push row 5 every
// iteration: ASP applies each push in full (the row moves by the sum), where BSP would
// average it; the dense table gets BSP's round average.
TEST(SparsePolicyTest, AHybridJobRunsDenseUnderBspAndTheEmbeddingUnderAsp) {
  constexpr int kIterations = 6;
  ClusterOptions o = Options("bsp", 2, 2, {"dense", 2, Initializer::Zeros(), {"sgd", 1.0f}});
  o.job.tables.push_back(TableSpec::Sparse("emb", 2, Initializer::Zeros(), {"sgd", 0.5f}));
  o.job.tables.back().policy = "asp";
  auto cluster = LocalCluster::Create(o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::vector<std::vector<float>> dense(2, std::vector<float>(2)), rows(2, std::vector<float>(4));
  const std::vector<uint64_t> keys = {5, 1000};
  ASSERT_TRUE(
      (*cluster)
          ->Run([&](Worker& w) -> absl::Status {
            const float r = static_cast<float>(w.rank());
            for (int t = 0; t < kIterations; ++t) {
              KAIROS_RETURN_IF_ERROR(w.Pull("dense", dense[w.rank()]));
              // Row 5 from both workers; row 1000 + rank from each alone.
              const std::vector<uint64_t> mine = {5, 1000 + static_cast<uint64_t>(w.rank())};
              const std::vector<float> g = {1, 2, 1 + r, 1};
              KAIROS_RETURN_IF_ERROR(w.PushSparse("emb", mine, g));
              const std::vector<float> dg = {2 * r, 1};
              KAIROS_RETURN_IF_ERROR(w.Push("dense", dg));
              KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
            }
            KAIROS_RETURN_IF_ERROR(w.Pull("dense", dense[w.rank()]));
            KAIROS_RETURN_IF_ERROR(w.Barrier());
            return w.PullSparse("emb", keys, rows[w.rank()]);
          })
          .ok());
  for (int rank = 0; rank < 2; ++rank) {
    // BSP: each round moves by the average of {0, 1} and {2, 1}: (1, 1).
    EXPECT_EQ(dense[rank], (std::vector<float>{-6, -6})) << rank;
    // ASP: row 5 by 0.5 x (1, 2) from each worker each iteration; row 1000 by 0.5 x (1, 1).
    EXPECT_EQ(rows[rank], (std::vector<float>{-6, -12, -3, -3})) << rank;
  }
}

// Admission and eviction through a whole job (docs/sparse.md, "Admission and eviction"):
// a key gets its row at its second push; rows not updated for more than a clock are removed
// at the next clock, reported to ServerOptions::on_evicted and counted per table.
TEST(SparseRowPolicyTest, RowsAreAdmittedAtTheSecondPushAndIdleOnesRemoved) {
  TableSpec emb = TableSpec::Sparse("emb", 2, Initializer::Zeros(), {"sgd", 1.0f});
  emb.admission.min_count = 2;
  emb.eviction.max_idle_clocks = 1;
  ClusterOptions o = Options("asp", 2, 1, emb);
  absl::Mutex mu;
  std::set<uint64_t> evicted;
  o.server.on_evicted = [&](const EvictedRows& e) {
    absl::MutexLock lock(&mu);
    EXPECT_EQ(e.table, "emb");
    EXPECT_EQ(e.reason, EvictionReason::kIdle);
    evicted.insert(e.keys.begin(), e.keys.end());
  };
  auto cluster = LocalCluster::Create(o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::vector<uint64_t> all, hot = {1, 2, 3, 4, 5};
  for (uint64_t k = 1; k <= 20; ++k) all.push_back(k);
  std::vector<float> got(all.size() * 2);
  ASSERT_TRUE((*cluster)
                  ->Run([&](Worker& w) -> absl::Status {
                    const std::vector<float> ones(all.size() * 2, 1.0f);
                    KAIROS_RETURN_IF_ERROR(w.PushSparse("emb", all, ones));  // counted only
                    KAIROS_RETURN_IF_ERROR(w.PushSparse("emb", all, ones));  // admitted
                    KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
                    for (int t = 1; t <= 3; ++t) {
                      const std::vector<float> g(hot.size() * 2, 1.0f);
                      KAIROS_RETURN_IF_ERROR(w.PushSparse("emb", hot, g));
                      KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
                    }
                    return w.PullSparse("emb", all, got);
                  })
                  .ok());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const float want = all[i] <= 5 ? -4.0f : 0.0f;  // hot: 4 updates; idle: removed
    EXPECT_EQ(got[2 * i], want) << all[i];
    EXPECT_EQ(got[2 * i + 1], want) << all[i];
  }
  SparseTableStats sum;
  for (int srv = 0; srv < 2; ++srv) {
    const ServerStats s = (*cluster)->server_stats(srv);
    ASSERT_EQ(s.sparse_tables.size(), 1u);
    EXPECT_EQ(s.sparse_tables[0].table, "emb");
    sum.rows += s.sparse_tables[0].rows;
    sum.rows_created += s.sparse_tables[0].rows_created;
    sum.pushes_unadmitted += s.sparse_tables[0].pushes_unadmitted;
    sum.evicted_idle += s.sparse_tables[0].evicted_idle;
  }
  EXPECT_EQ(sum.rows, 5u);
  EXPECT_EQ(sum.rows_created, 20u);
  EXPECT_EQ(sum.pushes_unadmitted, 20u);
  EXPECT_EQ(sum.evicted_idle, 15u);
  absl::MutexLock lock(&mu);
  std::set<uint64_t> idle;
  for (uint64_t k = 6; k <= 20; ++k) idle.insert(k);
  EXPECT_EQ(evicted, idle);
}

TEST(SparseSpecTest, InvalidDeclarationsAreRefused) {
  TableSpec t = TableSpec::Sparse("emb", 0);
  JobConfig job;
  job.tables = {t};
  EXPECT_THAT(ValidateJobConfig(job).message(), HasSubstr("row_width is 0"));
  job.tables[0].row_width = kMaxRowWidth + 1;
  EXPECT_THAT(ValidateJobConfig(job).message(), HasSubstr("row_width"));
  job.tables[0].row_width = 4;
  job.tables[0].size = 10;
  EXPECT_THAT(ValidateJobConfig(job).message(), HasSubstr("must be 0"));
  job.tables[0].size = 0;
  EXPECT_TRUE(ValidateJobConfig(job).ok());
  JobConfig other = job;
  other.tables[0].row_width = 8;
  EXPECT_THAT(CompareJobConfig(job, other).message(), HasSubstr("row_width is 8 here but 4"));
  other.tables[0] = TableSpec{"emb", 10, Initializer::Zeros(), {}};
  EXPECT_THAT(CompareJobConfig(job, other).message(), HasSubstr("kind is dense here but sparse"));
}

// The Eigen forms: a row-major matrix in, a row-major matrix out (resized), a matrix of the
// wrong shape refused; a learning rate change reaches every shard that may hold rows.
TEST(SparseEigenTest, RowMajorMatricesAndLearningRate) {
  auto cluster = LocalCluster::Create(
      Options("asp", 3, 1, TableSpec::Sparse("emb", 2, Initializer::Zeros(), {"sgd", 1.0f})));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker& w = (*cluster)->worker(0);
  const std::vector<uint64_t> keys = {10, 20, 30, 40, 50, 60};
  RowMatrixXf g(6, 2);
  for (int i = 0; i < 6; ++i) g.row(i) << static_cast<float>(i), static_cast<float>(10 * i);
  ASSERT_TRUE(PushSparse(w, "emb", keys, g).ok());
  RowMatrixXf out;
  ASSERT_TRUE(PullSparse(w, "emb", keys, out).ok());
  ASSERT_EQ(out.rows(), 6);
  ASSERT_EQ(out.cols(), 2);
  EXPECT_EQ(out, RowMatrixXf(-g));
  EXPECT_THAT(PushSparse(w, "emb", keys, RowMatrixXf(6, 3)).message(),
              HasSubstr("a 6 x 3 matrix for 6 keys of rows of 2"));
  // Learning rate 0 on every shard: another push changes nothing.
  ASSERT_TRUE(w.SetLearningRate("emb", 0.0f).ok());
  ASSERT_TRUE(PushSparse(w, "emb", keys, g).ok());
  RowMatrixXf again;
  ASSERT_TRUE(PullSparse(w, "emb", keys, again).ok());
  EXPECT_EQ(again, out);
}

}  // namespace
}  // namespace kairos
