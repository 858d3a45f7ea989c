// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// POSIX file I/O under Env::Default (common/env.cc) and the few callers that hold a raw
// descriptor: ErrnoError (a failed system call as a status), FileDescriptor (owns one),
// WriteAll (every byte, through EINTR and short writes) and ReadAllAt.
//
// Thread-safety: FileDescriptor is thread-compatible; the functions are thread-safe.

#ifndef KAIROS_COMMON_POSIX_IO_H_
#define KAIROS_COMMON_POSIX_IO_H_

#include <sys/types.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace kairos::internal {

// A failed system call as a status: "<what>: <strerror(err)>", of code `code`, but
// ResourceExhausted for a full disk (ENOSPC, EDQUOT), which its caller may free.
absl::Status ErrnoError(absl::StatusCode code, absl::string_view what, int err = errno);

// Owns one file descriptor and closes it on destruction. Movable, not copyable.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() { Reset(); }
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  // open(2) with O_CLOEXEC added; an invalid descriptor, with errno set, on failure.
  static FileDescriptor Open(const std::string& path, int flags, mode_t mode = 0644);

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Closes it now: false, with errno set, when close(2) fails (a write-back error may be
  // reported only there). The descriptor is released either way.
  bool Close();

 private:
  void Reset();
  int fd_ = -1;
};

// Writes every byte `iov` points at to `fd`, in order: writev(2), IOV_MAX entries at a time,
// going on after short writes and EINTR. `iov` is used up (its entries are advanced). False,
// with errno set, on failure: then part of it may have been written.
bool WriteAll(int fd, std::span<iovec> iov);
bool WriteAll(int fd, const void* p, std::size_t n);

// Reads exactly n bytes at offset `at` (pread(2), through EINTR and short reads). False at
// the end of the file (errno 0) or on an error (errno set).
bool ReadAllAt(int fd, uint64_t at, void* out, std::size_t n);

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_POSIX_IO_H_
