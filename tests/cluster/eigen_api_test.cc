// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The Eigen-native API (kairos/eigen.h, kairos/parameter_layout.h): the layout's bookkeeping and
// refusals; the element order of TensorSource and TensorTarget over every memory layout
// (column-major, row-major, blocks, rows); and whole clusters (public API alone) where
// PullAll/PushAll and Push/Pull give exact values after SGD steps with a known learning rate,
// tables cut into several chunks over two servers, and wrong shapes refused before anything is
// sent.

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/eigen.h"
#include "kairos/kairos.h"
#include "kairos/parameter_layout.h"

namespace kairos {
namespace {

using ::testing::HasSubstr;
using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// ----------------------------------------------------------------- ParameterLayout

ParameterLayout MlpLayout() {
  ParameterLayout layout;
  EXPECT_TRUE(layout.Add("W1", "layer1", 3, 4).ok());
  EXPECT_TRUE(layout.Add("b1", "layer1", 3).ok());
  EXPECT_TRUE(layout.Add("W2", "layer2", 2, 3).ok());
  EXPECT_TRUE(layout.Add("b2", "layer2", 2).ok());
  return layout;
}

TEST(ParameterLayoutTest, PlacesTensorsOneAfterAnotherPerTable) {
  const ParameterLayout layout = MlpLayout();
  ASSERT_EQ(layout.num_tensors(), 4);
  EXPECT_EQ(layout.tables(), (std::vector<std::string>{"layer1", "layer2"}));
  EXPECT_EQ(layout.table_size("layer1"), 15u);
  EXPECT_EQ(layout.table_size("layer2"), 8u);
  EXPECT_EQ(layout.table_size("nope"), 0u);
  EXPECT_EQ(layout.total_size(), 23u);
  const auto &t = layout.tensors();
  EXPECT_EQ(t[0].offset, 0u);
  EXPECT_EQ(t[1].offset, 12u);
  EXPECT_EQ(t[2].offset, 0u);
  EXPECT_EQ(t[3].offset, 6u);
  EXPECT_EQ(t[1].rows, 3);
  EXPECT_EQ(t[1].cols, 1);
  EXPECT_TRUE(t[1].is_vector());
  EXPECT_FALSE(t[0].is_vector());
  EXPECT_EQ(layout.index("W2"), 2);
  EXPECT_EQ(layout.index("W3"), -1);
  absl::StatusOr<ParameterLayout::Tensor> b2 = layout.tensor("b2");
  ASSERT_TRUE(b2.ok());
  EXPECT_EQ(b2->table, "layer2");
  EXPECT_EQ(layout.tensor("W3").status().code(), absl::StatusCode::kNotFound);
}

TEST(ParameterLayoutTest, DeclaresTables) {
  const ParameterLayout layout = MlpLayout();
  absl::StatusOr<TableSpec> spec =
      layout.Table("layer2", Initializer::Constant(1.0f), {"sgd", 0.25f});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "layer2");
  EXPECT_EQ(spec->size, 8u);
  EXPECT_EQ(spec->init, Initializer::Constant(1.0f));
  EXPECT_EQ(spec->updater.learning_rate, 0.25f);
  absl::StatusOr<TableSpec> missing = layout.Table("layer3", {}, {});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("layer3"));
}

TEST(ParameterLayoutTest, RefusesBadTensorsAndChangesNothing) {
  ParameterLayout layout = MlpLayout();
  const auto refused = [&](absl::Status s, const std::string &what) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr(what));
  };
  refused(layout.Add("W1", "layer3", 1, 1), "'W1' is already in the layout");
  refused(layout.Add("", "layer3", 1, 1), "empty name");
  refused(layout.Add("c", "", 1, 1), "table name");
  refused(layout.Add("c", std::string(kMaxTableNameLength + 1, 't'), 1, 1), "table name");
  refused(layout.Add("c", "layer1", 0, 4), "0 x 4");
  refused(layout.Add("c", "layer1", 4, -1), "4 x -1");
  // Past the table limit, including a product that would overflow 64 bits.
  refused(layout.Add("c", "layer1", int64_t{1} << 40, int64_t{1} << 40), "at most");
  refused(layout.Add("c", "layer1", static_cast<int64_t>(kMaxTableElements), 1), "holds 15");
  EXPECT_EQ(layout.num_tensors(), 4);
  EXPECT_EQ(layout.table_size("layer1"), 15u);
  EXPECT_EQ(layout.tables().size(), 2u);
  // A table of exactly the limit is fine.
  EXPECT_TRUE(layout.Add("big", "huge", static_cast<int64_t>(kMaxTableElements), 1).ok());
}

