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
#include "tests/policy/spec_test_util.h"

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
  EXPECT_EQ(ErrorOf("foo"),
            "unknown policy 'foo'; known: bsp, asp, ssp, dssp, psp, sa-asgd, vsgd, eager, saps");
  EXPECT_THAT(ErrorOf("foo:s=1"), HasSubstr("unknown policy 'foo'"));
}

TEST(PolicySpecTest, HintsThatNamesAreLowerCase) {
  EXPECT_THAT(ErrorOf("BSP"), HasSubstr("names are lower-case: 'bsp'"));
  EXPECT_THAT(ErrorOf("gate=Ssp:s=1"), HasSubstr("names are lower-case: 'ssp'"));
}

TEST(PolicySpecTest, NoNameIsRefusedAsNotImplementedAnyMore) {
  for (std::string_view spec :
       {"sa-asgd:n=4", "vsgd", "eager", "saps", "agg=softsync:n=4", "ssp:s=3+weight=staleness",
        "dssp+weight=value", "ssp:s=3+weight=value+pull=eager", "asp+pull=eager",
        "asp+straggler=saps"}) {
    EXPECT_TRUE(ParsePolicySpec(spec).ok()) << spec;
  }
  EXPECT_THAT(ErrorOf("vsgd:phi=ema"), Not(HasSubstr("not implemented")));
}

