// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The --policies flag of kairos_policy_sim and kairos_policy_bench: a comma-separated list
// of policy specs whose own parameters are comma-separated too ("bsp,dssp:s=3,r=12,asp").
//
// Thread-safety: pure functions.

#ifndef KAIROS_BENCH_POLICY_LIST_H_
#define KAIROS_BENCH_POLICY_LIST_H_

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace kairos::bench {

// Whether `piece` of a comma-separated list is a bare key=value parameter (as r=12 in
// "dssp:s=3,r=12") rather than a spec of its own (as "gate=bsp+agg=immediate").
inline bool IsPolicyParameter(absl::string_view piece) {
  if (!absl::StrContains(piece, '=') || absl::StrContains(piece, ':') ||
      absl::StrContains(piece, '+')) {
    return false;
  }
  for (absl::string_view seam : {"gate=", "agg=", "weight=", "pull=", "straggler="}) {
    if (absl::StartsWith(piece, seam)) return false;
  }
  return true;
}

// "bsp,dssp:s=3,r=12,asp" -> {"bsp", "dssp:s=3,r=12", "asp"}.
inline std::vector<std::string> SplitPolicies(const std::string& text) {
  std::vector<std::string> specs;
  for (absl::string_view piece : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    piece = absl::StripAsciiWhitespace(piece);
    if (!specs.empty() && IsPolicyParameter(piece)) {
      absl::StrAppend(&specs.back(), ",", piece);
    } else {
      specs.emplace_back(piece);
    }
  }
  return specs;
}

}  // namespace kairos::bench

#endif  // KAIROS_BENCH_POLICY_LIST_H_
