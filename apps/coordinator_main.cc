// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos-coordinator: the coordinator of one job (kairos::Coordinator) as a program.
//
//   kairos-coordinator --servers S --workers W [--listen ENDPOINT] [--join-timeout SECONDS]
//                      [--heartbeat-timeout-ms MS] [--ready-fd FD] [--keys DIR]
//                      [--log-level LEVEL] [--metrics-listen HOST:PORT]
//                      [--tolerate-worker-failures] [--server-restart-timeout SECONDS]
//                      [--state-dir DIR [--restart-timeout SECONDS]]
//
// Once bound it prints "kairos-coordinator listening on <endpoint>" on stdout (and, with
// --metrics-listen, "kairos-coordinator metrics on http://<HOST:PORT>/metrics") and, with
// --ready-fd, writes "<endpoint>\n" to that descriptor and closes it (kairos-launch reads
// it there). It runs until the job ends. Exit codes (node_main.h): 0 the job ended well,
// 1 it failed (a dead server that did not restart within --server-restart-timeout, a worker
// declared dead and not rejoined unless
// --tolerate-worker-failures, a job that never started), 2 usage error or cannot listen,
// 128 + N stopped by signal N (SIGINT, SIGTERM). With --state-dir the job's state is kept in
// DIR, and the same command started again after a crash (kill -9) resumes the job
// (docs/durability.md, "Coordinator restarts").

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "apps/cli_checks.h"
#include "apps/fd_util.h"
#include "apps/node_main.h"
#include "kairos/coordinator.h"
#include "kairos/options.h"

namespace kairos::apps {
namespace {

struct Flags {
  CoordinatorOptions options;
  double join_timeout_s = 120;
  int64_t heartbeat_timeout_ms = 10000;
  std::optional<int> ready_fd;
  std::string keys_dir;
};

void AddOptions(CLI::App& app, Flags& flags) {
  app.add_option("--listen", flags.options.listen,
                 "Endpoint to listen on; port 0 picks a free port, FIRST-LAST the first free port "
                 "of a range (tcp://HOST:PORT, ipc://PATH)")
      ->capture_default_str();
  app.add_option("--servers", flags.options.num_servers, "Number of servers of the job")
      ->required()
      ->check(ProcessCount());
  app.add_option("--workers", flags.options.num_workers, "Number of workers of the job")
      ->required()
      ->check(ProcessCount());
  app.add_option("--join-timeout", flags.join_timeout_s,
                 "Seconds every node has to join once the coordinator is up")
      ->check(Seconds(/*allow_zero=*/false))
      ->capture_default_str();
  app.add_option("--heartbeat-timeout-ms", flags.heartbeat_timeout_ms,
                 "A node silent for this many milliseconds is declared dead")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  app.add_flag("--tolerate-worker-failures", flags.options.tolerate_worker_failures,
               "The job succeeds when workers were declared dead and never rejoined, if at "
               "least one worker finished (default: such a job fails, exit code 1)");
  app.add_option_function<double>(
         "--server-restart-timeout",
         [&flags](double s) { flags.options.server_restart_timeout = absl::Seconds(s); },
         "How long the job waits for a server declared dead to restart (kairos-server "
         "--state-dir --shard; docs/durability.md); 0 (default): 60 s for a server that "
         "keeps an update log, and a dead server that keeps none ends the job")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--state-dir", flags.options.state_dir,
                 "Keep the job's state in this directory: started again with it, the coordinator "
                 "resumes the running job (docs/durability.md)");
  app.add_option_function<double>(
         "--restart-timeout",
         [&flags](double s) { flags.options.restart_timeout = absl::Seconds(s); },
         "With --state-dir: how long the nodes wait for a silent coordinator to come back "
         "(default 60)")
      ->check(Seconds(/*allow_zero=*/false));
  app.add_option("--ready-fd", flags.ready_fd,
                 "Once bound, write the endpoint and a newline to this open file descriptor "
                 "and close it")
      ->check(CLI::Range(0, 1 << 20));
  AddMetricsListenOption(app, flags.options.metrics_listen);
  AddKeysOption(app, flags.keys_dir);
  AddSendDelayOption(app, flags.options.send_delay);
  AddLogLevelOption(app, flags.options.log_level);
}

// Writes the endpoint line to --ready-fd and closes it.
absl::Status ReportReady(int fd, const std::string& endpoint) {
  absl::Status status = launch::WriteAll(fd, absl::StrCat(endpoint, "\n"));
  ::close(fd);
  return status;
}

int Main(int argc, char** argv) {
  CLI::App app(
      "Runs the coordinator of one kairos job: rendezvous, configuration check, "
      "barriers, heartbeats and shutdown.",
      "kairos-coordinator");
  Flags flags;
  AddOptions(app, flags);
  if (std::optional<int> exit_code = ParseCommandLine(app, argc, argv)) return *exit_code;
  flags.options.join_timeout = absl::Seconds(flags.join_timeout_s);
  flags.options.heartbeat_timeout = absl::Milliseconds(flags.heartbeat_timeout_ms);
  absl::StatusOr<std::optional<CurveKeys>> keys = LoadKeysOption(flags.keys_dir);
  if (!keys.ok()) {
    std::cerr << "kairos-coordinator: " << keys.status().message() << std::endl;
    return kExitCannotStart;
  }
  flags.options.keys = *std::move(keys);
  if (flags.ready_fd.has_value() && ::fcntl(*flags.ready_fd, F_GETFD) < 0) {
    std::cerr << "kairos-coordinator: --ready-fd " << *flags.ready_fd
              << " is not an open file descriptor" << std::endl;
    return kExitCannotStart;
  }
  // A launcher that gave up on --ready-fd must not kill us with SIGPIPE: the write fails.
  std::signal(SIGPIPE, SIG_IGN);
  absl::StatusOr<std::unique_ptr<NodeRunner>> runner = NodeRunner::Create("kairos-coordinator");
  if (!runner.ok()) {
    std::cerr << "kairos-coordinator: " << runner.status() << std::endl;
    return kExitCannotStart;
  }
  absl::StatusOr<std::unique_ptr<Coordinator>> coordinator = Coordinator::Create(flags.options);
  if (!coordinator.ok()) {
    std::cerr << "kairos-coordinator: " << coordinator.status() << std::endl;
    return kExitCannotStart;
  }
  std::string endpoint = (*coordinator)->endpoint();
  std::cout << "kairos-coordinator listening on " << endpoint << std::endl;
  if (!(*coordinator)->metrics_endpoint().empty()) {
    std::cout << "kairos-coordinator metrics on http://" << (*coordinator)->metrics_endpoint()
              << "/metrics" << std::endl;
  }
  if (flags.ready_fd.has_value()) {
    if (absl::Status s = ReportReady(*flags.ready_fd, endpoint); !s.ok()) {
      std::cerr << "kairos-coordinator: --ready-fd: " << s << std::endl;
      (*coordinator)->Shutdown();
      return kExitCannotStart;
    }
  }
  Coordinator& c = **coordinator;
  return (*runner)->Run([&c] { return c.Wait(absl::InfiniteDuration()); }, [&c] { c.Shutdown(); });
}

}  // namespace
}  // namespace kairos::apps

int main(int argc, char** argv) { return kairos::apps::Main(argc, argv); }
