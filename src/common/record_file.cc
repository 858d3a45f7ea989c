// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "common/record_file.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kairos/status.h"

namespace kairos::internal {

absl::Status RecordFileName::Failed(const absl::Status& env_status) const {
  const absl::StatusCode code =
      env_status.code() == absl::StatusCode::kResourceExhausted ? env_status.code() : io_error;
  return absl::Status(code, absl::StrCat(label, " ", path, ": ", env_status.message()));
}

// ---- RecordWriter --------------------------------------------------------------------------

absl::StatusOr<RecordWriter> RecordWriter::Create(const Env& env, RecordFileName name,
                                                  absl::string_view magic, uint32_t mode) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      env.NewWritableFile(name.path, {.permissions = mode});
  if (!file.ok()) return name.Failed(file.status());
  RecordWriter w(std::move(name), *std::move(file), 0);
  Pending& p = w.pending_.emplace_back();
  p.head_bytes = 0;
  p.fixed = std::string(magic);
  return w;
}

absl::StatusOr<RecordWriter> RecordWriter::Continue(const Env& env, RecordFileName name,
                                                    uint64_t length) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      env.NewWritableFile(name.path, {.continue_at = length});
  if (!file.ok()) return name.Failed(file.status());
  return RecordWriter(std::move(name), *std::move(file), length);
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

std::vector<absl::string_view> RecordWriter::Gather(uint64_t* total) const {
  std::vector<absl::string_view> pieces;
  *total = 0;
  auto add = [&](const void* p, std::size_t n) {
    if (n == 0) return;
    pieces.emplace_back(static_cast<const char*>(p), n);
    *total += n;
  };
  for (const Pending& p : pending_) {
    add(p.head, p.head_bytes);
    add(p.fixed.data(), p.fixed.size());
    for (const Buffer& b : p.parts) add(b.data(), b.size_bytes());
  }
  return pieces;
}

absl::Status RecordWriter::Flush() {
  if (!broken_.ok()) return broken_;
  if (pending_.empty()) return absl::OkStatus();
  uint64_t total = 0;
  if (file_ == nullptr) return absl::FailedPreconditionError("the record file is closed");
  const std::vector<absl::string_view> pieces = Gather(&total);
  if (absl::Status s = file_->Append(pieces); !s.ok()) return Broken(s);
  pending_.clear();
  bytes_ += total;
  return absl::OkStatus();
}

absl::Status RecordWriter::Sync(bool data_only) {
  if (!broken_.ok()) return broken_;
  if (file_ == nullptr) return absl::FailedPreconditionError("the record file is closed");
  if (absl::Status s = file_->Sync(data_only); !s.ok()) return Broken(s);
  return absl::OkStatus();
}

absl::Status RecordWriter::Close() {
  if (file_ == nullptr) return absl::OkStatus();
  const absl::Status s = file_->Close();
  file_.reset();
  if (!s.ok()) return name_.Failed(s);
  return absl::OkStatus();
}

absl::Status RecordWriter::Broken(const absl::Status& env_status) {
  broken_ = name_.Failed(env_status);
  return broken_;
}

// ---- RecordReader --------------------------------------------------------------------------

absl::StatusOr<RecordReader> RecordReader::Open(const Env& env, RecordFileName name,
                                                RecordReaderOptions options) {
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> file = env.NewRandomAccessFile(name.path);
  if (!file.ok()) {
    if (absl::IsNotFound(file.status()))
      return absl::NotFoundError(absl::StrCat("no ", name.label, " at ", name.path));
    return name.Failed(file.status());
  }
  const uint64_t size = (*file)->size();
  RecordReader r(std::move(name), options, *std::move(file));
  r.size_ = size;
  KAIROS_RETURN_IF_ERROR(r.CheckMagic());
  return r;
}

absl::Status RecordReader::CheckMagic() {
  if (size_ >= kRecordMagicBytes) {
    char magic[kRecordMagicBytes];
    KAIROS_RETURN_IF_ERROR(ReadAt(0, sizeof(magic), magic));
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
  KAIROS_RETURN_IF_ERROR(ReadAt(at, sizeof(head), head));
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
  KAIROS_RETURN_IF_ERROR(ReadAt(at, n, out));
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

absl::Status RecordReader::ReadAt(uint64_t at, std::size_t n, void* out) const {
  const absl::Status s = file_->ReadAt(at, n, static_cast<char*>(out));
  if (absl::IsOutOfRange(s))
    return Corrupt(at, "the file ends early (it shrank while it was read)");
  if (!s.ok()) return name_.Failed(s);
  return absl::OkStatus();
}

absl::StatusOr<bool> RecordReader::ZerosToTheEnd(uint64_t at) const {
  char buf[1 << 16];
  while (at < size_) {
    const std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(sizeof(buf), size_ - at));
    KAIROS_RETURN_IF_ERROR(ReadAt(at, n, buf));
    if (std::any_of(buf, buf + n, [](char c) { return c != 0; })) return false;
    at += n;
  }
  return true;
}

}  // namespace kairos::internal
