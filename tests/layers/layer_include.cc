// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// One source, compiled by the targets of tests/layers/CMakeLists.txt as part of a layer,
// with the header it includes chosen by each target (KAIROS_LAYERS_TEST_HEADER): the policy
// layer including a server header must fail to compile, and the same source compiled with
// an allowed include must succeed.

#include "policy/policy.h"
#include KAIROS_LAYERS_TEST_HEADER
