// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Eigen views of kairos buffers and spans. This is the only public header that includes
// Eigen; the maps view the memory in place (no copy). The views are const-correct: only
// writable memory (a std::span<float>, a Buffer the caller holds non-const) gives a
// writable VectorMap; a const Buffer, a ConstBuffer (such as pulled values, which may share
// the server's memory) and a std::span<const float> give a read-only ConstVectorMap, so
// writing through them does not compile.

#ifndef KAIROS_EIGEN_H_
#define KAIROS_EIGEN_H_

#include <Eigen/Core>
#include <span>

#include "kairos/buffer.h"

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

}  // namespace kairos

#endif  // KAIROS_EIGEN_H_
