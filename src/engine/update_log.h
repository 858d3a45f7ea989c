// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The update log of a shard (docs/durability.md, "The update log"): every event the server
// hands its ShardEngine (a worker's request as it arrived, header and payload frames, with
// the rank it was proven to come from; a worker leaving or rejoining), with the time it was
// handed, appended in the order the engine saw them and written before the engine acts on
// them, so before any answer. The log does not interpret a request: replaying one is
// decoding it and handing it to the engine as the server did the first time. A server restarted after a crash builds the same engine from the same
// job and replays the log through it: the engine decides only from its events and their
// times, so the shard comes back to the state it had when the last record was written.
//
// File: the magic "KULOG002", then records (common/record_file.h: { u32 type, u32 CRC-32C
// of the rest of the record, u64 body length, body }, little-endian). The first record is the
// HEADER (the job's id, the shard, the number of shards and workers). A record that ends
// past the end of the file, or the last record when its checksum is wrong, or a tail of
// zero bytes is a torn tail (a crash during the write: never acknowledged), reported and
// cut off; any other bad record is corruption, refused with DataLoss naming the file and
// the byte offset. A log of the earlier format (KULOG001, which held the engine's own
// request fields) is refused by name: FailedPrecondition.
//
// Thread-safety: UpdateLog is thread-compatible (the server's I/O thread owns it);
// ReadUpdateLog is a free function.

#ifndef KAIROS_ENGINE_UPDATE_LOG_H_
#define KAIROS_ENGINE_UPDATE_LOG_H_

#include <cstdint>
#include <utility>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/record_file.h"
#include "kairos/buffer.h"

namespace kairos::internal {

// When an appended record is safe (ServerOptions::log_sync).
enum class LogSync : uint8_t {
  // Written to the operating system (write(2)) before the engine acts on it: survives the
  // server process's crash, not the machine's.
  kProcess,
  // Also on the disk (fdatasync(2)) before: survives a machine crash. Records arriving
  // together share one sync (group commit).
  kMachine,
};

// Which job, shard and shape a log belongs to. A log of another job is not replayed.
struct LogHeader {
  uint64_t job_id = 0;
  int shard = 0;
  int num_shards = 1;
  int num_workers = 1;
  friend bool operator==(const LogHeader&, const LogHeader&) = default;
};

struct LogRecord {
  enum class Type : uint32_t { kHeader = 1, kRequest = 2, kLeave = 3, kRejoin = 4, kBase = 5 };
  Type type = Type::kRequest;
  absl::Time time;  // the `now` the engine was given
  // kRequest: the request's header frame as it arrived (the serialized wire header, at most
  // kMaxLogHeaderBytes) and its payload frames (at most kMaxLogFrames, whole float32s).
  std::string header;
  std::vector<Buffer> payloads;
  // kRequest, kLeave, kRejoin: the worker; kLeave: 1 dead, 2 finished; kRejoin: its new
  // node id.
  int rank = 0;
  int why = 0;
  uint32_t node_id = 0;
  // kBase: the first record of a segment that starts from a snapshot (its contents are the
  // server's: docs/durability.md, "Bases"), at most kMaxLogBaseBytes.
  std::string data;
};

inline constexpr uint64_t kMaxLogBaseBytes = uint64_t{64} << 20;
inline constexpr uint32_t kMaxLogHeaderBytes = 64 << 10;
inline constexpr int kMaxLogFrames = 2;

// The name of segment `segment` of shard `shard`'s log in a server's state directory:
// "shard-00001.kul" (segment 0, from the job's start), "shard-00001.000003.kul".
std::string UpdateLogName(int shard, uint64_t segment = 0);
// The segments of shard `shard`'s log in `dir`, by segment number.
std::vector<std::pair<uint64_t, std::string>> UpdateLogSegments(const Env& env,
                                                                const std::string& dir, int shard);

// The largest body a record may have: what one message may carry, plus the fixed fields.
inline constexpr uint64_t kMaxLogRecordBytes = (uint64_t{1} << 31) + 4096;

struct LogReplay {
  uint64_t records = 0;      // events replayed (the header not counted)
  uint64_t valid_bytes = 0;  // the file's length up to the end of the last good record
  uint64_t torn_bytes = 0;   // cut off after it: a torn tail (0: none)
};

// Reads the log at `path`: checks its header against `expected` (FailedPrecondition naming
// both when they differ: another job's log) and hands every later record to `visit` in
// order. A torn tail is not an error (LogReplay::torn_bytes says how much); corruption is
// DataLoss ("update log /d/shard-00000.kul: byte 4096: the record's checksum does not match
// (...)"). NotFound when there is no file.
// At most `max_records` records are read (the first record alone: 1).
absl::StatusOr<LogReplay> ReadUpdateLog(const Env& env, const std::string& path,
                                        const LogHeader& expected,
                                        const std::function<void(LogRecord)>& visit,
                                        uint64_t max_records = UINT64_MAX);

// The header of the log at `path` (its first record).
absl::StatusOr<LogHeader> ReadUpdateLogHeader(const Env& env, const std::string& path);

class UpdateLog {
 public:
  // Starts a new log at `path` (replacing any file there) with `header`, written and
  // synced before this returns.
  static absl::StatusOr<std::unique_ptr<UpdateLog>> Create(const Env& env, const std::string& path,
                                                           const LogHeader& header, LogSync sync);
  // Continues the log at `path` after its replay: the file is cut to `valid_bytes` (a torn
  // tail goes) and records are appended after it.
  static absl::StatusOr<std::unique_ptr<UpdateLog>> Continue(const Env& env,
                                                             const std::string& path,
                                                             uint64_t valid_bytes, LogSync sync);
  ~UpdateLog();
  UpdateLog(const UpdateLog&) = delete;
  UpdateLog& operator=(const UpdateLog&) = delete;

  // Queues a record; nothing is written until Commit. The payloads are shared, not copied.
  void Append(const LogRecord& record);
  // Writes every queued record (one writev) and, for LogSync::kMachine, syncs the file.
  // After an error the log is unusable (the server ends: it can no longer promise what it
  // acknowledges).
  absl::Status Commit();

  bool pending() const { return writer_.pending(); }
  const std::string& path() const { return writer_.name().path; }
  uint64_t bytes() const { return writer_.bytes(); }  // the file's length
  uint64_t records() const { return records_; }       // appended by this object
  uint64_t commits() const { return commits_; }       // Commit calls that wrote something
  uint64_t syncs() const { return syncs_; }

 private:
  UpdateLog(RecordWriter writer, LogSync sync) : writer_(std::move(writer)), sync_(sync) {}

  RecordWriter writer_;  // the records queued by Append are its pending ones
  const LogSync sync_;
  uint64_t records_ = 0, commits_ = 0, syncs_ = 0;
};

}  // namespace kairos::internal

#endif  // KAIROS_ENGINE_UPDATE_LOG_H_
