// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the policy spec string: presets, options, every error class, the canonical
// printer, and random round trips.

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/policy.h"

namespace kairos::policy {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

PolicySpec Spec(Tick staleness, AggregationSpec::Kind agg) {
  PolicySpec spec;
  spec.gate.staleness = staleness;
  spec.aggregation.kind = agg;
  return spec;
}

const PolicySpec kBsp = Spec(0, AggregationSpec::Kind::kRoundAverage);
const PolicySpec kAsp = Spec(kUnbounded, AggregationSpec::Kind::kImmediate);

PolicySpec Parsed(std::string_view text) {
  absl::StatusOr<PolicySpec> spec = ParsePolicySpec(text);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status();
  return spec.ok() ? *spec : PolicySpec{};
}

// The message of the InvalidArgument that `text` must produce.
std::string ErrorOf(std::string_view text) {
  absl::StatusOr<PolicySpec> spec = ParsePolicySpec(text);
  EXPECT_FALSE(spec.ok()) << "'" << text << "' parsed as " << ToString(*spec);
  if (spec.ok()) return "";
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << text;
  return std::string(spec.status().message());
}

// ------------------------------------------------------------------ accepted specs

TEST(PolicySpecTest, ParsesThePresets) {
  EXPECT_EQ(Parsed("bsp"), kBsp);
  EXPECT_EQ(Parsed("asp"), kAsp);
  EXPECT_EQ(Parsed("ssp:s=3"), Spec(3, AggregationSpec::Kind::kImmediate));
  EXPECT_EQ(Parsed("ssp:s=0"), Spec(0, AggregationSpec::Kind::kImmediate));
}

TEST(PolicySpecTest, DefaultSpecIsAsp) { EXPECT_EQ(PolicySpec{}, kAsp); }

TEST(PolicySpecTest, ParsesOptionsOnTheDefaults) {
  EXPECT_EQ(Parsed("gate=bsp"), Spec(0, AggregationSpec::Kind::kImmediate));
  EXPECT_EQ(Parsed("gate=ssp:s=2"), Spec(2, AggregationSpec::Kind::kImmediate));
  EXPECT_EQ(Parsed("gate=asp+agg=immediate"), kAsp);
  EXPECT_EQ(Parsed("gate=bsp+agg=round"), kBsp);
  EXPECT_EQ(Parsed("agg=round+gate=bsp"), kBsp);
  EXPECT_EQ(Parsed("weight=constant"), kAsp);
}

TEST(PolicySpecTest, AcceptsTheNeutralOptionsAfterAPreset) {
  EXPECT_EQ(Parsed("asp+weight=constant+pull=on-demand+straggler=none"), kAsp);
  EXPECT_EQ(Parsed("bsp+straggler=none"), kBsp);
}

TEST(PolicySpecTest, AcceptsAnOptionThatRepeatsThePresetsValue) {
  EXPECT_EQ(Parsed("bsp+gate=bsp"), kBsp);
  EXPECT_EQ(Parsed("bsp+gate=ssp:s=0+agg=round"), kBsp);
  EXPECT_EQ(Parsed("ssp:s=0+gate=bsp"), Spec(0, AggregationSpec::Kind::kImmediate));
  EXPECT_EQ(Parsed("ssp:s=4+gate=ssp:s=4+agg=immediate"),
            Spec(4, AggregationSpec::Kind::kImmediate));
}

TEST(PolicySpecTest, IgnoresBlanksAroundTokens) {
  EXPECT_EQ(Parsed("  ssp : s = 3 + weight = constant  "), Parsed("ssp:s=3"));
  EXPECT_EQ(Parsed("\tbsp\n"), kBsp);
  EXPECT_EQ(Parsed("gate = ssp : s = 1"), Spec(1, AggregationSpec::Kind::kImmediate));
}

TEST(PolicySpecTest, AcceptsTheLargestStaleness) {
  EXPECT_EQ(Parsed("ssp:s=9223372036854775807"), kAsp);
  EXPECT_EQ(Parsed("ssp:s=0007"), Spec(7, AggregationSpec::Kind::kImmediate));
}

// ------------------------------------------------------------------ errors

TEST(PolicySpecTest, RejectsEmptyText) {
  EXPECT_THAT(ErrorOf(""), HasSubstr("empty policy spec"));
  EXPECT_THAT(ErrorOf("   "), HasSubstr("empty policy spec"));
}

TEST(PolicySpecTest, RejectsAnEmptyPart) {
  EXPECT_THAT(ErrorOf("bsp+"), HasSubstr("part 2 is empty"));
  EXPECT_THAT(ErrorOf("+bsp"), HasSubstr("part 1 is empty"));
  EXPECT_THAT(ErrorOf("bsp+ +weight=constant"), HasSubstr("part 2 is empty"));
}

TEST(PolicySpecTest, RejectsAnUnknownPolicyListingTheKnownOnes) {
  EXPECT_EQ(ErrorOf("foo"), "unknown policy 'foo'; known: bsp, asp, ssp");
  EXPECT_THAT(ErrorOf("foo:s=1"), HasSubstr("unknown policy 'foo'"));
}

TEST(PolicySpecTest, HintsThatNamesAreLowerCase) {
  EXPECT_THAT(ErrorOf("BSP"), HasSubstr("names are lower-case: 'bsp'"));
  EXPECT_THAT(ErrorOf("gate=Ssp:s=1"), HasSubstr("names are lower-case: 'ssp'"));
}

TEST(PolicySpecTest, RejectsPlannedPresetsAsNotImplementedYet) {
  EXPECT_EQ(ErrorOf("dssp"),
            "policy 'dssp': not implemented yet (planned: dynamic SSP, Zhao et al. 2019)");
  for (std::string_view name :
       {"dssp:s=3,r=12", "psp:beta=2,s=1", "sa-asgd:n=4", "vsgd", "eager", "saps"}) {
    const std::string error = ErrorOf(name);
    EXPECT_THAT(error, HasSubstr("not implemented yet (planned: ")) << name;
    EXPECT_THAT(error, Not(HasSubstr("unknown"))) << name;
  }
}

TEST(PolicySpecTest, RejectsPlannedOptionValuesAsNotImplementedYet) {
  EXPECT_EQ(ErrorOf("weight=value"),
            "option 'weight=value': not implemented yet (planned: value-staleness "
            "weighting, VSGD 2019)");
  for (std::string_view spec :
       {"gate=dssp:s=3,r=12", "gate=psp", "agg=softsync:n=4", "ssp:s=3+weight=staleness",
        "ssp:s=3+weight=value+pull=eager", "asp+pull=eager", "asp+straggler=saps"}) {
    const std::string error = ErrorOf(spec);
    EXPECT_THAT(error, HasSubstr("not implemented yet (planned: ")) << spec;
    EXPECT_THAT(error, Not(HasSubstr("unknown"))) << spec;
  }
}

TEST(PolicySpecTest, RejectsAnUnknownOptionValue) {
  EXPECT_EQ(ErrorOf("gate=foo"),
            "option 'gate=foo': unknown gate value 'foo'; known: bsp, asp, ssp");
  EXPECT_THAT(ErrorOf("agg=sum"), HasSubstr("unknown agg value 'sum'; known: immediate, round"));
  EXPECT_THAT(ErrorOf("pull=lazy"), HasSubstr("unknown pull value 'lazy'; known: on-demand"));
  EXPECT_THAT(ErrorOf("gate="), HasSubstr("option 'gate=': missing name"));
}

TEST(PolicySpecTest, RejectsAnUnknownOptionKeyAndSaysWhere) {
  EXPECT_EQ(ErrorOf("bsp+color=red"),
            "option 'color=red': unknown option 'color'; known: gate, agg, weight, pull, "
            "straggler (part 2 of spec 'bsp+color=red')");
  EXPECT_THAT(ErrorOf("s=3"), HasSubstr("unknown option 's'"));
}

TEST(PolicySpecTest, RejectsBadNumbers) {
  EXPECT_EQ(ErrorOf("ssp:s=x"),
            "policy 'ssp:s=x': parameter 's' must be a non-negative integer, got 'x'");
  for (std::string_view bad : {"ssp:s=-1", "ssp:s=", "ssp:s=1.5", "ssp:s=1 0", "ssp:s=0x3",
                               "ssp:s=1e3", "gate=ssp:s=two"}) {
    EXPECT_THAT(ErrorOf(bad), HasSubstr("parameter 's' must be a non-negative integer")) << bad;
  }
  EXPECT_THAT(ErrorOf("ssp:s=9223372036854775808"),
              HasSubstr("must be a non-negative integer that fits in 64 bits, got "
                        "'9223372036854775808'"));
}

TEST(PolicySpecTest, RejectsSspWithoutItsBound) {
  EXPECT_THAT(ErrorOf("ssp"), HasSubstr("'ssp' needs parameter 's'"));
  EXPECT_THAT(ErrorOf("gate=ssp"), HasSubstr("'ssp' needs parameter 's'"));
}

TEST(PolicySpecTest, RejectsUnknownParameters) {
  EXPECT_EQ(ErrorOf("ssp:t=3"), "policy 'ssp:t=3': unknown parameter 't' for 'ssp'; known: s");
  EXPECT_THAT(ErrorOf("bsp:s=1"), HasSubstr("'bsp' takes no parameters, got 's'"));
  EXPECT_THAT(ErrorOf("asp:s=1"), HasSubstr("'asp' takes no parameters, got 's'"));
  EXPECT_THAT(ErrorOf("bsp+agg=round:n=2"), HasSubstr("'round' takes no parameters, got 'n'"));
  EXPECT_THAT(ErrorOf("asp+weight=constant:c=1"), HasSubstr("'constant' takes no parameters"));
}

TEST(PolicySpecTest, RejectsMalformedParameters) {
  EXPECT_THAT(ErrorOf("ssp:s"), HasSubstr("expected key=value, got 's'"));
  EXPECT_THAT(ErrorOf("ssp:"), HasSubstr("expected key=value, got ''"));
  EXPECT_THAT(ErrorOf("ssp:s=1,"), HasSubstr("expected key=value, got ''"));
  EXPECT_THAT(ErrorOf("ssp:=3"), HasSubstr("parameter without a name in '=3'"));
  EXPECT_THAT(ErrorOf(":s=3"), HasSubstr("missing name"));
}

TEST(PolicySpecTest, RejectsADuplicatedParameter) {
  EXPECT_EQ(ErrorOf("ssp:s=1,s=2"), "policy 'ssp:s=1,s=2': parameter 's' given twice");
}

TEST(PolicySpecTest, RejectsADuplicatedOption) {
  EXPECT_THAT(ErrorOf("asp+weight=constant+weight=constant"),
              HasSubstr("option 'weight' given twice (part 3 of spec"));
  EXPECT_THAT(ErrorOf("gate=bsp+gate=bsp"), HasSubstr("option 'gate' given twice"));
}

TEST(PolicySpecTest, RejectsASecondOrMisplacedPreset) {
  EXPECT_THAT(ErrorOf("bsp+asp"), HasSubstr("policy 'asp': a preset must be the first part"));
  EXPECT_THAT(ErrorOf("weight=constant+bsp"), HasSubstr("a preset must be the first part"));
  EXPECT_THAT(ErrorOf("bsp+dssp"), HasSubstr("a preset must be the first part"));
  EXPECT_THAT(ErrorOf("bsp+foo"), HasSubstr("expected an option key=value after the first"));
}

TEST(PolicySpecTest, RejectsAnOptionThatContradictsThePreset) {
  EXPECT_EQ(ErrorOf("bsp+gate=asp"),
            "option 'gate=asp': contradicts preset 'bsp', which sets gate=bsp; drop one of "
            "them, or spell the whole policy with options (gate=..., agg=...) (part 2 of "
            "spec 'bsp+gate=asp')");
  EXPECT_THAT(ErrorOf("bsp+agg=immediate"),
              HasSubstr("contradicts preset 'bsp', which sets agg=round"));
  EXPECT_THAT(ErrorOf("asp+agg=round"),
              HasSubstr("contradicts preset 'asp', which sets agg=immediate"));
  EXPECT_THAT(ErrorOf("ssp:s=3+gate=ssp:s=4"),
              HasSubstr("contradicts preset 'ssp:s=3', which sets gate=ssp:s=3"));
  EXPECT_THAT(ErrorOf("ssp:s=0+agg=round"), HasSubstr("contradicts preset 'ssp:s=0'"));
}

TEST(PolicySpecTest, RejectsRoundAveragingWithoutTheBspGate) {
  EXPECT_THAT(ErrorOf("agg=round"),
              HasSubstr("policy spec 'agg=round': agg=round needs gate=bsp, got gate=asp"));
  EXPECT_THAT(ErrorOf("gate=ssp:s=2+agg=round"), HasSubstr("got gate=ssp:s=2"));
}

// ------------------------------------------------------------------ validation

TEST(ValidatePolicySpecTest, AcceptsEveryParsedSpec) {
  for (std::string_view text : {"bsp", "asp", "ssp:s=3", "gate=bsp"}) {
    EXPECT_TRUE(ValidatePolicySpec(Parsed(text)).ok()) << text;
  }
}

TEST(ValidatePolicySpecTest, RejectsNegativeStaleness) {
  const absl::Status status = ValidatePolicySpec(Spec(-1, AggregationSpec::Kind::kImmediate));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("staleness must be >= 0, got -1"));
}