// ------------------------------------------------- element order of sources and targets

TEST(TensorSourceTest, ReadsEveryLayoutInColumnMajorOrder) {
  Eigen::MatrixXf m(3, 4);
  for (int i = 0; i < 12; ++i) m.data()[i] = static_cast<float>(i);  // m(r, c) = r + 3c
  const RowMajorMatrix rm = m;
  std::vector<float> out(12, -1.0f);

  const TensorSource col_major(m);
  EXPECT_EQ(col_major.contiguous(), m.data());
  col_major.CopyTo(out.data());
  for (int i = 0; i < 12; ++i) EXPECT_EQ(out[i], static_cast<float>(i));

  const TensorSource row_major(rm);
  EXPECT_EQ(row_major.contiguous(), nullptr);
  std::fill(out.begin(), out.end(), -1.0f);
  row_major.CopyTo(out.data());
  for (int i = 0; i < 12; ++i) EXPECT_EQ(out[i], static_cast<float>(i));

  // A block with an outer stride: rows 1..2 of columns 1..3.
  const TensorSource block(m.block(1, 1, 2, 3));
  EXPECT_EQ(block.rows(), 2);
  EXPECT_EQ(block.cols(), 3);
  EXPECT_EQ(block.contiguous(), nullptr);
  block.CopyTo(out.data());
  EXPECT_EQ((std::vector<float>(out.begin(), out.begin() + 6)),
            (std::vector<float>{4, 5, 7, 8, 10, 11}));

  // A row of a column-major matrix (stride 3) and a column (contiguous).
  const TensorSource row(m.row(2));
  EXPECT_EQ(row.contiguous(), nullptr);
  row.CopyTo(out.data());
  EXPECT_EQ((std::vector<float>(out.begin(), out.begin() + 4)), (std::vector<float>{2, 5, 8, 11}));
  EXPECT_EQ(TensorSource(m.col(1)).contiguous(), m.data() + 3);
  // Refs and Maps are read in place.
  const Eigen::Ref<const Eigen::VectorXf> ref = m.col(2);
  EXPECT_EQ(TensorSource(ref).contiguous(), m.data() + 6);
  const Eigen::Map<const Eigen::MatrixXf> map(m.data() + 4, 2, 4);
  EXPECT_EQ(TensorSource(map).contiguous(), m.data() + 4);
  EXPECT_EQ(TensorSource(map).size(), 8u);

  // An expression is evaluated.
  const TensorSource doubled(2.0f * m.col(3));
  doubled.CopyTo(out.data());
  EXPECT_EQ((std::vector<float>(out.begin(), out.begin() + 3)), (std::vector<float>{18, 20, 22}));
  const Eigen::ArrayXf a = Eigen::ArrayXf::Constant(2, 1.5f);
  TensorSource(a * a).CopyTo(out.data());
  EXPECT_EQ(out[0], 2.25f);
  EXPECT_EQ(out[1], 2.25f);
}

TEST(TensorTargetTest, WritesEveryLayoutFromColumnMajorValues) {
  std::vector<float> src(12);
  for (int i = 0; i < 12; ++i) src[i] = static_cast<float>(i);

  RowMajorMatrix rm(3, 4);
  const TensorTarget to_row_major(rm);
  EXPECT_EQ(to_row_major.contiguous(), nullptr);
  to_row_major.Assign(src.data(), 3, 4);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) EXPECT_EQ(rm(r, c), static_cast<float>(r + 3 * c));
  }

  // A block: only its elements change.
  Eigen::MatrixXf big = Eigen::MatrixXf::Constant(4, 5, -1.0f);
  TensorTarget(big.block(1, 2, 2, 3)).Assign(src.data(), 2, 3);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 5; ++c) {
      const bool inside = r >= 1 && r <= 2 && c >= 2;
      EXPECT_EQ(big(r, c), inside ? static_cast<float>((r - 1) + 2 * (c - 2)) : -1.0f)
          << r << "," << c;
    }
  }

  // A row of a column-major matrix takes a vector tensor.
  TensorTarget(big.row(3)).Assign(src.data(), 5, 1);
  for (int c = 0; c < 5; ++c) EXPECT_EQ(big(3, c), static_cast<float>(c));

  // A plain object is resized, by reference or by pointer.
  Eigen::MatrixXf empty;
  TensorTarget(&empty).Assign(src.data(), 2, 6);
  EXPECT_EQ(empty.rows(), 2);
  EXPECT_EQ(empty.cols(), 6);
  EXPECT_EQ(empty(1, 5), 11.0f);
  Eigen::RowVectorXf row_vector;
  const TensorTarget to_row_vector(row_vector);
  ParameterLayout::Tensor vec{.name = "v", .table = "t", .offset = 0, .rows = 4, .cols = 1};
  EXPECT_TRUE(to_row_vector.CheckShape("test", vec).ok());
  to_row_vector.Assign(src.data(), 4, 1);
  EXPECT_EQ(row_vector.cols(), 4);
  EXPECT_EQ(row_vector(3), 3.0f);
}

