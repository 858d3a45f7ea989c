// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "apps/process_group.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "apps/signals.h"

extern char** environ;

namespace kairos::launch {
namespace {

// The waitpid status recorded for a child that somebody else reaped (see the file
// comment's requirements): "exited with status 255".
constexpr int kLostChildStatus = 255 << 8;

// Everything execve needs, built before fork: the child may only make async-signal-safe
// calls, so it must not allocate.
struct ExecPlan {
  std::vector<std::string> strings;  // owns what argv and envp point to
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::vector<FdMapping> fds;
  std::vector<int> moved_fds;  // scratch for the child: fds[i].parent_fd moved out of the way
};

// What the child reports through the error pipe when it cannot exec.
struct ChildError {
  enum Step : int { kSetpgid, kDeathSignal, kParentGone, kMoveFds, kStdin, kDup2, kExecve };
  Step step;
  int err;
};

const char* StepName(ChildError::Step step) {
  switch (step) {
    case ChildError::kSetpgid:
      return "setpgid";
    case ChildError::kDeathSignal:
      return "prctl(PR_SET_PDEATHSIG)";
    case ChildError::kParentGone:
      return "parent exited";
    case ChildError::kMoveFds:
      return "fcntl(F_DUPFD_CLOEXEC)";
    case ChildError::kStdin:
      return "redirecting stdin";
    case ChildError::kDup2:
      return "dup2";
    case ChildError::kExecve:
      return "execve";
  }
  return "?";
}

using EnvList = std::vector<std::pair<std::string, std::string>>;

// Whether `env[from..]` sets the variable of `entry` ("NAME=value" or "NAME").
bool SetsName(const EnvList& env, size_t from, std::string_view entry) {
  std::string_view name = entry.substr(0, entry.find('='));
  return std::any_of(env.begin() + static_cast<std::ptrdiff_t>(from), env.end(),
                     [&](const auto& kv) { return kv.first == name; });
}

ExecPlan MakePlan(const ProcessSpec& spec) {
  ExecPlan plan;
  plan.strings.push_back(spec.path);
  for (const std::string& arg : spec.args) plan.strings.push_back(arg);
  size_t num_args = plan.strings.size();
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!SetsName(spec.env, 0, *entry)) plan.strings.emplace_back(*entry);
  }
  for (size_t i = 0; i < spec.env.size(); ++i) {
    const auto& [name, value] = spec.env[i];
    if (!SetsName(spec.env, i + 1, name)) plan.strings.push_back(name + "=" + value);  // last wins
  }
  for (size_t i = 0; i < plan.strings.size(); ++i) {
    (i < num_args ? plan.argv : plan.envp).push_back(plan.strings[i].data());
  }
  plan.argv.push_back(nullptr);
  plan.envp.push_back(nullptr);
  plan.fds = spec.fds;
  plan.moved_fds.resize(spec.fds.size());
  return plan;
}

absl::Status CheckFdMappings(const ProcessSpec& spec) {
  std::set<int> seen;
  for (const FdMapping& m : spec.fds) {
    if (m.child_fd < 0 || m.child_fd >= kMaxChildFd || !seen.insert(m.child_fd).second ||
        ::fcntl(m.parent_fd, F_GETFD) < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "cannot start %s: bad descriptor mapping %d -> %d (the child's must be distinct "
          "and in [0, %d), the parent's open)",
          spec.name, m.parent_fd, m.child_fd, kMaxChildFd));
    }
  }
  return absl::OkStatus();
}

[[noreturn]] void FailChild(int error_fd, ChildError::Step step) {
  ChildError error{step, errno};
  // Best effort: the parent reads a short report as an unknown failure.
  [[maybe_unused]] ssize_t n = ::write(error_fd, &error, sizeof(error));
  ::_exit(127);
}

