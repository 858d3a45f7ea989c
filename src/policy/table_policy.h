// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A policy per table (docs/policies.md, "A policy per table"): TableSpec::policy names the
// table's gate, aggregation and weighting; a table without one uses the job's. The pull
// schedule and the straggler policy act on whole workers and stay the job's.

#ifndef KAIROS_POLICY_TABLE_POLICY_H_
#define KAIROS_POLICY_TABLE_POLICY_H_

#include <vector>

#include "absl/status/statusor.h"
#include "kairos/job.h"
#include "policy/policy.h"

namespace kairos::policy {

// The policy each table of `job` runs under, by table id, given the job's own (`job_spec`,
// parsed from job.policy): the job's for a table whose policy is empty; otherwise the
// table's spec with the job's pull and straggler parts. InvalidArgument names the table:
// its spec does not parse, it names a pull schedule or a straggler policy (those are the
// job's), or it is one a sparse table cannot run (value weighting; aggregation other than
// immediate or round-average).
absl::StatusOr<std::vector<PolicySpec>> TablePolicies(const JobConfig& job,
                                                      const PolicySpec& job_spec);

}  // namespace kairos::policy

#endif  // KAIROS_POLICY_TABLE_POLICY_H_
