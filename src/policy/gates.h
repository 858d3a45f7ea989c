// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The gate implementations, one file each, behind MakeGate (policy.h). Internal to
// src/policy/: callers use MakeGate.

#ifndef KAIROS_POLICY_GATES_H_
#define KAIROS_POLICY_GATES_H_

#include <memory>

#include "policy/policy.h"

namespace kairos::policy::internal {

// REQUIRES for each: num_workers >= 0, and `spec` of the gate's kind with
// ValidatePolicySpec's conditions met.
std::unique_ptr<Gate> NewSspGate(const GateSpec& spec, int num_workers);   // gate.cc
std::unique_ptr<Gate> NewDsspGate(const GateSpec& spec, int num_workers);  // dssp_gate.cc
std::unique_ptr<Gate> NewPspGate(const GateSpec& spec, int num_workers);   // psp_gate.cc

}  // namespace kairos::policy::internal

#endif  // KAIROS_POLICY_GATES_H_
