// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// FaultyEnv: file faults for tests (the kairos::testing library). It wraps another
// environment (Env::Default unless given) and fails the file operations a test names: a
// write with a full disk, an fsync, a rename half-way through a checkpoint, the listing of
// a state directory. Give it to a node (NodeOptions::env, ClusterOptions::env) and check
// that the node reports the error and loses nothing:
//
//   auto env = std::make_shared<kairos::testing::FaultyEnv>();
//   env->Add({.op = kairos::testing::FileOp::kAppend, .path_contains = ".kul",
//             .error = kairos::testing::FaultyEnv::DiskFull()});
//   server_options.env = env;   // the update log's next write fails: ResourceExhausted
//
// A fault hits the calls of its operation whose path contains `path_contains` (a rename:
// either path), after letting the first `skip` of them through, `times` times (-1: every
// call after those). Faults are checked in the order they were added; the first that hits
// decides. Time and threads are the wrapped environment's, so a FaultyEnv can sit under a
// kairos::testing::ManualEnv.
//
// Thread-safety: every method is safe to call from any thread.

#ifndef KAIROS_TESTING_FAULTY_ENV_H_
#define KAIROS_TESTING_FAULTY_ENV_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "kairos/env.h"

namespace kairos::testing {

// The file operations of an Env, as a FaultyEnv counts and fails them.
enum class FileOp {
  kCreate,      // NewWritableFile of a new file
  kContinue,    // NewWritableFile with continue_at (cut and append)
  kAppend,      // WritableFile::Append
  kSync,        // WritableFile::Sync
  kClose,       // WritableFile::Close
  kOpen,        // NewRandomAccessFile
  kRead,        // RandomAccessFile::ReadAt
  kRename,      // RenameFile (matched on either path)
  kRemove,      // RemoveFile, RemoveAll
  kCreateDirs,  // CreateDirs
  kList,        // GetChildren
  kSyncDir,     // SyncDir
};
inline constexpr int kNumFileOps = 12;

struct FileFault {
  FileOp op = FileOp::kAppend;
  // Only paths containing this; empty: every path.
  std::string path_contains{};
  // What the failed call returns (kairos names the file and what it was doing around it).
  absl::Status error = absl::InternalError("injected fault: Input/output error");
  // Matching calls let through before the fault starts.
  int64_t skip = 0;
  // Matching calls failed after those; -1: every one.
  int64_t times = -1;
};

class FaultyEnv final : public EnvWrapper {
 public:
  // `base` (which must outlive this) does what is not failed.
  explicit FaultyEnv(const Env& base = Env::Default()) : EnvWrapper(base) {}

  // The status of a full disk, as the default environment reports one (ResourceExhausted).
  static absl::Status DiskFull();

  void Add(FileFault fault);
  // Removes every fault: later calls all go through.
  void Clear();
  // Calls of `op` seen (failed or not), and those failed by a fault.
  int64_t calls(FileOp op) const;
  int64_t failures(FileOp op) const;

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path, const WritableFileOptions& options) const override;
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) const override;
  absl::Status RenameFile(const std::string& from, const std::string& to) const override;
  absl::Status RemoveFile(const std::string& path) const override;
  absl::Status RemoveAll(const std::string& path) const override;
  absl::Status CreateDirs(const std::string& path) const override;
  absl::StatusOr<std::vector<std::string>> GetChildren(const std::string& dir) const override;
  absl::Status SyncDir(const std::string& dir) const override;

 private:
  // The files it hands out, which check their appends, syncs, closes and reads.
  class File;
  class Reader;

  // The faults' verdict on one call (OK: it goes through), counted.
  absl::Status Check(FileOp op, const std::string& path, const std::string& other = {}) const;

  struct Armed {
    FileFault fault;
    int64_t seen = 0;  // matching calls so far
  };
  mutable absl::Mutex mu_;
  mutable std::vector<Armed> faults_ ABSL_GUARDED_BY(mu_);
  mutable std::array<int64_t, kNumFileOps> calls_ ABSL_GUARDED_BY(mu_){};
  mutable std::array<int64_t, kNumFileOps> failures_ ABSL_GUARDED_BY(mu_){};
};

}  // namespace kairos::testing

#endif  // KAIROS_TESTING_FAULTY_ENV_H_
