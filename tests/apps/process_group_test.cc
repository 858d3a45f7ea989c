// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of kairos::launch::ProcessGroup with real processes (/bin/sh, /bin/true, sleep).
// Nothing sleeps to synchronize: a child that must be in some state first says so on a
// pipe, and every wait has a deadline so that a broken group fails instead of hanging.

#include "apps/process_group.h"

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "apps/fd_util.h"
#include "apps/program_path.h"
#include "apps/signals.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kairos::launch {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

// Every test job ends well before this; it turns a hang into a failure.
constexpr absl::Duration kSafetyDeadline = absl::Seconds(60);

ProcessSpec Shell(std::string name, std::string script, ProcessRole role = ProcessRole::kPrimary) {
  ProcessSpec spec;
  spec.name = std::move(name);
  spec.path = "/bin/sh";
  spec.args = {"-c", std::move(script)};
  spec.role = role;
  return spec;
}

ProcessSpec Sleeper(std::string name, ProcessRole role = ProcessRole::kPrimary) {
  ProcessSpec spec;
  spec.name = std::move(name);
  spec.path = FindProgram("sleep").value();
  spec.args = {"100"};
  spec.role = role;
  return spec;
}

// Collects the group's reports.
struct Reports {
  std::vector<std::string> lines;
  SuperviseOptions Options(absl::Duration grace) {
    SuperviseOptions options;
    options.grace = grace;
    options.deadline = absl::Now() + kSafetyDeadline;
    options.report = [this](const std::string& line) { lines.push_back(line); };
    return options;
  }
};

bool ExitedWith(const ChildExit& exit, int status) {
  return WIFEXITED(exit.wait_status) && WEXITSTATUS(exit.wait_status) == status;
}

bool KilledBy(const ChildExit& exit, int signo) {
  return WIFSIGNALED(exit.wait_status) && WTERMSIG(exit.wait_status) == signo;
}

// Starts a child that first runs `setup` (e.g. a trap), then writes "ready" on fd 3 and
// becomes `sleep 100`; returns once the child has said "ready".
pid_t StartReadySleeper(ProcessGroup& group, const std::string& name, const std::string& setup,
                        ProcessRole role) {
  Pipe ready = MakePipe().value();
  ProcessSpec spec = Shell(name, setup + "; echo ready >&3; exec sleep 100", role);
  spec.fds = {{ready.write.get(), 3}};
  pid_t pid = group.Start(spec).value();
  ready.write.Reset();
  EXPECT_EQ(ReadLine(ready.read.get(), absl::Now() + kSafetyDeadline, nullptr).value_or(""),
            "ready");
  return pid;
}

TEST(ProcessGroupTest, SucceedsWhenEveryChildExitsZero) {
  ProcessGroup group;
  ASSERT_TRUE(group.Start(Shell("coordinator", "exit 0", ProcessRole::kService)).ok());
  ASSERT_TRUE(group.Start(Shell("worker 0", "exec /bin/true")).ok());
  ASSERT_TRUE(group.Start(Shell("worker 1", "exit 0")).ok());
  Reports reports;
  JobResult result = group.Supervise(reports.Options(absl::Seconds(10)));
  EXPECT_EQ(result.outcome, JobOutcome::kSucceeded);
  EXPECT_EQ(result.ExitCode(), 0);
  ASSERT_EQ(result.exits.size(), 3u);
  for (const ChildExit& exit : result.exits) {
    EXPECT_TRUE(exit.ok()) << exit.Describe();
    EXPECT_FALSE(exit.signaled_by_group);
  }
  EXPECT_TRUE(reports.lines.empty());
  EXPECT_EQ(group.running(), 0);
}

