// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "apps/node_main.h"

#include <csignal>
#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"

namespace kairos::apps {

void AddLogLevelOption(CLI::App& app, LogLevel& level) {
  app.add_option_function<std::string>(
         "--log-level", [&level](const std::string& name) { level = *ParseLogLevel(name); },
         "Log level on stderr: debug, info, warning, error or off (default: "
         "$KAIROS_LOG_LEVEL, else warning)")
      ->envname("KAIROS_LOG_LEVEL")
      ->check([](const std::string& name) {
        const absl::StatusOr<LogLevel> level = ParseLogLevel(name);
        return level.ok() ? std::string() : std::string(level.status().message());
      });
}

void AddMetricsListenOption(CLI::App& app, std::string& address) {
  app.add_option("--metrics-listen", address,
                 "Serve the node's metrics at http://HOST:PORT/metrics in the Prometheus text "
                 "format (docs/operations.md); port 0 picks a free port. Default: none");
}

void AddKeysOption(CLI::App& app, std::string& dir) {
  app.add_option("--keys", dir,
                 "Directory of the job's CURVE keys (made by kairos-keygen): every connection "
                 "is then encrypted and only nodes with the same keys are accepted")
      ->envname("KAIROS_KEYS");
}

void AddSendDelayOption(CLI::App& app, absl::Duration& delay) {
  app.add_option_function<int64_t>(
         "--send-delay-us", [&delay](int64_t us) { delay = absl::Microseconds(us); },
         "Latency in microseconds added to every message this node sends, for testbeds "
         "(docs/lab.md); default: $KAIROS_SEND_DELAY_US, else 0")
      ->envname("KAIROS_SEND_DELAY_US")
      ->check(CLI::Range(int64_t{0}, int64_t{60'000'000}));
}

absl::StatusOr<std::optional<CurveKeys>> LoadKeysOption(const std::string& dir) {
  if (dir.empty()) return std::optional<CurveKeys>();
  absl::StatusOr<CurveKeys> keys = LoadCurveKeys(dir);
  if (!keys.ok()) {
    return absl::Status(keys.status().code(), absl::StrCat("--keys: ", keys.status().message()));
  }
  return std::optional<CurveKeys>(*std::move(keys));
}

std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitCannotStart;
  }
  return std::nullopt;
}

absl::StatusOr<std::unique_ptr<NodeRunner>> NodeRunner::Create(std::string program,
                                                               bool watch_user1) {
  std::unique_ptr<NodeRunner> runner(new NodeRunner(std::move(program)));
  std::vector<int> signals = {SIGINT, SIGTERM};
  if (watch_user1) signals.push_back(SIGUSR1);
  absl::StatusOr<std::unique_ptr<launch::SignalWatcher>> watcher = launch::SignalWatcher::Start(
      signals, [r = runner.get()](int signo) { r->OnSignal(signo); });
  if (!watcher.ok()) return watcher.status();
  runner->watcher_ = *std::move(watcher);
  return runner;
}

void NodeRunner::OnUser1(std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  user1_ = std::move(fn);
}

void NodeRunner::OnSignal(int signo) {
  absl::MutexLock lock(&mu_);
  if (signo == SIGUSR1) {
    if (user1_) user1_();
    return;
  }
  if (signal_ != 0) return;
  signal_ = signo;
  if (stop_) stop_();
}

int NodeRunner::Run(const std::function<absl::Status()>& wait, std::function<void()> stop) {
  {
    absl::MutexLock lock(&mu_);
    stop_ = std::move(stop);
    if (signal_ != 0) stop_();
  }
  absl::Status status = wait();
  int signo;
  {
    absl::MutexLock lock(&mu_);
    stop_ = nullptr;  // the node may be destroyed after Run
    signo = signal_;
  }
  if (signo != 0) {
    std::cerr << program_ << ": stopped by " << launch::SignalName(signo) << std::endl;
    return 128 + signo;
  }
  if (!status.ok()) {
    std::cerr << program_ << ": " << status << std::endl;
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace kairos::apps
