// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The version and build type of this build (compile definitions of this file alone:
// src/metrics/CMakeLists.txt).

#include "metrics/prometheus.h"

namespace kairos::internal {

NodeInfo BuildInfo(absl::Duration uptime) {
  NodeInfo info;
  info.version = KAIROS_VERSION_STRING;
  info.build_type = KAIROS_BUILD_TYPE_STRING;
  if (info.build_type.empty()) info.build_type = "unknown";
  info.uptime = uptime;
  return info;
}

}  // namespace kairos::internal