TEST(ProcessGroupTest, FailingChildStopsTheOthersWithSigterm) {
  ProcessGroup group;
  ASSERT_TRUE(group.Start(Sleeper("coordinator", ProcessRole::kService)).ok());
  ASSERT_TRUE(group.Start(Sleeper("worker 0")).ok());
  pid_t failing = group.Start(Shell("worker 1", "exit 3")).value();
  Reports reports;
  absl::Time start = absl::Now();
  JobResult result = group.Supervise(reports.Options(absl::Seconds(30)));
  EXPECT_LT(absl::Now() - start, absl::Seconds(20)) << "the others were not stopped";
  EXPECT_EQ(result.outcome, JobOutcome::kChildFailed);
  EXPECT_EQ(result.ExitCode(), 1);
  ASSERT_TRUE(result.failed_child.has_value());
  EXPECT_EQ(*result.failed_child, 2u);
  std::string expected = absl::StrCat("worker 1 (pid ", failing, ") exited with status 3");
  EXPECT_EQ(result.reason, expected);
  EXPECT_THAT(reports.lines, Contains(absl::StrCat(expected, "; stopping the job")));
  ASSERT_EQ(result.exits.size(), 3u);
  for (int i : {0, 1}) {
    EXPECT_TRUE(KilledBy(result.exits[i], SIGTERM)) << result.exits[i].Describe();
    EXPECT_TRUE(result.exits[i].signaled_by_group);
    EXPECT_FALSE(result.exits[i].killed_by_group);
  }
  EXPECT_TRUE(ExitedWith(result.exits[2], 3));
}

TEST(ProcessGroupTest, ChildKilledBySignalFailsTheJob) {
  ProcessGroup group;
  ASSERT_TRUE(group.Start(Sleeper("worker 0")).ok());
  ASSERT_TRUE(group.Start(Shell("worker 1", "kill -KILL $$")).ok());
  Reports reports;
  JobResult result = group.Supervise(reports.Options(absl::Seconds(30)));
  EXPECT_EQ(result.outcome, JobOutcome::kChildFailed);
  EXPECT_THAT(result.reason, HasSubstr("worker 1 (pid"));
  EXPECT_THAT(result.reason, HasSubstr("was killed by signal 9 (SIGKILL)"));
  EXPECT_TRUE(KilledBy(result.exits[0], SIGTERM));
}

