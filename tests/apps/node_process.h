// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// NodeProcess: one of the project's programs (kairos-server, kairos-coordinator) started by
// a test, its stdout and stderr on a pipe the test reads as it goes (WaitFor), so that the
// test can act on what the program said and kill it (pid) where a fault is wanted. The
// durability tests of the programs use it. Start it from a thread that outlives it: a
// ProcessGroup's child gets SIGKILL when the thread that started it exits.

#ifndef KAIROS_TESTS_APPS_NODE_PROCESS_H_
#define KAIROS_TESTS_APPS_NODE_PROCESS_H_

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "apps/fd_util.h"
#include "apps/process_group.h"
#include "gtest/gtest.h"

namespace kairos::launch {

class NodeProcess {
 public:
  // Runs `program` with `args`. `file_blocks` > 0: the program may write no file past that
  // many 512-byte blocks (RLIMIT_FSIZE, set by a shell that then runs it; SIGXFSZ ignored,
  // so a write past it fails with EFBIG as a full disk fails with ENOSPC).
  NodeProcess(const std::string& program, const std::vector<std::string>& args,
              int file_blocks = 0) {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    read_ = UniqueFd(fds[0]);
    UniqueFd write(fds[1]);
    ProcessSpec spec;
    spec.name = program.substr(program.rfind('/') + 1);
    spec.path = program;
    if (file_blocks > 0) {
      spec.path = "/bin/sh";
      spec.args = {"-c",
                   absl::StrCat("trap '' XFSZ; ulimit -f ", file_blocks, "; exec \"$0\" \"$@\""),
                   program};
    }
    spec.args.insert(spec.args.end(), args.begin(), args.end());
    spec.fds = {{write.get(), 1}, {write.get(), 2}};
    absl::StatusOr<pid_t> pid = group_.Start(spec);
    EXPECT_TRUE(pid.ok()) << pid.status();
    pid_ = pid.value_or(-1);
  }

  pid_t pid() const { return pid_; }

  // Reads the program's output until it contains `text`, within `timeout`.
  ::testing::AssertionResult WaitFor(const std::string& text,
                                     absl::Duration timeout = absl::Seconds(30)) {
    const absl::Time deadline = absl::Now() + timeout;
    while (seen_.find(text) == std::string::npos) {
      struct pollfd p = {read_.get(), POLLIN, 0};
      const int ms =
          static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now())));
      if (::poll(&p, 1, ms) <= 0) {
        return ::testing::AssertionFailure()
               << "no '" << text << "' within " << timeout << "; the program said:\n"
               << seen_;
      }
      char buf[4096];
      const ssize_t n = ::read(read_.get(), buf, sizeof(buf));
      if (n <= 0) {
        return ::testing::AssertionFailure()
               << "the program's output ended before '" << text << "':\n"
               << seen_;
      }
      seen_.append(buf, static_cast<std::size_t>(n));
    }
    return ::testing::AssertionSuccess();
  }

  // The rest of the line that follows `prefix` in the output (WaitFor it first).
  std::string After(const std::string& prefix) const {
    const std::size_t at = seen_.find(prefix);
    if (at == std::string::npos) return "";
    const std::size_t from = at + prefix.size();
    return seen_.substr(from, seen_.find('\n', from) - from);
  }

  // Its exit status, or -1 when a signal ended it (or it did not exit within 30 s). The
  // rest of its output is read (output()).
  int Exit() {
    absl::StatusOr<ChildExit> e = group_.WaitForExit(pid_, absl::Now() + absl::Seconds(30));
    char buf[4096];
    for (ssize_t n; e.ok() && (n = ::read(read_.get(), buf, sizeof(buf))) > 0;) {
      seen_.append(buf, static_cast<std::size_t>(n));
    }
    if (!e.ok() || !WIFEXITED(e->wait_status)) return -1;
    return WEXITSTATUS(e->wait_status);
  }

  const std::string& output() const { return seen_; }

 private:
  ProcessGroup group_;
  UniqueFd read_;
  pid_t pid_ = -1;
  std::string seen_;
};

}  // namespace kairos::launch

#endif  // KAIROS_TESTS_APPS_NODE_PROCESS_H_
