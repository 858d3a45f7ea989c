// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "bench/memory_workload.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_common.h"
#include "bench/bench_log.h"
#include "bench/sparse_workloads.h"
#include "kairos/buffer.h"
#include "kairos/coordinator.h"
#include "kairos/status.h"
#include "kairos/updater.h"
#include "kairos/worker.h"

extern char** environ;

namespace kairos::bench {
namespace {

constexpr char kTableName[] = "memory";
constexpr absl::Duration kStartTimeout = absl::Seconds(30);
constexpr absl::Duration kExitTimeout = absl::Seconds(30);

// A child process with its stdout on a pipe. The destructor kills (SIGKILL) and reaps it
// if it is still running.
class Child {
 public:
  static absl::StatusOr<std::unique_ptr<Child>> Spawn(const std::vector<std::string>& args) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int err = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (err != 0) {
      ::close(fds[0]);
      return absl::UnavailableError(
          absl::StrCat("cannot start ", args[0], ": ", std::strerror(err)));
    }
    return std::unique_ptr<Child>(new Child(pid, fds[0]));
  }

  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(stdout_fd_);
  }

  pid_t pid() const { return pid_; }

  // Reads stdout until a line containing `text` arrives, or fails at EOF or the deadline.
  absl::Status WaitForLine(const std::string& text, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    std::string seen;
    for (;;) {
      if (seen.find(text) != std::string::npos && seen.find('\n', seen.find(text)) != seen.npos) {
        return absl::OkStatus();
      }
      struct pollfd p = {stdout_fd_, POLLIN, 0};
      const int ms =
          static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now())));
      if (::poll(&p, 1, ms) <= 0) {
        return absl::DeadlineExceededError(absl::StrCat(
            "the server printed no '", text, "' within ", absl::FormatDuration(timeout)));
      }
      char buf[512];
      const ssize_t n = ::read(stdout_fd_, buf, sizeof(buf));
      if (n <= 0) {
        return absl::UnavailableError(absl::StrCat("the server exited before '", text, "'"));
      }
      seen.append(buf, static_cast<std::size_t>(n));
    }
  }

  // Waits for the exit (up to `timeout`, then SIGKILL) and returns the wait status.
  int Reap(absl::Duration timeout) {
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd >= 0) {
      struct pollfd p = {pidfd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout))) <= 0) {
        ::kill(pid_, SIGKILL);
      }
      ::close(pidfd);
    }
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = 0;
    return status;
  }

 private:
  Child(pid_t pid, int stdout_fd) : pid_(pid), stdout_fd_(stdout_fd) {}
  pid_t pid_;
  int stdout_fd_;
};

JobConfig MemoryJob(uint64_t table_bytes, const std::string& policy, const std::string& updater) {
  JobConfig job;
  TableSpec table;
  table.name = kTableName;
  table.size = table_bytes / sizeof(float);
  table.updater.name = updater;
  job.tables.push_back(table);
  job.policy = policy;
  return job;
}

// The worker's rounds (see MeasureServerMemory).
absl::Status RunRounds(Worker& worker, uint64_t floats, int rounds) {
  Buffer gradient = Buffer::Allocate(floats);
  std::fill(gradient.data(), gradient.data() + floats, 1e-6f);
  Buffer params = Buffer::Zeros(floats);
  for (int r = 0; r < rounds; ++r) {
    Request push = worker.PushAsync(kTableName, 0, gradient);
    KAIROS_RETURN_IF_ERROR(worker.AdvanceClock());
    Request pull = worker.PullAsync(kTableName, 0, params.span());
    KAIROS_RETURN_IF_ERROR(push.Wait());
    KAIROS_RETURN_IF_ERROR(pull.Wait());
  }
  return absl::OkStatus();
}

