// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ParameterLayout: the bookkeeping of tensor places (kairos/parameter_layout.h).

#include "kairos/parameter_layout.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kairos/job.h"

namespace kairos {

absl::Status ParameterLayout::Add(std::string_view name_view, std::string_view table_view,
                                  int64_t rows, int64_t cols) {
  const std::string name(name_view);
  const std::string table(table_view);
  if (name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ParameterLayout::Add: a tensor of table '", table, "' has an empty name"));
  }
  if (index(name) >= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ParameterLayout::Add: tensor '", name, "' is already in the layout"));
  }
  if (table.empty() || table.size() > kMaxTableNameLength) {
    return absl::InvalidArgumentError(absl::StrCat("ParameterLayout::Add: tensor '", name,
                                                   "': the table name must have 1 to ",
                                                   kMaxTableNameLength, " characters, got ",
                                                   table.size()));
  }
  if (rows < 1 || cols < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("ParameterLayout::Add: tensor '", name,
                     "' must have at least one row and one column, got ", rows, " x ", cols));
  }
  const auto urows = static_cast<uint64_t>(rows);
  const auto ucols = static_cast<uint64_t>(cols);
  const uint64_t before = table_size(table);
  // rows * cols and before + size, each checked against the limit before it is formed.
  if (urows > kMaxTableElements || ucols > kMaxTableElements / urows ||
      urows * ucols > kMaxTableElements - before) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ParameterLayout::Add: tensor '", name, "' (", rows, " x ", cols,
        ") does not fit in table '", table, "', which already holds ", before,
        " elements: a table holds at most ", kMaxTableElements));
  }
  Tensor t;
  t.name = name;
  t.table = table;
  t.offset = before;
  t.rows = rows;
  t.cols = cols;
  const auto it = std::find(tables_.begin(), tables_.end(), table);
  if (it == tables_.end()) {
    tables_.push_back(table);
    table_sizes_.push_back(t.size());
  } else {
    table_sizes_[static_cast<size_t>(it - tables_.begin())] += t.size();
  }
  tensors_.push_back(std::move(t));
  return absl::OkStatus();
}

int ParameterLayout::index(std::string_view name) const {
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (tensors_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

absl::StatusOr<ParameterLayout::Tensor> ParameterLayout::tensor(std::string_view name) const {
  const int i = index(name);
  if (i < 0) {
    return absl::NotFoundError(absl::StrCat("the layout has no tensor '", std::string(name), "'"));
  }
  return tensors_[static_cast<size_t>(i)];
}

uint64_t ParameterLayout::table_size(std::string_view table) const {
  const auto it = std::find(tables_.begin(), tables_.end(), table);
  return it == tables_.end() ? 0 : table_sizes_[static_cast<size_t>(it - tables_.begin())];
}

uint64_t ParameterLayout::total_size() const {
  uint64_t total = 0;
  for (uint64_t s : table_sizes_) total += s;
  return total;
}

absl::StatusOr<TableSpec> ParameterLayout::Table(std::string_view table, const Initializer& init,
                                                 const UpdaterSpec& updater) const {
  const uint64_t size = table_size(table);
  if (size == 0) {
    return absl::NotFoundError(absl::StrCat("the layout has no table '", std::string(table), "'"));
  }
  TableSpec spec;
  spec.name = std::string(table);
  spec.size = size;
  spec.init = init;
  spec.updater = updater;
  return spec;
}

}  // namespace kairos