TEST(ValidatePolicySpecTest, RejectsRoundAveragingWithPositiveStaleness) {
  const absl::Status status = ValidatePolicySpec(Spec(1, AggregationSpec::Kind::kRoundAverage));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("agg=round needs gate=bsp"));
}

// ------------------------------------------------------------------ printing

TEST(PolicySpecToStringTest, PrintsTheCanonicalForm) {
  EXPECT_EQ(ToString(kBsp), "bsp");
  EXPECT_EQ(ToString(kAsp), "asp");
  EXPECT_EQ(ToString(Parsed("ssp:s=3")), "ssp:s=3");
  EXPECT_EQ(ToString(Parsed(" ssp : s = 03 ")), "ssp:s=3");
  EXPECT_EQ(ToString(Parsed("gate=bsp")), "ssp:s=0");
  EXPECT_EQ(ToString(Parsed("agg=round+gate=bsp+straggler=none")), "bsp");
  EXPECT_EQ(ToString(Parsed("ssp:s=9223372036854775807")), "asp");
}

TEST(PolicySpecToStringTest, PrintsAnInvalidSpecAsOptions) {
  EXPECT_EQ(ToString(Spec(2, AggregationSpec::Kind::kRoundAverage)), "gate=ssp:s=2+agg=round");
}

