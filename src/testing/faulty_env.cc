// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "kairos/testing/faulty_env.h"

#include <utility>

namespace kairos::testing {
namespace {

std::size_t Index(FileOp op) { return static_cast<std::size_t>(op); }

bool Matches(const FileFault& f, const std::string& path, const std::string& other) {
  if (f.path_contains.empty()) return true;
  return path.find(f.path_contains) != std::string::npos ||
         (!other.empty() && other.find(f.path_contains) != std::string::npos);
}

}  // namespace

class FaultyEnv::File final : public WritableFile {
 public:
  File(const FaultyEnv& env, std::string path, std::unique_ptr<WritableFile> inner)
      : env_(env), path_(std::move(path)), inner_(std::move(inner)) {}

  absl::Status Append(std::span<const absl::string_view> pieces) override {
    if (absl::Status s = env_.Check(FileOp::kAppend, path_); !s.ok()) return s;
    return inner_->Append(pieces);
  }
  absl::Status Sync(bool data_only) override {
    if (absl::Status s = env_.Check(FileOp::kSync, path_); !s.ok()) return s;
    return inner_->Sync(data_only);
  }
  absl::Status Close() override {
    absl::Status closed = inner_->Close();  // the descriptor goes whatever the fault says
    if (absl::Status s = env_.Check(FileOp::kClose, path_); !s.ok()) return s;
    return closed;
  }

 private:
  const FaultyEnv& env_;
  const std::string path_;
  const std::unique_ptr<WritableFile> inner_;
};

class FaultyEnv::Reader final : public RandomAccessFile {
 public:
  Reader(const FaultyEnv& env, std::string path, std::unique_ptr<RandomAccessFile> inner)
      : env_(env), path_(std::move(path)), inner_(std::move(inner)) {}

  uint64_t size() const override { return inner_->size(); }
  absl::Status ReadAt(uint64_t offset, std::size_t n, char* out) const override {
    if (absl::Status s = env_.Check(FileOp::kRead, path_); !s.ok()) return s;
    return inner_->ReadAt(offset, n, out);
  }

 private:
  const FaultyEnv& env_;
  const std::string path_;
  const std::unique_ptr<RandomAccessFile> inner_;
};

absl::Status FaultyEnv::DiskFull() {
  return absl::ResourceExhaustedError("injected fault: No space left on device");
}

void FaultyEnv::Add(FileFault fault) {
  absl::MutexLock lock(&mu_);
  faults_.push_back(Armed{std::move(fault)});
}

void FaultyEnv::Clear() {
  absl::MutexLock lock(&mu_);
  faults_.clear();
}

int64_t FaultyEnv::calls(FileOp op) const {
  absl::MutexLock lock(&mu_);
  return calls_[Index(op)];
}

int64_t FaultyEnv::failures(FileOp op) const {
  absl::MutexLock lock(&mu_);
  return failures_[Index(op)];
}

absl::Status FaultyEnv::Check(FileOp op, const std::string& path, const std::string& other) const {
  absl::MutexLock lock(&mu_);
  ++calls_[Index(op)];
  for (Armed& a : faults_) {
    if (a.fault.op != op || !Matches(a.fault, path, other)) continue;
    const int64_t n = a.seen++;
    if (n < a.fault.skip) continue;
    if (a.fault.times >= 0 && n >= a.fault.skip + a.fault.times) continue;
    ++failures_[Index(op)];
    return a.fault.error;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<WritableFile>> FaultyEnv::NewWritableFile(
    const std::string& path, const WritableFileOptions& options) const {
  const FileOp op = options.continue_at.has_value() ? FileOp::kContinue : FileOp::kCreate;
  if (absl::Status s = Check(op, path); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<WritableFile>> file = target().NewWritableFile(path, options);
  if (!file.ok()) return file.status();
  return std::make_unique<File>(*this, path, *std::move(file));
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>> FaultyEnv::NewRandomAccessFile(
    const std::string& path) const {
  if (absl::Status s = Check(FileOp::kOpen, path); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> file = target().NewRandomAccessFile(path);
  if (!file.ok()) return file.status();
  return std::make_unique<Reader>(*this, path, *std::move(file));
}

absl::Status FaultyEnv::RenameFile(const std::string& from, const std::string& to) const {
  if (absl::Status s = Check(FileOp::kRename, from, to); !s.ok()) return s;
  return target().RenameFile(from, to);
}

absl::Status FaultyEnv::RemoveFile(const std::string& path) const {
  if (absl::Status s = Check(FileOp::kRemove, path); !s.ok()) return s;
  return target().RemoveFile(path);
}

absl::Status FaultyEnv::RemoveAll(const std::string& path) const {
  if (absl::Status s = Check(FileOp::kRemove, path); !s.ok()) return s;
  return target().RemoveAll(path);
}

absl::Status FaultyEnv::CreateDirs(const std::string& path) const {
  if (absl::Status s = Check(FileOp::kCreateDirs, path); !s.ok()) return s;
  return target().CreateDirs(path);
}

absl::StatusOr<std::vector<std::string>> FaultyEnv::GetChildren(const std::string& dir) const {
  if (absl::Status s = Check(FileOp::kList, dir); !s.ok()) return s;
  return target().GetChildren(dir);
}

absl::Status FaultyEnv::SyncDir(const std::string& dir) const {
  if (absl::Status s = Check(FileOp::kSyncDir, dir); !s.ok()) return s;
  return target().SyncDir(dir);
}

}  // namespace kairos::testing
