// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of the optimizer and schedule specs (src/policy/optimizer_spec.h): parsing, the
// canonical form (print, parse back), the errors, and the schedules' factor(t) at exact
// points.

#include "policy/optimizer_spec.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kairos::policy {
namespace {

using ::testing::HasSubstr;

std::string Canonical(const std::string& text) {
  absl::StatusOr<OptimizerSpec> spec = ParseOptimizerSpec(text);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status();
  return spec.ok() ? ToString(*spec) : "";
}

TEST(OptimizerSpecTest, DefaultsAreTorchs) {
  absl::StatusOr<OptimizerSpec> adam = ParseOptimizerSpec("adam");
  ASSERT_TRUE(adam.ok());
  EXPECT_EQ(adam->Get("beta1"), 0.9);
  EXPECT_EQ(adam->Get("beta2"), 0.999);
  EXPECT_EQ(adam->Get("eps"), 1e-8);
  EXPECT_EQ(adam->Get("wd"), 0.0);
  EXPECT_EQ(ParseOptimizerSpec("adamw")->Get("wd"), 0.01);
  EXPECT_EQ(ParseOptimizerSpec("momentum")->Get("mu"), 0.9);
  EXPECT_EQ(ParseOptimizerSpec("adagrad")->Get("eps"), 1e-10);
}

TEST(OptimizerSpecTest, CanonicalFormLeavesDefaultsOutAndRoundTrips) {
  EXPECT_EQ(Canonical("adam"), "adam");
  EXPECT_EQ(Canonical("adam:eps=1e-8,beta1=0.9"), "adam");
  EXPECT_EQ(Canonical(" adam : eps = 1e-7 , beta1=0.8 "), "adam:beta1=0.8,eps=1e-07");
  EXPECT_EQ(Canonical("momentum:wd=1e-4,mu=0.95"), "momentum:mu=0.95,wd=1e-04");
  for (const char* text :
       {"sgd:wd=0.5", "adamw:wd=0", "adagrad:lr_decay=0.01", "nesterov:mu=0.99", "add"}) {
    const std::string once = Canonical(text);
    EXPECT_EQ(Canonical(once), once) << text;
  }
  EXPECT_EQ(CanonicalOptimizer("adam:eps=1e-8"), "adam");
  EXPECT_EQ(CanonicalOptimizer("my-plugin:x=1"), "my-plugin:x=1");  // not a built-in
}

// "-0" is zero, so a job written with it is the same job as one written with "0" (the job
// checks compare canonical forms); found by tests/fuzz/spec_fuzzer.cc.
TEST(OptimizerSpecTest, MinusZeroIsZero) {
  EXPECT_EQ(Canonical("sgd:wd=-0"), "sgd");
  EXPECT_EQ(Canonical("adamw:wd=-0.0"), Canonical("adamw:wd=0"));
  absl::StatusOr<OptimizerSpec> spec = ParseOptimizerSpec("sgd:wd=-0e5");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_FALSE(std::signbit(spec->Get("wd")));
  absl::StatusOr<ScheduleSpec> step = ParseSchedule("cosine:steps=10,min=-0");
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_FALSE(std::signbit(step->min));
}

TEST(OptimizerSpecTest, Errors) {
  EXPECT_THAT(ParseOptimizerSpec("lion").status().message(),
              HasSubstr("unknown optimizer 'lion'; built in: sgd, momentum, nesterov, "
                        "adagrad, adam, adamw, add, ftrl"));
  EXPECT_THAT(ParseOptimizerSpec("sgd:mu=0.9").status().message(),
              HasSubstr("optimizer 'sgd' has no parameter 'mu'; it takes wd"));
  EXPECT_THAT(ParseOptimizerSpec("adam:beta2=1.5").status().message(),
              HasSubstr("parameter 'beta2' (decay of the second moment) must be a decimal "
                        "number in [0, 1), got '1.5'"));
  EXPECT_FALSE(ParseOptimizerSpec("").ok());
}

TEST(OptimizerSpecTest, StatePerElement) {
  for (const auto& [name, per] : std::vector<std::pair<std::string, std::size_t>>{{"sgd", 0},
                                                                                  {"momentum", 1},
                                                                                  {"nesterov", 1},
                                                                                  {"adagrad", 1},
                                                                                  {"adam", 2},
                                                                                  {"adamw", 2},
                                                                                  {"add", 0},
                                                                                  {"ftrl", 2}}) {
    ASSERT_NE(FindBuiltinOptimizer(name), nullptr) << name;
    EXPECT_EQ(FindBuiltinOptimizer(name)->state_per_element, per) << name;
  }
}

ScheduleSpec Schedule(const std::string& text) {
  absl::StatusOr<ScheduleSpec> s = ParseSchedule(text);
  EXPECT_TRUE(s.ok()) << text << ": " << s.status();
  return s.value_or(ScheduleSpec{});
}

TEST(ScheduleTest, ConstantIsOneEverywhere) {
  for (const char* text : {"", "constant", "  constant "}) {
    const ScheduleSpec s = Schedule(text);
    EXPECT_EQ(s, ScheduleSpec{});
    EXPECT_EQ(ScheduleFactor(s, 0), 1.0);
    EXPECT_EQ(ScheduleFactor(s, 123456789), 1.0);
  }
}

TEST(ScheduleTest, WarmupIsLinearFromZero) {
  const ScheduleSpec s = Schedule("constant:warmup=4");
  EXPECT_EQ(ScheduleFactor(s, -3), 0.0);
  EXPECT_EQ(ScheduleFactor(s, 0), 0.0);
  EXPECT_EQ(ScheduleFactor(s, 1), 0.25);
  EXPECT_EQ(ScheduleFactor(s, 2), 0.5);
  EXPECT_EQ(ScheduleFactor(s, 3), 0.75);
  EXPECT_EQ(ScheduleFactor(s, 4), 1.0);
  EXPECT_EQ(ScheduleFactor(s, 400), 1.0);
}

TEST(ScheduleTest, StepMultipliesByGammaEveryN) {
  const ScheduleSpec s = Schedule("step:every=10,gamma=0.5");
  EXPECT_EQ(ScheduleFactor(s, 0), 1.0);
  EXPECT_EQ(ScheduleFactor(s, 9), 1.0);
  EXPECT_EQ(ScheduleFactor(s, 10), 0.5);
  EXPECT_EQ(ScheduleFactor(s, 19), 0.5);
  EXPECT_EQ(ScheduleFactor(s, 20), 0.25);
  EXPECT_EQ(ScheduleFactor(s, 35), 0.125);
  EXPECT_DOUBLE_EQ(ScheduleFactor(Schedule("step:every=3"), 3), 0.1);  // torch's gamma
  const ScheduleSpec w = Schedule("step:every=10,gamma=0.5,warmup=2");
  EXPECT_EQ(ScheduleFactor(w, 1), 0.5);
  EXPECT_EQ(ScheduleFactor(w, 10), 0.5);
}

TEST(ScheduleTest, CosineGoesFromOneToMinOverT) {
  const ScheduleSpec s = Schedule("cosine:steps=100,min=0.2");
  EXPECT_EQ(ScheduleFactor(s, 0), 1.0);
  EXPECT_DOUBLE_EQ(ScheduleFactor(s, 50), 0.6);  // halfway: (1 + min) / 2
  EXPECT_DOUBLE_EQ(ScheduleFactor(s, 25), 0.2 + 0.8 * (1 + std::cos(M_PI / 4)) / 2);
  EXPECT_DOUBLE_EQ(ScheduleFactor(s, 100), 0.2);
  EXPECT_DOUBLE_EQ(ScheduleFactor(s, 1000), 0.2);  // stays at min after T
  EXPECT_DOUBLE_EQ(ScheduleFactor(Schedule("cosine:steps=10"), 10), 0.0);
}

TEST(ScheduleTest, InvSqrtWarmsUpThenDecays) {
  const ScheduleSpec s = Schedule("invsqrt:warmup=4");
  EXPECT_EQ(ScheduleFactor(s, 0), 0.0);
  EXPECT_EQ(ScheduleFactor(s, 2), 0.5);
  EXPECT_EQ(ScheduleFactor(s, 4), 1.0);
  EXPECT_EQ(ScheduleFactor(s, 16), 0.5);
  EXPECT_EQ(ScheduleFactor(s, 64), 0.25);
}

TEST(ScheduleTest, CanonicalFormRoundTrips) {
  EXPECT_EQ(ToString(Schedule("")), "constant");
  EXPECT_EQ(ToString(Schedule("step:gamma=0.1,every=5")), "step:every=5");
  EXPECT_EQ(ToString(Schedule("cosine:warmup=3,min=0.5,steps=9")),
            "cosine:steps=9,min=0.5,warmup=3");
  EXPECT_EQ(ToString(Schedule("invsqrt:warmup=7")), "invsqrt:warmup=7");
  for (const char* text :
       {"constant:warmup=5", "step:every=2,gamma=0.75", "cosine:steps=9,min=0.125"}) {
    EXPECT_EQ(Schedule(ToString(Schedule(text))), Schedule(text)) << text;
  }
  EXPECT_EQ(CanonicalSchedule(""), CanonicalSchedule("constant"));
}

TEST(ScheduleTest, Errors) {
  EXPECT_THAT(ParseSchedule("linear").status().message(),
              HasSubstr("unknown learning-rate schedule 'linear'; built in: constant, step, "
                        "cosine, invsqrt"));
  EXPECT_THAT(ParseSchedule("step:gamma=0.5").status().message(),
              HasSubstr("schedule 'step' needs parameter 'every'"));
  EXPECT_THAT(ParseSchedule("step:every=0").status().message(),
              HasSubstr("parameter 'every' must be an integer in [1, 2^62], got '0'"));
  EXPECT_THAT(ParseSchedule("step:every=5,gamma=2").status().message(),
              HasSubstr("parameter 'gamma' must be a decimal number in (0, 1], got '2'"));
  EXPECT_THAT(ParseSchedule("cosine:steps=5,min=-1").status().message(), HasSubstr("in [0, 1]"));
  EXPECT_THAT(ParseSchedule("cosine:steps=5,gamma=0.1").status().message(),
              HasSubstr("schedule 'cosine' has no parameter 'gamma'; it takes steps, min, "
                        "warmup"));
  EXPECT_THAT(ParseSchedule("invsqrt").status().message(), HasSubstr("needs parameter 'warmup'"));
  EXPECT_THAT(ParseSchedule("invsqrt:warmup=0").status().message(), HasSubstr("in [1, 2^62]"));
  EXPECT_THAT(ParseSchedule("constant:warmup=-1").status().message(), HasSubstr("in [0, 2^62]"));
}

}  // namespace
}  // namespace kairos::policy
