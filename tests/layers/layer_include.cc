// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Must not compile: compiled as part of the policy layer, which does not depend on the server
// layer, it includes a server header (tests/layers/CMakeLists.txt expects the error).

#include "policy/policy.h"
#include "server/shard.h"
