// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Eigen and kairos. This is the only public header that includes Eigen. It holds:
//
//  - Views of kairos memory (AsEigen): a Buffer, ConstBuffer or span seen as an Eigen
//    vector in place (no copy). The views are const-correct: only writable memory (a
//    std::span<float>, a Buffer the caller holds non-const) gives a writable VectorMap; a
//    const Buffer, a ConstBuffer (such as pulled values, which may share the server's memory)
//    and a std::span<const float> give a read-only ConstVectorMap, so writing through them
//    does not compile.
//
//  - Pushes and pulls of Eigen values, without pointer arithmetic:
//
//      kairos::Push(worker, "w", gradient);          // any float Eigen expression
//      kairos::Pull(worker, "w", params);            // a vector, matrix, Map, Ref or block
//      kairos::PullAll(worker, layout, {W1, b1, W2, b2});    // every tensor of a model
//      kairos::PushAll(worker, layout, {gW1, gb1, gW2, gb2});
//
//    where `layout` is a kairos::ParameterLayout (kairos/parameter_layout.h) that says which
//    table and offset hold each tensor. A table holds a matrix in column-major order
//    (Eigen's default; element (i, j) of a rows x cols tensor at offset + i + j * rows).
//    Any memory layout works on the Eigen side: a row-major matrix, a row of a
//    column-major matrix, a block with an outer stride are read or written element by
//    element (through a copy; contiguous column-major memory is used in place).
//
// The calls are inline: they compile in the caller's translation unit, with the caller's
// Eigen configuration, and reach libkairos only through the calls of Worker and
// ParameterLayout, which hold no Eigen type.
//
// Thread-safety: as Worker's calls; the Eigen objects a call reads or writes must not be
// touched by another thread until it returns.

#ifndef KAIROS_EIGEN_H_
#define KAIROS_EIGEN_H_

#include <Eigen/Core>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "kairos/buffer.h"
#include "kairos/options.h"
#include "kairos/parameter_layout.h"
#include "kairos/status.h"
#include "kairos/worker.h"

namespace kairos {

using VectorMap = Eigen::Map<Eigen::VectorXf, Eigen::Unaligned>;
using ConstVectorMap = Eigen::Map<const Eigen::VectorXf, Eigen::Unaligned>;

inline VectorMap AsEigen(std::span<float> s) {
  return VectorMap(s.data(), static_cast<Eigen::Index>(s.size()));
}
inline ConstVectorMap AsEigen(std::span<const float> s) {
  return ConstVectorMap(s.data(), static_cast<Eigen::Index>(s.size()));
}
// The caller's own Buffer: writable. Do not write into a Buffer the transport still holds
// (one passed to PushAsync, until its Request completes).
inline VectorMap AsEigen(Buffer& b) { return AsEigen(b.span()); }
inline ConstVectorMap AsEigen(const Buffer& b) {
  return AsEigen(std::span<const float>(b.span()));
}
inline ConstVectorMap AsEigen(const ConstBuffer& b) { return AsEigen(b.span()); }

namespace eigen_internal {

// The text of an error message: strings and numbers, concatenated.
inline void AppendTo(std::string& out, std::string_view s) { out += s; }
inline void AppendTo(std::string& out, const char* s) { out += s; }
template <typename N>
  requires std::is_arithmetic_v<N>
void AppendTo(std::string& out, N n) {
  out += std::to_string(n);
}
template <typename... Args>
std::string Cat(const Args&... args) {
  std::string out;
  (AppendTo(out, args), ...);
  return out;
}

using StridedMap = Eigen::Map<Eigen::MatrixXf, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;
using ConstStridedMap =
    Eigen::Map<const Eigen::MatrixXf, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;

// True when an Eigen object of rows x cols can hold a tensor of tensor_rows x tensor_cols:
// the same shape, or both are vectors (one row or one column) of the same length, whose
// elements are in the same order either way.
inline bool ShapeFits(Eigen::Index rows, Eigen::Index cols, int64_t tensor_rows,
                      int64_t tensor_cols) {
  if (rows == tensor_rows && cols == tensor_cols) return true;
  const bool vectors = (rows == 1 || cols == 1) && (tensor_rows == 1 || tensor_cols == 1);
  return vectors && rows * cols == tensor_rows * tensor_cols;
}

inline std::string Shape(int64_t rows, int64_t cols) { return Cat(rows, " x ", cols); }

// Memory of rows x cols floats, element (i, j) at data[i * row_stride + j * col_stride].
struct Strided {
  float* data = nullptr;
  Eigen::Index rows = 0;
  Eigen::Index cols = 0;
  Eigen::Index row_stride = 1;
  Eigen::Index col_stride = 0;

