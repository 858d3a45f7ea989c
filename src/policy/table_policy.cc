// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "policy/table_policy.h"

#include <string>

#include "absl/strings/str_format.h"

namespace kairos::policy {

namespace {

absl::Status CheckSparse(const TableSpec& t, const PolicySpec& spec, const std::string& whose) {
  if (spec.weighting.kind == WeightingSpec::Kind::kValue) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "table '%s' is sparse: value-staleness weighting (VSGD), which %s names, is not "
        "supported on sparse tables (docs/sparse.md)",
        t.name, whose));
  }
  if (spec.aggregation.kind != AggregationSpec::Kind::kImmediate &&
      spec.aggregation.kind != AggregationSpec::Kind::kRoundAverage) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "table '%s' is sparse: only immediate and round-average (BSP) aggregation support "
        "sparse tables, and %s aggregates otherwise (docs/sparse.md)",
        t.name, whose));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<PolicySpec>> TablePolicies(const JobConfig& job,
                                                      const PolicySpec& job_spec) {
  std::vector<PolicySpec> out;
  out.reserve(job.tables.size());
  for (const TableSpec& t : job.tables) {
    if (t.policy.empty()) {
      if (t.sparse()) {
        if (absl::Status s = CheckSparse(t, job_spec, "the job's policy '" + job.policy + "'");
            !s.ok()) {
          return s;
        }
      }
      out.push_back(job_spec);
      continue;
    }
    absl::StatusOr<PolicySpec> spec = ParsePolicySpec(t.policy);
    if (!spec.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("table '%s': %s", t.name, spec.status().message()));
    }
    if (spec->pull.kind != PullSpec::Kind::kOnDemand) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table '%s': policy '%s' names a pull schedule; the pull schedule acts on whole "
          "workers and is the job's (JobConfig::policy)",
          t.name, t.policy));
    }
    if (spec->straggler.kind != StragglerSpec::Kind::kNone) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table '%s': policy '%s' names a straggler policy; the straggler policy acts on "
          "whole workers and is the job's (JobConfig::policy)",
          t.name, t.policy));
    }
    spec->pull = job_spec.pull;
    spec->straggler = job_spec.straggler;
    if (t.sparse()) {
      if (absl::Status s = CheckSparse(t, *spec, "its policy '" + t.policy + "'"); !s.ok()) {
        return s;
      }
    }
    out.push_back(*std::move(spec));
  }
  return out;
}

}  // namespace kairos::policy