TEST(ProcessGroupTest, ChildIgnoringSigtermIsKilledAfterTheGrace) {
  ProcessGroup group;
  pid_t stubborn = StartReadySleeper(group, "server 0", "trap '' TERM", ProcessRole::kService);
  ASSERT_TRUE(group.Start(Shell("worker 0", "exit 1")).ok());
  Reports reports;
  absl::Time start = absl::Now();
  JobResult result = group.Supervise(reports.Options(absl::Milliseconds(200)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(200));
  EXPECT_EQ(result.outcome, JobOutcome::kChildFailed);
  EXPECT_THAT(result.reason, HasSubstr("worker 0"));
  EXPECT_TRUE(KilledBy(result.exits[0], SIGKILL)) << result.exits[0].Describe();
  EXPECT_TRUE(result.exits[0].killed_by_group);
  EXPECT_THAT(reports.lines,
              Contains(absl::StrCat("server 0 (pid ", stubborn,
                                    ") is still running 200ms after being told to stop; "
                                    "killing it")));
}

TEST(ProcessGroupTest, ServicesExitingOnTheirOwnAfterThePrimariesSucceed) {
  // The service reads until end of file on a pipe whose write end only the worker holds,
  // so it exits exactly when the worker has exited.
  Pipe link = MakePipe().value();
  ProcessGroup group;
  ProcessSpec service = Shell("server 0", "cat <&3 >/dev/null", ProcessRole::kService);
  service.fds = {{link.read.get(), 3}};
  ASSERT_TRUE(group.Start(service).ok());
  link.read.Reset();
  ProcessSpec worker = Shell("worker 0", "exit 0");
  worker.fds = {{link.write.get(), 3}};
  ASSERT_TRUE(group.Start(worker).ok());
  link.write.Reset();
  Reports reports;
  JobResult result = group.Supervise(reports.Options(absl::Seconds(30)));
  EXPECT_EQ(result.outcome, JobOutcome::kSucceeded) << result.reason;
  EXPECT_EQ(result.ExitCode(), 0);
  EXPECT_TRUE(result.exits[0].ok());
  EXPECT_FALSE(result.exits[0].signaled_by_group);
}

// A failed primary restarted by on_primary_failure: the same spec again, with the restart
// count in restart_count_env; the job succeeds once an incarnation exits 0.
TEST(ProcessGroupTest, FailedPrimaryIsRestartedUntilItSucceeds) {
  ProcessGroup group;
  ASSERT_TRUE(group.Start(Shell("coordinator", "exit 0", ProcessRole::kService)).ok());
  ASSERT_TRUE(group.Start(Shell("worker 0", "test \"$RESTARTS\" = 2 || exit 3")).ok());
  Reports reports;
  SuperviseOptions options = reports.Options(absl::Seconds(10));
  std::vector<int> asked;
  options.on_primary_failure = [&](const ChildExit& exit, int restarts) {
    EXPECT_EQ(exit.name, "worker 0");
    asked.push_back(restarts);
    return restarts < 2 ? FailureAction::kRestart : FailureAction::kStopJob;
  };
  options.restart_count_env = "RESTARTS";
  JobResult result = group.Supervise(options);
  EXPECT_EQ(result.outcome, JobOutcome::kSucceeded) << result.reason;
  EXPECT_EQ(result.ExitCode(), 0);
  EXPECT_EQ(result.restarts, 2);
  EXPECT_EQ(asked, (std::vector<int>{0, 1}));
  ASSERT_EQ(result.exits.size(), 4u);  // the coordinator and three incarnations
  EXPECT_FALSE(result.exits[1].ok());
  EXPECT_FALSE(result.exits[2].ok());
  EXPECT_TRUE(result.exits[3].ok());
  EXPECT_THAT(reports.lines,
              Contains(HasSubstr("exited with status 3; starting it again (restart 2)")));
}

// A failed service (a server) restarted by on_service_failure while the job runs; one it
// does not restart fails the job as before.
TEST(ProcessGroupTest, FailedServiceIsRestartedWhenAsked) {
  ProcessGroup group;
  ProcessSpec server =
      Shell("server 0", "test \"$RESTARTS\" = 1 || exit 3", ProcessRole::kService);
  server.tag = 7;  // the callback gets the caller's mark back
  ASSERT_TRUE(group.Start(server).ok());
  // The worker outlives the server's first incarnation, so the job is still running then.
  ASSERT_TRUE(group.Start(Shell("worker 0", "sleep 0.5")).ok());
  Reports reports;
  SuperviseOptions options = reports.Options(absl::Seconds(10));
  std::vector<std::string> asked;
  options.on_service_failure = [&](const ChildExit& exit, int restarts) {
    asked.push_back(absl::StrCat(exit.name, " tag ", exit.tag));
    return restarts < 1 ? FailureAction::kRestart : FailureAction::kStopJob;
  };
  options.restart_count_env = "RESTARTS";
  JobResult result = group.Supervise(options);
  EXPECT_EQ(result.outcome, JobOutcome::kSucceeded) << result.reason;
  EXPECT_EQ(result.restarts, 1);
  EXPECT_EQ(asked, std::vector<std::string>{"server 0 tag 7"});
  EXPECT_EQ(result.exits[0].tag, 7);
  EXPECT_THAT(reports.lines,
              Contains(HasSubstr("exited with status 3; starting it again (restart 1)")));

  ProcessGroup again;
  ASSERT_TRUE(again.Start(Shell("coordinator", "exit 3", ProcessRole::kService)).ok());
  ASSERT_TRUE(again.Start(Sleeper("worker 0")).ok());
  options.on_service_failure = [](const ChildExit&, int) { return FailureAction::kStopJob; };
  JobResult failed = again.Supervise(options);
  EXPECT_EQ(failed.outcome, JobOutcome::kChildFailed);
  EXPECT_THAT(failed.reason, HasSubstr("coordinator"));
}

TEST(ProcessGroupTest, APrimaryFailingPastItsRestartsFailsTheJob) {
  ProcessGroup group;
  ASSERT_TRUE(group.Start(Shell("worker 0", "exit 3")).ok());
  ASSERT_TRUE(group.Start(Sleeper("worker 1")).ok());
  Reports reports;
  SuperviseOptions options = reports.Options(absl::Seconds(10));
  options.on_primary_failure = [](const ChildExit&, int restarts) {
    return restarts < 1 ? FailureAction::kRestart : FailureAction::kStopJob;
  };
  JobResult result = group.Supervise(options);
  EXPECT_EQ(result.outcome, JobOutcome::kChildFailed);
  EXPECT_EQ(result.ExitCode(), 1);
  EXPECT_EQ(result.restarts, 1);
  EXPECT_THAT(result.reason, HasSubstr("worker 0"));
  EXPECT_TRUE(result.exits[1].signaled_by_group);  // the sleeper was stopped
}

TEST(ProcessGroupTest, ToleratedPrimaryFailureLetsTheJobSucceed) {
  ProcessGroup group;
  ASSERT_TRUE(group.Start(Shell("coordinator", "exit 0", ProcessRole::kService)).ok());
  ASSERT_TRUE(group.Start(Shell("worker 0", "exit 3")).ok());
  ASSERT_TRUE(group.Start(Shell("worker 1", "exit 0")).ok());
  Reports reports;
  SuperviseOptions options = reports.Options(absl::Seconds(10));
  options.on_primary_failure = [](const ChildExit&, int) { return FailureAction::kTolerate; };
  JobResult result = group.Supervise(options);
  EXPECT_EQ(result.outcome, JobOutcome::kSucceeded) << result.reason;
  EXPECT_EQ(result.ExitCode(), 0);
  EXPECT_EQ(result.tolerated, 1);
  EXPECT_THAT(reports.lines, Contains(HasSubstr("the job goes on without it")));
}

TEST(ProcessGroupTest, ServiceStillRunningAfterThePrimariesFailsTheJob) {
  ProcessGroup group;
  pid_t server = group.Start(Sleeper("server 0", ProcessRole::kService)).value();
  ASSERT_TRUE(group.Start(Shell("worker 0", "exit 0")).ok());
  Reports reports;
  JobResult result = group.Supervise(reports.Options(absl::Milliseconds(200)));
  EXPECT_EQ(result.outcome, JobOutcome::kServicesDidNotExit);
  EXPECT_EQ(result.ExitCode(), 1);
  EXPECT_EQ(result.reason, absl::StrCat("server 0 (pid ", server,
                                        ") did not exit within 200ms after the workers "
                                        "finished"));
  EXPECT_TRUE(KilledBy(result.exits[0], SIGTERM));
  EXPECT_TRUE(result.exits[1].ok());
}

TEST(ProcessGroupTest, ServiceFailingWhileThePrimariesRunFailsTheJob) {
  ProcessGroup group;
  ASSERT_TRUE(group.Start(Sleeper("worker 0")).ok());
  ASSERT_TRUE(group.Start(Shell("coordinator", "exit 2", ProcessRole::kService)).ok());
  Reports reports;
  JobResult result = group.Supervise(reports.Options(absl::Seconds(30)));
  EXPECT_EQ(result.outcome, JobOutcome::kChildFailed);
  ASSERT_TRUE(result.failed_child.has_value());
  EXPECT_EQ(*result.failed_child, 1u);
  EXPECT_THAT(result.reason, HasSubstr("coordinator (pid"));
  EXPECT_TRUE(KilledBy(result.exits[0], SIGTERM));
}

TEST(ProcessGroupTest, ForwardsASignalToEveryChild) {
  std::unique_ptr<SignalFd> signals = SignalFd::Create({SIGINT}).value();
  ProcessGroup group;
  ASSERT_TRUE(group.Start(Sleeper("server 0", ProcessRole::kService)).ok());
  ASSERT_TRUE(group.Start(Sleeper("worker 0")).ok());
  ASSERT_EQ(::kill(::getpid(), SIGINT), 0);  // pending until Supervise reads it
  Reports reports;
  SuperviseOptions options = reports.Options(absl::Seconds(30));
  options.signals = signals.get();
  JobResult result = group.Supervise(options);
  EXPECT_EQ(result.outcome, JobOutcome::kInterrupted);
  EXPECT_EQ(result.signal, SIGINT);
  EXPECT_EQ(result.ExitCode(), 128 + SIGINT);
  EXPECT_THAT(reports.lines, Contains("received SIGINT; forwarding it to 2 processes"));
  for (const ChildExit& exit : result.exits) {
    // SIGINT itself, not SIGTERM: the signal was forwarded.
    EXPECT_TRUE(KilledBy(exit, SIGINT)) << exit.Describe();
  }
}

TEST(ProcessGroupTest, SecondSignalKillsAtOnce) {
  std::unique_ptr<SignalFd> signals = SignalFd::Create({SIGINT, SIGTERM}).value();
  ProcessGroup group;
  StartReadySleeper(group, "worker 0", "trap '' INT TERM", ProcessRole::kPrimary);
  ASSERT_EQ(::kill(::getpid(), SIGINT), 0);
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  Reports reports;
  SuperviseOptions options = reports.Options(absl::Seconds(100));
  options.signals = signals.get();
  absl::Time start = absl::Now();
  JobResult result = group.Supervise(options);
  EXPECT_LT(absl::Now() - start, absl::Seconds(30)) << "waited for the grace";
  EXPECT_EQ(result.outcome, JobOutcome::kInterrupted);
  EXPECT_EQ(result.signal, SIGINT);
  EXPECT_TRUE(KilledBy(result.exits[0], SIGKILL)) << result.exits[0].Describe();
  EXPECT_TRUE(result.exits[0].killed_by_group);
  EXPECT_THAT(reports.lines, Contains("received SIGTERM while stopping; killing 1 processes"));
}

TEST(ProcessGroupTest, JobDeadlineStopsEveryChild) {
  ProcessGroup group;
  ASSERT_TRUE(group.Start(Sleeper("worker 0")).ok());
  Reports reports;
  SuperviseOptions options = reports.Options(absl::Seconds(30));
  options.deadline = absl::Now() + absl::Milliseconds(200);
  JobResult result = group.Supervise(options);
  EXPECT_EQ(result.outcome, JobOutcome::kDeadlineExceeded);
  EXPECT_EQ(result.ExitCode(), 124);
  EXPECT_EQ(result.reason, "the job deadline passed");
  EXPECT_TRUE(KilledBy(result.exits[0], SIGTERM));
}

TEST(ProcessGroupTest, ShutdownStopsEveryChild) {
  ProcessGroup group;
  ASSERT_TRUE(group.Start(Sleeper("server 0", ProcessRole::kService)).ok());
  ASSERT_TRUE(group.Start(Sleeper("worker 0")).ok());
  Reports reports;
  JobResult result = group.Shutdown(SIGTERM, reports.Options(absl::Seconds(30)));
  EXPECT_EQ(result.outcome, JobOutcome::kStopped);
  EXPECT_EQ(result.ExitCode(), 1);
  for (const ChildExit& exit : result.exits) EXPECT_TRUE(KilledBy(exit, SIGTERM));
  EXPECT_EQ(group.running(), 0);
}

TEST(ProcessGroupTest, StartReportsAProgramThatCannotRun) {
  ProcessGroup group;
  ProcessSpec missing;
  missing.name = "worker 0";
  missing.path = "/nonexistent/kairos-test-program";
  absl::StatusOr<pid_t> pid = group.Start(missing);
  EXPECT_TRUE(absl::IsNotFound(pid.status())) << pid.status();
  EXPECT_THAT(pid.status().message(), HasSubstr("worker 0"));
  EXPECT_THAT(pid.status().message(), HasSubstr("/nonexistent/kairos-test-program"));

  ProcessSpec not_executable;
  not_executable.name = "worker 1";
  not_executable.path = "/dev/null";
  EXPECT_TRUE(absl::IsPermissionDenied(group.Start(not_executable).status()));
  EXPECT_EQ(group.running(), 0);
}

TEST(ProcessGroupTest, StartRejectsBadDescriptorMappings) {
  ProcessGroup group;
  Pipe pipe = MakePipe().value();
  ProcessSpec spec = Shell("worker 0", "exit 0");
  spec.fds = {{pipe.write.get(), kMaxChildFd}};
  EXPECT_TRUE(absl::IsInvalidArgument(group.Start(spec).status()));
  spec.fds = {{pipe.write.get(), 3}, {pipe.read.get(), 3}};
  EXPECT_TRUE(absl::IsInvalidArgument(group.Start(spec).status()));
  spec.fds = {{1000, 3}};  // not open
  EXPECT_TRUE(absl::IsInvalidArgument(group.Start(spec).status()));
  EXPECT_EQ(group.running(), 0);
}

TEST(ProcessGroupTest, ChildGetsArgumentsEnvironmentDescriptorsAndNullStdin) {
  ASSERT_EQ(::setenv("KAIROS_TEST_KEPT", "kept", 1), 0);
  ASSERT_EQ(::setenv("KAIROS_TEST_OVERRIDDEN", "old", 1), 0);
  Pipe out = MakePipe().value();
  ProcessGroup group;
  ProcessSpec spec = Shell("worker 0",
                           "if read -r line; then in=data; else in=eof; fi; "
                           "printf '%s|%s|%s|%s|%s\\n' \"$0\" \"$1\" \"$KAIROS_TEST_KEPT\" "
                           "\"$KAIROS_TEST_OVERRIDDEN\" \"$in\" >&5");
  spec.args.push_back("zero");
  spec.args.push_back("one two");
  spec.env = {{"KAIROS_TEST_OVERRIDDEN", "new"}};
  spec.fds = {{out.write.get(), 5}};
  ASSERT_TRUE(group.Start(spec).ok());
  out.write.Reset();
  EXPECT_EQ(ReadLine(out.read.get(), absl::Now() + kSafetyDeadline, nullptr).value_or(""),
            "zero|one two|kept|new|eof");
  Reports reports;
  EXPECT_EQ(group.Supervise(reports.Options(absl::Seconds(10))).outcome, JobOutcome::kSucceeded);
  ::unsetenv("KAIROS_TEST_KEPT");
  ::unsetenv("KAIROS_TEST_OVERRIDDEN");
}

TEST(ProcessGroupTest, ChildLeadsItsOwnProcessGroup) {
  ProcessGroup group;
  pid_t pid = group.Start(Sleeper("worker 0")).value();
  EXPECT_EQ(::getpgid(pid), pid);
  EXPECT_NE(::getpgid(pid), ::getpgrp());
}

TEST(ProcessGroupTest, SignalsReachTheChildsOwnChildren) {
  Pipe out = MakePipe().value();
  ProcessGroup group;
  ProcessSpec spec = Shell("worker 0", "sleep 100 & echo $! >&3; wait");
  spec.fds = {{out.write.get(), 3}};
  ASSERT_TRUE(group.Start(spec).ok());
  out.write.Reset();
  std::string line = ReadLine(out.read.get(), absl::Now() + kSafetyDeadline, nullptr).value();
  pid_t grandchild = std::stoi(line);
  // Not our child: watch it through a pidfd, which becomes readable when it exits.
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, grandchild, 0)));
  ASSERT_TRUE(pidfd.valid());
  Reports reports;
  group.Shutdown(SIGTERM, reports.Options(absl::Seconds(30)));
  pollfd fd = {pidfd.get(), POLLIN, 0};
  EXPECT_EQ(::poll(&fd, 1, 30000), 1) << "the grandchild survived";
}

