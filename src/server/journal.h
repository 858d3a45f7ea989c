// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Journal: a server's update log as the node uses it (docs/durability.md, "The update
// log"). With a state directory it logs every event before the engine acts on it (group
// commit for ServerOptions::LogSync::kMachine), starts a new segment from a base snapshot
// once a segment is large and the shard allows it ("Bases"), and at a restart replays the
// log of the running job through its host, remembering which request ids the replay took
// so that a worker that sends one again is answered without a second application. The
// record format is engine/update_log.h's.
//
// Thread-safety: thread-compatible. Every call is made on one thread (the server's I/O
// thread), and the host is called on it; the base writer thread hands its result back
// through JournalHost::PostToNode. counters() may be read anywhere.

#ifndef KAIROS_SERVER_JOURNAL_H_
#define KAIROS_SERVER_JOURNAL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/checkpoint.h"
#include "engine/shard_engine.h"
#include "engine/update_log.h"
#include "kairos/buffer.h"
#include "server/request_window.h"
#include "spdlog/logger.h"
#include "wire/kairos.pb.h"

namespace kairos::internal {

// What a segment's base holds besides the snapshot file: the engine's clocks and the
// node's duplicate windows, one per worker rank.
struct JournalBase {
  ShardEngine::ClockState clocks;
  std::vector<RequestWindow> windows;
};

// What the journal needs from the server it serves. Called on the I/O thread.
class JournalHost {
 public:
  virtual ~JournalHost() = default;
  // Runs `task` later on the I/O thread (any thread may call it).
  virtual void PostToNode(std::function<void()> task) = 0;
  // The log can no longer be written: the server ends with `status`.
  virtual void JournalFailed(absl::Status status) = 0;
  // A logged event, handed back at a restart in its order (never a kHeader or kBase): a
  // request is decoded and handed to the engine as it was the first time. Returns the
  // request id it took in the worker's window (0: none).
  virtual uint64_t Replay(LogRecord record) = 0;
  // Bases: whether one may start now (ShardEngine::CanRebase), the state it records, a
  // snapshot of the shard (ShardEngine::Snapshot), and the restart's load of a base.
  virtual bool CanRebase() = 0;
  virtual JournalBase BaseState() = 0;
  virtual int64_t SnapshotClock() = 0;
  virtual void Snapshot(std::function<void(std::shared_ptr<ShardSnapshot>)> done) = 0;
  virtual absl::Status LoadBase(const std::string& path, const JournalBase& base) = 0;
};

class Journal {
 public:
  struct Options {
    std::string state_dir;  // ServerOptions::state_dir; empty: no log
    LogSync sync = LogSync::kProcess;
    uint64_t rebase_bytes = 0;  // ServerOptions::log_rebase_bytes; 0: never
  };
  struct Counters {
    uint64_t records = 0, bytes = 0, commits = 0, syncs = 0;  // UpdateLog's
    uint64_t replayed = 0;                                    // events replayed at the restart
    uint64_t torn_bytes = 0;                                  // the torn tail it cut off
    uint64_t rebases = 0;                                     // bases written
  };

  // `env` (the server's; it outlives this) keeps the files and starts the base writer.
  Journal(const Env& env, Options options, JournalHost* host, std::shared_ptr<spdlog::logger> log);
  // Joins the base writer. The owner makes sure nothing it posted runs afterwards.
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // With a state directory: replays this job's log found there through the host (a
  // restart) or starts a new one (a log of another job is removed). Errors: DataLoss for a
  // corrupt log, those of the file system.
  absl::Status Open(const LogHeader& header, int num_workers);

  bool enabled() const { return log_ != nullptr; }
  bool replaying() const { return replaying_; }

  // Append a worker's request as it arrived (its header and payload frames; worker `rank`
  // sent it), a worker leaving (`why` 1 dead, 2 finished) or rejoining. Nothing while
  // disabled or replaying.
  void AppendRequest(int rank, const wire::Header& header, const std::vector<Buffer>& payloads,
                     absl::Time now);
  void AppendMembership(LogRecord::Type type, int rank, int why, uint32_t node_id, absl::Time now);
  // Runs `act` (the engine's part of the event just appended) once the log holds the event
  // as the sync level promises: at once after a write for kProcess; for kMachine after the
  // one sync that the events arriving together share. Without a log, or replaying, at once.
  // After a failed write nothing more runs (JournalFailed was called).
  void AfterLog(std::function<void()> act);

  // Whether request `id` of worker `rank`, a duplicate in its window, was taken before
  // this process started (by the replay, or before the base it started from): then it is
  // answered again, not dropped. A replayed id answers so once.
  bool TakenBeforeRestart(int rank, uint64_t id);
  // A new incarnation of worker `rank`: its old ids mean nothing any more.
  void ForgetRank(int rank);

  Counters counters() const;

 private:
  struct Base : JournalBase {
    std::string path;  // the snapshot file
  };
  using Segments = std::vector<std::pair<uint64_t, std::string>>;

  absl::Status Restart(const Segments& segments);
  absl::StatusOr<std::size_t> NewestBase(const Segments& segments, std::optional<Base>* base);
  absl::StatusOr<LogReplay> ReplaySegments(const Segments& segments, std::size_t from);
  void Visit(LogRecord record);
  void Flush();
  bool Commit();
  void MaybeRebase();
  void Rebased(const absl::StatusOr<std::string>& path, uint64_t segment);
  std::string SegmentPath(uint64_t segment) const;
  std::string BaseRoot(uint64_t segment) const;
  void DropSegments(const Segments& segments, uint64_t keep_from);
  std::string EncodeBase(const Base& b) const;
  absl::StatusOr<Base> DecodeBase(const std::string& data) const;

  const Env& env_;
  const Options options_;
  JournalHost* const host_;
  const std::shared_ptr<spdlog::logger> log_text_;
  std::unique_ptr<UpdateLog> log_;  // null: no state directory (or before Open)
  LogHeader header_;
  int num_workers_ = 0;
  bool replaying_ = false;
  bool commit_posted_ = false;                     // a Flush is posted (kMachine)
  std::vector<std::function<void()>> after_sync_;  // the engine's parts of logged events
  // Request ids the replay took, per worker rank, until the worker sends them again.
  std::vector<absl::flat_hash_set<uint64_t>> replayed_of_rank_;
  // Per worker rank: the highest request id of the base the restart started from.
  std::vector<uint64_t> base_highest_;
  uint64_t segment_ = 0;       // the log's current segment
  bool rebase_busy_ = false;   // a base snapshot is being written
  std::thread rebase_writer_;  // joined before the next and in the destructor
  std::atomic<uint64_t> records_{0}, bytes_{0}, commits_{0}, syncs_{0}, replayed_{0},
      torn_bytes_{0}, rebases_{0};
};

}  // namespace kairos::internal

#endif  // KAIROS_SERVER_JOURNAL_H_
