// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// What kairos-coordinator and kairos-server share: the exit codes, --log-level, command
// line parsing, and NodeRunner, which waits for the node's job to end and stops the node on
// SIGINT or SIGTERM.

#ifndef KAIROS_APPS_NODE_MAIN_H_
#define KAIROS_APPS_NODE_MAIN_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "apps/signals.h"
#include "kairos/keys.h"
#include "kairos/log.h"

namespace kairos::apps {

// Exit codes of kairos-coordinator and kairos-server. A signal ends the program with
// 128 + its number.
inline constexpr int kExitOk = 0;           // the job ended well
inline constexpr int kExitFailed = 1;       // the job failed (Wait's error)
inline constexpr int kExitCannotStart = 2;  // usage error, or the node could not be created

// Adds --log-level (debug, info, warning, error, off; default: $KAIROS_LOG_LEVEL, else the
// options' own), writing to `level` (NodeOptions::log_level).
void AddLogLevelOption(CLI::App& app, LogLevel& level);

// Adds --metrics-listen HOST:PORT (default: none), where to serve GET /metrics
// (docs/operations.md), writing to `address`.
void AddMetricsListenOption(CLI::App& app, std::string& address);

// Adds --keys DIR (default: $KAIROS_KEYS), the job's CURVE key directory, writing to `dir`.
void AddKeysOption(CLI::App& app, std::string& dir);

// Adds --send-delay-us US (default: $KAIROS_SEND_DELAY_US, else 0), 0 to 60000000: the
// latency added to every message the node sends (NodeOptions::send_delay, docs/lab.md).
void AddSendDelayOption(CLI::App& app, absl::Duration& delay);

// The keys of --keys (nullopt when `dir` is empty), or why they cannot be used.
absl::StatusOr<std::optional<CurveKeys>> LoadKeysOption(const std::string& dir);

// Parses the command line. Returns the exit code when the program should exit now (--help:
// 0, a usage error: kExitCannotStart, after CLI11 printed the message), nullopt to go on.
std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv);

// Runs one node until its job ends, stopping it on SIGINT or SIGTERM.
//
//   auto runner = NodeRunner::Create("kairos-server");   // before any thread is created
//   auto server = kairos::Server::Create(options);
//   return (*runner)->Run([&] { return (*server)->Wait(absl::InfiniteDuration()); },
//                         [&] { (*server)->Shutdown(); });
//
// Thread-safety: create, Run and destroy on the main thread; the stop function is called
// once, on the signal watcher's thread (or in Run when the signal came before Run).
class NodeRunner {
 public:
  // Blocks SIGINT and SIGTERM (see signals.h: before any thread exists) and watches them.
  // `program` prefixes the messages on stderr.
  // `watch_user1`: SIGUSR1 too, which calls the OnUser1 callback (ignored until one is set).
  static absl::StatusOr<std::unique_ptr<NodeRunner>> Create(std::string program,
                                                             bool watch_user1 = false);
  // What SIGUSR1 does (on the watcher's thread: keep it short and non-blocking).
  void OnUser1(std::function<void()> fn);

  // Calls `wait` until it returns, and `stop` once at the first SIGINT or SIGTERM. Returns
  // the exit code: 128 + the signal after a signal, else kExitOk when `wait` returned OK and
  // kExitFailed (the error on stderr) otherwise.
  int Run(const std::function<absl::Status()>& wait, std::function<void()> stop);

 private:
  explicit NodeRunner(std::string program) : program_(std::move(program)) {}
  void OnSignal(int signo);

  const std::string program_;
  absl::Mutex mu_;
  int signal_ ABSL_GUARDED_BY(mu_) = 0;              // the first signal received, 0 before
  std::function<void()> stop_ ABSL_GUARDED_BY(mu_);  // set during Run
  std::function<void()> user1_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<launch::SignalWatcher> watcher_;   // declared last: stopped first
};

}  // namespace kairos::apps

#endif  // KAIROS_APPS_NODE_MAIN_H_
