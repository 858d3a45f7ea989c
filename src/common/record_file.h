// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Record files (docs/durability.md, "Record format"): the one format under the checkpoints
// (src/engine/checkpoint.h) and the update log (src/engine/update_log.h), as leveldb's
// log_writer and log_reader serve both its write-ahead log and its MANIFEST. A file is an
// 8-byte magic that names its kind, then records
//
//   { u32 type, u32 checksum, u64 length, body (length bytes) }      little-endian
//
// the checksum being CRC-32C (common/crc32c.h) of the type, the length and the body: the
// whole record but itself. A file of an older format may use another checksum; a reader is
// given, with each magic it accepts, the checksum of its records.
//
// RecordWriter appends records, each a fixed part and shared payload buffers written from
// their own memory (writev: the update log's pushes are never copied). RecordReader walks
// the records with bounds checks: no record longer than the caller's limit, or than what
// is left of the file, is allocated for. Where the caller allows a torn tail (the update
// log: what a crash during a write leaves), a record that ends past the end of the file,
// a tail of zero bytes, or a last record the caller rejects (a wrong checksum) is the
// torn tail: the reader stops before it and says how many bytes it holds. Any other bad
// record is corruption: DataLoss naming the file and the record's byte offset.
//
// Every file operation goes through the Env given (kairos/env.h), so that tests can fail
// them.
//
// Thread-safety: the classes are thread-compatible; the functions are thread-safe.

#ifndef KAIROS_COMMON_RECORD_FILE_H_
#define KAIROS_COMMON_RECORD_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/crc32c.h"
#include "kairos/buffer.h"
#include "kairos/env.h"

namespace kairos::internal {

// ---- Records -----------------------------------------------------------------------------

inline constexpr std::size_t kRecordMagicBytes = 8;
inline constexpr std::size_t kRecordHeadBytes = 16;  // type, checksum, length

// Extends a running checksum (0 to start) over n bytes at p; Crc32cExtend is one.
using RecordChecksum = uint32_t (*)(uint32_t crc, const void* p, std::size_t n);

// A kind of record file: its magic (kRecordMagicBytes bytes) and its records' checksum.
// Formats are constants: a reader keeps a view of them.
struct RecordFormat {
  absl::string_view magic;
  RecordChecksum checksum = &Crc32cExtend;
};

// How a file names itself in errors, "<label> <path>: <what>", and the status code of its
// failed file operations (RecordFileName::Failed).
struct RecordFileName {
  std::string path;
  std::string label;  // "update log", "checkpoint"
  absl::StatusCode io_error = absl::StatusCode::kInternal;

  // An Env's failed call as this file's error: "<label> <path>: <env's message>", of code
  // ResourceExhausted when the env's is (a full disk), io_error otherwise.
  absl::Status Failed(const absl::Status& env_status) const;
};

// Appends records (CRC-32C) to a file. Records are queued by Add and written by Flush,
// all of them with one writev. After a failed write or sync the writer is broken: every
// later Flush or Sync returns that error (part of a record may be in the file).
class RecordWriter {
 public:
  // Creates the file (replacing any; a new one gets `mode`, e.g. 0600 for one that holds
  // secrets) and queues its magic, written by the first Flush.
  static absl::StatusOr<RecordWriter> Create(const Env& env, RecordFileName name,
                                             absl::string_view magic, uint32_t mode = 0644);
  // Opens the file to append after its first `length` bytes; what follows them is cut off
  // (and the cut synced) before this returns.
  static absl::StatusOr<RecordWriter> Continue(const Env& env, RecordFileName name,
                                               uint64_t length);

  // Queues a record whose body is `fixed`, then the bytes of `parts`: shared, not copied,
  // written from their own memory by Flush. Its checksum is computed here.
  void Add(uint32_t type, std::string fixed, std::vector<Buffer> parts = {});
  // Writes every queued record.
  absl::Status Flush();
  // fsync(2), or fdatasync(2) with `data_only`.
  absl::Status Sync(bool data_only = false);
  // Closes the file (queued records are not written): a failed close(2) is an error.
  absl::Status Close();

  bool pending() const { return !pending_.empty(); }
  uint64_t bytes() const { return bytes_; }  // the file's length once Flush has written
  const RecordFileName& name() const { return name_; }

