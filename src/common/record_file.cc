// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "common/record_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kairos/status.h"

namespace kairos::internal {

// ---- The system --------------------------------------------------------------------------

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

absl::Status RecordFileName::Errno(absl::string_view op, int err) const {
  return ErrnoError(io_error, absl::StrCat(label, " ", path, ": ", op), err);
}

// ---- RecordWriter --------------------------------------------------------------------------

absl::StatusOr<RecordWriter> RecordWriter::Create(RecordFileName name, absl::string_view magic,
                                                  mode_t mode) {
  FileDescriptor fd = FileDescriptor::Open(name.path, O_WRONLY | O_CREAT | O_TRUNC, mode);
  if (!fd.valid()) return name.Errno("create");
  RecordWriter w(std::move(name), std::move(fd), 0);
  Pending& p = w.pending_.emplace_back();
  p.head_bytes = 0;
  p.fixed = std::string(magic);
  return w;
}

absl::StatusOr<RecordWriter> RecordWriter::Continue(RecordFileName name, uint64_t length) {
  FileDescriptor fd = FileDescriptor::Open(name.path, O_WRONLY);
  if (!fd.valid()) return name.Errno("open");
  if (::ftruncate(fd.get(), static_cast<off_t>(length)) != 0) return name.Errno("truncate");
  if (::lseek(fd.get(), static_cast<off_t>(length), SEEK_SET) < 0) return name.Errno("seek");
  if (::fsync(fd.get()) != 0) return name.Errno("fsync");
  return RecordWriter(std::move(name), std::move(fd), length);
}

void RecordWriter::Add(uint32_t type, std::string fixed, std::vector<Buffer> parts) {
  uint64_t length = fixed.size();
  for (const Buffer& b : parts) length += b.size_bytes();
  uint32_t crc = Crc32cExtend(0, &type, sizeof(type));
  crc = Crc32cExtend(crc, &length, sizeof(length));
  crc = Crc32cExtend(crc, fixed.data(), fixed.size());
  for (const Buffer& b : parts) crc = Crc32cExtend(crc, b.data(), b.size_bytes());
  Pending& p = pending_.emplace_back();
  std::memcpy(p.head, &type, 4);
  std::memcpy(p.head + 4, &crc, 4);
  std::memcpy(p.head + 8, &length, 8);
  p.fixed = std::move(fixed);
  p.parts = std::move(parts);
}

std::vector<iovec> RecordWriter::Gather(uint64_t* total) const {
  std::vector<iovec> iov;
  *total = 0;
  auto add = [&](const void* p, std::size_t n) {
    if (n == 0) return;
    iov.push_back({const_cast<void*>(p), n});
    *total += n;
  };
  for (const Pending& p : pending_) {
    add(p.head, p.head_bytes);
    add(p.fixed.data(), p.fixed.size());
    for (const Buffer& b : p.parts) add(b.data(), b.size_bytes());
  }
  return iov;
}

absl::Status RecordWriter::Flush() {
  if (!broken_.ok()) return broken_;
  if (pending_.empty()) return absl::OkStatus();
  uint64_t total = 0;
  std::vector<iovec> iov = Gather(&total);
  if (!WriteAll(fd_.get(), iov)) return Broken("write");
  pending_.clear();
  bytes_ += total;
  return absl::OkStatus();
}

absl::Status RecordWriter::Sync(bool data_only) {
  if (!broken_.ok()) return broken_;
  const int rc = data_only ? ::fdatasync(fd_.get()) : ::fsync(fd_.get());
  if (rc != 0) return Broken(data_only ? "fdatasync" : "fsync");
  return absl::OkStatus();
}

absl::Status RecordWriter::Close() {
  if (!fd_.Close()) return name_.Errno("close");
  return absl::OkStatus();
}

absl::Status RecordWriter::Broken(absl::string_view op) {
  broken_ = name_.Errno(op);
  return broken_;
}

// ---- RecordReader --------------------------------------------------------------------------

absl::StatusOr<RecordReader> RecordReader::Open(RecordFileName name, RecordReaderOptions options) {
  FileDescriptor fd = FileDescriptor::Open(name.path, O_RDONLY);
  if (!fd.valid()) {
    if (errno == ENOENT)
      return absl::NotFoundError(absl::StrCat("no ", name.label, " at ", name.path));
    return name.Errno("open");
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return name.Errno("stat");
  RecordReader r(std::move(name), options, std::move(fd));
  r.size_ = static_cast<uint64_t>(st.st_size);
  KAIROS_RETURN_IF_ERROR(r.CheckMagic());
  return r;
}

absl::Status RecordReader::CheckMagic() {
  if (size_ >= kRecordMagicBytes) {
    char magic[kRecordMagicBytes];
    if (!ReadAllAt(fd_.get(), 0, magic, sizeof(magic))) return ReadFailed(0);
    for (const RecordFormat& f : options_.formats) {
      if (f.magic == absl::string_view(magic, sizeof(magic))) {
        format_ = &f;
        return absl::OkStatus();
      }
    }
  }
  std::vector<absl::string_view> magics;
  for (const RecordFormat& f : options_.formats) magics.push_back(f.magic);
  return Corrupt(0, absl::StrCat("not a kairos ", name_.label, " (no ",
                                 absl::StrJoin(magics, " or "), " magic)"));
}

absl::StatusOr<std::optional<RecordHead>> RecordReader::Next() {
  in_record_ = false;
  if (stopped_ || at_ >= size_) return std::nullopt;
  const uint64_t at = at_;
  if (size_ - at < kRecordHeadBytes) return Tail(at, "the file ends inside a record's head");
  char head[kRecordHeadBytes];
  if (!ReadAllAt(fd_.get(), at, head, sizeof(head))) return ReadFailed(at);
  RecordHead h;
  h.offset = at;
  std::memcpy(&h.type, head, 4);
  std::memcpy(&stored_crc_, head + 4, 4);
  std::memcpy(&h.length, head + 8, 8);
  if (options_.torn_tail && h.type == 0 && h.length == 0) {
    absl::StatusOr<bool> zeros = ZerosToTheEnd(at);
    if (!zeros.ok()) return zeros.status();
    if (*zeros) return Tail(at, "");  // a machine crash left zeros where records were to go
  }
  if (h.length > options_.max_body) {
    return Corrupt(
        at, absl::StrCat("a record of ", h.length, " bytes (at most ", options_.max_body, ")"));
  }
  if (h.length > size_ - at - kRecordHeadBytes) {  // it was being written
    return Tail(at, absl::StrCat("a record of ", h.length, " bytes ends past the end of the file"));
  }
  h.end = at + kRecordHeadBytes + h.length;
  head_ = h;
  in_record_ = true;
  read_ = 0;
  crc_ = format_->checksum(0, &h.type, sizeof(h.type));
  crc_ = format_->checksum(crc_, &h.length, sizeof(h.length));
  at_ = h.end;
  return h;
}

absl::StatusOr<std::optional<RecordHead>> RecordReader::Tail(uint64_t at, absl::string_view what) {
  if (!options_.torn_tail) return Corrupt(at, what);
  torn_bytes_ = size_ - at;
  stopped_ = true;
  return std::nullopt;
}

absl::Status RecordReader::Read(void* out, std::size_t n) {
  if (!in_record_ || n > head_.length - read_) {
    return absl::InternalError(absl::StrCat(name_.label, " ", name_.path,
                                            ": a read past the end of the record at byte ",
                                            head_.offset));
  }
  if (n == 0) return absl::OkStatus();  // (zlib's crc32 of no buffer restarts from 0)
  const uint64_t at = head_.offset + kRecordHeadBytes + read_;
  if (!ReadAllAt(fd_.get(), at, out, n)) return ReadFailed(at);
  crc_ = format_->checksum(crc_, out, n);
  read_ += n;
  return absl::OkStatus();
}

absl::Status RecordReader::ReadRest(std::string* out) {
  // At most max_body bytes, and no more than the file holds (Next checked both).
  out->resize(in_record_ ? head_.length - read_ : 0);
  return Read(out->data(), out->size());
}

bool RecordReader::ChecksumMatches() const {
  return in_record_ && read_ == head_.length && crc_ == stored_crc_;
}

absl::Status RecordReader::Reject(absl::string_view what) {
  if (options_.torn_tail && in_record_ && head_.end == size_) {
    // The last record: written in part when the process died.
    in_record_ = false;
    torn_bytes_ = size_ - head_.offset;
    stopped_ = true;
    return absl::OkStatus();
  }
  return Corrupt(head_.offset, what);
}

absl::Status RecordReader::Corrupt(uint64_t at, absl::string_view what) const {
  if (options_.torn_tail) {
    return absl::DataLossError(
        absl::StrCat(name_.label, " ", name_.path, ": byte ", at, ": ", what));
  }
  return absl::DataLossError(
      absl::StrCat(name_.label, " ", name_.path, " is torn or corrupt at byte ", at, ": ", what));
}

absl::Status RecordReader::ReadFailed(uint64_t at) const {
  if (errno == 0) return Corrupt(at, "the file ends early (it shrank while it was read)");
  return name_.Errno("read");
}

absl::StatusOr<bool> RecordReader::ZerosToTheEnd(uint64_t at) const {
  char buf[1 << 16];
  while (at < size_) {
    const std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(sizeof(buf), size_ - at));
    if (!ReadAllAt(fd_.get(), at, buf, n)) return ReadFailed(at);
    if (std::any_of(buf, buf + n, [](char c) { return c != 0; })) return false;
    at += n;
  }
  return true;
}

}  // namespace kairos::internal