TEST(ProcessGroupTest, DestructorKillsRunningChildren) {
  UniqueFd pidfd;
  {
    ProcessGroup group;
    pid_t pid = group.Start(Sleeper("worker 0")).value();
    pidfd.Reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    ASSERT_TRUE(pidfd.valid());
  }
  // The child is gone (reaped): signalling its pidfd fails with ESRCH.
  EXPECT_NE(::syscall(SYS_pidfd_send_signal, pidfd.get(), 0, nullptr, 0), 0);
  EXPECT_EQ(errno, ESRCH);
}

TEST(ProcessGroupTest, WaitForExitWaitsForOneChild) {
  ProcessGroup group;
  pid_t sleeper = group.Start(Sleeper("server 0", ProcessRole::kService)).value();
  pid_t quick = group.Start(Shell("coordinator", "exit 7")).value();
  absl::StatusOr<ChildExit> exit = group.WaitForExit(quick, absl::Now() + kSafetyDeadline);
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_TRUE(ExitedWith(*exit, 7));
  EXPECT_EQ(exit->Describe(), absl::StrCat("coordinator (pid ", quick, ") exited with status 7"));
  EXPECT_TRUE(absl::IsNotFound(group.WaitForExit(quick, absl::Now()).status()));
  EXPECT_TRUE(absl::IsDeadlineExceeded(
      group.WaitForExit(sleeper, absl::Now() + absl::Milliseconds(50)).status()));
  EXPECT_EQ(group.running(), 1);
}

TEST(JobResultTest, ExitCodes) {
  JobResult result;
  EXPECT_EQ(result.ExitCode(), 0);
  result.outcome = JobOutcome::kChildFailed;
  EXPECT_EQ(result.ExitCode(), 1);
  result.outcome = JobOutcome::kServicesDidNotExit;
  EXPECT_EQ(result.ExitCode(), 1);
  result.outcome = JobOutcome::kStopped;
  EXPECT_EQ(result.ExitCode(), 1);
  result.outcome = JobOutcome::kDeadlineExceeded;
  EXPECT_EQ(result.ExitCode(), 124);
  result.outcome = JobOutcome::kInterrupted;
  result.signal = SIGTERM;
  EXPECT_EQ(result.ExitCode(), 143);
}

}  // namespace
}  // namespace kairos::launch