// Runs in the forked child: only async-signal-safe calls from here on.
[[noreturn]] void ExecChild(ExecPlan& plan, int error_fd, int null_fd, pid_t parent) {
  if (::setpgid(0, 0) != 0) FailChild(error_fd, ChildError::kSetpgid);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) FailChild(error_fd, ChildError::kDeathSignal);
  if (::getppid() != parent) FailChild(error_fd, ChildError::kParentGone);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Move every source above the targets first, so that no dup2 below overwrites a
  // descriptor that is still to be used.
  int moved_error_fd = ::fcntl(error_fd, F_DUPFD_CLOEXEC, kMaxChildFd);
  if (moved_error_fd < 0) FailChild(error_fd, ChildError::kMoveFds);
  error_fd = moved_error_fd;
  null_fd = ::fcntl(null_fd, F_DUPFD_CLOEXEC, kMaxChildFd);
  if (null_fd < 0) FailChild(error_fd, ChildError::kMoveFds);
  for (size_t i = 0; i < plan.fds.size(); ++i) {
    plan.moved_fds[i] = ::fcntl(plan.fds[i].parent_fd, F_DUPFD_CLOEXEC, kMaxChildFd);
    if (plan.moved_fds[i] < 0) FailChild(error_fd, ChildError::kMoveFds);
  }
  if (::dup2(null_fd, STDIN_FILENO) < 0) FailChild(error_fd, ChildError::kStdin);
  for (size_t i = 0; i < plan.fds.size(); ++i) {
    // dup2 clears close-on-exec on the new descriptor.
    if (::dup2(plan.moved_fds[i], plan.fds[i].child_fd) < 0) {
      FailChild(error_fd, ChildError::kDup2);
    }
  }
  ::execve(plan.argv[0], plan.argv.data(), plan.envp.data());
  FailChild(error_fd, ChildError::kExecve);
}

absl::Status ExecFailure(const ProcessSpec& spec, const ChildError& error) {
  std::string message = absl::StrFormat("cannot start %s (%s): %s: %s", spec.name, spec.path,
                                        StepName(error.step), std::strerror(error.err));
  if (error.step != ChildError::kExecve) return absl::InternalError(message);
  switch (error.err) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    default:
      return absl::FailedPreconditionError(message);
  }
}

// Reads the child's exec report: OK when the pipe closed without one (execve succeeded).
absl::Status ReadExecReport(const ProcessSpec& spec, int error_fd) {
  ChildError error{};
  ssize_t n;
  do {
    n = ::read(error_fd, &error, sizeof(error));
  } while (n < 0 && errno == EINTR);
  if (n == 0) return absl::OkStatus();
  if (n != static_cast<ssize_t>(sizeof(error))) {
    return absl::InternalError(absl::StrFormat("cannot start %s (%s): the child failed before exec",
                                               spec.name, spec.path));
  }
  return ExecFailure(spec, error);
}

int PidfdOpen(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

}  // namespace

bool ChildExit::ok() const { return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0; }

std::string ChildExit::Describe() const {
  if (WIFSIGNALED(wait_status)) {
    int signo = WTERMSIG(wait_status);
    return absl::StrFormat("%s (pid %d) was killed by signal %d (%s)", name, pid, signo,
                           SignalName(signo));
  }
  return absl::StrFormat("%s (pid %d) exited with status %d", name, pid, WEXITSTATUS(wait_status));
}

int JobResult::ExitCode() const {
  switch (outcome) {
    case JobOutcome::kSucceeded:
      return 0;
    case JobOutcome::kDeadlineExceeded:
      return 124;
    case JobOutcome::kInterrupted:
      return 128 + signal;
    case JobOutcome::kChildFailed:
    case JobOutcome::kServicesDidNotExit:
    case JobOutcome::kStopped:
      return 1;
  }
  return 1;
}

struct ProcessGroup::RunState {
  explicit RunState(const SuperviseOptions& options) : options(options) {}

  void Report(const std::string& message) const {
    if (options.report) options.report(message);
  }

  const SuperviseOptions& options;
  Phase phase = Phase::kRunning;
  // The end of the current grace period (kDraining, kStopping).
  absl::Time phase_deadline = absl::InfiniteFuture();
  bool outcome_set = false;
  JobResult result;
  // Indices in children_ of failed children to start again once the current events are
  // handled (starting one adds to children_, which the event loop is walking).
  std::vector<size_t> to_restart;
};