 private:
  struct Pending {
    char head[kRecordHeadBytes];
    std::size_t head_bytes = kRecordHeadBytes;  // 0 for the magic, which is all `fixed`
    std::string fixed;
    std::vector<Buffer> parts;
  };

  RecordWriter(RecordFileName name, std::unique_ptr<WritableFile> file, uint64_t bytes)
      : name_(std::move(name)), file_(std::move(file)), bytes_(bytes) {}
  std::vector<absl::string_view> Gather(uint64_t* total) const;
  absl::Status Broken(const absl::Status& env_status);

  RecordFileName name_;
  std::unique_ptr<WritableFile> file_;  // null once closed
  uint64_t bytes_ = 0;
  std::vector<Pending> pending_;
  absl::Status broken_;
};

struct RecordReaderOptions {
  // The formats accepted, the current one first.
  std::span<const RecordFormat> formats;
  // The longest body a record may have: a longer one is corruption, refused before
  // anything is allocated for it.
  uint64_t max_body = 0;
  // Whether a bad tail is a torn tail, reported and cut (true), or corruption (false).
  bool torn_tail = false;
};

// Where a record lies in its file.
struct RecordHead {
  uint32_t type = 0;
  uint64_t offset = 0;  // of its head
  uint64_t length = 0;  // of its body
  uint64_t end = 0;     // offset + kRecordHeadBytes + length: where the next one starts
};

// Reads records front to back. For each: Next gives its head; Read hands over its body, in
// order, in pieces of the caller's choosing (each read checked against the body's length);
// ChecksumMatches checks it once all of it was read. A record the caller finds bad goes to
// Reject, which decides between torn tail and corruption.
class RecordReader {
 public:
  // Opens the file and checks its magic: NotFound ("no <label> at <path>") when there is
  // no file; DataLoss when its magic is none of `options.formats`'.
  static absl::StatusOr<RecordReader> Open(const Env& env, RecordFileName name,
                                           RecordReaderOptions options);

  // The next record's head; nullopt at the end of the file, or of the good records when
  // the rest is a torn tail (torn_bytes() > 0). Corruption: a body longer than max_body,
  // and, without torn tails, a file that ends inside a record.
  absl::StatusOr<std::optional<RecordHead>> Next();
  // The next n bytes of the current record's body, into `out`.
  absl::Status Read(void* out, std::size_t n);
  // The rest of the current record's body.
  absl::Status ReadRest(std::string* out);
  // Whether all of the current record's body was read and its checksum matches.
  bool ChecksumMatches() const;
  // The current record is bad (`what`). With torn tails the last record of the file is the
  // torn tail: the reader stops before it (Next gives nullopt) and this returns OK.
  // Otherwise, and for any other record, DataLoss at the record's offset.
  absl::Status Reject(absl::string_view what);
  // DataLoss naming the file and byte `at`: "<label> <path>: byte <at>: <what>", or, when
  // a torn file cannot be told from a corrupt one (no torn tails), "<label> <path> is torn
  // or corrupt at byte <at>: <what>".
  absl::Status Corrupt(uint64_t at, absl::string_view what) const;

  const RecordFormat& format() const { return *format_; }  // the one of the file's magic
  uint64_t size() const { return size_; }                  // the file's length
  uint64_t torn_bytes() const { return torn_bytes_; }      // the torn tail's length (0: none)

 private:
  RecordReader(RecordFileName name, RecordReaderOptions options,
               std::unique_ptr<RandomAccessFile> file)
      : name_(std::move(name)), options_(options), file_(std::move(file)) {}
  absl::Status CheckMagic();
  // Reads n bytes at `at`: a file that ends early is corruption, another failure an error.
  absl::Status ReadAt(uint64_t at, std::size_t n, void* out) const;
  absl::StatusOr<bool> ZerosToTheEnd(uint64_t at) const;
  absl::StatusOr<std::optional<RecordHead>> Tail(uint64_t at, absl::string_view what);

  RecordFileName name_;
  RecordReaderOptions options_;
  std::unique_ptr<RandomAccessFile> file_;
  const RecordFormat* format_ = nullptr;
  uint64_t size_ = 0;
  uint64_t at_ = kRecordMagicBytes;  // where the next record starts
  bool stopped_ = false;
  uint64_t torn_bytes_ = 0;
  // The current record.
  RecordHead head_;
  bool in_record_ = false;
  uint32_t stored_crc_ = 0, crc_ = 0;
  uint64_t read_ = 0;
};

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_RECORD_FILE_H_