  // True when it is one contiguous column-major array.
  bool contiguous() const {
    return (rows <= 1 || row_stride == 1) && (cols <= 1 || col_stride == rows);
  }
};

// The element strides of an Eigen object with direct access.
template <typename Derived>
Strided StridesOf(float* data, const Eigen::DenseBase<Derived>& x) {
  const Derived& d = x.derived();
  Strided s;
  s.data = data;
  s.rows = d.rows();
  s.cols = d.cols();
  if constexpr (Derived::IsRowMajor) {
    s.row_stride = d.outerStride();
    s.col_stride = d.innerStride();
  } else {
    s.row_stride = d.innerStride();
    s.col_stride = d.outerStride();
  }
  return s;
}

template <typename Derived>
constexpr bool kHasDirectAccess = (int(Derived::Flags) & Eigen::DirectAccessBit) != 0;

}  // namespace eigen_internal

// Values to push: any Eigen expression of floats (a VectorXf or MatrixXf, a Map, a Ref, a
// block, a row, or a computed expression such as `2.0f * g`). Its shape is the
// expression's, and its elements are sent in column-major order. An object with direct
// access is read in place when the call runs; any other expression is evaluated into a
// temporary matrix owned by the TensorSource.
//
// A TensorSource refers to its argument's memory: build it in the argument list of the call
// that uses it (as the implicit conversion does), or keep it no longer than that memory.
class TensorSource {
 public:
  template <typename Derived>
  TensorSource(const Eigen::DenseBase<Derived>& values) {  // NOLINT(runtime/explicit)
    static_assert(std::is_same_v<typename Derived::Scalar, float>,
                  "kairos tables hold float: push x.cast<float>()");
    if constexpr (eigen_internal::kHasDirectAccess<Derived>) {
      strided_ = eigen_internal::StridesOf(const_cast<float*>(values.derived().data()), values);
    } else {
      owned_.resize(values.rows(), values.cols());
      if constexpr (std::is_base_of_v<Eigen::ArrayBase<Derived>, Derived>) {
        owned_.array() = values.derived();
      } else {
        owned_ = values.derived();
      }
      strided_ = eigen_internal::StridesOf(owned_.data(), owned_);
    }
  }

  Eigen::Index rows() const { return strided_.rows; }
  Eigen::Index cols() const { return strided_.cols; }
  uint64_t size() const { return static_cast<uint64_t>(rows() * cols()); }

  // The values as one contiguous column-major array, or nullptr when they are not stored so.
  const float* contiguous() const { return strided_.contiguous() ? strided_.data : nullptr; }

  // Writes the values, column-major, into dst[0, size()).
  void CopyTo(float* dst) const {
    if (const float* src = contiguous()) {
      if (size() > 0) std::memcpy(dst, src, size() * sizeof(float));
      return;
    }
    Eigen::Map<Eigen::MatrixXf>(dst, rows(), cols()) = eigen_internal::ConstStridedMap(
        strided_.data, rows(), cols(),
        Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(strided_.col_stride, strided_.row_stride));
  }

  // OK when these values fit tensor `t` (eigen_internal::ShapeFits), else InvalidArgument
  // naming the tensor and both shapes, prefixed with `what`.
  absl::Status CheckShape(std::string_view what, const ParameterLayout::Tensor& t) const {
    if (eigen_internal::ShapeFits(rows(), cols(), t.rows, t.cols)) return absl::OkStatus();
    return absl::InvalidArgumentError(
        eigen_internal::Cat(what, ": tensor '", t.name, "' of table '", t.table, "' is ",
                            eigen_internal::Shape(t.rows, t.cols), " but the values given are ",
                            eigen_internal::Shape(rows(), cols())));
  }