TEST(TensorTargetTest, RefusesShapesItCannotTake) {
  ParameterLayout::Tensor matrix{.name = "W", .table = "t", .offset = 0, .rows = 3, .cols = 4};
  Eigen::MatrixXf m(4, 3);  // the transpose: refused for a view, resized as a plain object
  EXPECT_TRUE(TensorTarget(m).CheckShape("test", matrix).ok());
  absl::Status s = TensorTarget(m.block(0, 0, 4, 3)).CheckShape("PullAll", matrix);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("PullAll: tensor 'W' of table 't' is 3 x 4 but its "
                                     "destination is 4 x 3"));
  Eigen::Matrix4f fixed;
  s = TensorTarget(fixed).CheckShape("PullAll", matrix);
  EXPECT_THAT(s.message(), HasSubstr("a fixed-size 4 x 4"));
  Eigen::Matrix<float, 3, 4> fits;
  EXPECT_TRUE(TensorTarget(fits).CheckShape("test", matrix).ok());
  s = TensorSource(m).CheckShape("PushAll", matrix);
  EXPECT_THAT(s.message(), HasSubstr("PushAll: tensor 'W' of table 't' is 3 x 4 but the "
                                     "values given are 4 x 3"));
}

// What converts implicitly (in a call's argument list). Read-only memory and expressions without
// direct access reach a TensorTarget constructor whose static_assert explains the refusal, so they
// fail to compile (not checkable here without a compile-failure test).
static_assert(std::is_convertible_v<Eigen::MatrixXf &, TensorTarget>);
static_assert(std::is_convertible_v<Eigen::MatrixXf *, TensorTarget>);
static_assert(std::is_convertible_v<Eigen::Ref<Eigen::VectorXf> &, TensorTarget>);
static_assert(std::is_convertible_v<const Eigen::MatrixXf &, TensorSource>);

// --------------------------------------------------------------------------- clusters

constexpr float kLearningRate = 0.5f;

// The small MLP layout's tables: layer1 starts at 1, layer2 at 2; tiny chunks so that each table
// spans several chunks over both servers.
ClusterOptions Options(int workers, const std::string &policy) {
  ClusterOptions o;
  o.num_servers = 2;
  o.num_workers = workers;
  o.job.policy = policy;
  o.job.chunk_elements = 4;
  const ParameterLayout layout = MlpLayout();
  o.job.tables.push_back(
      *layout.Table("layer1", Initializer::Constant(1.0f), {"sgd", kLearningRate}));
  o.job.tables.push_back(
      *layout.Table("layer2", Initializer::Constant(2.0f), {"sgd", kLearningRate}));
  o.worker.request_timeout = absl::Seconds(30);
  return o;
}