TEST(PolicySpecTest, RejectsAnUnknownOptionValue) {
  EXPECT_EQ(ErrorOf("gate=foo"),
            "option 'gate=foo': unknown gate value 'foo'; known: bsp, asp, ssp, dssp, psp");
  EXPECT_THAT(ErrorOf("agg=sum"),
              HasSubstr("unknown agg value 'sum'; known: immediate, round, softsync"));
  EXPECT_THAT(ErrorOf("pull=lazy"),
              HasSubstr("unknown pull value 'lazy'; known: on-demand, eager"));
  EXPECT_THAT(ErrorOf("weight=lr"),
              HasSubstr("unknown weight value 'lr'; known: constant, staleness, value"));
  EXPECT_THAT(ErrorOf("straggler=kill"),
              HasSubstr("unknown straggler value 'kill'; known: none, saps"));
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

// ------------------------------------------------------------------ dssp and psp

GateSpec DsspGate(Tick s_l, Tick r_max, GateSpec::DsspGrant grant = GateSpec::DsspGrant::kExact,
                  GateSpec::DsspBound bound = GateSpec::DsspBound::kStrict) {
  return {.kind = GateSpec::Kind::kDssp,
          .staleness = s_l,
          .r_max = r_max,
          .grant = grant,
          .bound = bound};
}

GateSpec PspGate(int beta, Tick s, uint64_t seed = 0) {
  return {.kind = GateSpec::Kind::kPsp, .staleness = s, .beta = beta, .seed = seed};
}

PolicySpec WithGate(const GateSpec& gate) {
  PolicySpec spec;
  spec.gate = gate;
  return spec;
}

TEST(DsspSpecTest, OmittedParametersTakeThePapersDefaults) {
  const PolicySpec paper = WithGate(DsspGate(3, 12));
  EXPECT_EQ(Parsed("dssp"), paper);
  EXPECT_EQ(Parsed("dssp:s=3,r=12"), paper);
  EXPECT_EQ(Parsed("dssp:r=12"), paper);
  EXPECT_EQ(Parsed("dssp:s=5"), WithGate(DsspGate(5, 12)));
  EXPECT_EQ(Parsed("dssp:r=0"), WithGate(DsspGate(3, 0)));
  EXPECT_EQ(Parsed("dssp:grant=exact,bound=strict"), paper);
  EXPECT_EQ(Parsed("dssp").aggregation.kind, AggregationSpec::Kind::kImmediate);
}

TEST(DsspSpecTest, ParsesTheOptions) {
  EXPECT_EQ(Parsed("dssp:s=3,r=12,grant=literal,bound=none"),
            WithGate(DsspGate(3, 12, GateSpec::DsspGrant::kLiteral, GateSpec::DsspBound::kNone)));
  EXPECT_EQ(Parsed(" dssp : bound = none , s = 1 "),
            WithGate(DsspGate(1, 12, GateSpec::DsspGrant::kExact, GateSpec::DsspBound::kNone)));
  EXPECT_EQ(Parsed("dssp:r=10000"), WithGate(DsspGate(3, kDsspMaxRMax)));
  EXPECT_EQ(Parsed("dssp:s=9223372036854775807,r=0"), WithGate(DsspGate(kUnbounded, 0)));
}

TEST(DsspSpecTest, ParsesAsAGateOption) {
  EXPECT_EQ(Parsed("gate=dssp:s=2,r=4"), WithGate(DsspGate(2, 4)));
  EXPECT_EQ(Parsed("gate=dssp+agg=immediate+weight=constant"), WithGate(DsspGate(3, 12)));
  EXPECT_EQ(Parsed("dssp+gate=dssp:s=3,r=12"), WithGate(DsspGate(3, 12)));
}

TEST(DsspSpecTest, RejectsBadValues) {
  EXPECT_EQ(ErrorOf("dssp:s=3,r=-1"),
            "policy 'dssp:s=3,r=-1': parameter 'r' must be a non-negative integer, got '-1'");
  EXPECT_THAT(ErrorOf("dssp:s=x"), HasSubstr("parameter 's' must be a non-negative integer"));
  EXPECT_THAT(ErrorOf("gate=dssp:s=1.5"), HasSubstr("parameter 's' must be a non-negative"));
  EXPECT_EQ(ErrorOf("dssp:r=10001"),
            "policy 'dssp:r=10001': parameter 'r' must be at most 10000 (the controller costs "
            "O(r) per iteration), got '10001'");
  EXPECT_EQ(ErrorOf("dssp:grant=maybe"),
            "policy 'dssp:grant=maybe': parameter 'grant' must be one of exact, literal; got "
            "'maybe'");
  EXPECT_THAT(ErrorOf("dssp:bound=clamp"),
              HasSubstr("parameter 'bound' must be one of strict, none; got 'clamp'"));
  EXPECT_THAT(ErrorOf("dssp:grant=Literal"), HasSubstr("must be one of exact, literal"));
  EXPECT_EQ(ErrorOf("dssp:s=9223372036854775807"),
            "policy 'dssp:s=9223372036854775807': s + r (the upper bound s_U) must be at most "
            "9223372036854775807, got s=9223372036854775807, r=12");
}

TEST(DsspSpecTest, RejectsUnknownAndDuplicatedParameters) {
  EXPECT_EQ(ErrorOf("dssp:s=3,t=1"),
            "policy 'dssp:s=3,t=1': unknown parameter 't' for 'dssp'; known: s, r, grant, bound");
  EXPECT_THAT(ErrorOf("dssp:beta=2"), HasSubstr("unknown parameter 'beta' for 'dssp'"));
  EXPECT_THAT(ErrorOf("dssp:r=1,r=2"), HasSubstr("parameter 'r' given twice"));
  EXPECT_THAT(ErrorOf("dssp:"), HasSubstr("expected key=value, got ''"));
}

TEST(DsspSpecTest, RejectsContradictions) {
  EXPECT_THAT(ErrorOf("dssp+gate=ssp:s=3"),
              HasSubstr("contradicts preset 'dssp', which sets gate=dssp:s=3,r=12"));
  EXPECT_THAT(ErrorOf("dssp:s=3+gate=dssp:s=3,r=11"), HasSubstr("contradicts preset"));
  EXPECT_THAT(ErrorOf("dssp+gate=dssp:grant=literal"), HasSubstr("contradicts preset"));
  EXPECT_THAT(ErrorOf("dssp+agg=round"),
              HasSubstr("contradicts preset 'dssp', which sets agg=immediate"));
  EXPECT_THAT(ErrorOf("gate=dssp+agg=round"),
              HasSubstr("agg=round needs gate=bsp, got gate=dssp:s=3,r=12"));
  EXPECT_THAT(ErrorOf("gate=dssp:s=0,r=0+agg=round"), HasSubstr("agg=round needs gate=bsp"));
}

TEST(PspSpecTest, ParsesBetaSAndTheOptionalSeed) {
  EXPECT_EQ(Parsed("psp:beta=2,s=1"), WithGate(PspGate(2, 1)));
  EXPECT_EQ(Parsed("psp:s=1,beta=2,seed=0"), WithGate(PspGate(2, 1)));
  EXPECT_EQ(Parsed("psp:beta=2,s=1,seed=7"), WithGate(PspGate(2, 1, 7)));
  EXPECT_EQ(Parsed("psp:beta=0,s=0"), WithGate(PspGate(0, 0)));
  EXPECT_EQ(Parsed("psp:beta=2147483647,s=9223372036854775807,seed=18446744073709551615"),
            WithGate(PspGate(2147483647, kUnbounded, 18446744073709551615u)));
  EXPECT_EQ(Parsed("gate=psp:beta=3,s=2"), WithGate(PspGate(3, 2)));
  EXPECT_EQ(Parsed("psp:beta=2,s=1").aggregation.kind, AggregationSpec::Kind::kImmediate);
}

TEST(PspSpecTest, RejectsMissingAndBadParameters) {
  EXPECT_EQ(ErrorOf("psp"),
            "policy 'psp': 'psp' needs parameter 'beta' (the number of workers sampled), e.g. "
            "'psp:beta=2,s=1'");
  EXPECT_THAT(ErrorOf("psp:s=1"), HasSubstr("'psp' needs parameter 'beta'"));
  EXPECT_THAT(ErrorOf("gate=psp:beta=2"), HasSubstr("'psp' needs parameter 's'"));
  EXPECT_EQ(ErrorOf("psp:beta=x,s=1"),
            "policy 'psp:beta=x,s=1': parameter 'beta' must be a non-negative integer, got 'x'");
  EXPECT_THAT(ErrorOf("psp:beta=-1,s=1"), HasSubstr("parameter 'beta' must be a non-negative"));
  EXPECT_THAT(ErrorOf("psp:beta=2147483648,s=1"),
              HasSubstr("parameter 'beta' must be at most 2147483647 (it counts workers)"));
  EXPECT_THAT(ErrorOf("psp:beta=2,s=-1"), HasSubstr("parameter 's' must be a non-negative"));
  EXPECT_THAT(ErrorOf("psp:beta=2,s=1,seed=-1"),
              HasSubstr("parameter 'seed' must be a non-negative integer, got '-1'"));
  EXPECT_THAT(ErrorOf("psp:beta=2,s=1,seed=18446744073709551616"),
              HasSubstr("must be a non-negative integer that fits in 64 unsigned bits"));
  EXPECT_EQ(ErrorOf("psp:beta=2,s=1,r=3"),
            "policy 'psp:beta=2,s=1,r=3': unknown parameter 'r' for 'psp'; known: beta, s, seed");
}

TEST(PspSpecTest, RejectsContradictions) {
  EXPECT_THAT(ErrorOf("psp:beta=2,s=1+gate=psp:beta=2,s=1,seed=1"),
              HasSubstr("contradicts preset 'psp:beta=2,s=1', which sets gate=psp:beta=2,s=1"));
  EXPECT_THAT(ErrorOf("psp:beta=2,s=1+gate=asp"), HasSubstr("contradicts preset"));
  EXPECT_THAT(ErrorOf("gate=psp:beta=9,s=0+agg=round"),
              HasSubstr("agg=round needs gate=bsp, got gate=psp:beta=9,s=0"));
  EXPECT_EQ(Parsed("psp:beta=2,s=1+gate=psp:s=1,beta=2"), WithGate(PspGate(2, 1)));
}

TEST(DsspPspSpecTest, PrintsTheCanonicalForm) {
  EXPECT_EQ(ToString(Parsed("dssp")), "dssp:s=3,r=12");
  EXPECT_EQ(ToString(Parsed("gate=dssp:r=4")), "dssp:s=3,r=4");
  EXPECT_EQ(ToString(Parsed("dssp:bound=none,grant=literal,r=04")),
            "dssp:s=3,r=4,grant=literal,bound=none");
  EXPECT_EQ(ToString(Parsed("dssp:grant=exact,bound=strict")), "dssp:s=3,r=12");
  EXPECT_EQ(ToString(Parsed("psp:s=1,beta=2,seed=0")), "psp:beta=2,s=1");
  EXPECT_EQ(ToString(Parsed("gate=psp:seed=5,beta=2,s=1+weight=constant")),
            "psp:beta=2,s=1,seed=5");
  PolicySpec round = WithGate(DsspGate(3, 12));
  round.aggregation.kind = AggregationSpec::Kind::kRoundAverage;  // invalid: printed as options
  EXPECT_EQ(ToString(round), "gate=dssp:s=3,r=12+agg=round");
}

TEST(GateSpecTest, EqualityIgnoresTheFieldsOfOtherKinds) {
  GateSpec ssp{.kind = GateSpec::Kind::kSsp, .staleness = 2};
  GateSpec noisy = ssp;
  noisy.r_max = 1;
  noisy.grant = GateSpec::DsspGrant::kLiteral;
  noisy.beta = 4;
  noisy.seed = 5;
  EXPECT_EQ(ssp, noisy);
  EXPECT_EQ(ToString(WithGate(noisy)), "ssp:s=2");
  EXPECT_NE(DsspGate(3, 12), DsspGate(3, 11));
  EXPECT_NE(DsspGate(3, 12), DsspGate(3, 12, GateSpec::DsspGrant::kLiteral));
  EXPECT_NE(DsspGate(3, 12),
            DsspGate(3, 12, GateSpec::DsspGrant::kExact, GateSpec::DsspBound::kNone));
  EXPECT_NE(DsspGate(3, 12), DsspGate(4, 12));
  GateSpec dssp = DsspGate(3, 12);
  dssp.seed = 8;
  EXPECT_EQ(dssp, DsspGate(3, 12));
  EXPECT_NE(PspGate(2, 1), PspGate(2, 1, 1));
  EXPECT_NE(PspGate(2, 1), PspGate(3, 1));
  EXPECT_NE(PspGate(2, 1), DsspGate(1, 12));
  EXPECT_NE(ssp, PspGate(0, 2));
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

TEST(ValidatePolicySpecTest, RejectsOutOfRangeDsspAndPspFields) {
  const struct {
    GateSpec gate;
    const char* message;
  } kCases[] = {
      {DsspGate(-1, 12), "dssp staleness must be >= 0, got -1"},
      {DsspGate(3, -1), "dssp r_max must be in [0, 10000], got -1"},
      {DsspGate(3, 10001), "dssp r_max must be in [0, 10000], got 10001"},
      {DsspGate(kUnbounded - 1, 2),
       "dssp s + r (the upper bound s_U) must be at most 9223372036854775807, got "
       "s=9223372036854775806, r=2"},
      {PspGate(-1, 1), "psp beta must be >= 0, got -1"},
      {PspGate(1, -1), "psp staleness must be >= 0, got -1"},
  };
  for (const auto& c : kCases) {
    const absl::Status status = ValidatePolicySpec(WithGate(c.gate));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(status.message(), HasSubstr(c.message));
  }
  EXPECT_TRUE(ValidatePolicySpec(WithGate(DsspGate(kUnbounded - 2, 2))).ok());
  EXPECT_TRUE(ValidatePolicySpec(WithGate(PspGate(0, kUnbounded))).ok());
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
  PolicySpec spec;
  switch (rng() % 6) {
    case 0:
      spec = kBsp;
      break;
    case 1:
      spec = kAsp;
      break;
    case 2:
      spec = Spec(static_cast<Tick>(rng() % 20), AggregationSpec::Kind::kImmediate);
      break;
    case 3:
      spec = Spec(static_cast<Tick>(rng() >> 1), AggregationSpec::Kind::kImmediate);
      break;
    case 4: {
      const Tick r_max = static_cast<Tick>(rng() % (kDsspMaxRMax + 1));
      spec.gate = {.kind = GateSpec::Kind::kDssp,
                   .staleness = rng() % 2 ? static_cast<Tick>(rng() % 20)
                                          : static_cast<Tick>(rng() >> 1) % (kUnbounded - r_max),
                   .r_max = r_max,
                   .grant = static_cast<GateSpec::DsspGrant>(rng() % 2),
                   .bound = static_cast<GateSpec::DsspBound>(rng() % 2)};
      break;
    }
    default:
      spec.gate = {.kind = GateSpec::Kind::kPsp,
                   .staleness = rng() % 4 ? static_cast<Tick>(rng() % 5) : kUnbounded,
                   .beta = static_cast<int>(rng() % 10),
                   .seed = rng() % 2 ? rng() : 0};
      break;
  }
  // Noise in the fields of the other kinds, which equality and printing ignore.
  if (spec.gate.kind != GateSpec::Kind::kDssp && rng() % 2) spec.gate.r_max = 5;
  if (spec.gate.kind != GateSpec::Kind::kPsp && rng() % 2) spec.gate.seed = 99;
  return spec;
}

TEST(PolicySpecPropertyTest, ParseOfToStringIsIdentity) {
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    std::mt19937_64 rng(seed);
    const PolicySpec spec = RandomValidSpec(rng);
    ExpectRoundTrip(spec);
  }
}

// Random text from the grammar's alphabet: never crashes; an error is InvalidArgument with
// a message; an accepted spec prints to a canonical string that parses back to itself.
TEST(PolicySpecPropertyTest, RandomTextIsAcceptedCanonicallyOrRejectedWithAMessage) {
  // clang-format off
  constexpr std::string_view kTokens[] = {
      "bsp",      "asp",     "ssp",       "dssp",   "psp",
      "gate",     "agg",     "weight",    "pull",   "straggler",
      "round",    "immediate", "constant", "on-demand", "none",
      "s",        "r",       "beta",      "seed",   "grant",
      "literal",  "bound",   "strict",    "=",      ":",
      ",",        "+",       " ",         "0",      "3",
      "12",       "-",       "x",         "999999999999999999999"};
  // clang-format on
  const int accepted = FuzzSpecStrings(kTokens, 2000, 8);
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

TEST(PolicyFactoryTest, DsspMakesADynamicGateAndImmediateAggregation) {
  // dssp:s=1,r=0 decides as SSP(1).
  const PolicySpec spec = Parsed("dssp:s=1,r=0");
  auto gate = MakeGate(spec, 2);
  gate->OnClock(0, 1, absl::UnixEpoch());
  EXPECT_TRUE(gate->Admits(0, 1));
  gate->OnClock(0, 2, absl::UnixEpoch() + absl::Seconds(1));
  EXPECT_FALSE(gate->Admits(0, 2));
  EXPECT_EQ(MakeAggregation(spec, 2)->OnPush(0, 0).kind, AggregateDecision::Kind::kApplyNow);
}

TEST(PolicyFactoryTest, PspMakesASampledGateAndImmediateAggregation) {
  // Two workers: the only other worker is always the sample, so psp:beta=1,s=0 is BSP's gate.
  const PolicySpec spec = Parsed("psp:beta=1,s=0,seed=3");
  auto gate = MakeGate(spec, 2);
  gate->OnClock(0, 1, absl::UnixEpoch());
  EXPECT_FALSE(gate->Admits(0, 1));
  gate->OnClock(1, 1, absl::UnixEpoch());
  EXPECT_TRUE(gate->Admits(0, 1));
  EXPECT_EQ(MakeAggregation(spec, 2)->OnPush(0, 0).kind, AggregateDecision::Kind::kApplyNow);
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
