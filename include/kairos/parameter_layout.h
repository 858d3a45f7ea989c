// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos::ParameterLayout: where the tensors of a model live in the job's tables. A model's
// parameters are named tensors (a weight matrix W1, a bias vector b1, ...); a table is a flat
// float32 vector. The layout places each tensor, by name and shape, at an offset of a table,
// so that the tables can be declared from it and all tensors pulled or pushed in one call
// (kairos::PullAll / PushAll in kairos/eigen.h, which move Eigen matrices):
//
//   kairos::ParameterLayout layout;
//   KAIROS_RETURN_IF_ERROR(layout.Add("W1", "layer1", hidden, 784));  // hidden x 784
//   KAIROS_RETURN_IF_ERROR(layout.Add("b1", "layer1", hidden));       // a vector
//   KAIROS_RETURN_IF_ERROR(layout.Add("W2", "layer2", 10, hidden));
//   KAIROS_RETURN_IF_ERROR(layout.Add("b2", "layer2", 10));
//   for (const std::string& t : layout.tables()) {
//     options.job.tables.push_back(*layout.Table(t, init_of(t), {"sgd", 0.1f}));
//   }
//   ...
//   KAIROS_RETURN_IF_ERROR(kairos::PullAll(worker, layout, {W1, b1, W2, b2}));
//
// Element order: a tensor of rows x cols occupies rows * cols consecutive elements of its
// table in column-major order (Eigen's default): element (i, j) is at offset + i + j * rows.
// Tensors of one table follow each other in the order they were added, with no gap, so a
// table's size is the sum of its tensors' sizes. Every table has one Initializer (table.h),
// so tensors that need different initial values (weights and biases, layers of different
// fan-in) go in different tables.
//
// This header has no Eigen type; kairos/eigen.h holds the calls that move Eigen values.
// Thread-safety: a const ParameterLayout may be shared by any number of threads; Add needs
// exclusive access.

#ifndef KAIROS_PARAMETER_LAYOUT_H_
#define KAIROS_PARAMETER_LAYOUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kairos/export.h"
#include "kairos/table.h"

namespace kairos {

class KAIROS_EXPORT ParameterLayout {
 public:
  // One tensor's place: `rows` x `cols` elements of table `table` from `offset` on.
  struct Tensor {
    std::string name;
    std::string table;
    uint64_t offset = 0;
    int64_t rows = 0;
    int64_t cols = 0;

    uint64_t size() const { return static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols); }
    // True for a vector (one column or one row): such a tensor accepts an Eigen column or
    // row vector of its size.
    bool is_vector() const { return rows == 1 || cols == 1; }
  };

  ParameterLayout() = default;

  // Appends tensor `name` of `rows` x `cols` (cols = 1: a column vector of `rows` elements)
  // at the end of table `table`, which the layout creates on first use. InvalidArgument,
  // naming the tensor, when: the name is empty or already used, the table name is empty or
  // longer than kMaxTableNameLength (job.h), rows or cols is below 1, or the table would
  // grow past kMaxTableElements. A refused Add changes nothing.
  absl::Status Add(std::string_view name, std::string_view table, int64_t rows,
                   int64_t cols = 1);

  // The tensors, in the order they were added.
  const std::vector<Tensor>& tensors() const { return tensors_; }
  int num_tensors() const { return static_cast<int>(tensors_.size()); }
  // The index of tensor `name` in tensors(), or -1.
  int index(std::string_view name) const;
  // Tensor `name`, or NotFound naming it.
  absl::StatusOr<Tensor> tensor(std::string_view name) const;

  // The tables, in the order of their first tensor.
  const std::vector<std::string>& tables() const { return tables_; }
  // The number of elements of `table` (the sum of its tensors' sizes); 0 when the layout
  // has no such table.
  uint64_t table_size(std::string_view table) const;
  // The number of elements of every table together.
  uint64_t total_size() const;

  // The declaration of `table` for JobConfig::tables: its name and size from the layout,
  // with `init` and `updater`. NotFound when the layout has no such table.
  absl::StatusOr<TableSpec> Table(std::string_view table, const Initializer& init,
                                  const UpdaterSpec& updater) const;

 private:
  std::vector<Tensor> tensors_;
  std::vector<std::string> tables_;
  std::vector<uint64_t> table_sizes_;  // parallel to tables_
};

}  // namespace kairos

#endif  // KAIROS_PARAMETER_LAYOUT_H_
