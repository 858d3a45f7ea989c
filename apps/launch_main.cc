// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos-launch: runs one job on this host.
//
//   kairos-launch -s S -w W [--transport tcp|ipc] [--timeout SECONDS] [--grace SECONDS]
//                 [--keys DIR] [--updater-plugin PATH.so ...] [--restart-workers N]
//                 [--tolerate-worker-failures] [--heartbeat-timeout SECONDS]
//                 [--checkpoint-dir DIR] [--checkpoint-every-clocks N] [--restore-from DIR]
//                 [--state-dir DIR [--restart-servers N] [--server-restart-timeout SECONDS]
//                                  [--restart-coordinator N]]
//                 -- program [args...]
//
// starts kairos-coordinator, S kairos-server processes and W copies of the program (the
// workers, told where the job is through KAIROS_* environment variables), and supervises
// them with ProcessGroup's exit policy (process_group.h): the first process to fail stops
// the job, except a worker: with --restart-workers N a worker that fails is started again
// with its rank (KAIROS_RESTARTS tells it how many times), up to N times per worker, and
// rejoins the running job; with --tolerate-worker-failures a worker that fails (past its
// restarts) does not stop the job, and the coordinator (--tolerate-worker-failures) lets
// the job succeed if at least one worker finished. With --state-dir DIR every server keeps
// its update log there (--state-dir DIR --shard i), and with --restart-servers N a server
// that fails is started again with the same flags, up to N times per server: it replays its
// log and rejoins the running job (docs/durability.md). The coordinator keeps the job's state
// in DIR too, and with --restart-coordinator N a coordinator killed by a signal (kill -9, a
// crash) is started again, up to N times, and resumes the job. With --keys DIR (the job's CURVE
// keys) the coordinator and servers get --keys DIR and the workers KAIROS_KEYS=DIR; each
// --updater-plugin PATH is passed on to every server (docs/optimizers.md, "Plugins").
// docs/launching.md is the user's guide.
//
// Exit codes: 0 every process succeeded (tolerated worker failures and restarts
// included); 1 a process failed or could not be started, or the coordinator ended the job
// with an error; 2 usage error; 124 --timeout passed; 128 + N after forwarding signal N
// (SIGINT, SIGTERM, SIGHUP).

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "apps/cli_checks.h"
#include "apps/fd_util.h"
#include "apps/process_group.h"
#include "apps/program_path.h"
#include "apps/signals.h"

