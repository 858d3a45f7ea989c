// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Eigen views of kairos buffers and spans. This is the only public header that includes
// Eigen; the maps view the memory in place (no copy).

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
inline VectorMap AsEigen(const Buffer& b) { return AsEigen(b.span()); }

}  // namespace kairos

#endif  // KAIROS_EIGEN_H_