ProcessGroup::~ProcessGroup() {
  for (Child& child : children_) {
    if (!child.running) continue;
    SignalChild(child, SIGKILL);
    Reap(child, /*block=*/true);
  }
}

absl::StatusOr<pid_t> ProcessGroup::Start(const ProcessSpec& spec) {
  if (absl::Status s = CheckFdMappings(spec); !s.ok()) return s;
  ExecPlan plan = MakePlan(spec);
  absl::StatusOr<Pipe> error_pipe = MakePipe();
  if (!error_pipe.ok()) return error_pipe.status();
  UniqueFd null_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!null_fd.valid()) {
    return absl::InternalError(absl::StrCat("open /dev/null: ", std::strerror(errno)));
  }
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) ExecChild(plan, error_pipe->write.get(), null_fd.get(), parent);
  if (pid < 0) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("cannot start %s: fork: %s", spec.name, std::strerror(errno)));
  }
  // The child does this too; doing it here as well closes the window in which a signal to
  // the group would miss it. EACCES after the child's exec is harmless.
  ::setpgid(pid, pid);
  error_pipe->write.Reset();
  if (absl::Status s = ReadExecReport(spec, error_pipe->read.get()); !s.ok()) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return s;
  }
  UniqueFd pidfd(PidfdOpen(pid));
  if (!pidfd.valid()) {
    int err = errno;
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return absl::UnimplementedError(absl::StrFormat(
        "cannot watch %s: pidfd_open: %s (Linux >= 5.3 needed)", spec.name, std::strerror(err)));
  }
  Child child;
  child.exit.name = spec.name;
  child.exit.pid = pid;
  child.exit.role = spec.role;
  child.exit.tag = spec.tag;
  child.pidfd = std::move(pidfd);
  child.spec = spec;
  children_.push_back(std::move(child));
  return pid;
}

int ProcessGroup::running() const {
  return static_cast<int>(
      std::count_if(children_.begin(), children_.end(), [](const Child& c) { return c.running; }));
}

JobResult ProcessGroup::Supervise(const SuperviseOptions& options) {
  RunState state(options);
  StartDrainingIfPrimariesDone(state);
  return Run(state);
}

JobResult ProcessGroup::Shutdown(int signo, const SuperviseOptions& options) {
  RunState state(options);
  BeginStopping(state, signo, JobOutcome::kStopped, "the job was shut down");
  return Run(state);
}

absl::StatusOr<ChildExit> ProcessGroup::WaitForExit(pid_t pid, absl::Time deadline) {
  auto it = std::find_if(children_.begin(), children_.end(),
                         [pid](const Child& c) { return c.exit.pid == pid && c.running; });
  if (it == children_.end()) {
    return absl::NotFoundError(absl::StrCat("pid ", pid, " is no running child of the group"));
  }
  while (!Reap(*it, /*block=*/false)) {
    pollfd fd = {it->pidfd.get(), POLLIN, 0};
    int n = ::poll(&fd, 1, PollTimeoutMs(deadline));
    if (n == 0 && absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrFormat("%s (pid %d) is still running", it->exit.name, pid));
    }
  }
  return it->exit;
}

JobResult ProcessGroup::Run(RunState& state) {
  while (running() > 0 || !state.to_restart.empty()) {
    WaitForEvents(state);
    StartRestarts(state);
  }
  if (!state.outcome_set) state.result.outcome = JobOutcome::kSucceeded;
  for (const Child& child : children_) state.result.exits.push_back(child.exit);
  return std::move(state.result);
}