 private:
  eigen_internal::Strided strided_;
  Eigen::MatrixXf owned_;  // an evaluated expression
};

// Where pulled values go: a plain Eigen object (Eigen::MatrixXf, VectorXf, ArrayXXf, ...,
// by reference or by pointer), which PullAll resizes to the tensor's shape as Eigen's own
// assignment does, or a writable view with direct access (a Map, a Ref, a block, row,
// column or segment of a matrix), which must already have the tensor's shape. Read-only
// objects (a const matrix, an Eigen::Ref<const ...>) and expressions without direct access
// do not compile.
//
// A TensorTarget refers to its argument (a plain object) or its argument's memory (a view):
// build it in the argument list of the call that uses it (as the implicit conversion does),
// or keep it no longer than that object or memory.
class TensorTarget {
 public:
  template <typename Derived>
  TensorTarget(Eigen::PlainObjectBase<Derived>& object)  // NOLINT(runtime/explicit)
      : object_(&object), fit_(&FitPlain<Derived>) {
    static_assert(std::is_same_v<typename Derived::Scalar, float>,
                  "kairos tables hold float: pull into a float matrix");
    current_ = eigen_internal::StridesOf(object.data(), object);
  }
  template <typename Derived>
  TensorTarget(Eigen::PlainObjectBase<Derived>* object)  // NOLINT(runtime/explicit)
      : TensorTarget(*object) {}

  template <typename Derived>
  TensorTarget(const Eigen::MapBase<Derived, Eigen::WriteAccessors>& view) {  // NOLINT
    static_assert(std::is_same_v<typename Derived::Scalar, float>,
                  "kairos tables hold float: pull into a float matrix");
    // The view's own constness is shallow, as a std::span's: its memory is writable (the
    // view has write accessors).
    current_ = eigen_internal::StridesOf(const_cast<float*>(view.data()), view);
  }

  // Everything else: refused at compile time with the reason.
  template <typename Derived>
  TensorTarget(const Eigen::DenseBase<Derived>&) {  // NOLINT(runtime/explicit)
    static_assert(sizeof(Derived) == 0,
                  "kairos::TensorTarget needs writable memory with direct access: a "
                  "non-const Eigen::Matrix/Array (or a pointer to one), a Map, a Ref to "
                  "non-const, or a block/row/column/segment of one");
  }

  // The current shape (a plain object's before any resize).
  Eigen::Index rows() const { return current_.rows; }
  Eigen::Index cols() const { return current_.cols; }
  uint64_t size() const { return static_cast<uint64_t>(rows() * cols()); }
  // True for a plain object, which takes any shape it can be resized to.
  bool resizable() const { return object_ != nullptr; }

  // The current memory as one contiguous column-major array, or nullptr when it is not one.
  float* contiguous() const { return current_.contiguous() ? current_.data : nullptr; }

