// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// File-descriptor helpers of the kairos programs: an owning descriptor, pipes, writing a
// whole buffer, and reading one line with a deadline. Linux only.

#ifndef KAIROS_APPS_FD_UTIL_H_
#define KAIROS_APPS_FD_UTIL_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kairos::launch {

class SignalFd;

// Owns one file descriptor and closes it on destruction. Movable, not copyable.
// Thread-safety: like an int; one owner at a time.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership and returns the descriptor.
  int Release();
  // Closes the descriptor (if any) and takes `fd`.
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Both ends of a pipe, close-on-exec.
struct Pipe {
  UniqueFd read;
  UniqueFd write;
};
absl::StatusOr<Pipe> MakePipe();

// Writes all of `data` to `fd`, retrying on EINTR and short writes.
absl::Status WriteAll(int fd, std::string_view data);

// The poll(2) timeout that waits until `deadline`: -1 for absl::InfiniteFuture(), 0 when
// it has passed, else the milliseconds left rounded up (so a poll never wakes early).
int PollTimeoutMs(absl::Time deadline);

// Reads from `fd` up to the first '\n' and returns the line without it; bytes after the
// newline are read and dropped (the writer is expected to write one line and close).
// Errors: DeadlineExceeded at `deadline`; OutOfRange at end of file before a newline;
// Cancelled when `interrupt` (may be null; borrowed) has a pending signal, which is left
// pending for the caller to read; ResourceExhausted for a line longer than `max_bytes`.
absl::StatusOr<std::string> ReadLine(int fd, absl::Time deadline, const SignalFd* interrupt,
                                     size_t max_bytes = 4096);

}  // namespace kairos::launch

#endif  // KAIROS_APPS_FD_UTIL_H_
