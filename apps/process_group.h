// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos::launch::ProcessGroup: the process supervision of kairos-launch. It starts child
// processes (program, arguments, environment, inherited descriptors), watches them, and
// applies the job's exit policy:
//
//   - a child that exits non-zero or by a signal fails the job: every other child gets
//     SIGTERM, then SIGKILL if it is still running `grace` later; unless it is a kPrimary
//     and SuperviseOptions::on_primary_failure says otherwise: restart it (the same spec,
//     started again at once) or tolerate it (the job goes on without it); a kService
//     child may be restarted the same way (SuperviseOptions::on_service_failure);
//   - when every kPrimary child (the workers) has exited 0, the kService children (the
//     coordinator and the servers) get `grace` to exit on their own; one that exits non-zero
//     fails the job, one that is still running is stopped and the job fails;
//   - a signal read from a SignalFd is forwarded to every running child, which then get
//     `grace` to exit; a second signal kills the rest at once;
//   - at the job deadline every child is stopped as after a failure.
//
// Children are watched with pidfds and poll(2); nothing sleeps or polls on a timer.
//
// Process groups: each child is made the leader of a new process group (pgid = its pid),
// and every signal the group sends goes to that whole process group, so helpers that a
// child starts (a shell's commands, for instance) are stopped with it. Children are
// therefore not in the terminal's foreground group: a Ctrl-C reaches only the launcher,
// which forwards it exactly once. Children read stdin from /dev/null (a background process
// reading the terminal would be stopped by SIGTTIN and hang the job); stdout and stderr are
// inherited. A child gets SIGKILL if the thread that started it dies (PR_SET_PDEATHSIG), so
// a killed launcher leaves no orphans behind.
//
// Requirements: Linux >= 5.3 (pidfd_open). SIGCHLD must not be ignored, and nothing else in
// the process may reap this group's children (waitpid(-1), wait()).
//
// Thread-safety: not thread-safe; use one ProcessGroup from one thread, and keep that thread
// alive while the children run (see PR_SET_PDEATHSIG above).

#ifndef KAIROS_APPS_PROCESS_GROUP_H_
#define KAIROS_APPS_PROCESS_GROUP_H_

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "apps/fd_util.h"

namespace kairos::launch {

class SignalFd;

// How a child's exit counts in the exit policy (see the file comment).
enum class ProcessRole {
  kPrimary,  // the job is done when every primary has exited 0 (workers)
  kService,  // expected to exit on its own once the primaries are done (coordinator, servers)
};

// A descriptor of the parent that the child gets as `child_fd` (0, 1 and 2 included: a
// mapping to 0 replaces /dev/null as stdin).
struct FdMapping {
  int parent_fd = -1;
  int child_fd = -1;  // REQUIRES: 0 <= child_fd < kMaxChildFd, distinct within a spec
};
inline constexpr int kMaxChildFd = 64;

// What to start.
struct ProcessSpec {
  // Used in messages: "worker 2", "coordinator".
  std::string name;
  // The executable. Used as given (no PATH search); see program_path.h.
  std::string path;
  // argv[1..]; argv[0] is `path`.
  std::vector<std::string> args;
  // Set in the child's environment, on top of (and overriding) this process's environment;
  // of two entries with one name, the later wins.
  std::vector<std::pair<std::string, std::string>> env;
  // Descriptors the child inherits; every other descriptor opened close-on-exec stays closed.
  std::vector<FdMapping> fds;
  ProcessRole role = ProcessRole::kPrimary;
  // A restart (FailureAction::kRestart) runs with these arguments, when not empty, instead
  // of `args`, and inherits none of `fds`: what the first start was handed (the pipe of a
  // --ready-fd) is gone by then.
  std::vector<std::string> restart_args;
  // The caller's own mark for the child (which kind of child it is, for instance), copied
  // to ChildExit::tag, so that a failure callback decides by it rather than by the name.
  int tag = 0;
};

// How one child ended.
struct ChildExit {
  std::string name;
  pid_t pid = -1;
  ProcessRole role = ProcessRole::kPrimary;
  int tag = 0;  // ProcessSpec::tag
  // The waitpid(2) status.
  int wait_status = 0;
  // The group had sent the child a signal (forwarded, SIGTERM or SIGKILL) before it exited.
  bool signaled_by_group = false;
  // The group SIGKILLed the child: it outlived the grace period, or a second signal came.
  bool killed_by_group = false;