// Starts a coordinator of `job` here, `server_binary` (kairos-server) as a child and one
// worker here; sets *baseline_rss to the server's VmRSS once it listens (before the job
// starts), calls body(worker, server pid) while the job runs, then finishes the job and
// checks that the server exited 0.
absl::Status RunWithChildServer(const std::string& server_binary, const JobConfig& job,
                                uint64_t* baseline_rss,
                                const std::function<absl::Status(Worker&, pid_t)>& body) {
  CoordinatorOptions co;
  co.log_level = BenchLogLevel();
  co.listen = "tcp://127.0.0.1:0";
  co.num_servers = 1;
  co.num_workers = 1;
  co.job = job;
  KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<Coordinator> coordinator, Coordinator::Create(co));
  KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<Child> server,
                          Child::Spawn({server_binary, "--coordinator", coordinator->endpoint(),
                                        "--listen", "tcp://127.0.0.1:*", "--log-level", "warn"}));
  KAIROS_RETURN_IF_ERROR(server->WaitForLine("listening on", kStartTimeout));
  *baseline_rss = StatusBytes(server->pid(), "VmRSS");
  {
    WorkerOptions wo;
    wo.log_level = BenchLogLevel();
    wo.coordinator = coordinator->endpoint();
    wo.job = job;
    wo.join_timeout = kStartTimeout;
    KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<Worker> worker, Worker::Create(wo));
    KAIROS_RETURN_IF_ERROR(body(*worker, server->pid()));
    KAIROS_RETURN_IF_ERROR(worker->Shutdown());
  }
  KAIROS_RETURN_IF_ERROR(coordinator->Wait(kExitTimeout));
  const int status = server->Reap(kExitTimeout);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat(server_binary, " ended with wait status ", status));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MemoryFigures> MeasureServerMemory(const std::string& server_binary,
                                                  uint64_t table_bytes, const std::string& policy,
                                                  int rounds, const std::string& updater) {
  const JobConfig job = MemoryJob(table_bytes, policy, updater);
  KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<Updater> built,
                          MakeBuiltinUpdater(job.tables[0].updater));
  MemoryFigures f;
  f.table_bytes = table_bytes;
  f.state_per_element = built->state_per_element();
  // The optimizer's state is one more table per float of state per element.
  f.bound_bytes = static_cast<uint64_t>((1.3 + static_cast<double>(f.state_per_element)) *
                                        static_cast<double>(table_bytes)) +
                  (uint64_t{64} << 20);
  KAIROS_RETURN_IF_ERROR(RunWithChildServer(
      server_binary, job, &f.baseline_rss_bytes, [&](Worker& worker, pid_t pid) {
    KAIROS_RETURN_IF_ERROR(RunRounds(worker, job.tables[0].size, rounds));
    f.peak_rss_bytes = StatusBytes(pid, "VmHWM");
    f.final_rss_bytes = StatusBytes(pid, "VmRSS");
    return absl::OkStatus();
  }));
  return f;
}

absl::StatusOr<SparseMemoryFigures> MeasureSparseServerMemory(const std::string& server_binary,
                                                              uint64_t rows, uint32_t width,
                                                              const std::string& updater) {
  JobConfig job;
  UpdaterSpec spec;
  spec.name = updater;
  job.tables.push_back(TableSpec::Sparse(kTableName, width, Initializer{}, spec));
  job.policy = "asp";
  KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<Updater> built, MakeBuiltinUpdater(spec));
  SparseMemoryFigures f;
  f.rows = rows;
  f.width = width;
  f.raw_bytes = rows * width * sizeof(float);
  f.state_per_element = built->state_per_element();
  // The rows' raw bytes are their values; an optimizer's state is that much again per float
  // of state per element, and counts in the bound the same way.
  f.bound_bytes = 2 * f.raw_bytes * (1 + f.state_per_element) + (uint64_t{64} << 20);
  KAIROS_RETURN_IF_ERROR(RunWithChildServer(
      server_binary, job, &f.baseline_rss_bytes, [&](Worker& worker, pid_t pid) {
    constexpr uint64_t kBatch = 16384;
    std::vector<uint64_t> keys;
    std::vector<float> rows_buffer(kBatch * width, 1e-3f);
    for (int pass = 0; pass < 2; ++pass) {  // push every row, then pull every row
      for (uint64_t first = 0; first < rows; first += kBatch) {
        keys.clear();
        for (uint64_t i = first; i < std::min(rows, first + kBatch); ++i) {
          keys.push_back(SparseKey(i));
        }
        const std::span<float> span(rows_buffer.data(), keys.size() * width);
        KAIROS_RETURN_IF_ERROR(pass == 0 ? worker.PushSparse(kTableName, keys,
                                                             std::span<const float>(span))
                                         : worker.PullSparse(kTableName, keys, span));
      }
      if (pass == 0) f.pushed_rss_bytes = StatusBytes(pid, "VmHWM");
    }
    f.peak_rss_bytes = StatusBytes(pid, "VmHWM");
    f.final_rss_bytes = StatusBytes(pid, "VmRSS");
    return absl::OkStatus();
  }));
  return f;
}

}  // namespace kairos::bench