PolicySpec RandomValidSpec(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0:
      return kBsp;
    case 1:
      return kAsp;
    case 2:
      return Spec(static_cast<Tick>(rng() % 20), AggregationSpec::Kind::kImmediate);
    default:
      return Spec(static_cast<Tick>(rng() >> 1), AggregationSpec::Kind::kImmediate);
  }
}

TEST(PolicySpecPropertyTest, ParseOfToStringIsIdentity) {
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    std::mt19937_64 rng(seed);
    const PolicySpec spec = RandomValidSpec(rng);
    const std::string text = ToString(spec);
    absl::StatusOr<PolicySpec> parsed = ParsePolicySpec(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status();
    EXPECT_EQ(*parsed, spec) << text;
    EXPECT_EQ(ToString(*parsed), text);
  }
}

// Random text from the grammar's alphabet: never crashes; an error is InvalidArgument with
// a message; an accepted spec prints to a canonical string that parses back to itself.
TEST(PolicySpecPropertyTest, RandomTextIsAcceptedCanonicallyOrRejectedWithAMessage) {
  constexpr std::string_view kTokens[] = {
      "bsp",       "asp",      "ssp",       "dssp",      "gate",
      "agg",       "weight",   "pull",      "straggler", "round",
      "immediate", "constant", "on-demand", "none",      "s",
      "=",         ":",        ",",         "+",         " ",
      "0",         "3",        "-",         "x",         "999999999999999999999"};
  int accepted = 0;
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    std::mt19937_64 rng(seed);
    std::string text;
    const int length = static_cast<int>(rng() % 8);
    for (int i = 0; i < length; ++i) text += kTokens[rng() % std::size(kTokens)];
    absl::StatusOr<PolicySpec> spec = ParsePolicySpec(text);
    if (!spec.ok()) {
      EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << text;
      EXPECT_FALSE(spec.status().message().empty()) << text;
      continue;
    }
    ++accepted;
    EXPECT_TRUE(ValidatePolicySpec(*spec).ok()) << text;
    absl::StatusOr<PolicySpec> again = ParsePolicySpec(ToString(*spec));
    ASSERT_TRUE(again.ok()) << text << " -> " << ToString(*spec);
    EXPECT_EQ(*again, *spec) << text;
  }
  EXPECT_GT(accepted, 0);
}

