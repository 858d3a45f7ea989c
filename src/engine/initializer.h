// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Table initial values. Element i's value is a function of the initializer and i alone
// (a counter-based generator), so every partitioning of a table starts identical.

#ifndef KAIROS_ENGINE_INITIALIZER_H_
#define KAIROS_ENGINE_INITIALIZER_H_

#include <cstdint>
#include <span>

#include "kairos/table.h"

namespace kairos::internal {

// The initial value of element `index`.
float InitialValue(const Initializer& init, uint64_t index);

// Fills out[j] = InitialValue(init, first + j).
void FillInitial(const Initializer& init, uint64_t first, std::span<float> out);

}  // namespace kairos::internal

#endif  // KAIROS_ENGINE_INITIALIZER_H_
