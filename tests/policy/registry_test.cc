// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the policy registry (registry.h): a gate added from a test, through the same
// Registry::Add the built-ins use, parses, prints, validates its parameter ranges, compares,
// builds and appears in the help text, with no other edit anywhere; the built-in help lists
// every policy; Add refuses malformed descriptions.

#include "policy/registry.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/policy.h"

namespace kairos::policy {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A toy gate: a read at clock c is served iff c <= cap (strict), or c <= cap * (1 + grace)
// (lenient). Its parameters have no field in policy.h: they live in GateSpec::registered.
class CapGate final : public Gate {
 public:
  CapGate(Tick limit, int num_workers) : limit_(limit), clocks_(num_workers) {}
  void OnClock(WorkerId w, Tick clock, absl::Time now) override { clocks_.SetClock(w, clock); }
  void OnLeave(WorkerId w, MemberState why) override { clocks_.SetState(w, why); }
  bool Admits(WorkerId w, Tick clock) override { return clock <= limit_; }
  std::vector<WorkerId> Blockers(WorkerId w, Tick clock) const override { return {}; }
  const WorkerClocks& clocks() const override { return clocks_; }

 private:
  const Tick limit_;
  WorkerClocks clocks_;
};

PolicyDef CapGatePolicy() {
  return {
      .name = "cap",
      .kind = RegisteredKind(Seam::kGate),
      .help = "toy: serve reads up to a clock cap",
      .params = {{.key = "at",
                  .help = "the last clock served",
                  .min = 1,
                  .max = 1000,
                  .required = true,
                  .example = "5"},
                 {.key = "policy",
                  .type = ParamDef::Type::kChoice,
                  .help = "strict: stop at the cap; lenient: allow some grace",
                  .choices = {"strict", "lenient"}},
                 {.key = "grace",
                  .type = ParamDef::Type::kFraction,
                  .help = "the extra fraction of the cap a lenient cap serves",
                  .default_value = 0.5,
                  .only_with_key = "policy",
                  .only_with_choice = "lenient"}},
      .presets = {{"cap", "gate=cap", Seam::kGate, "the cap gate, every push applied at once"}},
      .make = GateFactory([](const PolicySpec& spec, int num_workers) -> std::unique_ptr<Gate> {
        const RegisteredPolicy& cap = spec.gate.registered;
        const double grace = cap.Integer("policy") == 1 ? cap.Real("grace") : 0.0;
        return std::make_unique<CapGate>(
            static_cast<Tick>(static_cast<double>(cap.Integer("at")) * (1.0 + grace)), num_workers);
      }),
  };
}

// The built-ins plus the toy gate.
Registry WithCap() {
  Registry registry = Registry::BuiltIns();
  EXPECT_TRUE(registry.Add(CapGatePolicy()).ok());
  return registry;
}

PolicySpec ParsedBy(const Registry& registry, std::string_view text) {
  absl::StatusOr<PolicySpec> spec = registry.Parse(text);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status();
  return spec.ok() ? *spec : PolicySpec{};
}

std::string ErrorBy(const Registry& registry, std::string_view text) {
  absl::StatusOr<PolicySpec> spec = registry.Parse(text);
  EXPECT_FALSE(spec.ok()) << text;
  return spec.ok() ? "" : std::string(spec.status().message());
}

TEST(RegistryTest, ARegisteredGateParsesAsPresetAndAsOption) {
  const Registry registry = WithCap();
  const PolicySpec spec = ParsedBy(registry, "cap:at=5");
  EXPECT_EQ(spec.gate.kind, GateSpec::Kind::kRegistered);
  EXPECT_EQ(spec.gate.registered.name, "cap");
  EXPECT_EQ(spec.gate.registered.Integer("at"), 5);
  EXPECT_EQ(spec.gate.registered.Integer("policy"), 0);  // strict, the default
  EXPECT_EQ(spec.aggregation.kind, AggregationSpec::Kind::kImmediate);
  EXPECT_TRUE(registry.Equal(ParsedBy(registry, "gate=cap:at=05+agg=immediate"), spec));
  EXPECT_EQ(ParsedBy(registry, "cap:at=5,policy=lenient,grace=0.25").gate.registered.Real("grace"),
            0.25);
  // The built-in registry does not know it: adding a policy never touches the built-ins.
  EXPECT_THAT(ParsePolicySpec("cap:at=5").status().message(), HasSubstr("unknown policy 'cap'"));
}

TEST(RegistryTest, ARegisteredGatePrintsCanonicallyAndRoundTrips) {
  const Registry registry = WithCap();
  const struct {
    std::string_view text;
    std::string_view canonical;
  } kCases[] = {
      {"cap:at=5", "cap:at=5"},
      {"gate=cap:at=007", "cap:at=7"},
      {"cap:at=5,policy=strict", "cap:at=5"},
      {"cap:at=5,policy=lenient", "cap:at=5,policy=lenient"},
      {"cap:at=5,grace=0.5,policy=lenient", "cap:at=5,policy=lenient"},
      {"cap:at=5,policy=lenient,grace=0.25", "cap:at=5,policy=lenient,grace=0.25"},
      {"gate=cap:at=5+weight=staleness+straggler=saps", "cap:at=5+weight=staleness+straggler=saps"},
      {"gate=cap:at=5+agg=softsync:n=2", "gate=cap:at=5+agg=softsync:n=2"},
  };
  for (const auto& c : kCases) {
    const PolicySpec spec = ParsedBy(registry, c.text);
    EXPECT_EQ(registry.ToString(spec), c.canonical) << c.text;
    EXPECT_TRUE(registry.Equal(ParsedBy(registry, c.canonical), spec)) << c.text;
  }
}

TEST(RegistryTest, ARegisteredGateChecksItsParameters) {
  const Registry registry = WithCap();
  EXPECT_EQ(ErrorBy(registry, "cap"),
            "policy 'cap': 'cap' needs parameter 'at' (the last clock served), e.g. 'cap:at=5'");
  EXPECT_EQ(ErrorBy(registry, "cap:at=0"),
            "policy 'cap:at=0': parameter 'at' must be in [1, 1000], got '0'");
  EXPECT_THAT(ErrorBy(registry, "gate=cap:at=1001"), HasSubstr("must be in [1, 1000]"));
  EXPECT_THAT(ErrorBy(registry, "cap:at=x"), HasSubstr("must be a non-negative integer"));
  EXPECT_EQ(ErrorBy(registry, "cap:at=5,grace=0.1"),
            "policy 'cap:at=5,grace=0.1': parameter 'grace' applies only to policy=lenient");
  EXPECT_THAT(ErrorBy(registry, "cap:at=5,policy=lenient,grace=2"),
              HasSubstr("parameter 'grace' must be a decimal number in (0, 1], got '2'"));
  EXPECT_THAT(ErrorBy(registry, "cap:at=5,policy=loose"),
              HasSubstr("parameter 'policy' must be one of strict, lenient; got 'loose'"));
  EXPECT_THAT(ErrorBy(registry, "cap:at=5,s=1"),
              HasSubstr("unknown parameter 's' for 'cap'; known: at, policy, grace"));
  EXPECT_THAT(ErrorBy(registry, "cap:at=5+gate=bsp"),
              HasSubstr("contradicts preset 'cap:at=5', which sets gate=cap:at=5"));
  EXPECT_THAT(ErrorBy(registry, "gate=cap:at=5+agg=round"),
              HasSubstr("agg=round needs gate=bsp, got gate=cap:at=5"));
  EXPECT_THAT(ErrorBy(registry, "gate=caps"),
              HasSubstr("unknown gate value 'caps'; known: bsp, asp, ssp, dssp, psp, cap"));

  // A struct built by hand is validated against the same ranges.
  PolicySpec spec = ParsedBy(registry, "cap:at=5");
  EXPECT_TRUE(registry.Validate(spec).ok());
  spec.gate.registered.Set("at", int64_t{5000});
  EXPECT_EQ(registry.Validate(spec).message(), "cap at must be in [1, 1000], got 5000");
  spec.gate.registered.Set("at", int64_t{5});
  spec.gate.registered.Set("grace", 7.0);  // strict: grace does not apply
  EXPECT_TRUE(registry.Validate(spec).ok());
  spec.gate.registered.Set("policy", int64_t{1});
  EXPECT_EQ(registry.Validate(spec).message(), "cap grace must be in (0, 1], got 7");
  // The built-ins do not know the gate.
  EXPECT_THAT(ValidatePolicySpec(spec).message(), HasSubstr("gate: no such policy"));
}

TEST(RegistryTest, ARegisteredGateComparesByTheParametersThatApply) {
  const Registry registry = WithCap();
  const PolicySpec five = ParsedBy(registry, "cap:at=5");
  PolicySpec strict_grace = five;
  strict_grace.gate.registered.Set("grace", 0.9);  // ignored: strict
  EXPECT_TRUE(registry.Equal(five, strict_grace));
  EXPECT_FALSE(registry.Equal(five, ParsedBy(registry, "cap:at=6")));
  EXPECT_FALSE(registry.Equal(five, ParsedBy(registry, "cap:at=5,policy=lenient")));
  EXPECT_FALSE(registry.Equal(ParsedBy(registry, "cap:at=5,policy=lenient,grace=0.1"),
                              ParsedBy(registry, "cap:at=5,policy=lenient")));
  EXPECT_FALSE(registry.Equal(five, ParsedBy(registry, "ssp:s=5")));
  EXPECT_FALSE(registry.Equal(five, ParsedBy(registry, "cap:at=5+weight=staleness")));
}

TEST(RegistryTest, ARegisteredGateIsBuiltByItsFactory) {
  const Registry registry = WithCap();
  auto gate = registry.MakeGate(ParsedBy(registry, "cap:at=4"), 2);
  EXPECT_TRUE(gate->Admits(0, 4));
  EXPECT_FALSE(gate->Admits(0, 5));
  auto lenient = registry.MakeGate(ParsedBy(registry, "cap:at=4,policy=lenient"), 2);
  EXPECT_TRUE(lenient->Admits(0, 6));  // 4 * 1.5
  EXPECT_FALSE(lenient->Admits(0, 7));
  EXPECT_NE(registry.MakeAggregation(ParsedBy(registry, "cap:at=4"), 2), nullptr);
}

TEST(RegistryTest, ARegisteredGateAppearsInTheHelp) {
  const std::string help = WithCap().Help();
  EXPECT_THAT(help, HasSubstr("  cap  = gate=cap; parameters as gate=cap"));
  EXPECT_THAT(help, HasSubstr("  cap  toy: serve reads up to a clock cap"));
  EXPECT_THAT(help, HasSubstr("at=integer in [1, 1000] (required): the last clock served"));
  EXPECT_THAT(help, HasSubstr("grace=real in (0, 1] (default 0.5, only with policy=lenient)"));
  EXPECT_THAT(Registry::BuiltIns().Help(), Not(HasSubstr("cap")));
}

TEST(RegistryTest, TheHelpListsEveryBuiltInPolicyAndParameter) {
  const std::string help = PolicyHelp();
  for (std::string_view name :
       {"bsp", "asp", "ssp", "dssp", "psp", "sa-asgd", "vsgd", "eager", "saps", "immediate",
        "round", "softsync", "constant", "staleness", "value", "on-demand", "none"}) {
    EXPECT_THAT(help, HasSubstr("  " + std::string(name) + "  ")) << name;
  }
  EXPECT_THAT(help, HasSubstr("gate= (default asp)"));
  EXPECT_THAT(help, HasSubstr("r=integer in [0, 10000] (default 12; the controller costs O(r)"));
  EXPECT_THAT(help, HasSubstr("seed=integer in [0, 2^64 - 1] (default 0)"));
  EXPECT_THAT(help, HasSubstr("smax=integer >= 1 (default: unset; omit smax for the default"));
  EXPECT_THAT(help, HasSubstr("c=real > 0 (default 1, only with map=dutta)"));
  EXPECT_THAT(help, HasSubstr("lr=modulated|constant (default modulated)"));
}

TEST(RegistryTest, AddRefusesAMalformedPolicy) {
  Registry registry = Registry::BuiltIns();
  EXPECT_THAT(registry
                  .Add(PolicyDef{
                      .name = "dssp", .kind = RegisteredKind(Seam::kGate), .make = GateFactory()})
                  .message(),
              HasSubstr("name already taken"));
  PolicyDef bad_kind = CapGatePolicy();
  bad_kind.kind = KindOf(GateSpec::Kind::kDssp);
  EXPECT_THAT(registry.Add(bad_kind).message(), HasSubstr("kind already used by 'dssp'"));
  PolicyDef no_example = CapGatePolicy();
  no_example.params[0].example.clear();
  EXPECT_THAT(registry.Add(no_example).message(), HasSubstr("needs an example"));
  PolicyDef late_choice = CapGatePolicy();
  late_choice.params[2].only_with_key = "nothing";
  EXPECT_THAT(registry.Add(late_choice).message(), HasSubstr("applies only with a choice"));
  PolicyDef too_wide = CapGatePolicy();
  too_wide.kind = {Seam::kGate, 17};  // a kind value of its own: its parameters bind fields
  too_wide.params = {
      {.key = "beta", .max = int64_t{1} << 40, .binding = Field(&GateSpec::beta, "beta")}};
  EXPECT_THAT(registry.Add(too_wide).message(), HasSubstr("max is beyond what its field holds"));
  PolicyDef wrong_factory = CapGatePolicy();
  wrong_factory.make = AggregationFactory();
  EXPECT_THAT(registry.Add(wrong_factory).message(), HasSubstr("factory is not of its seam"));
  PolicyDef taken_preset = CapGatePolicy();
  taken_preset.presets[0].name = "bsp";
  EXPECT_THAT(registry.Add(taken_preset).message(), HasSubstr("preset 'bsp' already taken"));
  // None of these was added.
  EXPECT_TRUE(registry.Add(CapGatePolicy()).ok());
  EXPECT_THAT(registry.Add(CapGatePolicy()).message(), HasSubstr("already taken"));
}

}  // namespace
}  // namespace kairos::policy