namespace kairos::launch {
namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitDeadline = 124;
// The descriptor on which the coordinator reports its endpoint (its --ready-fd).
constexpr int kReadyFd = 3;
// How long the coordinator has to bind and report its endpoint.
constexpr absl::Duration kEndpointTimeout = absl::Seconds(30);

enum class Transport { kTcp, kIpc };

// Which child a ProcessSpec starts (its tag): a failure is judged by it, not by the name.
enum ChildKind : int { kCoordinatorChild = 1, kServerChild, kWorkerChild };

struct LaunchConfig {
  int servers = 0;
  int workers = 0;
  Transport transport = Transport::kTcp;
  absl::Duration timeout = absl::ZeroDuration();  // zero: no deadline
  absl::Duration grace = absl::Seconds(10);
  std::string keys_dir;              // absolute; empty: no CURVE keys
  std::vector<std::string> updater_plugins;  // absolute; passed to every server
  int restart_workers = 0;           // restarts per worker
  bool tolerate_worker_failures = false;
  std::optional<absl::Duration> heartbeat_timeout;  // the coordinator's; unset: its default
  // Passed to every server (docs/durability.md); absolute; empty/0: not passed.
  std::string checkpoint_dir;
  int64_t checkpoint_every_clocks = 0;
  int checkpoint_deltas = 0;
  std::string restore_from;
  // Update logs and server restarts (docs/durability.md); absolute; empty/0: not passed.
  std::string state_dir;
  int restart_servers = 0;  // restarts per server
  int restart_coordinator = 0;
  double server_restart_timeout_s = 60;
  std::vector<std::string> program;  // the program and its arguments
};

void Report(const std::string& message) { std::cerr << "kairos-launch: " << message << std::endl; }

int UsageError(const std::string& message) {
  Report(message);
  std::cerr << "Run with --help for more information." << std::endl;
  return kExitUsage;
}

void AddOptions(CLI::App& app, LaunchConfig& config, std::string& transport, double& timeout_s,
                double& grace_s, double& heartbeat_timeout_s) {
  app.add_option("-s,--servers", config.servers, "Number of kairos-server processes")
      ->required()
      ->check(apps::ProcessCount());
  app.add_option("-w,--workers", config.workers, "Number of copies of the program (workers)")
      ->required()
      ->check(apps::ProcessCount());
  app.add_option("--transport", transport,
                 "tcp: loopback with OS-chosen ports; ipc: Unix sockets in a fresh temporary "
                 "directory, removed at the end")
      ->check(CLI::IsMember({"tcp", "ipc"}))
      ->capture_default_str();
  app.add_option("--timeout", timeout_s,
                 "Deadline of the whole job in seconds; then everything is stopped and the "
                 "exit code is 124. 0: none")
      ->check(apps::Seconds(/*allow_zero=*/true))
      ->capture_default_str();
  app.add_option("--grace", grace_s,
                 "Seconds processes get to exit after SIGTERM before SIGKILL, and the "
                 "coordinator and servers get to exit after the workers finished")
      ->check(apps::Seconds(/*allow_zero=*/true))
      ->capture_default_str();
  app.add_option("--keys", config.keys_dir,
                 "Directory of the job's CURVE keys (made by kairos-keygen): passed to the "
                 "coordinator and the servers as --keys and to the workers as KAIROS_KEYS, so "
                 "that every connection is encrypted and authenticated")
      ->envname("KAIROS_KEYS")
      ->check(CLI::ExistingDirectory);
  app.add_option("--updater-plugin", config.updater_plugins,
                 "Shared object with user-defined updaters (KAIROS_UPDATER_PLUGIN), passed to "
                 "every server as --updater-plugin; may be repeated")
      ->check(CLI::ExistingFile);
  app.add_option("--restart-workers", config.restart_workers,
                 "Start a worker that exits non-zero or is killed again, with its rank, up to "
                 "N times per worker; it rejoins the running job (KAIROS_RESTARTS counts its "
                 "restarts)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_flag("--tolerate-worker-failures", config.tolerate_worker_failures,
               "A worker that fails (past its restarts) does not stop the job: the job "
               "succeeds if at least one worker finished (passed on to the coordinator)");
  app.add_option("--checkpoint-dir", config.checkpoint_dir,
                 "Every server writes its shard's checkpoints under DIR (kairos-server "
                 "--checkpoint-dir; docs/durability.md): at the end of the job, and with "
                 "--checkpoint-every-clocks");
  app.add_option("--checkpoint-every-clocks", config.checkpoint_every_clocks,
                 "Passed to every server: a checkpoint each time the slowest worker's clock "
                 "reaches a multiple of N (needs --checkpoint-dir)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--checkpoint-deltas", config.checkpoint_deltas,
                 "Passed to every server: N delta checkpoints after each whole one (needs "
                 "--checkpoint-dir)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--restore-from", config.restore_from,
                 "Every server starts the job from this checkpoint (a clock-N directory or a "
                 "directory of them: the latest complete one)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--state-dir", config.state_dir,
                 "Every server keeps its shard's update log in DIR (kairos-server --state-dir "
                 "DIR --shard i; docs/durability.md): nothing it acknowledged is lost when it "
                 "crashes");
  app.add_option("--restart-servers", config.restart_servers,
                 "Start a server that exits non-zero or is killed again with the same flags, "
                 "up to N times per server; it replays its update log and rejoins the running "
                 "job (needs --state-dir)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--restart-coordinator", config.restart_coordinator,
                 "Start the coordinator again when it is killed by a signal (kill -9, a crash), "
                 "up to N times; it resumes the job from its state in --state-dir, and the "
                 "servers and workers go on meanwhile (needs --state-dir)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--server-restart-timeout", config.server_restart_timeout_s,
                 "With --restart-servers: how long the job waits for a failed server to come "
                 "back (the coordinator's --server-restart-timeout)")
      ->check(apps::Seconds(/*allow_zero=*/false))
      ->capture_default_str();
  app.add_option("--heartbeat-timeout", heartbeat_timeout_s,
                 "Seconds of silence after which the coordinator declares a node dead "
                 "(its --heartbeat-timeout-ms); 0: the coordinator's default (10)")
      ->check(apps::Seconds(/*allow_zero=*/true))
      ->capture_default_str();
}

// Parses argv into `config`. Returns the exit code when the program should exit now
// (--help, usage error), nullopt to go on.
std::optional<int> ParseCommandLine(int argc, char** argv, LaunchConfig& config) {
  int split = 1;
  while (split < argc && std::string_view(argv[split]) != "--") ++split;
  CLI::App app(
      "kairos-launch -s S -w W [OPTIONS] -- program [args...]\n"
      "Runs a kairos job on this host: a coordinator, S servers and W copies of the program.",
      "kairos-launch");
  app.footer(
      "Workers get KAIROS_COORDINATOR, KAIROS_RANK, KAIROS_NUM_WORKERS, KAIROS_NUM_SERVERS and "
      "KAIROS_ROLE=worker, KAIROS_RESTARTS (how many times this worker was restarted) (and "
      "KAIROS_KEYS with --keys).\nExit codes: 0 success (tolerated worker failures "
      "included), 1 a process failed, 2 usage error, 124 --timeout, 128+N signal N.\nSee "
      "docs/launching.md.");
  app.allow_extras();
  std::string transport = "tcp";
  double timeout_s = 0;
  double grace_s = 10;
  double heartbeat_timeout_s = 0;
  AddOptions(app, config, transport, timeout_s, grace_s, heartbeat_timeout_s);
  try {
    app.parse(split, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }
  std::vector<std::string> extras = app.remaining();
  if (split == argc && extras.empty()) return UsageError("missing '-- program [args...]'");
  if (split == argc) {
    return UsageError(
        absl::StrCat("missing '--' before the program to run (got '", extras.front(), "')"));
  }
  if (!extras.empty()) {
    return UsageError(absl::StrCat("unexpected argument '", extras.front(), "' before '--'"));
  }
  if (split + 1 == argc) return UsageError("no program after '--'");
  config.program.assign(argv + split + 1, argv + argc);
  config.transport = transport == "ipc" ? Transport::kIpc : Transport::kTcp;
  config.timeout = absl::Seconds(timeout_s);
  config.grace = absl::Seconds(grace_s);
  if (heartbeat_timeout_s > 0) config.heartbeat_timeout = absl::Seconds(heartbeat_timeout_s);
  if (!config.keys_dir.empty()) {
    // The children may run elsewhere than here; an absolute path means the same to all.
    std::error_code error;
    std::filesystem::path absolute = std::filesystem::absolute(config.keys_dir, error);
    if (!error) config.keys_dir = absolute.string();
  }
  for (std::string& plugin : config.updater_plugins) {
    std::error_code error;
    std::filesystem::path absolute = std::filesystem::absolute(plugin, error);
    if (!error) plugin = absolute.string();
  }
  if (config.checkpoint_every_clocks > 0 && config.checkpoint_dir.empty()) {
    return UsageError("--checkpoint-every-clocks needs --checkpoint-dir");
  }
  if (config.checkpoint_deltas > 0 && config.checkpoint_dir.empty()) {
    return UsageError("--checkpoint-deltas needs --checkpoint-dir");
  }
  if (config.restart_servers > 0 && config.state_dir.empty()) {
    return UsageError("--restart-servers needs --state-dir");
  }
  if (config.restart_coordinator > 0 && config.state_dir.empty()) {
    return UsageError("--restart-coordinator needs --state-dir");
  }
  for (std::string* dir : {&config.checkpoint_dir, &config.restore_from, &config.state_dir}) {
    if (dir->empty()) continue;
    std::error_code error;
    std::filesystem::path absolute = std::filesystem::absolute(*dir, error);
    if (!error) *dir = absolute.string();
  }
  return std::nullopt;
}

// A fresh temporary directory, removed with everything in it on destruction.
// Thread-safety: like a value.
class TempDir {
 public:
  static absl::StatusOr<std::unique_ptr<TempDir>> Create() {
    std::error_code error;
    std::filesystem::path base = std::filesystem::temp_directory_path(error);
    if (error) base = "/tmp";
    std::string path = (base / "kairos-XXXXXX").string();
    if (::mkdtemp(path.data()) == nullptr) {
      return absl::UnavailableError(
          absl::StrCat("cannot create a directory for ipc sockets in ", base.string()));
    }
    return std::unique_ptr<TempDir>(new TempDir(std::move(path)));
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// Starts the job's processes and supervises them. Thread-safety: one thread; Run once.
class Launcher {
 public:
  // `signals` is borrowed and must outlive the Launcher.
  Launcher(LaunchConfig config, SignalFd* signals)
      : config_(std::move(config)), signals_(signals) {}

  // Returns the process exit code (file comment).
  int Run();

 private:
  absl::Status FindPrograms();
  absl::Status StartAll();
  absl::Status StartCoordinator();
  absl::Status ReadEndpoint(pid_t coordinator, int ready_fd);
  absl::Status StartServers();
  absl::Status StartWorkers();
  int StopAfterStartFailure(const absl::Status& status);
  std::string Endpoint(const std::string& name, const std::string& tcp) const;
  SuperviseOptions supervise_options() const;

  LaunchConfig config_;
  SignalFd* signals_;
  absl::Time deadline_ = absl::InfiniteFuture();
  std::unique_ptr<TempDir> ipc_dir_;  // --transport ipc only
  std::string coordinator_path_;
  std::string server_path_;
  std::string program_path_;
  std::string endpoint_;  // the coordinator's, as it reported it
  // Declared last, so destroyed first: no child outlives the ipc directory.
  ProcessGroup group_;
};

int Launcher::Run() {
  if (config_.timeout > absl::ZeroDuration()) deadline_ = absl::Now() + config_.timeout;
  if (absl::Status s = FindPrograms(); !s.ok()) {
    Report(std::string(s.message()));
    return kExitFailed;
  }
  if (absl::Status s = StartAll(); !s.ok()) return StopAfterStartFailure(s);
  return group_.Supervise(supervise_options()).ExitCode();
}

absl::Status Launcher::FindPrograms() {
  absl::StatusOr<std::string> coordinator = FindKairosProgram("kairos-coordinator");
  if (!coordinator.ok()) return coordinator.status();
  absl::StatusOr<std::string> server = FindKairosProgram("kairos-server");
  if (!server.ok()) return server.status();
  absl::StatusOr<std::string> program = FindProgram(config_.program.front());
  if (!program.ok()) return program.status();
  coordinator_path_ = *std::move(coordinator);
  server_path_ = *std::move(server);
  program_path_ = *std::move(program);
  return absl::OkStatus();
}

absl::Status Launcher::StartAll() {
  if (config_.transport == Transport::kIpc) {
    absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::Create();
    if (!dir.ok()) return dir.status();
    ipc_dir_ = *std::move(dir);
  }
  if (absl::Status s = StartCoordinator(); !s.ok()) return s;
  if (absl::Status s = StartServers(); !s.ok()) return s;
  return StartWorkers();
}

std::string Launcher::Endpoint(const std::string& name, const std::string& tcp) const {
  if (ipc_dir_ == nullptr) return tcp;
  return absl::StrCat("ipc://", ipc_dir_->path(), "/", name);
}

absl::Status Launcher::StartCoordinator() {
  absl::StatusOr<Pipe> ready = MakePipe();
  if (!ready.ok()) return ready.status();
  ProcessSpec spec;
  spec.name = "coordinator";
  spec.path = coordinator_path_;
  spec.args = {"--listen",   Endpoint("coordinator", "tcp://127.0.0.1:0"),
               "--servers",  absl::StrCat(config_.servers),
               "--workers",  absl::StrCat(config_.workers),
               "--ready-fd", absl::StrCat(kReadyFd)};
  if (!config_.keys_dir.empty()) spec.args.insert(spec.args.end(), {"--keys", config_.keys_dir});
  if (config_.tolerate_worker_failures) spec.args.push_back("--tolerate-worker-failures");
  if (config_.restart_servers > 0) {
    spec.args.insert(spec.args.end(), {"--server-restart-timeout",
                                       absl::StrCat(config_.server_restart_timeout_s)});
  }
  if (config_.heartbeat_timeout.has_value()) {
    spec.args.insert(spec.args.end(),
                     {"--heartbeat-timeout-ms",
                      absl::StrCat(std::max<int64_t>(
                          1, absl::ToInt64Milliseconds(*config_.heartbeat_timeout)))});
  }
  if (!config_.state_dir.empty()) {
    // A launch is a new job: the state of one this directory held (whose processes were
    // all an earlier launch's, and are gone) must not be resumed. Only a restart resumes.
    std::error_code ignored;
    std::filesystem::remove(std::filesystem::path(config_.state_dir) / "coordinator.state",
                            ignored);
    spec.args.insert(spec.args.end(), {"--state-dir", config_.state_dir});
    // Started again, it resumes the job where the nodes know it, and reports nothing.
    for (std::size_t i = 0; i < spec.args.size(); ++i) {
      if (spec.args[i] == "--ready-fd") {
        ++i;  // and its value
      } else {
        spec.restart_args.push_back(spec.args[i]);
      }
    }
  }
  spec.fds = {{ready->write.get(), kReadyFd}};
  spec.role = ProcessRole::kService;
  spec.tag = kCoordinatorChild;
  absl::StatusOr<pid_t> pid = group_.Start(spec);
  if (!pid.ok()) return pid.status();
  ready->write.Reset();  // so that the coordinator's exit is an end of file
  return ReadEndpoint(*pid, ready->read.get());
}

absl::Status Launcher::ReadEndpoint(pid_t coordinator, int ready_fd) {
  absl::Time deadline = std::min(deadline_, absl::Now() + kEndpointTimeout);
  absl::StatusOr<std::string> endpoint = ReadLine(ready_fd, deadline, signals_);
  if (endpoint.ok()) {
    if (endpoint->empty()) return absl::UnavailableError("the coordinator reported no endpoint");
    endpoint_ = *std::move(endpoint);
    return absl::OkStatus();
  }
  const absl::Status& status = endpoint.status();
  if (absl::IsCancelled(status) || absl::Now() >= deadline_) return status;
  if (absl::IsDeadlineExceeded(status)) {
    return absl::DeadlineExceededError(
        absl::StrCat("the coordinator did not report its endpoint within ",
                     absl::FormatDuration(kEndpointTimeout)));
  }
  // It closed the pipe without a line: most likely it exited (a --listen it cannot bind).
  absl::StatusOr<ChildExit> exit = group_.WaitForExit(coordinator, absl::Now() + config_.grace);
  if (exit.ok()) {
    return absl::UnavailableError(absl::StrCat(exit->Describe(), " before reporting its endpoint"));
  }
  return absl::UnavailableError(
      absl::StrCat("the coordinator did not report its endpoint: ", status.message()));
}

absl::Status Launcher::StartServers() {
  for (int i = 0; i < config_.servers; ++i) {
    std::string name = absl::StrCat("server-", i);
    ProcessSpec spec;
    spec.name = absl::StrCat("server ", i);
    spec.path = server_path_;
    spec.args = {"--coordinator", endpoint_, "--listen", Endpoint(name, "tcp://127.0.0.1:*")};
    if (!config_.keys_dir.empty()) spec.args.insert(spec.args.end(), {"--keys", config_.keys_dir});
    for (const std::string& plugin : config_.updater_plugins) {
      spec.args.insert(spec.args.end(), {"--updater-plugin", plugin});
    }
    if (!config_.checkpoint_dir.empty()) {
      spec.args.insert(spec.args.end(), {"--checkpoint-dir", config_.checkpoint_dir});
    }
    if (config_.checkpoint_every_clocks > 0) {
      spec.args.insert(spec.args.end(), {"--checkpoint-every-clocks",
                                         absl::StrCat(config_.checkpoint_every_clocks)});
    }
    if (config_.checkpoint_deltas > 0) {
      spec.args.insert(spec.args.end(),
                       {"--checkpoint-deltas", absl::StrCat(config_.checkpoint_deltas)});
    }
    if (!config_.restore_from.empty()) {
      spec.args.insert(spec.args.end(), {"--restore-from", config_.restore_from});
    }
    if (!config_.state_dir.empty()) {
      spec.args.insert(spec.args.end(),
                       {"--state-dir", config_.state_dir, "--shard", absl::StrCat(i)});
    }
    spec.role = ProcessRole::kService;
    spec.tag = kServerChild;
    if (absl::StatusOr<pid_t> pid = group_.Start(spec); !pid.ok()) return pid.status();
  }
  return absl::OkStatus();
}

absl::Status Launcher::StartWorkers() {
  for (int i = 0; i < config_.workers; ++i) {
    ProcessSpec spec;
    spec.name = absl::StrCat("worker ", i);
    spec.path = program_path_;
    spec.args.assign(config_.program.begin() + 1, config_.program.end());
    spec.env = {{"KAIROS_COORDINATOR", endpoint_},
                {"KAIROS_RANK", absl::StrCat(i)},
                {"KAIROS_NUM_WORKERS", absl::StrCat(config_.workers)},
                {"KAIROS_NUM_SERVERS", absl::StrCat(config_.servers)},
                {"KAIROS_ROLE", "worker"},
                {"KAIROS_RESTARTS", "0"}};
    if (!config_.keys_dir.empty()) spec.env.push_back({"KAIROS_KEYS", config_.keys_dir});
    spec.role = ProcessRole::kPrimary;
    spec.tag = kWorkerChild;
    if (absl::StatusOr<pid_t> pid = group_.Start(spec); !pid.ok()) return pid.status();
  }
  return absl::OkStatus();
}

int Launcher::StopAfterStartFailure(const absl::Status& status) {
  if (absl::IsCancelled(status)) {
    int signo = signals_->Read().value_or(SIGTERM);
    Report(absl::StrCat("received ", SignalName(signo), " while starting; stopping the job"));
    group_.Shutdown(signo, supervise_options());
    return 128 + signo;
  }
  if (absl::Now() >= deadline_) {
    Report("the job deadline passed while starting; stopping the job");
    group_.Shutdown(SIGTERM, supervise_options());
    return kExitDeadline;
  }
  Report(absl::StrCat(status.message(), "; stopping the job"));
  group_.Shutdown(SIGTERM, supervise_options());
  return kExitFailed;
}

SuperviseOptions Launcher::supervise_options() const {
  SuperviseOptions options;
  options.grace = config_.grace;
  options.deadline = deadline_;
  options.signals = signals_;
  options.report = Report;
  const int restarts = config_.restart_workers;
  const bool tolerate = config_.tolerate_worker_failures;
  if (restarts > 0 || tolerate) {
    options.on_primary_failure = [restarts, tolerate](const ChildExit&, int restarted) {
      if (restarted < restarts) return FailureAction::kRestart;
      return tolerate ? FailureAction::kTolerate : FailureAction::kStopJob;
    };
  }
  if (config_.restart_servers > 0 || config_.restart_coordinator > 0) {
    const int server_restarts = config_.restart_servers;
    const int coordinator_restarts = config_.restart_coordinator;
    options.on_service_failure = [server_restarts, coordinator_restarts](const ChildExit& exit,
                                                                         int restarted) {
      if (exit.tag == kServerChild) {
        return restarted < server_restarts ? FailureAction::kRestart : FailureAction::kStopJob;
      }
      // A coordinator that exits by itself has ended the job (1: with an error); only one
      // that a signal killed has a job to resume.
      const bool killed = WIFSIGNALED(exit.wait_status);
      return exit.tag == kCoordinatorChild && killed && restarted < coordinator_restarts
                 ? FailureAction::kRestart
                 : FailureAction::kStopJob;
    };
  }
  options.restart_count_env = "KAIROS_RESTARTS";
  if (tolerate) {
    // The coordinator ends the job only once it has declared the failed worker dead.
    options.drain_grace = config_.grace + config_.heartbeat_timeout.value_or(absl::Seconds(10));
  }
  return options;
}

// waitpid needs SIGCHLD not to be ignored: a parent that ignores it (inherited across exec)
// would have the kernel reap the children behind ProcessGroup's back.
void RestoreDefaultSigchld() {
  struct sigaction action = {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGCHLD, &action, nullptr);
}

}  // namespace
}  // namespace kairos::launch

int main(int argc, char** argv) {
  using kairos::launch::SignalFd;
  kairos::launch::LaunchConfig config;
  if (std::optional<int> exit_code = kairos::launch::ParseCommandLine(argc, argv, config)) {
    return *exit_code;
  }
  kairos::launch::RestoreDefaultSigchld();
  // Forwarded to the children (see docs/launching.md); blocked before any child starts.
  absl::StatusOr<std::unique_ptr<SignalFd>> signals = SignalFd::Create({SIGINT, SIGTERM, SIGHUP});
  if (!signals.ok()) {
    kairos::launch::Report(std::string(signals.status().message()));
    return kairos::launch::kExitFailed;
  }
  kairos::launch::Launcher launcher(std::move(config), signals->get());
  return launcher.Run();
}
