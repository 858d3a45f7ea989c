// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "kairos/job.h"

#include <set>
#include <string>

#include "absl/strings/str_format.h"
#include "policy/policy.h"

namespace kairos {
namespace {

constexpr std::size_t kMaxTableName = 128;

std::string InitName(const Initializer& i) {
  switch (i.kind) {
    case Initializer::Kind::kZeros:
      return "zeros";
    case Initializer::Kind::kConstant:
      return absl::StrFormat("constant(%g)", i.a);
    case Initializer::Kind::kUniform:
      return absl::StrFormat("uniform(%g, %g, seed %d)", i.a, i.b, i.seed);
    case Initializer::Kind::kNormal:
      return absl::StrFormat("normal(%g, %g, seed %d)", i.a, i.b, i.seed);
  }
  return "?";
}

// The canonical form of a policy spec, so that two spellings of one policy agree
// ("vsgd" and "ssp:s=3+weight=value"); the text itself when it does not parse.
std::string CanonicalPolicy(const std::string& text) {
  absl::StatusOr<policy::PolicySpec> spec = policy::ParsePolicySpec(text);
  return spec.ok() ? policy::ToString(*spec) : text;
}

}  // namespace

absl::Status ValidateJobConfig(const JobConfig& job) {
  if (job.tables.empty()) return absl::InvalidArgumentError("the job declares no table");
  if (job.chunk_elements == 0) {
    return absl::InvalidArgumentError("chunk_elements must be > 0");
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < job.tables.size(); ++i) {
    const TableSpec& t = job.tables[i];
    if (t.name.empty() || t.name.size() > kMaxTableName) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table %d: the name must have 1 to %d characters", i, kMaxTableName));
    }
    if (!names.insert(t.name).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("table '%s' is declared twice", t.name));
    }
    if (t.size == 0) {
      return absl::InvalidArgumentError(absl::StrFormat("table '%s': size must be > 0", t.name));
    }
  }
  absl::StatusOr<policy::PolicySpec> spec = policy::ParsePolicySpec(job.policy);
  return spec.ok() ? absl::OkStatus() : spec.status();
}

absl::Status CompareJobConfig(const JobConfig& ours, const JobConfig& theirs) {
  auto differs = [](const std::string& field, const std::string& got,
                    const std::string& want) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is %s here but %s in the job", field, got, want));
  };
  if (theirs.policy != ours.policy &&
      CanonicalPolicy(theirs.policy) != CanonicalPolicy(ours.policy)) {
    return differs("policy", "'" + theirs.policy + "'", "'" + ours.policy + "'");
  }
  if (theirs.chunk_elements != ours.chunk_elements) {
    return differs("chunk_elements", std::to_string(theirs.chunk_elements),
                   std::to_string(ours.chunk_elements));
  }
  if (theirs.tables.size() != ours.tables.size()) {
    return differs("the number of tables", std::to_string(theirs.tables.size()),
                   std::to_string(ours.tables.size()));
  }
  for (std::size_t i = 0; i < ours.tables.size(); ++i) {
    const TableSpec& a = ours.tables[i];
    const TableSpec& b = theirs.tables[i];
    const std::string where = absl::StrFormat("table %d ('%s')", i, a.name);
    if (b.name != a.name) return differs(absl::StrFormat("table %d's name", i), b.name, a.name);
    if (b.size != a.size) {
      return differs(where + " size", std::to_string(b.size), std::to_string(a.size));
    }
    if (!(b.init == a.init)) return differs(where + " initializer", InitName(b.init), InitName(a.init));
    if (b.updater.name != a.updater.name) {
      return differs(where + " updater", b.updater.name, a.updater.name);
    }
    if (b.updater.learning_rate != a.updater.learning_rate) {
      return differs(where + " learning_rate", absl::StrFormat("%g", b.updater.learning_rate),
                     absl::StrFormat("%g", a.updater.learning_rate));
    }
  }
  return absl::OkStatus();
}

}  // namespace kairos
