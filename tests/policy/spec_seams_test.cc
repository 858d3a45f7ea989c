// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the spec string for SA-ASGD, VSGD, PS+ (eager) and SaPS: the presets, the
// options of the agg, weight, pull and straggler seams, their contradictions, every error
// class, the canonical printer, equality, validation and random round trips.

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/policy.h"
#include "tests/policy/spec_test_util.h"

namespace kairos::policy {
namespace {

using ::testing::HasSubstr;


GateSpec Ssp(Tick s) { return {.kind = GateSpec::Kind::kSsp, .staleness = s}; }

AggregationSpec SoftSync(int n) {
  return {.kind = AggregationSpec::Kind::kSoftSync, .n = n};
}

WeightingSpec StalenessWeight(bool plus_one = false) {
  return {.kind = WeightingSpec::Kind::kStaleness, .plus_one = plus_one};
}

WeightingSpec ValueWeight() { return {.kind = WeightingSpec::Kind::kValue}; }

WeightingSpec DuttaWeight(double c, double max) {
  WeightingSpec spec = ValueWeight();
  spec.value_map = WeightingSpec::ValueMap::kDutta;
  spec.dutta_c = c;
  spec.dutta_max = max;
  return spec;
}

StragglerSpec Saps() { return {.kind = StragglerSpec::Kind::kSaps}; }

// ------------------------------------------------------------------ presets

TEST(SeamSpecTest, SaAsgdIsAspSoftSyncAndStalenessWeighting) {
  PolicySpec expected;
  expected.aggregation = SoftSync(4);
  expected.weighting = StalenessWeight();
  EXPECT_EQ(Parsed("sa-asgd:n=4"), expected);
  EXPECT_EQ(Parsed("gate=asp+agg=softsync:n=4+weight=staleness"), expected);
  EXPECT_EQ(Parsed(" sa-asgd : n = 04 "), expected);
}

TEST(SeamSpecTest, VsgdIsSspThreeByDefaultWithValueWeighting) {
  PolicySpec expected;
  expected.gate = Ssp(kVsgdDefaultStaleness);
  expected.weighting = ValueWeight();
  EXPECT_EQ(kVsgdDefaultStaleness, 3);
  EXPECT_EQ(Parsed("vsgd"), expected);
  EXPECT_EQ(Parsed("vsgd:s=3"), expected);
  EXPECT_EQ(Parsed("ssp:s=3+weight=value"), expected);
  expected.gate = Ssp(0);
  EXPECT_EQ(Parsed("vsgd:s=0"), expected);
  EXPECT_EQ(Parsed("vsgd:s=7").gate, Ssp(7));
}

TEST(SeamSpecTest, EagerIsAspWithEagerPull) {
  PolicySpec expected;
  expected.pull.kind = PullSpec::Kind::kEager;
  EXPECT_EQ(Parsed("eager"), expected);
  EXPECT_EQ(Parsed("asp+pull=eager"), expected);
  EXPECT_EQ(Parsed("pull=eager"), expected);
  EXPECT_TRUE(Parsed("eager").pull.modulate_lr);
}

TEST(SeamSpecTest, SapsIsAspWithTheSapsStragglerPolicy) {
  PolicySpec expected;
  expected.straggler = Saps();
  EXPECT_EQ(Parsed("saps"), expected);
  EXPECT_EQ(Parsed("straggler=saps"), expected);
  const StragglerSpec s = Parsed("saps").straggler;
  EXPECT_EQ(s.s_max, 0);
  EXPECT_EQ(s.action, StragglerSpec::Action::kDrop);
  EXPECT_FALSE(s.detect_ema);
}

// ------------------------------------------------------------------ options

TEST(SeamSpecTest, ParsesEveryOptionParameter) {
  EXPECT_EQ(Parsed("agg=softsync:n=4").aggregation, SoftSync(4));
  EXPECT_EQ(Parsed("weight=staleness:plus_one=1").weighting, StalenessWeight(true));
  EXPECT_EQ(Parsed("weight=staleness:plus_one=0").weighting, StalenessWeight(false));

  const WeightingSpec dutta = Parsed("weight=value:map=dutta,c=0.5,max=2,mode=bound").weighting;
  WeightingSpec expected = DuttaWeight(0.5, 2);
  expected.value_mode = WeightingSpec::ValueMode::kBound;
  EXPECT_EQ(dutta, expected);
  EXPECT_EQ(Parsed("weight=value:ema=0.25").weighting.ema_alpha, 0.25);
  EXPECT_EQ(Parsed("weight=value:ema=1").weighting.ema_alpha, 1.0);
  EXPECT_EQ(Parsed("weight=value:map=dutta,c=1e-3").weighting.dutta_c, 1e-3);
  EXPECT_EQ(Parsed("weight=value:map=dutta,c=1E20").weighting.dutta_c, 1e20);
  EXPECT_EQ(Parsed("weight=value:map=dutta,c=.5").weighting.dutta_c, 0.5);
  EXPECT_EQ(Parsed("weight=value:mode=exact").weighting, ValueWeight());

  EXPECT_FALSE(Parsed("pull=eager:lr=constant").pull.modulate_lr);
  EXPECT_TRUE(Parsed("pull=eager:lr=modulated").pull.modulate_lr);

  const StragglerSpec saps =
      Parsed("straggler=saps:smax=6,action=downweight,weight=0.2,detect=ema,ema=0.3").straggler;
  EXPECT_EQ(saps.kind, StragglerSpec::Kind::kSaps);
  EXPECT_EQ(saps.s_max, 6);
  EXPECT_EQ(saps.action, StragglerSpec::Action::kDownWeight);
  EXPECT_EQ(saps.down_weight, 0.2);
  EXPECT_TRUE(saps.detect_ema);
  EXPECT_EQ(saps.ema_alpha, 0.3);
  EXPECT_EQ(Parsed("straggler=saps:detect=instant,action=drop").straggler, Saps());
}

TEST(SeamSpecTest, OptionsComposeWithEveryGate) {
  const PolicySpec a = Parsed("ssp:s=3+weight=value+pull=eager");
  EXPECT_EQ(a.gate, Ssp(3));
  EXPECT_EQ(a.weighting, ValueWeight());
  EXPECT_EQ(a.pull.kind, PullSpec::Kind::kEager);
  EXPECT_EQ(Parsed("asp+weight=staleness").weighting, StalenessWeight());
  const PolicySpec bsp = Parsed("bsp+weight=staleness");
  EXPECT_EQ(bsp.aggregation.kind, AggregationSpec::Kind::kRoundAverage);
  EXPECT_EQ(bsp.weighting, StalenessWeight());
  EXPECT_EQ(Parsed("dssp+weight=value+straggler=saps").straggler, Saps());
  EXPECT_EQ(Parsed("psp:beta=2,s=1+pull=eager").pull.kind, PullSpec::Kind::kEager);
  // Softsync is allowed with every gate (docs/policies.md §6).
  EXPECT_EQ(Parsed("gate=bsp+agg=softsync:n=1").aggregation, SoftSync(1));
  EXPECT_EQ(Parsed("gate=ssp:s=2+agg=softsync:n=2").gate, Ssp(2));
  EXPECT_EQ(Parsed("gate=dssp+agg=softsync:n=2").gate.kind, GateSpec::Kind::kDssp);
  EXPECT_EQ(Parsed("agg=softsync:n=3+straggler=saps+pull=eager").straggler, Saps());
}

TEST(SeamSpecTest, AnOptionMayRefineThePresetsSeamButNotChangeItsKind) {
  EXPECT_EQ(Parsed("sa-asgd:n=4+weight=staleness:plus_one=1").weighting, StalenessWeight(true));
  EXPECT_EQ(Parsed("sa-asgd:n=4+weight=staleness").weighting, StalenessWeight());
  EXPECT_EQ(Parsed("vsgd+weight=value:map=dutta").weighting, DuttaWeight(1, 1));
  EXPECT_FALSE(Parsed("eager+pull=eager:lr=constant").pull.modulate_lr);
  EXPECT_EQ(Parsed("saps+straggler=saps:smax=3").straggler.s_max, 3);
  // Seams the preset leaves alone are free.
  EXPECT_EQ(Parsed("sa-asgd:n=2+straggler=saps+pull=eager").straggler, Saps());
  EXPECT_EQ(Parsed("eager+weight=value").weighting, ValueWeight());
  EXPECT_EQ(Parsed("saps+weight=staleness").weighting, StalenessWeight());
  EXPECT_EQ(Parsed("sa-asgd:n=4+gate=asp+agg=softsync:n=4").aggregation, SoftSync(4));
}

// ------------------------------------------------------------------ errors

TEST(SeamSpecTest, RejectsOptionsThatContradictThePreset) {
  EXPECT_EQ(ErrorOf("sa-asgd:n=4+agg=round"),
            "option 'agg=round': contradicts preset 'sa-asgd:n=4', which sets "
            "agg=softsync:n=4; drop one of them, or spell the whole policy with options "
            "(gate=..., agg=...) (part 2 of spec 'sa-asgd:n=4+agg=round')");
  EXPECT_THAT(ErrorOf("sa-asgd:n=4+agg=softsync:n=2"), HasSubstr("contradicts preset"));
  EXPECT_THAT(ErrorOf("sa-asgd:n=4+gate=bsp"),
              HasSubstr("contradicts preset 'sa-asgd:n=4', which sets gate=asp"));
  EXPECT_EQ(ErrorOf("sa-asgd:n=4+weight=constant"),
            "option 'weight=constant': contradicts preset 'sa-asgd:n=4', which sets "
            "weight=staleness; an option may change the parameters of weight=staleness but "
            "not its kind (part 2 of spec 'sa-asgd:n=4+weight=constant')");
  EXPECT_THAT(ErrorOf("vsgd+weight=staleness"),
              HasSubstr("contradicts preset 'vsgd', which sets weight=value"));
  EXPECT_THAT(ErrorOf("vsgd+gate=ssp:s=4"),
              HasSubstr("contradicts preset 'vsgd', which sets gate=ssp:s=3"));
  EXPECT_THAT(ErrorOf("vsgd:s=0+gate=asp"), HasSubstr("which sets gate=bsp"));
  EXPECT_THAT(ErrorOf("eager+pull=on-demand"),
              HasSubstr("contradicts preset 'eager', which sets pull=eager"));
  EXPECT_THAT(ErrorOf("eager+gate=ssp:s=2"), HasSubstr("which sets gate=asp"));
  EXPECT_THAT(ErrorOf("saps+straggler=none"),
              HasSubstr("contradicts preset 'saps', which sets straggler=saps"));
  EXPECT_THAT(ErrorOf("saps+agg=round"), HasSubstr("which sets agg=immediate"));
}

TEST(SeamSpecTest, RejectsMissingAndBadSoftSyncN) {
  EXPECT_EQ(ErrorOf("sa-asgd"),
            "policy 'sa-asgd': 'sa-asgd' needs parameter 'n' (a bucket holds floor(W / n) "
            "pushes), e.g. 'sa-asgd:n=4'");
  EXPECT_THAT(ErrorOf("agg=softsync"), HasSubstr("'softsync' needs parameter 'n'"));
  EXPECT_EQ(ErrorOf("sa-asgd:n=0"),
            "policy 'sa-asgd:n=0': parameter 'n' must be in [1, 2147483647], got '0'");
  EXPECT_THAT(ErrorOf("agg=softsync:n=2147483648"), HasSubstr("must be in [1, 2147483647]"));
  EXPECT_THAT(ErrorOf("sa-asgd:n=-1"), HasSubstr("parameter 'n' must be a non-negative integer"));
  EXPECT_THAT(ErrorOf("sa-asgd:n=x"), HasSubstr("parameter 'n' must be a non-negative integer"));
  EXPECT_EQ(ErrorOf("sa-asgd:n=4,s=2"),
            "policy 'sa-asgd:n=4,s=2': unknown parameter 's' for 'sa-asgd'; known: n");
  EXPECT_THAT(ErrorOf("agg=softsync:n=1,n=2"), HasSubstr("parameter 'n' given twice"));
}

TEST(SeamSpecTest, RejectsBadWeightingParameters) {
  EXPECT_EQ(ErrorOf("weight=staleness:plus_one=2"),
            "option 'weight=staleness:plus_one=2': parameter 'plus_one' must be one of 0, 1; "
            "got '2'");
  EXPECT_THAT(ErrorOf("weight=staleness:plus_one=yes"), HasSubstr("must be one of 0, 1"));
  EXPECT_EQ(ErrorOf("weight=staleness:norm=workers"),
            "option 'weight=staleness:norm=workers': unknown parameter 'norm' for "
            "'staleness'; known: plus_one");
  EXPECT_THAT(ErrorOf("weight=constant:plus_one=1"),
              HasSubstr("'constant' takes no parameters, got 'plus_one'"));
  EXPECT_THAT(ErrorOf("weight=value:map=gap"),
              HasSubstr("parameter 'map' must be one of normalized, dutta; got 'gap'"));
  EXPECT_THAT(ErrorOf("weight=value:mode=approx"),
              HasSubstr("parameter 'mode' must be one of exact, bound; got 'approx'"));
  EXPECT_THAT(ErrorOf("weight=value:phi=ema"),
              HasSubstr("unknown parameter 'phi' for 'value'; known: map, ema, c, max, mode"));
}

TEST(SeamSpecTest, RejectsBadNumbersInTheValueWeighting) {
  EXPECT_EQ(ErrorOf("weight=value:ema=0"),
            "option 'weight=value:ema=0': parameter 'ema' must be a decimal number in (0, 1], "
            "got '0'");
  for (std::string_view bad :
       {"weight=value:ema=1.5", "weight=value:ema=-0.1", "weight=value:ema=x",
        "weight=value:ema=nan", "weight=value:ema=inf", "weight=value:ema=", "weight=value:ema=0x1",
        "weight=value:ema=1e-400", "weight=value:ema=0.1.2", "weight=value:ema=1 e-3"}) {
    EXPECT_THAT(ErrorOf(bad), HasSubstr("parameter 'ema' must be a decimal number in (0, 1]"))
        << bad;
  }
  EXPECT_EQ(ErrorOf("weight=value:map=dutta,c=0"),
            "option 'weight=value:map=dutta,c=0': parameter 'c' must be a finite decimal number "
            "> 0, got '0'");
  for (std::string_view bad : {"weight=value:map=dutta,c=-1", "weight=value:map=dutta,c=1e999",
                               "weight=value:map=dutta,max=0", "weight=value:map=dutta,max=-2",
                               "weight=value:map=dutta,max=infinity"}) {
    EXPECT_THAT(ErrorOf(bad), HasSubstr("must be a finite decimal number > 0")) << bad;
  }
  // A '+' separates parts, so an exponent is written without one: "1e+3" is cut at the '+'.
  EXPECT_THAT(ErrorOf("weight=value:map=dutta,c=1e+3"),
              HasSubstr("parameter 'c' must be a finite decimal number > 0, got '1e'"));
}

TEST(SeamSpecTest, RejectsParametersOfAnotherChoice) {
  EXPECT_EQ(ErrorOf("weight=value:c=0.5"),
            "option 'weight=value:c=0.5': parameter 'c' applies only to map=dutta");
  EXPECT_THAT(ErrorOf("weight=value:map=normalized,max=2"),
              HasSubstr("parameter 'max' applies only to map=dutta"));
  EXPECT_THAT(ErrorOf("weight=value:map=dutta,ema=0.2"),
              HasSubstr("parameter 'ema' applies only to map=normalized"));
  EXPECT_EQ(ErrorOf("straggler=saps:weight=0.5"),
            "option 'straggler=saps:weight=0.5': parameter 'weight' applies only to "
            "action=downweight");
  EXPECT_THAT(ErrorOf("straggler=saps:action=drop,weight=0.5"),
              HasSubstr("'weight' applies only to action=downweight"));
  EXPECT_THAT(ErrorOf("straggler=saps:ema=0.5"),
              HasSubstr("parameter 'ema' applies only to detect=ema"));
  EXPECT_THAT(ErrorOf("straggler=saps:detect=instant,ema=0.5"),
              HasSubstr("'ema' applies only to detect=ema"));
}

TEST(SeamSpecTest, RejectsBadPullAndStragglerParameters) {
  EXPECT_EQ(ErrorOf("pull=eager:lr=fast"),
            "option 'pull=eager:lr=fast': parameter 'lr' must be one of modulated, constant; "
            "got 'fast'");
  EXPECT_THAT(ErrorOf("pull=eager:depth=2"),
              HasSubstr("unknown parameter 'depth' for 'eager'; known: lr"));
  EXPECT_THAT(ErrorOf("pull=on-demand:lr=constant"),
              HasSubstr("'on-demand' takes no parameters, got 'lr'"));
  EXPECT_EQ(ErrorOf("straggler=saps:smax=0"),
            "option 'straggler=saps:smax=0': parameter 'smax' must be in [1, "
            "9223372036854775807] (omit smax for the default max(1, 2(N - 1))), got '0'");
  EXPECT_THAT(ErrorOf("straggler=saps:smax=-3"),
              HasSubstr("parameter 'smax' must be a non-negative integer"));
  EXPECT_THAT(ErrorOf("straggler=saps:smax=9223372036854775808"),
              HasSubstr("that fits in 64 bits"));
  EXPECT_THAT(ErrorOf("straggler=saps:action=kill"),
              HasSubstr("parameter 'action' must be one of drop, downweight; got 'kill'"));
  EXPECT_THAT(ErrorOf("straggler=saps:detect=mean"),
              HasSubstr("parameter 'detect' must be one of instant, ema; got 'mean'"));
  for (std::string_view bad : {"straggler=saps:action=downweight,weight=0",
                               "straggler=saps:action=downweight,weight=1.01",
                               "straggler=saps:detect=ema,ema=2"}) {
    EXPECT_THAT(ErrorOf(bad), HasSubstr("must be a decimal number in (0, 1]")) << bad;
  }
  EXPECT_THAT(ErrorOf("straggler=saps:s=3"),
              HasSubstr("unknown parameter 's' for 'saps'; known: smax, action, weight, detect, "
                        "ema"));
  EXPECT_THAT(ErrorOf("straggler=none:smax=3"), HasSubstr("'none' takes no parameters"));
}

TEST(SeamSpecTest, PresetsTakeOnlyTheirOwnParameters) {
  EXPECT_EQ(ErrorOf("eager:lr=constant"),
            "policy 'eager:lr=constant': 'eager' takes no parameters, got 'lr'");
  EXPECT_THAT(ErrorOf("saps:smax=3"), HasSubstr("'saps' takes no parameters, got 'smax'"));
  EXPECT_EQ(ErrorOf("vsgd:map=dutta"),
            "policy 'vsgd:map=dutta': unknown parameter 'map' for 'vsgd'; known: s");
  EXPECT_THAT(ErrorOf("vsgd:s=x"), HasSubstr("parameter 's' must be a non-negative integer"));
  EXPECT_THAT(ErrorOf("bsp+sa-asgd:n=4"), HasSubstr("a preset must be the first part"));
  EXPECT_THAT(ErrorOf("vsgd+eager"), HasSubstr("a preset must be the first part"));
  EXPECT_THAT(ErrorOf("VSGD"), HasSubstr("names are lower-case: 'vsgd'"));
  EXPECT_THAT(ErrorOf("weight=Value"), HasSubstr("names are lower-case: 'value'"));
}

TEST(SeamSpecTest, RoundAverageStillNeedsTheBspGate) {
  EXPECT_THAT(ErrorOf("vsgd:s=0+agg=round"), HasSubstr("contradicts preset"));
  EXPECT_THAT(ErrorOf("gate=ssp:s=3+agg=round+weight=value"),
              HasSubstr("agg=round needs gate=bsp, got gate=ssp:s=3"));
  EXPECT_TRUE(ParsePolicySpec("gate=bsp+agg=round+weight=value+straggler=saps").ok());
}

// ------------------------------------------------------------------ printing

TEST(SeamSpecTest, PrintsTheCanonicalForm) {
  const struct {
    std::string_view text;
    std::string_view canonical;
  } kCases[] = {
      {"sa-asgd:n=4", "sa-asgd:n=4"},
      {"gate=asp+agg=softsync:n=04+weight=staleness", "sa-asgd:n=4"},
      {"sa-asgd:n=4+weight=staleness:plus_one=1", "sa-asgd:n=4+weight=staleness:plus_one=1"},
      {"sa-asgd:n=4+weight=staleness:plus_one=0", "sa-asgd:n=4"},
      {"agg=softsync:n=3", "gate=asp+agg=softsync:n=3"},
      {"gate=ssp:s=2+agg=softsync:n=3+weight=staleness",
       "gate=ssp:s=2+agg=softsync:n=3+weight=staleness"},
      {"vsgd", "vsgd"},
      {"vsgd:s=3", "vsgd"},
      {"ssp:s=3+weight=value", "vsgd"},
      {"vsgd:s=5", "vsgd:s=5"},
      {"vsgd:s=0", "vsgd:s=0"},
      {"vsgd:s=9223372036854775807", "asp+weight=value"},
      {"bsp+weight=value", "bsp+weight=value"},
      {"ssp:s=3+weight=value+pull=eager", "vsgd+pull=eager"},
      {"vsgd+weight=value:map=normalized,ema=0.1,mode=exact", "vsgd"},
      {"weight=value:map=dutta,c=0.50,max=2,mode=bound",
       "asp+weight=value:map=dutta,c=0.5,max=2,mode=bound"},
      {"weight=value:map=dutta,c=1,max=1", "asp+weight=value:map=dutta"},
      {"weight=value:map=dutta,c=1e20", "asp+weight=value:map=dutta,c=1e20"},
      {"weight=value:map=dutta,c=0.00001", "asp+weight=value:map=dutta,c=1e-05"},
      {"weight=value:ema=0.3,mode=bound", "asp+weight=value:ema=0.3,mode=bound"},
      {"eager", "eager"},
      {"asp+pull=eager", "eager"},
      {"pull=eager:lr=constant", "eager+pull=eager:lr=constant"},
      {"eager+pull=eager:lr=modulated", "eager"},
      {"ssp:s=2+pull=eager", "ssp:s=2+pull=eager"},
      {"saps", "saps"},
      {"straggler=saps", "saps"},
      {"straggler=saps:smax=6,action=downweight,weight=0.1,detect=ema",
       "saps+straggler=saps:smax=6,action=downweight,detect=ema"},
      {"straggler=saps:ema=0.5,detect=ema,weight=0.25,action=downweight",
       "saps+straggler=saps:action=downweight,weight=0.25,detect=ema,ema=0.5"},
      {"eager+straggler=saps", "eager+straggler=saps"},
      {"straggler=saps+weight=value+pull=eager", "eager+weight=value+straggler=saps"},
      {"dssp+weight=staleness", "dssp:s=3,r=12+weight=staleness"},
      {"asp+weight=staleness", "asp+weight=staleness"},
      {"bsp+weight=staleness:plus_one=1", "bsp+weight=staleness:plus_one=1"},
  };
  for (const auto& c : kCases) {
    const PolicySpec spec = Parsed(c.text);
    EXPECT_EQ(ToString(spec), c.canonical) << c.text;
    EXPECT_EQ(Parsed(c.canonical), spec) << c.text;
  }
}

TEST(SeamSpecTest, EqualityIgnoresTheFieldsOfOtherKinds) {
  AggregationSpec immediate;
  immediate.n = 5;
  EXPECT_EQ(immediate, AggregationSpec{});
  EXPECT_NE(SoftSync(2), SoftSync(3));

  WeightingSpec constant;
  constant.plus_one = true;
  constant.dutta_c = 9;
  EXPECT_EQ(constant, WeightingSpec{});
  WeightingSpec normalized = ValueWeight();
  normalized.dutta_c = 9;
  normalized.dutta_max = 9;
  EXPECT_EQ(normalized, ValueWeight());
  WeightingSpec dutta = DuttaWeight(2, 3);
  dutta.ema_alpha = 0.9;
  EXPECT_EQ(dutta, DuttaWeight(2, 3));
  EXPECT_NE(DuttaWeight(2, 3), DuttaWeight(2, 4));
  EXPECT_NE(StalenessWeight(true), StalenessWeight(false));
  WeightingSpec bound = ValueWeight();
  bound.value_mode = WeightingSpec::ValueMode::kBound;
  EXPECT_NE(bound, ValueWeight());

  PullSpec on_demand;
  on_demand.modulate_lr = false;
  EXPECT_EQ(on_demand, PullSpec{});
  EXPECT_NE((PullSpec{.kind = PullSpec::Kind::kEager, .modulate_lr = false}),
            (PullSpec{.kind = PullSpec::Kind::kEager}));

  StragglerSpec none;
  none.s_max = 4;
  EXPECT_EQ(none, StragglerSpec{});
  StragglerSpec drop = Saps();
  drop.down_weight = 0.7;
  drop.ema_alpha = 0.7;
  EXPECT_EQ(drop, Saps());
  StragglerSpec down = Saps();
  down.action = StragglerSpec::Action::kDownWeight;
  StragglerSpec down2 = down;
  down2.down_weight = 0.5;
  EXPECT_NE(down, down2);
  EXPECT_NE(down, Saps());
}

// ------------------------------------------------------------------ validation

TEST(SeamSpecTest, ValidateRejectsOutOfRangeFields) {
  const auto error_of = [](const PolicySpec& spec) {
    const absl::Status status = ValidatePolicySpec(spec);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    return std::string(status.message());
  };
  PolicySpec spec;
  spec.aggregation = SoftSync(0);
  EXPECT_EQ(error_of(spec), "softsync n must be >= 1, got 0");
  spec = PolicySpec{};
  spec.weighting = ValueWeight();
  spec.weighting.ema_alpha = 0;
  EXPECT_EQ(error_of(spec), "value weighting ema_alpha must be in (0, 1], got 0");
  spec.weighting.ema_alpha = std::nan("");
  EXPECT_THAT(error_of(spec), HasSubstr("ema_alpha must be in (0, 1]"));
  spec.weighting = DuttaWeight(std::numeric_limits<double>::infinity(), 1);
  EXPECT_THAT(error_of(spec), HasSubstr("dutta_c must be finite and > 0, got inf"));
  spec.weighting = DuttaWeight(1, -1);
  EXPECT_THAT(error_of(spec), HasSubstr("dutta_max must be finite and > 0, got -1"));
  spec = PolicySpec{};
  spec.straggler = Saps();
  spec.straggler.s_max = -1;
  EXPECT_THAT(error_of(spec), HasSubstr("saps s_max must be >= 0 (0: the default), got -1"));
  spec.straggler = Saps();
  spec.straggler.action = StragglerSpec::Action::kDownWeight;
  spec.straggler.down_weight = 0;
  EXPECT_THAT(error_of(spec), HasSubstr("saps down_weight must be in (0, 1], got 0"));
  spec.straggler = Saps();
  spec.straggler.detect_ema = true;
  spec.straggler.ema_alpha = 1.5;
  EXPECT_THAT(error_of(spec), HasSubstr("saps ema_alpha must be in (0, 1], got 1.5"));

  // Fields of another kind or choice are not validated (nor compared, nor printed).
  spec = PolicySpec{};
  spec.aggregation.n = -4;
  spec.weighting.ema_alpha = -1;
  spec.straggler.s_max = -1;
  spec.straggler.down_weight = 7;
  EXPECT_TRUE(ValidatePolicySpec(spec).ok());
  spec.straggler = Saps();
  spec.straggler.down_weight = 7;  // action=drop: unused
  spec.straggler.ema_alpha = 7;    // detect=instant: unused
  spec.weighting = DuttaWeight(1, 1);
  spec.weighting.ema_alpha = 0;  // map=dutta: unused
  EXPECT_TRUE(ValidatePolicySpec(spec).ok());
}

// ------------------------------------------------------------------ round trips

// A valid value for a fraction parameter ((0, 1]) or a positive one.
double RandomReal(std::mt19937_64& rng, bool fraction) {
  double value = 1.0;
  switch (rng() % 4) {
    case 0:
      value = 1e20;
      break;
    case 1:
      value = static_cast<double>(rng() % 100 + 1) / 100.0;
      break;
    case 2:
      value = std::ldexp(static_cast<double>(rng() % 1000 + 1), -static_cast<int>(rng() % 40));
      break;
    default: {
      std::uniform_real_distribution<double> u(1e-9, 1.0);
      value = u(rng);  // a full-precision double: printing must still round-trip
      break;
    }
  }
  return fraction && value > 1 ? 1.0 / value : value;
}

PolicySpec RandomSpec(std::mt19937_64& rng) {
  PolicySpec spec;
  const Tick stalenesses[] = {0, 3, 5, kUnbounded};
  spec.gate = Ssp(stalenesses[rng() % 4]);
  if (rng() % 5 == 0) spec.gate = {.kind = GateSpec::Kind::kDssp, .staleness = 2, .r_max = 4};
  switch (rng() % 3) {
    case 0:
      break;
    case 1:
      if (spec.gate == Ssp(0)) spec.aggregation.kind = AggregationSpec::Kind::kRoundAverage;
      break;
    default:
      spec.aggregation = SoftSync(static_cast<int>(rng() % 9 + 1));
      break;
  }
  spec.weighting.kind = static_cast<WeightingSpec::Kind>(rng() % 3);
  spec.weighting.plus_one = rng() % 2;
  spec.weighting.value_map = static_cast<WeightingSpec::ValueMap>(rng() % 2);
  spec.weighting.value_mode = static_cast<WeightingSpec::ValueMode>(rng() % 2);
  if (rng() % 2) spec.weighting.ema_alpha = RandomReal(rng, true);
  if (rng() % 2) spec.weighting.dutta_c = RandomReal(rng, false);
  if (rng() % 2) spec.weighting.dutta_max = RandomReal(rng, false);
  spec.pull.kind = static_cast<PullSpec::Kind>(rng() % 2);
  spec.pull.modulate_lr = rng() % 2;
  spec.straggler.kind = static_cast<StragglerSpec::Kind>(rng() % 2);
  if (rng() % 2) spec.straggler.s_max = static_cast<int64_t>(rng() % 20);
  spec.straggler.action = static_cast<StragglerSpec::Action>(rng() % 2);
  if (rng() % 2) spec.straggler.down_weight = RandomReal(rng, true);
  spec.straggler.detect_ema = rng() % 2;
  if (rng() % 2) spec.straggler.ema_alpha = RandomReal(rng, true);
  return spec;
}

TEST(SeamSpecPropertyTest, ParseOfToStringIsIdentity) {
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    std::mt19937_64 rng(seed);
    const PolicySpec spec = RandomSpec(rng);
    ASSERT_TRUE(ValidatePolicySpec(spec).ok()) << seed << ": " << ValidatePolicySpec(spec);
    ExpectRoundTrip(spec);
  }
}

// Random text from the new names and parameters: an error is InvalidArgument with a
// message; an accepted spec is valid and its canonical string parses back to it.
TEST(SeamSpecPropertyTest, RandomTextIsAcceptedCanonicallyOrRejectedWithAMessage) {
  // clang-format off
  constexpr std::string_view kTokens[] = {
      "sa-asgd", "vsgd",   "eager",    "saps",     "asp",       "ssp",   "bsp",
      "gate",    "agg",    "weight",   "pull",     "straggler", "softsync",
      "staleness", "value", "constant", "on-demand", "none",    "n",     "s",
      "plus_one", "map",   "dutta",    "normalized", "ema",     "c",     "max",
      "mode",    "bound",  "lr",       "smax",     "action",    "downweight",
      "detect",  "=",      ":",        ",",        "+",         " ",     "0",
      "1",       "0.5",    "3",        "1e-3",     "-",         "x"};
  // clang-format on
  const int accepted = FuzzSpecStrings(kTokens, 3000, 10);
  EXPECT_GT(accepted, 0);
}

// ------------------------------------------------------------------ factories

TEST(SeamFactoryTest, BuildsTheNewKinds) {
  const PolicySpec sa = Parsed("sa-asgd:n=2");
  auto agg = MakeAggregation(sa, 4);  // c = 2
  EXPECT_EQ(agg->OnPush(0, 0).kind, AggregateDecision::Kind::kAccumulate);
  StalenessInfo info{.version_read = 1, .version_now = 5};
  EXPECT_EQ(MakeWeighting(sa, 4)->Scale(0, info), 0.25f);
  EXPECT_FALSE(MakeWeighting(sa, 4)->NeedsValueStaleness());

  const PolicySpec vsgd = Parsed("vsgd");
  EXPECT_TRUE(MakeWeighting(vsgd, 4)->NeedsValueStaleness());
  EXPECT_EQ(MakeAggregation(vsgd, 4)->OnPush(0, 0).kind, AggregateDecision::Kind::kApplyNow);
  EXPECT_FALSE(MakeWeighting(Parsed("asp"), 4)->NeedsValueStaleness());

  auto saps = MakeStragglerPolicy(Parsed("saps"), 4);  // S_max = 6
  info = {.version_read = 0, .version_now = 7};
  EXPECT_EQ(saps->OnPush(2, info).action, StragglerDecision::Action::kDrop);
  EXPECT_EQ(saps->Stragglers(), std::vector<WorkerId>{2});
  EXPECT_TRUE(MakeStragglerPolicy(Parsed("asp"), 4)->Stragglers().empty());
}

}  // namespace
}  // namespace kairos::policy