  // Exited with status 0.
  bool ok() const;
  // "worker 2 (pid 1234) exited with status 3", "... was killed by signal 9 (SIGKILL)".
  std::string Describe() const;
};

// What a failed kPrimary child means for the job (SuperviseOptions::on_primary_failure).
enum class FailureAction {
  kStopJob,   // the job fails (the default)
  kRestart,   // start the child again with the same spec; the job goes on
  kTolerate,  // the job goes on without it, and may still succeed
};

// Why a Supervise or Shutdown call ended.
enum class JobOutcome {
  kSucceeded,           // every child exited 0 (the services after the primaries)
  kChildFailed,         // a child exited non-zero or by a signal
  kServicesDidNotExit,  // the primaries succeeded, a service did not exit within the grace
  kDeadlineExceeded,    // the job deadline passed
  kInterrupted,         // a signal was read from the SignalFd and forwarded
  kStopped,             // Shutdown was called
};

struct JobResult {
  JobOutcome outcome = JobOutcome::kSucceeded;
  // One line saying why the job ended ("worker 2 (pid 1234) exited with status 3").
  std::string reason;
  // kChildFailed: the index in `exits` of the child whose exit failed the job.
  std::optional<size_t> failed_child;
  // kInterrupted: the signal received (and forwarded).
  int signal = 0;
  // Every child of the group, in start order (a restarted child once per run).
  std::vector<ChildExit> exits;
  // Children started again after a failure (FailureAction::kRestart), and failures
  // tolerated (FailureAction::kTolerate).
  int restarts = 0;
  int tolerated = 0;

  // The launcher's exit code: 0 succeeded; 1 a child failed, a service did not exit, or
  // stopped; 124 deadline; 128 + signal when interrupted.
  int ExitCode() const;
};

struct SuperviseOptions {
  // How long children get to exit after SIGTERM (or a forwarded signal) before SIGKILL,
  // and how long services get to exit on their own after the primaries. Default 10 s.
  absl::Duration grace = absl::Seconds(10);
  // The whole job's deadline. Default none.
  absl::Time deadline = absl::InfiniteFuture();
  // Signals to watch and forward; may be null. Borrowed: must outlive the call.
  SignalFd* signals = nullptr;
  // Called with a one-line message for each decision (a failure seen, a signal forwarded,
  // a child killed); may be empty. Called on the supervising thread.
  std::function<void(const std::string&)> report;
  // Called when a kPrimary child exits non-zero or by a signal the group did not send,
  // while the job runs, with how it ended and how many times that child was restarted
  // already; empty: kStopJob. A restart starts the child's ProcessSpec again (its
  // FdMapping descriptors must still be open here); one that cannot be started fails the
  // job.
  std::function<FailureAction(const ChildExit&, int restarts)> on_primary_failure;
  // The same for a kService child (a server) that fails while the job runs; empty, or any
  // answer but kRestart: the job fails.
  std::function<FailureAction(const ChildExit&, int restarts)> on_service_failure;
  // Non-empty: a restarted child gets this environment variable set to how many times it
  // was restarted (1 for its first restart).
  std::string restart_count_env;
  // How long the kService children get to exit on their own once every kPrimary child has
  // exited (or failed, tolerated); unset: `grace`.
  std::optional<absl::Duration> drain_grace;
};

class ProcessGroup {
 public:
  ProcessGroup() = default;
  // SIGKILLs every child still running and reaps it: a group never leaves a child behind.
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  // Starts a child and returns its pid once it has exec'd. Errors: NotFound, PermissionDenied
  // or FailedPrecondition when the program cannot be executed (the message names the child
  // and the path); InvalidArgument for a bad FdMapping; ResourceExhausted when fork fails.
  absl::StatusOr<pid_t> Start(const ProcessSpec& spec);

  // Watches the children until the exit policy (file comment) ends the job; every child has
  // exited and been reaped when it returns. Children that are no longer running (reaped by
  // WaitForExit, or by an earlier call) only appear in the result.
  JobResult Supervise(const SuperviseOptions& options);

  // Stops the job now: sends `signo` to every running child, and SIGKILL to those still
  // running after options.grace (or at once at a signal read from options.signals).
  // options.deadline is ignored. The outcome is kStopped.
  JobResult Shutdown(int signo, const SuperviseOptions& options);

  // Waits until the child `pid` exits, ignoring the others, and reaps it. DeadlineExceeded
  // at `deadline` (the child goes on); NotFound when `pid` is no running child of the group.
  absl::StatusOr<ChildExit> WaitForExit(pid_t pid, absl::Time deadline);

  // Children started and not yet reaped.
  int running() const;

 private:
  struct Child {
    ChildExit exit;
    UniqueFd pidfd;  // readable once the child has exited
    bool running = true;
    ProcessSpec spec;  // what was started, for a restart
    int restarts = 0;  // how many times this child was started again before this run
  };
  enum class Phase { kRunning, kDraining, kStopping, kKilling };
  struct RunState;

  JobResult Run(RunState& state);
  void WaitForEvents(RunState& state);
  void OnChildExit(RunState& state, Child& child);
  void OnSignal(RunState& state, int signo);
  void OnTimeout(RunState& state);
  void BeginStopping(RunState& state, int signo, JobOutcome outcome, std::string reason);
  void StartDrainingIfPrimariesDone(RunState& state);
  void StartRestarts(RunState& state);
  bool Reap(Child& child, bool block);
  void SignalChild(Child& child, int signo);
  void SignalAll(int signo);
  void KillAll(RunState& state);

  std::vector<Child> children_;
};

}  // namespace kairos::launch

#endif  // KAIROS_APPS_PROCESS_GROUP_H_
