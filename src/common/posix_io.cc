// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "common/posix_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace kairos::internal {

absl::Status ErrnoError(absl::StatusCode code, absl::string_view what, int err) {
  if (err == ENOSPC || err == EDQUOT) code = absl::StatusCode::kResourceExhausted;
  return absl::Status(code, absl::StrCat(what, ": ", std::strerror(err)));
}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileDescriptor FileDescriptor::Open(const std::string& path, int flags, mode_t mode) {
  return FileDescriptor(::open(path.c_str(), flags | O_CLOEXEC, mode));
}

bool FileDescriptor::Close() {
  const int fd = fd_;
  fd_ = -1;
  return fd < 0 || ::close(fd) == 0;  // Linux releases the descriptor even on EINTR
}

void FileDescriptor::Reset() {
  if (fd_ < 0) return;
  const int saved = errno;  // a destructor on an error's path keeps the error's errno
  ::close(fd_);
  fd_ = -1;
  errno = saved;
}

bool WriteAll(int fd, std::span<iovec> iov) {
  std::size_t first = 0;
  while (first < iov.size()) {
    if (iov[first].iov_len == 0) {
      ++first;
      continue;
    }
    const int n = static_cast<int>(std::min<std::size_t>(iov.size() - first, IOV_MAX));
    const ssize_t w = ::writev(fd, iov.data() + first, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return false;
    if (w == 0) {  // nothing written of a non-empty entry: it never will be
      errno = EIO;
      return false;
    }
    // Past the entries written whole; into the one written in part.
    std::size_t left = static_cast<std::size_t>(w);
    while (first < iov.size() && left >= iov[first].iov_len) {
      left -= iov[first].iov_len;
      ++first;
    }
    if (left > 0) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  return true;
}

bool WriteAll(int fd, const void* p, std::size_t n) {
  iovec one{const_cast<void*>(p), n};
  return WriteAll(fd, std::span<iovec>(&one, 1));
}

bool ReadAllAt(int fd, uint64_t at, void* out, std::size_t n) {
  char* p = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(at));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (r == 0) {
      errno = 0;  // the end of the file
      return false;
    }
    p += r;
    at += static_cast<uint64_t>(r);
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

}  // namespace kairos::internal
