// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos-server: one shard of a job's tables (kairos::Server) as a program.
//
//   kairos-server --coordinator ENDPOINT [--listen ENDPOINT] [--advertise-host HOST]
//                 [--apply-threads N] [--keys DIR] [--log-level LEVEL]
//                 [--updater-plugin PATH.so ...] [--metrics-listen HOST:PORT]
//                 [--checkpoint-dir DIR] [--checkpoint-every-clocks N]
//                 [--checkpoint-every-seconds S] [--no-checkpoint-at-end]
//                 [--restore-from DIR] [--state-dir DIR --shard N] [--log-sync LEVEL]
//                 [--log-rebase-mb MB] [--keep-free-memory-mb MB]
//
// --coordinator defaults to $KAIROS_COORDINATOR, --keys to $KAIROS_KEYS. Once bound it prints
// "kairos-server listening on <endpoint>" on stdout (and, with --metrics-listen,
// "kairos-server metrics on http://<HOST:PORT>/metrics"), and runs until the job ends. Exit
// codes (node_main.h): 0 the job ended well, 1 it failed, 2 usage error or cannot listen,
// 128 + N stopped by signal N (SIGINT, SIGTERM). SIGUSR1 takes a checkpoint
// (docs/durability.md). With --state-dir and --shard, a server killed (even by kill -9) and
// started again with the same flags replays its update log and rejoins its running job
// (the coordinator needs --server-restart-timeout; docs/durability.md, "Server restarts").

#include <csignal>
#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "apps/node_main.h"
#include "apps/updater_plugin.h"
#include "kairos/allocator.h"
#include "kairos/options.h"
#include "kairos/server.h"
#include "kairos/updater.h"

namespace kairos::apps {
namespace {

void AddOptions(CLI::App& app, ServerOptions& options, std::string& keys_dir,
                std::vector<std::string>& plugins, uint64_t& keep_free_mb) {
  app.add_option("--coordinator", options.coordinator,
                 "Endpoint of the job's coordinator, e.g. tcp://10.0.0.1:7000")
      ->envname("KAIROS_COORDINATOR")
      ->required();
  app.add_option("--listen", options.listen,
                 "Endpoint to accept workers on; port * picks a free port, FIRST-LAST the "
                 "first free port of a range")
      ->capture_default_str();
  app.add_option("--advertise-host", options.advertise_host,
                 "Host workers use to reach a server listening on a wildcard address "
                 "(default: the address the coordinator saw this server connect from)");
  app.add_option("--apply-threads", options.apply_threads,
                 "Threads that apply updates; 0: one per hardware thread, at most 4")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app.add_option("--updater-plugin", plugins,
                 "Shared object that adds updaters (KAIROS_UPDATER_PLUGIN; docs/optimizers.md); "
                 "may be repeated. Plugins are asked in order, before the built-ins");
  app.add_option("--checkpoint-dir", options.checkpoint_dir,
                 "Write this shard's checkpoints under DIR (docs/durability.md); SIGUSR1 "
                 "takes one at once");
  app.add_option("--checkpoint-every-clocks", options.checkpoint_every_clocks,
                 "Take a checkpoint each time the slowest worker's clock reaches a multiple "
                 "of N (0: not by clocks)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option_function<double>(
         "--checkpoint-every-seconds",
         [&options](double s) { options.checkpoint_every = absl::Seconds(s); },
         "Take a checkpoint every S seconds (0: not by time)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--checkpoint-deltas", options.checkpoint_deltas,
                 "After each whole checkpoint, N delta checkpoints: only the sparse rows "
                 "changed since the checkpoint before (docs/durability.md)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_flag("!--no-checkpoint-at-end", options.checkpoint_at_end,
               "Do not take a last checkpoint when every worker has finished");
  app.add_option("--restore-from", options.restore_from,
                 "Start the job from a checkpoint: a clock-N directory, or a directory of "
                 "them (the latest complete one); it must hold every shard's file");
  app.add_option("--state-dir", options.state_dir,
                 "Keep this shard's update log in DIR: every update is written there before "
                 "it is acknowledged, and a server started again with the same --state-dir "
                 "and --shard after a crash replays it and rejoins the running job");
  app.add_option("--shard", options.shard,
                 "The shard this server serves (-1: the next free one); a restarted server "
                 "names the shard it served")
      ->check(CLI::Range(-1, 1 << 20))
      ->capture_default_str();
  app.add_option("--log-sync", options.log_sync,
                 "When an update is safe: 'process' survives the server's crash (written to "
                 "the operating system before it is acknowledged), 'machine' also a machine "
                 "crash (fdatasync first, shared by the updates that arrive together)")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, ServerOptions::LogSync>{
              {"process", ServerOptions::LogSync::kProcess},
              {"machine", ServerOptions::LogSync::kMachine}},
          CLI::ignore_case))
      ->default_str("process");
  app.add_option_function<uint64_t>(
         "--log-rebase-mb",
         [&options](uint64_t mb) { options.log_rebase_bytes = mb << 20; },
         "Start a new update log segment from a snapshot of the shard once the log holds "
         "this many MiB (at the next moment the shard holds nothing but values and clocks); "
         "the older segments then go. 0: never")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 30))
      ->default_str("1024");
  app.add_option("--keep-free-memory-mb", keep_free_mb,
                 "Freed memory (MiB) the allocator keeps for reuse instead of giving it back "
                 "to the system, so that received messages do not fault their pages in "
                 "again (kairos::TuneProcessAllocator; docs/performance.md). 0: leave the "
                 "allocator as it is")
      ->check(CLI::Range(uint64_t{0}, uint64_t{2047}))
      ->capture_default_str();
  AddMetricsListenOption(app, options.metrics_listen);
  AddKeysOption(app, keys_dir);
  AddSendDelayOption(app, options.send_delay);
  AddLogLevelOption(app, options.log_level);
}