  // OK when tensor `t` can be written here: a plain object that can be resized to its shape
  // (a fixed-size one must already have it), or a view of a fitting shape
  // (eigen_internal::ShapeFits). Else InvalidArgument naming the tensor and both shapes,
  // prefixed with `what`.
  absl::Status CheckShape(std::string_view what, const ParameterLayout::Tensor& t) const {
    eigen_internal::Strided unused;
    if (resizable() ? fit_(object_, t.rows, t.cols, /*resize=*/false, &unused)
                    : eigen_internal::ShapeFits(rows(), cols(), t.rows, t.cols)) {
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(eigen_internal::Cat(
        what, ": tensor '", t.name, "' of table '", t.table, "' is ",
        eigen_internal::Shape(t.rows, t.cols), " but its destination is ",
        resizable() ? "a fixed-size " : "", eigen_internal::Shape(rows(), cols())));
  }

  // Writes `src`, the column-major values of a tensor of tensor_rows x tensor_cols, here
  // (resizing a plain object first). REQUIRES: CheckShape for that shape returned OK.
  void Assign(const float* src, int64_t tensor_rows, int64_t tensor_cols) const {
    eigen_internal::Strided dst = current_;
    if (resizable()) fit_(object_, tensor_rows, tensor_cols, /*resize=*/true, &dst);
    if (dst.contiguous()) {
      if (dst.rows * dst.cols > 0) {
        std::memcpy(dst.data, src, static_cast<size_t>(dst.rows * dst.cols) * sizeof(float));
      }
      return;
    }
    // dst is tensor_rows x tensor_cols, or a vector of the same length: either way src read
    // as dst's shape in column-major order gives the elements in the right order.
    eigen_internal::StridedMap(
        dst.data, dst.rows, dst.cols,
        Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(dst.col_stride, dst.row_stride)) =
        Eigen::Map<const Eigen::MatrixXf>(src, dst.rows, dst.cols);
  }

 private:
  // For a plain object: whether it can take a tensor of rows x cols, as which shape (a
  // vector tensor becomes a row in an object that is a row vector at compile time); with
  // `resize`, resizes it and sets *out to its memory.
  template <typename Derived>
  static bool FitPlain(void* object, int64_t rows, int64_t cols, bool resize,
                       eigen_internal::Strided* out) {
    Eigen::Index r = rows;
    Eigen::Index c = cols;
    if (rows == 1 || cols == 1) {
      if constexpr (Derived::RowsAtCompileTime == 1) {
        r = 1;
        c = rows * cols;
      } else if constexpr (Derived::ColsAtCompileTime == 1) {
        r = rows * cols;
        c = 1;
      }
    }
    const auto fits = [](Eigen::Index n, int fixed, int max) {
      return (fixed == Eigen::Dynamic || fixed == n) && (max == Eigen::Dynamic || n <= max);
    };
    if (!fits(r, Derived::RowsAtCompileTime, Derived::MaxRowsAtCompileTime) ||
        !fits(c, Derived::ColsAtCompileTime, Derived::MaxColsAtCompileTime)) {
      return false;
    }
    if (resize) {
      auto& m = *static_cast<Eigen::PlainObjectBase<Derived>*>(object);
      m.resize(r, c);
      *out = eigen_internal::StridesOf(m.data(), m);
    }
    return true;
  }

  void* object_ = nullptr;  // a plain object, else null
  bool (*fit_)(void*, int64_t, int64_t, bool, eigen_internal::Strided*) = nullptr;
  eigen_internal::Strided current_;
};

namespace eigen_internal {

// The index in layout.tables() of each tensor's table.
inline std::vector<size_t> TableIndices(const ParameterLayout& layout) {
  std::vector<size_t> out;
  out.reserve(layout.tensors().size());
  for (const ParameterLayout::Tensor& t : layout.tensors()) {
    size_t i = 0;
    while (layout.tables()[i] != t.table) ++i;
    out.push_back(i);
  }
  return out;
}

// The checks PullAll and PushAll make before they send anything: one value per tensor,
// each of a fitting shape, and every table in the job with the layout's size.
template <typename T>
absl::Status CheckAll(std::string_view what, const Worker& worker, const ParameterLayout& layout,
                      std::span<const T> values) {
  if (values.size() != layout.tensors().size()) {
    std::string names;
    for (const ParameterLayout::Tensor& t : layout.tensors()) {
      names += names.empty() ? t.name : ", " + t.name;
    }
    return absl::InvalidArgumentError(Cat(what, ": the layout has ", layout.tensors().size(),
                                          " tensors (", names, ") but ", values.size(),
                                          " were given, one per tensor in order"));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    KAIROS_RETURN_IF_ERROR(values[i].CheckShape(what, layout.tensors()[i]));
  }
  for (const std::string& table : layout.tables()) {
    absl::StatusOr<TableInfo> info = worker.table(table);
    if (!info.ok()) {
      return absl::NotFoundError(Cat(what, ": the layout's table '", table, "' is not in the job"));
    }
    if (info->size != layout.table_size(table)) {
      return absl::InvalidArgumentError(Cat(what, ": table '", table, "' holds ", info->size,
                                            " elements in the job but ", layout.table_size(table),
                                            " in the layout"));
    }
  }
  return absl::OkStatus();
}

}  // namespace eigen_internal

// ------------------------------------------------------------------------------ one table

// Pushes `values` (column-major) as the gradient of the whole table: values.size() must be
// the table's size. Waits until every shard accepted it (Worker::Push).
inline absl::Status Push(Worker& worker, std::string_view table, const TensorSource& values,
                         const CallOptions& options = {}) {
  if (const float* p = values.contiguous()) {
    return worker.Push(table, std::span<const float>(p, values.size()), options);
  }
  // A strided expression is gathered first; the whole-table form checks its size.
  Buffer b = Buffer::Allocate(values.size());
  values.CopyTo(b.data());
  return worker.Push(table, std::span<const float>(b.span()), options);
}

// Pushes `values` as the gradient of elements [offset, offset + values.size()).
inline absl::Status Push(Worker& worker, std::string_view table, uint64_t offset,
                         const TensorSource& values, const CallOptions& options = {}) {
  if (const float* p = values.contiguous()) {
    return worker.Push(table, offset, std::span<const float>(p, values.size()), options);
  }
  Buffer b = Buffer::Allocate(values.size());
  values.CopyTo(b.data());
  return worker.PushAsync(table, offset, std::move(b), options).Wait();
}

// Fills `out` with the whole table, in column-major order, as the gate allows: out keeps
// its shape (it is not resized), and out.size() must be the table's size.
inline absl::Status Pull(Worker& worker, std::string_view table, const TensorTarget& out,
                         const CallOptions& options = {}) {
  if (float* p = out.contiguous()) {
    return worker.Pull(table, std::span<float>(p, out.size()), options);
  }
  Buffer b = Buffer::Allocate(out.size());
  KAIROS_RETURN_IF_ERROR(worker.Pull(table, b.span(), options));
  out.Assign(b.data(), out.rows(), out.cols());
  return absl::OkStatus();
}

// Fills `out` (keeping its shape) with elements [offset, offset + out.size()).
inline absl::Status Pull(Worker& worker, std::string_view table, uint64_t offset,
                         const TensorTarget& out, const CallOptions& options = {}) {
  if (float* p = out.contiguous()) {
    return worker.Pull(table, offset, std::span<float>(p, out.size()), options);
  }
  Buffer b = Buffer::Allocate(out.size());
  KAIROS_RETURN_IF_ERROR(worker.Pull(table, offset, b.span(), options));
  out.Assign(b.data(), out.rows(), out.cols());
  return absl::OkStatus();
}

// ------------------------------------------------------------------------ sparse tables

// A sparse table's rows as Eigen sees them: keys.size() x row_width, row-major (row i is
// key i's row).
using RowMatrixXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace eigen_internal {

inline absl::Status CheckRows(const char* what, Worker& worker, std::string_view table,
                              size_t keys, Eigen::Index rows, Eigen::Index cols) {
  absl::StatusOr<TableInfo> info = worker.table(table);
  if (!info.ok()) return info.status();
  if (!info->sparse) {
    return absl::InvalidArgumentError(
        Cat(what, " of table '", table, "': the table is dense (use Push / Pull)"));
  }
  if (rows != static_cast<Eigen::Index>(keys) || cols != info->row_width) {
    return absl::InvalidArgumentError(Cat(what, " of table '", table, "': a ", Shape(rows, cols),
                                          " matrix for ", keys, " keys of rows of ",
                                          info->row_width, " (want ",
                                          Shape(static_cast<int64_t>(keys), info->row_width),
                                          ")"));
  }
  return absl::OkStatus();
}

}  // namespace eigen_internal

// Pushes `gradients` (keys.size() x row_width; any row-major float matrix, a block of
// rows, a Map) as the gradient of the rows of `keys` (Worker::PushSparse: a repeated key's
// rows are summed). A matrix of another shape is InvalidArgument, nothing sent.
inline absl::Status PushSparse(Worker& worker, std::string_view table,
                               std::span<const uint64_t> keys,
                               const Eigen::Ref<const RowMatrixXf>& gradients,
                               const CallOptions& options = {}) {
  KAIROS_RETURN_IF_ERROR(eigen_internal::CheckRows("sparse push", worker, table, keys.size(),
                                                   gradients.rows(), gradients.cols()));
  if (gradients.outerStride() == gradients.cols()) {
    return worker.PushSparse(table, keys,
                             std::span<const float>(gradients.data(), gradients.size()),
                             options);
  }
  const RowMatrixXf dense = gradients;
  return worker.PushSparse(table, keys, std::span<const float>(dense.data(), dense.size()),
                           options);
}

// Fills `out` (keys.size() x row_width, not resized) with the rows of `keys`.
inline absl::Status PullSparse(Worker& worker, std::string_view table,
                               std::span<const uint64_t> keys, Eigen::Ref<RowMatrixXf> out,
                               const CallOptions& options = {}) {
  KAIROS_RETURN_IF_ERROR(eigen_internal::CheckRows("sparse pull", worker, table, keys.size(),
                                                   out.rows(), out.cols()));
  if (out.outerStride() == out.cols()) {
    return worker.PullSparse(table, keys, std::span<float>(out.data(), out.size()), options);
  }
  RowMatrixXf dense(out.rows(), out.cols());
  KAIROS_RETURN_IF_ERROR(
      worker.PullSparse(table, keys, std::span<float>(dense.data(), dense.size()), options));
  out = dense;
  return absl::OkStatus();
}

// The same into a RowMatrixXf of any shape: resized to keys.size() x row_width first.
inline absl::Status PullSparse(Worker& worker, std::string_view table,
                               std::span<const uint64_t> keys, RowMatrixXf& out,
                               const CallOptions& options = {}) {
  absl::StatusOr<TableInfo> info = worker.table(table);
  if (!info.ok()) return info.status();
  out.resize(static_cast<Eigen::Index>(keys.size()), info->sparse ? info->row_width : 0);
  return PullSparse(worker, table, keys, Eigen::Ref<RowMatrixXf>(out), options);
}

// ------------------------------------------------------------------------ a whole layout

// Pulls every tensor of `layout` into `out` (one target per tensor, in the layout's order):
// one request per table, all issued before any is waited for, so the tables are read in
// parallel and each table's tensors come from one read of it. Plain objects are resized to
// their tensor's shape. Checked before anything is sent (InvalidArgument naming the tensor
// or table; NotFound for a table the job does not have): the number of targets, each
// target's shape, each table's size in the job. On error the targets' values are
// unspecified.
inline absl::Status PullAll(Worker& worker, const ParameterLayout& layout,
                            std::span<const TensorTarget> out, const CallOptions& options = {}) {
  KAIROS_RETURN_IF_ERROR(eigen_internal::CheckAll<TensorTarget>("PullAll", worker, layout, out));
  const std::vector<std::string>& tables = layout.tables();
  std::vector<ConstBuffer> values(tables.size());
  std::vector<Request> requests;
  requests.reserve(tables.size());
  for (size_t i = 0; i < tables.size(); ++i) {
    requests.push_back(
        worker.PullAsync(tables[i], 0, layout.table_size(tables[i]), &values[i], options));
  }
  KAIROS_RETURN_IF_ERROR(WaitAll(requests));
  const std::vector<size_t> table_of = eigen_internal::TableIndices(layout);
  for (size_t i = 0; i < out.size(); ++i) {
    const ParameterLayout::Tensor& t = layout.tensors()[i];
    out[i].Assign(values[table_of[i]].data() + t.offset, t.rows, t.cols);
  }
  return absl::OkStatus();
}
inline absl::Status PullAll(Worker& worker, const ParameterLayout& layout,
                            std::initializer_list<TensorTarget> out,
                            const CallOptions& options = {}) {
  return PullAll(worker, layout, std::span<const TensorTarget>(out.begin(), out.size()), options);
}

// Pushes `values` (one per tensor, in the layout's order) as the gradient of every tensor
// of `layout`: one push of each whole table, all issued before any is waited for, so that a
// table's tensors reach its shards as one update. Checked before anything is sent, as
// PullAll.
inline absl::Status PushAll(Worker& worker, const ParameterLayout& layout,
                            std::span<const TensorSource> values,
                            const CallOptions& options = {}) {
  KAIROS_RETURN_IF_ERROR(eigen_internal::CheckAll<TensorSource>("PushAll", worker, layout, values));
  const std::vector<std::string>& tables = layout.tables();
  std::vector<Buffer> gradients;
  gradients.reserve(tables.size());
  for (const std::string& table : tables) {
    gradients.push_back(Buffer::Allocate(layout.table_size(table)));
  }
  const std::vector<size_t> table_of = eigen_internal::TableIndices(layout);
  for (size_t i = 0; i < values.size(); ++i) {
    values[i].CopyTo(gradients[table_of[i]].data() + layout.tensors()[i].offset);
  }
  std::vector<Request> requests;
  requests.reserve(tables.size());
  for (size_t i = 0; i < tables.size(); ++i) {
    requests.push_back(worker.PushAsync(tables[i], 0, std::move(gradients[i]), options));
  }
  return WaitAll(requests);
}
inline absl::Status PushAll(Worker& worker, const ParameterLayout& layout,
                            std::initializer_list<TensorSource> values,
                            const CallOptions& options = {}) {
  return PushAll(worker, layout, std::span<const TensorSource>(values.begin(), values.size()),
                 options);
}

}  // namespace kairos

#endif  // KAIROS_EIGEN_H_