void ProcessGroup::WaitForEvents(RunState& state) {
  absl::Time wake = absl::InfiniteFuture();
  switch (state.phase) {
    case Phase::kRunning:
      wake = state.options.deadline;
      break;
    case Phase::kDraining:
      wake = std::min(state.phase_deadline, state.options.deadline);
      break;
    case Phase::kStopping:
      wake = state.phase_deadline;
      break;
    case Phase::kKilling:
      break;  // SIGKILL cannot be refused: wait for it to land
  }
  std::vector<pollfd> fds;
  std::vector<Child*> owners;
  for (Child& child : children_) {
    if (!child.running) continue;
    fds.push_back({child.pidfd.get(), POLLIN, 0});
    owners.push_back(&child);
  }
  if (state.options.signals != nullptr) fds.push_back({state.options.signals->fd(), POLLIN, 0});
  if (::poll(fds.data(), fds.size(), PollTimeoutMs(wake)) < 0) return;  // EINTR: go round
  for (size_t i = 0; i < owners.size(); ++i) {
    if (fds[i].revents != 0 && Reap(*owners[i], /*block=*/false)) OnChildExit(state, *owners[i]);
  }
  if (state.options.signals != nullptr && fds.back().revents != 0) {
    while (std::optional<int> signo = state.options.signals->Read()) OnSignal(state, *signo);
  }
  if (wake != absl::InfiniteFuture() && absl::Now() >= wake) OnTimeout(state);
}

void ProcessGroup::OnChildExit(RunState& state, Child& child) {
  if (state.phase != Phase::kRunning && state.phase != Phase::kDraining) return;
  if (!child.exit.ok() && child.exit.role == ProcessRole::kService &&
      state.phase == Phase::kRunning && state.options.on_service_failure &&
      state.options.on_service_failure(child.exit, child.restarts) == FailureAction::kRestart) {
    state.Report(absl::StrCat(child.exit.Describe(), "; starting it again (restart ",
                              child.restarts + 1, ")"));
    state.to_restart.push_back(static_cast<size_t>(&child - children_.data()));
    return;
  }
  if (!child.exit.ok() && child.exit.role == ProcessRole::kPrimary &&
      state.phase == Phase::kRunning && state.options.on_primary_failure) {
    switch (state.options.on_primary_failure(child.exit, child.restarts)) {
      case FailureAction::kRestart:
        state.Report(absl::StrCat(child.exit.Describe(), "; starting it again (restart ",
                                  child.restarts + 1, ")"));
        state.to_restart.push_back(static_cast<size_t>(&child - children_.data()));
        return;
      case FailureAction::kTolerate:
        state.Report(absl::StrCat(child.exit.Describe(), "; the job goes on without it"));
        ++state.result.tolerated;
        StartDrainingIfPrimariesDone(state);
        return;
      case FailureAction::kStopJob:
        break;
    }
  }
  if (!child.exit.ok()) {
    std::string what = child.exit.Describe();
    state.Report(absl::StrCat(what, "; stopping the job"));
    state.result.failed_child = static_cast<size_t>(&child - children_.data());
    BeginStopping(state, SIGTERM, JobOutcome::kChildFailed, std::move(what));
    return;
  }
  StartDrainingIfPrimariesDone(state);
}

void ProcessGroup::OnSignal(RunState& state, int signo) {
  switch (state.phase) {
    case Phase::kRunning:
    case Phase::kDraining:
      state.Report(absl::StrFormat("received %s; forwarding it to %d processes", SignalName(signo),
                                   running()));
      if (!state.outcome_set) state.result.signal = signo;
      BeginStopping(state, signo, JobOutcome::kInterrupted,
                    absl::StrCat("received ", SignalName(signo)));
      break;
    case Phase::kStopping:
      state.Report(absl::StrFormat("received %s while stopping; killing %d processes",
                                   SignalName(signo), running()));
      KillAll(state);
      break;
    case Phase::kKilling:
      break;
  }
}