TEST(EigenClusterTest, PullAllAfterPushAllUnderBsp) {
  auto cluster = LocalCluster::Create(Options(2, "bsp"));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const ParameterLayout layout = MlpLayout();
  absl::Status s = (*cluster)->Run([&](Worker &w) -> absl::Status {
    Eigen::MatrixXf W1, W2;
    Eigen::VectorXf b1, b2;
    KAIROS_RETURN_IF_ERROR(PullAll(w, layout, {W1, b1, &W2, &b2}));
    if (W1.rows() != 3 || W1.cols() != 4 || b1.size() != 3 || W2.rows() != 2 || b2.size() != 2) {
      return absl::InternalError("PullAll did not size the plain objects");
    }
    if (!(W1.array() == 1.0f).all() || !(b1.array() == 1.0f).all() || !(W2.array() == 2.0f).all() ||
        !(b2.array() == 2.0f).all()) {
      return absl::InternalError("initial values wrong");
    }
    // Gradients: (rank + 1) times the element's column-major index within its tensor, from a
    // row-major matrix, a block and an expression, to check the element order too.
    const float k = static_cast<float>(w.rank() + 1);
    RowMajorMatrix gW1(3, 4);
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 4; ++c) gW1(r, c) = k * static_cast<float>(r + 3 * c);
    }
    Eigen::MatrixXf wide = Eigen::MatrixXf::Zero(4, 4);
    for (int c = 0; c < 3; ++c) {
      for (int r = 0; r < 2; ++r) wide(1 + r, c) = k * static_cast<float>(r + 2 * c);
    }
    const Eigen::VectorXf idx3 = Eigen::VectorXf::LinSpaced(3, 0.0f, 2.0f);
    const Eigen::RowVectorXf gb2 = k * Eigen::RowVectorXf::LinSpaced(2, 0.0f, 1.0f);
    KAIROS_RETURN_IF_ERROR(PushAll(w, layout, {gW1, k * idx3, wide.block(1, 0, 2, 3), gb2}));
    KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
    KAIROS_RETURN_IF_ERROR(PullAll(w, layout, {W1, b1, W2, b2}));
    // BSP: the mean of (1 + 2) * i / 2 = 1.5 i; w = init - 0.5 * 1.5 i = init - 0.75 i.
    for (int i = 0; i < 12; ++i) {
      if (W1.data()[i] != 1.0f - 0.75f * static_cast<float>(i)) {
        return absl::InternalError("W1[" + std::to_string(i) +
                                   "] = " + std::to_string(W1.data()[i]));
      }
    }
    for (int i = 0; i < 3; ++i) {
      if (b1[i] != 1.0f - 0.75f * static_cast<float>(i)) return absl::InternalError("b1");
    }
    for (int i = 0; i < 6; ++i) {
      if (W2.data()[i] != 2.0f - 0.75f * static_cast<float>(i)) return absl::InternalError("W2");
    }
    for (int i = 0; i < 2; ++i) {
      if (b2[i] != 2.0f - 0.75f * static_cast<float>(i)) return absl::InternalError("b2");
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

TEST(EigenClusterTest, NonContiguousTargetsAndOneTableCalls) {
  auto cluster = LocalCluster::Create(Options(1, "asp"));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const ParameterLayout layout = MlpLayout();
  absl::Status s = (*cluster)->Run([&](Worker &w) -> absl::Status {
    // layer1 (15 elements) through a single-table push from a strided row of a matrix: gradient i
    // for element i, so layer1 = 1 - 0.5 i.
    Eigen::MatrixXf holder = Eigen::MatrixXf::Zero(2, 15);
    holder.row(1) = Eigen::RowVectorXf::LinSpaced(15, 0.0f, 14.0f);
    KAIROS_RETURN_IF_ERROR(Push(w, "layer1", holder.row(1)));
    // Pull into blocks of a bigger row-major matrix and a row: only those elements change.
    RowMajorMatrix canvas = RowMajorMatrix::Constant(5, 6, -7.0f);
    Eigen::MatrixXf b1_row = Eigen::MatrixXf::Constant(2, 3, -7.0f);
    Eigen::MatrixXf W2, b2;
    KAIROS_RETURN_IF_ERROR(PullAll(w, layout, {canvas.block(1, 1, 3, 4), b1_row.row(1), W2, b2}));
    for (int r = 0; r < 5; ++r) {
      for (int c = 0; c < 6; ++c) {
        const bool inside = r >= 1 && r <= 3 && c >= 1 && c <= 4;
        const float want = inside ? 1.0f - 0.5f * static_cast<float>((r - 1) + 3 * (c - 1)) : -7.0f;
        if (canvas(r, c) != want) return absl::InternalError("canvas wrong");
      }
    }
    for (int c = 0; c < 3; ++c) {
      if (b1_row(0, c) != -7.0f) return absl::InternalError("b1_row row 0 touched");
      if (b1_row(1, c) != 1.0f - 0.5f * static_cast<float>(12 + c)) {
        return absl::InternalError("b1_row row 1 wrong");
      }
    }
    if (b2.rows() != 2 || b2.cols() != 1) return absl::InternalError("b2 not sized 2 x 1");
    // Single-table pull into a Ref and a strided column map, and a ranged pull.
    Eigen::VectorXf all(15);
    Eigen::Ref<Eigen::VectorXf> ref(all);
    KAIROS_RETURN_IF_ERROR(Pull(w, "layer1", ref));
    if (all[14] != 1.0f - 7.0f) return absl::InternalError("Pull into a Ref");
    Eigen::MatrixXf strided = Eigen::MatrixXf::Zero(2, 15);
    KAIROS_RETURN_IF_ERROR(Pull(w, "layer1", strided.row(1)));
    if (strided(1, 3) != 1.0f - 1.5f || strided(0, 3) != 0.0f) {
      return absl::InternalError("Pull into a strided row");
    }
    // The row of a transpose is a column: contiguous, pulled in place.
    Eigen::MatrixXf tall = Eigen::MatrixXf::Zero(15, 2);
    KAIROS_RETURN_IF_ERROR(Pull(w, "layer1", tall.transpose().row(1)));
    if (tall(3, 1) != 1.0f - 1.5f) return absl::InternalError("Pull into a transposed row");
    Eigen::Vector2f part;
    KAIROS_RETURN_IF_ERROR(Pull(w, "layer1", 13, part));
    if (part[0] != 1.0f - 6.5f || part[1] != 1.0f - 7.0f) {
      return absl::InternalError("Pull of a range");
    }
    KAIROS_RETURN_IF_ERROR(Push(w, "layer2", 6, Eigen::Vector2f(2.0f, 4.0f)));
    KAIROS_RETURN_IF_ERROR(Pull(w, "layer2", 6, part));
    if (part[0] != 1.0f || part[1] != 0.0f) return absl::InternalError("Push of a range");
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

TEST(EigenClusterTest, WrongShapesAreRefusedBeforeAnythingIsSent) {
  auto cluster = LocalCluster::Create(Options(1, "asp"));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Worker &w = (*cluster)->worker(0);
  const ParameterLayout layout = MlpLayout();
  Eigen::MatrixXf W1, W2;
  Eigen::VectorXf b1, b2;

  absl::Status s = PullAll(w, layout, {W1, b1, W2});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("PullAll: the layout has 4 tensors (W1, b1, W2, b2) but "
                                     "3 were given"));

  Eigen::MatrixXf wrong(3, 3);
  s = PullAll(w, layout, {W1, b1, wrong.block(0, 0, 3, 3), b2});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("tensor 'W2' of table 'layer2' is 2 x 3 but its "
                                     "destination is 3 x 3"));

  s = PushAll(w, layout,
              {Eigen::MatrixXf::Zero(3, 4), Eigen::VectorXf::Zero(3), Eigen::MatrixXf::Zero(3, 2),
               Eigen::VectorXf::Zero(2)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("PushAll: tensor 'W2' of table 'layer2' is 2 x 3 but the "
                                     "values given are 3 x 2"));

  // A layout that disagrees with the job's tables.
  ParameterLayout other;
  ASSERT_TRUE(other.Add("W1", "layer1", 4, 4).ok());
  s = PullAll(w, other, {W1});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("table 'layer1' holds 15 elements in the job but 16 in the layout"));
  ParameterLayout unknown;
  ASSERT_TRUE(unknown.Add("x", "layer9", 2).ok());
  s = PushAll(w, unknown, {Eigen::VectorXf::Zero(2)});
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("'layer9' is not in the job"));

  // One table: the worker's own size check, for a contiguous gradient and for a strided
  // one (gathered first; it was once pushed as a range of the table instead of refused).
  s = Push(w, "layer1", Eigen::VectorXf::Zero(14));
  EXPECT_FALSE(s.ok());
  Eigen::MatrixXf wide = Eigen::MatrixXf::Zero(2, 14);
  s = Push(w, "layer1", wide.row(0));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  Eigen::VectorXf short_vector(14);
  s = Pull(w, "layer1", short_vector);
  EXPECT_FALSE(s.ok());

  // Nothing was applied: the tables hold their initial values.
  ASSERT_TRUE(PullAll(w, layout, {W1, b1, W2, b2}).ok());
  EXPECT_TRUE((W1.array() == 1.0f).all());
  EXPECT_TRUE((W2.array() == 2.0f).all());
  EXPECT_TRUE((*cluster)->Shutdown().ok());
}

}  // namespace
}  // namespace kairos
