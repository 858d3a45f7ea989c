// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Durability of directory entries, shared by the checkpoint files and the update log.

#ifndef KAIROS_COMMON_FILE_SYNC_H_
#define KAIROS_COMMON_FILE_SYNC_H_

#include <string>

namespace kairos::internal {

// Makes the entries of directory `dir` durable (a file created or renamed in it survives a
// machine crash): opens the directory and fsyncs it. False on failure, with errno set to
// the failing call's (the open's or the fsync's), so that the caller names the error in
// its own terms.
bool SyncDirectory(const std::string& dir);

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_FILE_SYNC_H_
