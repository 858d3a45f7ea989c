// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Helpers of the spec parser tests: parse-or-fail, the expected error of a bad spec, the
// round trip through ToString, and random spec strings (each either parses into a valid spec
// that survives ToString -> ParsePolicySpec unchanged, or is refused with InvalidArgument and
// a message).

#ifndef KAIROS_TESTS_POLICY_SPEC_TEST_UTIL_H_
#define KAIROS_TESTS_POLICY_SPEC_TEST_UTIL_H_

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "policy/policy.h"

namespace kairos::policy {

// The spec `text` parses to (a test failure, and a default spec, if it does not).
inline PolicySpec Parsed(std::string_view text) {
  absl::StatusOr<PolicySpec> spec = ParsePolicySpec(text);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status();
  return spec.ok() ? *spec : PolicySpec{};
}

// The message of the InvalidArgument that `text` must produce.
inline std::string ErrorOf(std::string_view text) {
  absl::StatusOr<PolicySpec> spec = ParsePolicySpec(text);
  EXPECT_FALSE(spec.ok()) << "'" << text << "' parsed as " << ToString(*spec);
  if (spec.ok()) return "";
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << text;
  return std::string(spec.status().message());
}

// ToString(spec) parses back to `spec` and prints the same again.
inline void ExpectRoundTrip(const PolicySpec& spec) {
  const std::string text = ToString(spec);
  absl::StatusOr<PolicySpec> parsed = ParsePolicySpec(text);
  ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status();
  EXPECT_EQ(*parsed, spec) << text;
  EXPECT_EQ(ToString(*parsed), text);
}

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

#endif  // KAIROS_TESTS_POLICY_SPEC_TEST_UTIL_H_
