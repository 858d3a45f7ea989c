// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The environment seam, in the manner of leveldb's Env: everything a node takes from the
// machine it runs on goes through the Env in its options (NodeOptions::env).
//
//   - Time. Every timestamp, timeout, heartbeat and deadline of a node reads Env::Now. An
//     environment whose time moves by itself (Env::Default) makes nodes tick on a timer; a
//     virtual one (IsVirtual, e.g. kairos::testing::ManualEnv) stands still until a test
//     moves it, and a node on it runs its tick (heartbeats, deadline scans, delayed
//     messages) when it starts and after each move, with the environment's time, and never
//     otherwise (moves in quick succession may share one tick, which sees the latest time).
//     Waits of the calling thread (a blocked Pull, Worker::Create's join) end when the
//     node's I/O thread completes or fails them at a tick; a generous real-time backstop
//     keeps a test that forgets to move the time from hanging forever.
//   - Files. The update log, the checkpoints and the coordinator's kept state are written,
//     read, renamed, listed and removed through it, so that a test can fail a write with a
//     full disk or a rename half-way (kairos::testing::FaultyEnv).
//   - Threads. The node's own threads (its I/O thread, apply lanes, the checkpoint and
//     update-log writers) are started by StartThread, which names them ("kairos-io",
//     "kairos-apply"...) as top -H and debuggers show them.
//
// Errors: a failed file operation returns a status whose message is "<operation>: <the
// system's reason>" ("fsync: Input/output error"); its code is ResourceExhausted for a full
// disk or quota (ENOSPC, EDQUOT: the caller may free space), NotFound for a missing file or
// directory, and Internal otherwise. kairos adds which file it was and what it was doing.
//
// Thread-safety: every method of every Env, WritableFile excepted, is safe to call from any
// thread. A WritableFile is used by one thread at a time.

#ifndef KAIROS_ENV_H_
#define KAIROS_ENV_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "kairos/export.h"

namespace kairos {

// A file open for appending. Closed (without an error to report) by its destructor.
class KAIROS_EXPORT WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Appends every byte of `pieces`, in order. On failure part of them may be in the file.
  virtual absl::Status Append(std::span<const absl::string_view> pieces) = 0;
  // Makes what was appended durable: fsync(2), or fdatasync(2) with `data_only`.
  virtual absl::Status Sync(bool data_only) = 0;
  // Closes the file; a failed close (where a write-back error may be reported) is an error.
  // Nothing may be called after it.
  virtual absl::Status Close() = 0;
};

// A file open for reading at any offset.
class KAIROS_EXPORT RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // The file's length when it was opened.
  virtual uint64_t size() const = 0;
  // Reads exactly `n` bytes at `offset` into `out`. OutOfRange when the file ends before
  // (it shrank since it was opened).
  virtual absl::Status ReadAt(uint64_t offset, std::size_t n, char* out) const = 0;
};

struct WritableFileOptions {
  // Permissions of a file the call creates (e.g. 0600 for one that holds secrets).
  uint32_t permissions = 0644;
  // Unset: the file is created, or emptied if it exists. Set: the file must exist; it is cut
  // to this many bytes, the cut made durable, and appends go after them.
  std::optional<uint64_t> continue_at = std::nullopt;
};

class KAIROS_EXPORT Env {
 public:
  virtual ~Env() = default;

  // The machine's own: the system clock (absl::Now), POSIX files, std::thread. One
  // process-wide instance; it holds no state, so sharing it is not a root global.
  static const Env& Default();

  // ---- Time ------------------------------------------------------------------------------
  virtual absl::Time Now() const = 0;
  // False for time that moves by itself; true for time that moves only when told: nodes
  // then tick when it moves instead of on a timer.
  virtual bool IsVirtual() const = 0;
  // Calls `fn` (on the thread that moved the time, after it moved) each time virtual time
  // moves; never for time that moves by itself. Returns an id for Unwatch (0: nothing to
  // unwatch). `fn` must be quick and must not call Watch or Unwatch.
  virtual uint64_t Watch(std::function<void()> fn) const = 0;
  // After Unwatch returns, the watcher is not running and never runs again.
  virtual void Unwatch(uint64_t id) const = 0;

  // ---- Files -----------------------------------------------------------------------------
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path, const WritableFileOptions& options) const = 0;
  virtual absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) const = 0;
  // rename(2): replaces `to` atomically.
  virtual absl::Status RenameFile(const std::string& from, const std::string& to) const = 0;
  // Removes a file (NotFound when there is none).
  virtual absl::Status RemoveFile(const std::string& path) const = 0;
  // Removes a file or a directory with everything under it; OK when there is nothing.
  virtual absl::Status RemoveAll(const std::string& path) const = 0;
  // Creates a directory and its missing parents; OK when it exists.
  virtual absl::Status CreateDirs(const std::string& path) const = 0;
  // The names (not paths) of the entries of a directory, in no particular order.
  virtual absl::StatusOr<std::vector<std::string>> GetChildren(const std::string& dir) const = 0;
  virtual bool FileExists(const std::string& path) const = 0;
  virtual bool IsDirectory(const std::string& path) const = 0;
  // Makes the entries of a directory durable: a file created or renamed in it survives a
  // machine crash.
  virtual absl::Status SyncDir(const std::string& dir) const = 0;

  // ---- Threads ---------------------------------------------------------------------------
  // Starts a thread running `fn`, named `name` (at most 15 characters are kept); the caller
  // joins it.
  virtual std::thread StartThread(const std::string& name, std::function<void()> fn) const = 0;
};

// An Env that forwards every call to another (`target`, which must outlive it): derive
// from it to change a few calls, as kairos::testing's environments do.
class KAIROS_EXPORT EnvWrapper : public Env {
 public:
  explicit EnvWrapper(const Env& target) : target_(target) {}
  const Env& target() const { return target_; }

  absl::Time Now() const override { return target_.Now(); }
  bool IsVirtual() const override { return target_.IsVirtual(); }
  uint64_t Watch(std::function<void()> fn) const override { return target_.Watch(std::move(fn)); }
  void Unwatch(uint64_t id) const override { target_.Unwatch(id); }
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path, const WritableFileOptions& options) const override {
    return target_.NewWritableFile(path, options);
  }
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) const override {
    return target_.NewRandomAccessFile(path);
  }
  absl::Status RenameFile(const std::string& from, const std::string& to) const override {
    return target_.RenameFile(from, to);
  }
  absl::Status RemoveFile(const std::string& path) const override {
    return target_.RemoveFile(path);
  }
  absl::Status RemoveAll(const std::string& path) const override { return target_.RemoveAll(path); }
  absl::Status CreateDirs(const std::string& path) const override {
    return target_.CreateDirs(path);
  }
  absl::StatusOr<std::vector<std::string>> GetChildren(const std::string& dir) const override {
    return target_.GetChildren(dir);
  }
  bool FileExists(const std::string& path) const override { return target_.FileExists(path); }
  bool IsDirectory(const std::string& path) const override { return target_.IsDirectory(path); }
  absl::Status SyncDir(const std::string& dir) const override { return target_.SyncDir(dir); }
  std::thread StartThread(const std::string& name, std::function<void()> fn) const override {
    return target_.StartThread(name, std::move(fn));
  }

 private:
  const Env& target_;
};

}  // namespace kairos

#endif  // KAIROS_ENV_H_
