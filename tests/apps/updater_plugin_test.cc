// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Updater plugins: the loader kairos-server uses (apps/updater_plugin.h) on the example
// plugin (example_updater_plugin.cc), its errors, the chain of factories, and
// kairos-server's --updater-plugin flag.

#include "apps/updater_plugin.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/updater.h"
#include "tests/apps/run_program.h"

namespace kairos::apps {
namespace {

using ::testing::HasSubstr;

TEST(UpdaterPluginTest, LoadsTheExamplePluginAndBuildsItsUpdater) {
  absl::StatusOr<UpdaterFactory> factory = LoadUpdaterPlugin(KAIROS_EXAMPLE_PLUGIN_PATH);
  ASSERT_TRUE(factory.ok()) << factory.status();
  absl::StatusOr<std::unique_ptr<Updater>> u = (*factory)({"signsgd", 0.5f});
  ASSERT_TRUE(u.ok()) << u.status();
  std::vector<float> w = {1.0f, 1.0f, 1.0f};
  const std::vector<float> g = {2.0f, -3.0f, 0.0f};
  Updater::Update update;
  update.gradient = g;
  update.learning_rate = 0.5f;
  (*u)->Apply(w, {}, update);
  EXPECT_EQ(w, (std::vector<float>{0.5f, 1.5f, 1.0f}));
  update.step_scale = 0.5f;  // the policy's weighting scales the step
  (*u)->Apply(w, {}, update);
  EXPECT_EQ(w, (std::vector<float>{0.25f, 1.75f, 1.0f}));
  EXPECT_TRUE(absl::IsNotFound((*factory)({"adam", 0.1f}).status()));
}

TEST(UpdaterPluginTest, ChainAsksThePluginsThenTheBuiltins) {
  absl::StatusOr<UpdaterFactory> plugin = LoadUpdaterPlugin(KAIROS_EXAMPLE_PLUGIN_PATH);
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  const UpdaterFactory chain = ChainUpdaterFactories({*plugin}, MakeBuiltinUpdater);
  absl::StatusOr<std::unique_ptr<Updater>> sign = chain({"signsgd", 0.1f});
  ASSERT_TRUE(sign.ok()) << sign.status();
  absl::StatusOr<std::unique_ptr<Updater>> adam = chain({"adam", 0.1f});
  ASSERT_TRUE(adam.ok()) << adam.status();
  EXPECT_EQ((*adam)->state_per_element(), 2u);
  // A plugin's own error (it knows the name) is final; an unknown name gets the built-ins'.
  EXPECT_THAT(chain({"signsgd:x=1", 0.1f}).status().message(), HasSubstr("takes no parameters"));
  EXPECT_THAT(chain({"lion", 0.1f}).status().message(), HasSubstr("unknown optimizer 'lion'"));
}

TEST(UpdaterPluginTest, ErrorsNameThePathAndWhatIsWrong) {
  absl::StatusOr<UpdaterFactory> missing = LoadUpdaterPlugin("/nonexistent/plugin.so");
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_THAT(missing.status().message(),
              HasSubstr("updater plugin '/nonexistent/plugin.so': no such file"));
  absl::StatusOr<UpdaterFactory> no_entry = LoadUpdaterPlugin(KAIROS_NO_ENTRY_PLUGIN_PATH);
  EXPECT_TRUE(absl::IsInvalidArgument(no_entry.status()));
  EXPECT_THAT(no_entry.status().message(),
              HasSubstr("has no entry point 'kairos_updater_plugin_v1'"));
  const std::string text = ::testing::TempDir() + "kairos-not-elf.so";
  std::ofstream(text) << "not a shared object\n";
  absl::StatusOr<UpdaterFactory> not_elf = LoadUpdaterPlugin(text);
  EXPECT_TRUE(absl::IsInvalidArgument(not_elf.status()));
  EXPECT_THAT(not_elf.status().message(), HasSubstr("cannot be loaded"));
  std::filesystem::remove(text);
}

using testing::ProgramRun;

// `program` with `args`, to its end (at most 120 s).
ProgramRun RunProgram(const std::string& program, const std::vector<std::string>& args) {
  return testing::RunProgram(program, args, absl::Seconds(120));
}

TEST(UpdaterPluginTest, ServerRefusesAPluginItCannotLoad) {
  ProgramRun run = RunProgram(
      KAIROS_SERVER_PATH,
      {"--coordinator", "tcp://127.0.0.1:1", "--updater-plugin", KAIROS_NO_ENTRY_PLUGIN_PATH});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("has no entry point 'kairos_updater_plugin_v1'"));
}

// A whole job: kairos-launch passes --updater-plugin to every server, and the workers'
// table uses the plugin's "signsgd" (the training program checks every round exactly).
TEST(UpdaterPluginTest, LaunchedJobTrainsWithThePluginsUpdater) {
  ProgramRun run = RunProgram(KAIROS_LAUNCH_PATH,
                              {"-s", "2", "-w", "2", "--updater-plugin", KAIROS_EXAMPLE_PLUGIN_PATH,
                               "--", KAIROS_TRAINING_PATH, "--updater", "signsgd"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("rank 0 ok"));
  EXPECT_THAT(run.output, HasSubstr("rank 1 ok"));
}

// Without the plugin the servers cannot build "signsgd": the job fails at start with the
// server's error (the coordinator ends the job with it, and the workers' Create returns it;
// which process reports it first, before kairos-launch stops the others, varies).
TEST(UpdaterPluginTest, WithoutThePluginTheJobFailsWithTheServersError) {
  ProgramRun run = RunProgram(KAIROS_LAUNCH_PATH, {"-s", "1", "-w", "1", "--grace", "5", "--",
                                                   KAIROS_TRAINING_PATH, "--updater", "signsgd"});
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("server 0 could not start: table 'w': unknown optimizer 'signsgd'"));
}

}  // namespace
}  // namespace kairos::apps