// ------------------------------------------------------------------ factories

TEST(PolicyFactoryTest, BspMakesABarrierGateAndRoundAveraging) {
  const PolicySpec spec = Parsed("bsp");
  auto gate = MakeGate(spec, 2);
  gate->OnClock(0, 1, absl::UnixEpoch());
  EXPECT_FALSE(gate->Admits(0, 1));
  auto agg = MakeAggregation(spec, 2);
  EXPECT_EQ(agg->OnPush(0, 0).kind, AggregateDecision::Kind::kAccumulate);
}

TEST(PolicyFactoryTest, SspMakesAStaleGateAndImmediateAggregation) {
  const PolicySpec spec = Parsed("ssp:s=1");
  auto gate = MakeGate(spec, 2);
  gate->OnClock(0, 1, absl::UnixEpoch());
  EXPECT_TRUE(gate->Admits(0, 1));
  gate->OnClock(0, 2, absl::UnixEpoch());
  EXPECT_FALSE(gate->Admits(0, 2));
  EXPECT_EQ(MakeAggregation(spec, 2)->OnPush(0, 0).kind, AggregateDecision::Kind::kApplyNow);
  EXPECT_NE(MakeWeighting(spec, 2), nullptr);
  EXPECT_NE(MakeStragglerPolicy(spec, 2), nullptr);
}

}  // namespace
}  // namespace kairos::policy
