// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Env::Default: the system clock, POSIX files (common/posix_io.h) and named std::threads.

#include "common/env.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/posix_io.h"
#include "kairos/options.h"

namespace kairos {
namespace internal {
namespace {

absl::Status FilesystemError(absl::string_view what, const std::error_code& ec) {
  return EnvError(what, ec.value());
}

class PosixWritableFile final : public WritableFile {
 public:
  explicit PosixWritableFile(FileDescriptor fd) : fd_(std::move(fd)) {}

  absl::Status Append(std::span<const absl::string_view> pieces) override {
    std::vector<iovec> iov;
    iov.reserve(pieces.size());
    for (absl::string_view p : pieces) {
      if (!p.empty()) iov.push_back({const_cast<char*>(p.data()), p.size()});
    }
    if (!WriteAll(fd_.get(), iov)) return EnvError("write");
    return absl::OkStatus();
  }
  absl::Status Sync(bool data_only) override {
    const int rc = data_only ? ::fdatasync(fd_.get()) : ::fsync(fd_.get());
    if (rc != 0) return EnvError(data_only ? "fdatasync" : "fsync");
    return absl::OkStatus();
  }
  absl::Status Close() override {
    if (!fd_.Close()) return EnvError("close");
    return absl::OkStatus();
  }

 private:
  FileDescriptor fd_;
};

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(FileDescriptor fd, uint64_t size) : fd_(std::move(fd)), size_(size) {}

  uint64_t size() const override { return size_; }
  absl::Status ReadAt(uint64_t offset, std::size_t n, char* out) const override {
    if (ReadAllAt(fd_.get(), offset, out, n)) return absl::OkStatus();
    if (errno == 0) return absl::OutOfRangeError("read: the file ends early");
    return EnvError("read");
  }

 private:
  FileDescriptor fd_;
  uint64_t size_ = 0;
};

class PosixEnv final : public Env {
 public:
  absl::Time Now() const override { return absl::Now(); }
  bool IsVirtual() const override { return false; }
  uint64_t Watch(std::function<void()> /*fn*/) const override { return 0; }
  void Unwatch(uint64_t /*id*/) const override {}

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path, const WritableFileOptions& options) const override {
    const auto mode = static_cast<mode_t>(options.permissions);
    if (!options.continue_at.has_value()) {
      FileDescriptor fd = FileDescriptor::Open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
      if (!fd.valid()) return EnvError("create");
      return std::make_unique<PosixWritableFile>(std::move(fd));
    }
    const auto at = static_cast<off_t>(*options.continue_at);
    FileDescriptor fd = FileDescriptor::Open(path, O_WRONLY);
    if (!fd.valid()) return EnvError("open");
    if (::ftruncate(fd.get(), at) != 0) return EnvError("truncate");
    if (::lseek(fd.get(), at, SEEK_SET) < 0) return EnvError("seek");
    if (::fsync(fd.get()) != 0) return EnvError("fsync");
    return std::make_unique<PosixWritableFile>(std::move(fd));
  }

  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) const override {
    FileDescriptor fd = FileDescriptor::Open(path, O_RDONLY);
    if (!fd.valid()) return EnvError("open");
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return EnvError("stat");
    return std::make_unique<PosixRandomAccessFile>(std::move(fd),
                                                   static_cast<uint64_t>(st.st_size));
  }

  absl::Status RenameFile(const std::string& from, const std::string& to) const override {
    if (std::rename(from.c_str(), to.c_str()) != 0) return EnvError("rename");
    return absl::OkStatus();
  }
  absl::Status RemoveFile(const std::string& path) const override {
    if (::unlink(path.c_str()) != 0) return EnvError("remove");
    return absl::OkStatus();
  }
  absl::Status RemoveAll(const std::string& path) const override {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    if (ec) return FilesystemError("remove", ec);
    return absl::OkStatus();
  }
  absl::Status CreateDirs(const std::string& path) const override {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return FilesystemError("create directory", ec);
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<std::string>> GetChildren(const std::string& dir) const override {
    std::error_code ec;
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      names.push_back(e.path().filename().string());
    }
    if (ec) return FilesystemError("list", ec);
    return names;
  }
  bool FileExists(const std::string& path) const override {
    std::error_code ec;
    return std::filesystem::exists(path, ec);
  }
  bool IsDirectory(const std::string& path) const override {
    std::error_code ec;
    return std::filesystem::is_directory(path, ec);
  }
  absl::Status SyncDir(const std::string& dir) const override {
    FileDescriptor fd = FileDescriptor::Open(dir, O_RDONLY | O_DIRECTORY);
    if (!fd.valid()) return EnvError("sync directory: open");
    if (::fsync(fd.get()) != 0) return EnvError("sync directory: fsync");
    return absl::OkStatus();
  }

  std::thread StartThread(const std::string& name, std::function<void()> fn) const override {
    return std::thread([name = name.substr(0, 15), fn = std::move(fn)] {
      ::pthread_setname_np(::pthread_self(), name.c_str());
      fn();
    });
  }
};

}  // namespace

absl::Status EnvError(absl::string_view what, int err) {
  absl::StatusCode code = absl::StatusCode::kInternal;
  if (err == ENOSPC || err == EDQUOT) code = absl::StatusCode::kResourceExhausted;
  if (err == ENOENT) code = absl::StatusCode::kNotFound;
  return absl::Status(code, absl::StrCat(what, ": ", std::strerror(err)));
}

const Env& EnvOf(const NodeOptions& options) {
  return options.env != nullptr ? *options.env : Env::Default();
}

}  // namespace internal

const Env& Env::Default() {
  static const Env* env = new internal::PosixEnv();
  return *env;
}

}  // namespace kairos
