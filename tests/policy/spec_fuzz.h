// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Random spec strings for the parser tests: every string either parses into a valid spec
// that survives ToString -> ParsePolicySpec unchanged, or is refused with InvalidArgument
// and a message.

#ifndef KAIROS_TESTS_POLICY_SPEC_FUZZ_H_
#define KAIROS_TESTS_POLICY_SPEC_FUZZ_H_

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "policy/policy.h"

namespace kairos::policy {

// Builds `seeds` strings of up to `max_tokens - 1` random tokens and checks each; returns
// how many parsed (a test expects some).
inline int FuzzSpecStrings(std::span<const std::string_view> tokens, uint64_t seeds,
                           int max_tokens) {
  int accepted = 0;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    std::mt19937_64 rng(seed);
    std::string text;
    const int length = static_cast<int>(rng() % max_tokens);
    for (int i = 0; i < length; ++i) text += std::string(tokens[rng() % tokens.size()]);
    absl::StatusOr<PolicySpec> spec = ParsePolicySpec(text);
    if (!spec.ok()) {
      EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << text;
      EXPECT_FALSE(spec.status().message().empty()) << text;
      continue;
    }
    ++accepted;
    EXPECT_TRUE(ValidatePolicySpec(*spec).ok()) << text;
    absl::StatusOr<PolicySpec> again = ParsePolicySpec(ToString(*spec));
    EXPECT_TRUE(again.ok()) << text << " -> " << ToString(*spec);
    if (again.ok()) {
      EXPECT_EQ(*again, *spec) << text;
    }
  }
  return accepted;
}

}  // namespace kairos::policy

#endif  // KAIROS_TESTS_POLICY_SPEC_FUZZ_H_