void ProcessGroup::OnTimeout(RunState& state) {
  absl::Time now = absl::Now();
  bool job_phase = state.phase == Phase::kRunning || state.phase == Phase::kDraining;
  if (job_phase && now >= state.options.deadline) {
    state.Report("the job deadline passed; stopping the job");
    BeginStopping(state, SIGTERM, JobOutcome::kDeadlineExceeded, "the job deadline passed");
  } else if (state.phase == Phase::kDraining && now >= state.phase_deadline) {
    std::string reason;
    for (const Child& child : children_) {
      if (!child.running) continue;
      std::string what = absl::StrFormat(
          "%s (pid %d) did not exit within %s after the workers "
          "finished",
          child.exit.name, child.exit.pid,
          absl::FormatDuration(state.options.drain_grace.value_or(state.options.grace)));
      state.Report(absl::StrCat(what, "; stopping it"));
      if (reason.empty()) reason = std::move(what);
    }
    BeginStopping(state, SIGTERM, JobOutcome::kServicesDidNotExit, std::move(reason));
  } else if (state.phase == Phase::kStopping && now >= state.phase_deadline) {
    for (const Child& child : children_) {
      if (!child.running) continue;
      state.Report(absl::StrFormat(
          "%s (pid %d) is still running %s after being told to stop; "
          "killing it",
          child.exit.name, child.exit.pid, absl::FormatDuration(state.options.grace)));
    }
    KillAll(state);
  }
}

void ProcessGroup::BeginStopping(RunState& state, int signo, JobOutcome outcome,
                                 std::string reason) {
  if (!state.outcome_set) {
    state.outcome_set = true;
    state.result.outcome = outcome;
    state.result.reason = std::move(reason);
  }
  SignalAll(signo);
  state.phase = Phase::kStopping;
  state.phase_deadline = absl::Now() + state.options.grace;
}

void ProcessGroup::StartDrainingIfPrimariesDone(RunState& state) {
  if (state.phase != Phase::kRunning) return;
  bool primaries_done = std::none_of(children_.begin(), children_.end(), [](const Child& c) {
    return c.running && c.exit.role == ProcessRole::kPrimary;
  });
  if (!primaries_done) return;
  state.phase = Phase::kDraining;
  state.phase_deadline = absl::Now() + state.options.drain_grace.value_or(state.options.grace);
}

void ProcessGroup::StartRestarts(RunState& state) {
  std::vector<size_t> indices;
  indices.swap(state.to_restart);
  for (size_t i : indices) {
    if (state.phase != Phase::kRunning) return;  // stopping meanwhile: nothing restarts
    ProcessSpec spec = children_[i].spec;
    if (!spec.restart_args.empty()) {
      spec.args = spec.restart_args;
      spec.fds.clear();
    }
    const int restarts = children_[i].restarts + 1;
    if (!state.options.restart_count_env.empty()) {
      spec.env.push_back({state.options.restart_count_env, absl::StrCat(restarts)});
    }
    absl::StatusOr<pid_t> pid = Start(spec);
    if (!pid.ok()) {
      std::string what =
          absl::StrCat(spec.name, " could not be started again: ", pid.status().message());
      state.Report(absl::StrCat(what, "; stopping the job"));
      state.result.failed_child = i;
      BeginStopping(state, SIGTERM, JobOutcome::kChildFailed, std::move(what));
      return;
    }
    children_.back().restarts = restarts;
    ++state.result.restarts;
  }
}

void ProcessGroup::KillAll(RunState& state) {
  for (Child& child : children_) {
    if (!child.running) continue;
    child.exit.killed_by_group = true;
    SignalChild(child, SIGKILL);
  }
  state.phase = Phase::kKilling;
}

bool ProcessGroup::Reap(Child& child, bool block) {
  int status = 0;
  pid_t pid;
  do {
    pid = ::waitpid(child.exit.pid, &status, block ? 0 : WNOHANG);
  } while (pid < 0 && errno == EINTR);
  if (pid == 0) return false;
  child.exit.wait_status = pid > 0 ? status : kLostChildStatus;
  child.running = false;
  child.pidfd.Reset();
  return true;
}

void ProcessGroup::SignalChild(Child& child, int signo) {
  if (!child.running) return;
  child.exit.signaled_by_group = true;
  // The whole process group first; the child alone if it left its group (setsid).
  if (::kill(-child.exit.pid, signo) != 0) {
    ::syscall(SYS_pidfd_send_signal, child.pidfd.get(), signo, nullptr, 0);
  }
}

void ProcessGroup::SignalAll(int signo) {
  for (Child& child : children_) SignalChild(child, signo);
}

}  // namespace kairos::launch
