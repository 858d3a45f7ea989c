// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "common/file_sync.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace kairos::internal {

bool SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return rc == 0;
}

}  // namespace kairos::internal
