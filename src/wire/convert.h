// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Conversions between public kairos types and their wire (Protobuf) forms.

#ifndef KAIROS_WIRE_CONVERT_H_
#define KAIROS_WIRE_CONVERT_H_

#include "absl/status/status.h"
#include "kairos/job.h"
#include "wire/kairos.pb.h"

namespace kairos::internal {

void ToWire(const absl::Status& status, wire::Status* out);
absl::Status FromWire(const wire::Status& status);
// The status a reply header carries (OK when it has none).
absl::Status StatusOf(const wire::Header& header);

void ToWire(const JobConfig& job, wire::JobConfig* out);
JobConfig FromWire(const wire::JobConfig& job);

}  // namespace kairos::internal

#endif  // KAIROS_WIRE_CONVERT_H_