// The server's updater factory: the plugins' (in order), then the built-ins.
absl::StatusOr<UpdaterFactory> LoadUpdaters(const std::vector<std::string>& paths) {
  if (paths.empty()) return UpdaterFactory(MakeBuiltinUpdater);
  std::vector<UpdaterFactory> plugins;
  for (const std::string& path : paths) {
    absl::StatusOr<UpdaterFactory> plugin = LoadUpdaterPlugin(path);
    if (!plugin.ok()) return plugin.status();
    plugins.push_back(*std::move(plugin));
  }
  return ChainUpdaterFactories(std::move(plugins), MakeBuiltinUpdater);
}

int Main(int argc, char** argv) {
  CLI::App app("Runs one server (a shard of the tables) of a kairos job.", "kairos-server");
  ServerOptions options;
  std::string keys_dir;
  std::vector<std::string> plugins;
  uint64_t keep_free_mb = 1024;
  AddOptions(app, options, keys_dir, plugins, keep_free_mb);
  if (std::optional<int> exit_code = ParseCommandLine(app, argc, argv)) return *exit_code;
  if (keep_free_mb > 0) {  // before any thread allocates
    AllocatorTuning tuning;
    tuning.keep_free_bytes = keep_free_mb << 20;
    if (absl::Status s = TuneProcessAllocator(tuning); !s.ok() && !absl::IsUnimplemented(s)) {
      std::cerr << "kairos-server: --keep-free-memory-mb: " << s.message() << std::endl;
      return kExitCannotStart;
    }
  }
  absl::StatusOr<UpdaterFactory> updaters = LoadUpdaters(plugins);
  if (!updaters.ok()) {
    std::cerr << "kairos-server: " << updaters.status().message() << std::endl;
    return kExitCannotStart;
  }
  options.updater_factory = *std::move(updaters);
  absl::StatusOr<std::optional<CurveKeys>> keys = LoadKeysOption(keys_dir);
  if (!keys.ok()) {
    std::cerr << "kairos-server: " << keys.status().message() << std::endl;
    return kExitCannotStart;
  }
  options.keys = *std::move(keys);
  // Writing to a closed stdout must fail, not kill the server.
  std::signal(SIGPIPE, SIG_IGN);
  absl::StatusOr<std::unique_ptr<NodeRunner>> runner =
      NodeRunner::Create("kairos-server", /*watch_user1=*/true);
  if (!runner.ok()) {
    std::cerr << "kairos-server: " << runner.status() << std::endl;
    return kExitCannotStart;
  }
  absl::StatusOr<std::unique_ptr<Server>> server = Server::Create(options);
  if (!server.ok()) {
    std::cerr << "kairos-server: " << server.status() << std::endl;
    return kExitCannotStart;
  }
  std::cout << "kairos-server listening on " << (*server)->endpoint() << std::endl;
  if (!(*server)->metrics_endpoint().empty()) {
    std::cout << "kairos-server metrics on http://" << (*server)->metrics_endpoint()
              << "/metrics" << std::endl;
  }
  Server& s = **server;
  // SIGUSR1: a checkpoint now (the server logs where it went, or why it could not).
  (*runner)->OnUser1([&s] { s.RequestCheckpoint(); });
  return (*runner)->Run([&s] { return s.Wait(absl::InfiniteDuration()); }, [&s] { s.Shutdown(); });
}

}  // namespace
}  // namespace kairos::apps

int main(int argc, char** argv) { return kairos::apps::Main(argc, argv); }
