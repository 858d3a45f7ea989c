// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "server/journal.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/byte_io.h"
#include "kairos/status.h"

namespace kairos::internal {
Journal::Journal(const Env& env, Options options, JournalHost* host,
                 std::shared_ptr<spdlog::logger> log)
    : env_(env), options_(std::move(options)), host_(host), log_text_(std::move(log)) {}

Journal::~Journal() {
  if (rebase_writer_.joinable()) rebase_writer_.join();
}

Journal::Counters Journal::counters() const {
  return Counters{records_.load(),  bytes_.load(),      commits_.load(), syncs_.load(),
                  replayed_.load(), torn_bytes_.load(), rebases_.load()};
}

// ------------------------------------------------------------------------ opening
// The log is a chain of segments; a segment after the first starts with a BASE (a snapshot
// of the shard and the state it was taken at, docs/durability.md, "Bases"): the replay
// starts from the newest segment whose base snapshot is on disk, or from the job's start.
absl::Status Journal::Open(const LogHeader& header, int num_workers) {
  header_ = header;
  num_workers_ = num_workers;
  replayed_of_rank_.assign(num_workers, {});
  base_highest_.assign(num_workers, 0);
  if (options_.state_dir.empty()) return absl::OkStatus();
  if (absl::Status made = env_.CreateDirs(options_.state_dir); !made.ok()) {
    return absl::InternalError(absl::StrFormat("cannot create the state directory %s: %s",
                                               options_.state_dir, made.message()));
  }
  const Segments segments = UpdateLogSegments(env_, options_.state_dir, header.shard);
  if (!segments.empty()) {
    absl::StatusOr<LogHeader> found = ReadUpdateLogHeader(env_, segments.front().second);
    if (!found.ok()) return found.status();
    if (*found == header) return Restart(segments);
    log_text_->info(
        "server {}: the update log in {} is of another job ({:016x}); starting a "
        "new one",
        header.shard, options_.state_dir, found->job_id);
    DropSegments(segments, UINT64_MAX);
  }
  segment_ = 0;
  KAIROS_ASSIGN_OR_RETURN(log_, UpdateLog::Create(env_, SegmentPath(0), header, options_.sync));
  bytes_.store(log_->bytes());
  return absl::OkStatus();
}

// The index in `segments` of the newest one whose base snapshot is there (a crash while a
// base was being written leaves it without one: the segment before it is replayed too),
// with that base; 0 and no base when the replay starts from the job's start.
absl::StatusOr<std::size_t> Journal::NewestBase(const Segments& segments,
                                                std::optional<Base>* base) {
  for (std::size_t i = segments.size(); i-- > 0;) {
    if (segments[i].first == 0) break;
    std::optional<LogRecord> first;
    absl::StatusOr<LogReplay> head = ReadUpdateLog(
        env_, segments[i].second, header_, [&first](LogRecord r) { first = std::move(r); }, 1);
    if (!head.ok()) return head.status();
    if (!first.has_value() || first->type != LogRecord::Type::kBase) {
      return absl::DataLossError(
          absl::StrCat("update log segment ", segments[i].second, " does not start with its base"));
    }
    absl::StatusOr<Base> decoded = DecodeBase(first->data);
    if (!decoded.ok()) {
      return absl::DataLossError(absl::StrCat("update log segment ", segments[i].second, ": ",
                                              decoded.status().message()));
    }
    if (env_.FileExists(decoded->path)) {
      *base = *std::move(decoded);
      return i;
    }
    if (i == 0) {
      return absl::DataLossError(absl::StrCat("update log segment ", segments[i].second,
                                              " starts from the snapshot ", decoded->path,
                                              ", which is missing, and no older segment is left"));
    }
  }
  return 0;
}

// Every segment's events from `from` in order; the last segment's replay.
absl::StatusOr<LogReplay> Journal::ReplaySegments(const Segments& segments, std::size_t from) {
  LogReplay last;
  for (std::size_t i = from; i < segments.size(); ++i) {
    absl::StatusOr<LogReplay> replay = ReadUpdateLog(env_, segments[i].second, header_,
                                                     [this](LogRecord r) { Visit(std::move(r)); });
    if (!replay.ok()) return replay.status();
    if (replay->torn_bytes > 0 && i + 1 < segments.size()) {
      return absl::DataLossError(
          absl::StrFormat("update log segment %s is torn (%d bytes) but is not the last",
                          segments[i].second, replay->torn_bytes));
    }
    last = *replay;
  }
  return last;
}

// One event of the log, handed to the host as when it was first taken; the ids it takes
// are remembered until their worker sends them again.
void Journal::Visit(LogRecord record) {
  switch (record.type) {
    case LogRecord::Type::kHeader:
    case LogRecord::Type::kBase:
      return;
    case LogRecord::Type::kRejoin:
      ForgetRank(record.rank);
      break;
    case LogRecord::Type::kLeave:
    case LogRecord::Type::kRequest:
      break;
  }
  const LogRecord::Type type = record.type;
  const int rank = record.rank;
  replayed_.fetch_add(1);
  const uint64_t id = host_->Replay(std::move(record));
  if (type == LogRecord::Type::kRequest && id != 0 && rank >= 0 && rank < num_workers_) {
    replayed_of_rank_[rank].insert(id);
  }
}

absl::Status Journal::Restart(const Segments& segments) {
  std::optional<Base> base;
  KAIROS_ASSIGN_OR_RETURN(const std::size_t from, NewestBase(segments, &base));
  replaying_ = true;
  absl::Status status;
  if (base.has_value()) {
    status = host_->LoadBase(base->path, *base);
    for (int w = 0; status.ok() && w < num_workers_; ++w) {
      base_highest_[w] = base->windows[w].highest();
    }
  }
  absl::StatusOr<LogReplay> last =
      status.ok() ? ReplaySegments(segments, from) : absl::StatusOr<LogReplay>(status);
  replaying_ = false;
  if (!last.ok()) return last.status();
  torn_bytes_.store(last->torn_bytes);
  if (last->torn_bytes > 0) {
    log_text_->warn(
        "server {}: the update log {} ends in a torn record ({} bytes, never "
        "acknowledged): cut off",
        header_.shard, segments.back().second, last->torn_bytes);
  }
  DropSegments(segments, segments[from].first);
  segment_ = segments.back().first;
  KAIROS_ASSIGN_OR_RETURN(
      log_, UpdateLog::Continue(env_, segments.back().second, last->valid_bytes, options_.sync));
  bytes_.store(log_->bytes());
  log_text_->info("server {}: restarted into job {:016x}: replayed {} events from {}{}",
                  header_.shard, header_.job_id, replayed_.load(), options_.state_dir,
                  base.has_value() ? absl::StrCat(" after the base ", base->path) : "");
  return absl::OkStatus();
}

// ------------------------------------------------------------------------ appending
void Journal::AppendRequest(int rank, const wire::Header& header,
                            const std::vector<Buffer>& payloads, absl::Time now) {
  if (log_ == nullptr || replaying_) return;
  LogRecord record;
  record.type = LogRecord::Type::kRequest;
  record.time = now;
  record.rank = rank;
  record.header = header.SerializeAsString();
  record.payloads = payloads;  // shared, not copied
  log_->Append(record);
}

void Journal::AppendMembership(LogRecord::Type type, int rank, int why, uint32_t node_id,
                               absl::Time now) {
  if (log_ == nullptr || replaying_) return;
  LogRecord record;
  record.type = type;
  record.time = now;
  record.rank = rank;
  record.why = why;
  record.node_id = node_id;
  log_->Append(record);
}

void Journal::AfterLog(std::function<void()> act) {
  if (log_ == nullptr || replaying_) return act();
  if (options_.sync == LogSync::kProcess) {
    if (!Commit()) return;
    act();
    return MaybeRebase();
  }
  after_sync_.push_back(std::move(act));
  if (commit_posted_) return;
  commit_posted_ = true;
  host_->PostToNode([this] {
    commit_posted_ = false;
    Flush();
  });
}

// Commits what is queued and runs the engine's part of each event, in order.
void Journal::Flush() {
  if (log_ == nullptr || !Commit()) return;
  for (auto& act : std::exchange(after_sync_, {})) act();
  MaybeRebase();
}

bool Journal::Commit() {
  if (absl::Status s = log_->Commit(); !s.ok()) {
    after_sync_.clear();
    // The log stays broken (every later Commit fails): nothing more is acted on or
    // acknowledged, and the server ends.
    host_->JournalFailed(absl::Status(
        s.code(), absl::StrFormat("server %d: %s; the server stops: it could not keep what "
                                  "it acknowledges",
                                  header_.shard, s.message())));
    return false;
  }
  records_.store(log_->records());
  bytes_.store(log_->bytes());
  commits_.store(log_->commits());
  syncs_.store(log_->syncs());
  return true;
}

bool Journal::TakenBeforeRestart(int rank, uint64_t id) {
  if (rank < 0 || rank >= num_workers_) return false;
  return replayed_of_rank_[rank].erase(id) > 0 || id <= base_highest_[rank];
}

void Journal::ForgetRank(int rank) {
  if (rank < 0 || rank >= num_workers_) return;
  replayed_of_rank_[rank].clear();
  base_highest_[rank] = 0;
}

// ------------------------------------------------------------------------ bases
// A new base (docs/durability.md, "Bases"): once the current segment holds rebase_bytes
// and the shard holds nothing beyond its values and the clocks (JournalHost::CanRebase), a
// new segment starts with a base record, and a snapshot of the shard is written beside it;
// once it is on disk the older segments go. Only between events (not while a group of
// logged events waits for its sync).
void Journal::MaybeRebase() {
  if (log_ == nullptr || replaying_ || rebase_busy_ || options_.rebase_bytes == 0 ||
      !after_sync_.empty() || log_->pending() || log_->bytes() < options_.rebase_bytes ||
      !host_->CanRebase()) {
    return;
  }
  const uint64_t next = segment_ + 1;
  Base base;
  static_cast<JournalBase&>(base) = host_->BaseState();
  base.path = (std::filesystem::path(BaseRoot(next)) / CheckpointDirName(host_->SnapshotClock()) /
               CheckpointFileName(header_.shard, header_.num_shards))
                  .string();
  absl::StatusOr<std::unique_ptr<UpdateLog>> log =
      UpdateLog::Create(env_, SegmentPath(next), header_, options_.sync);
  if (log.ok()) {
    LogRecord record;
    record.type = LogRecord::Type::kBase;
    record.data = EncodeBase(base);
    (*log)->Append(record);
    if (absl::Status s = (*log)->Commit(); !s.ok()) log = s;
  }
  if (!log.ok()) {
    log_text_->error("server {}: cannot start a new update log segment: {}", header_.shard,
                     std::string(log.status().message()));
    (void)env_.RemoveFile(SegmentPath(next));
    return;
  }
  log_ = *std::move(log);
  segment_ = next;
  rebase_busy_ = true;
  const std::string root = BaseRoot(next);
  host_->Snapshot([this, root, next](std::shared_ptr<ShardSnapshot> snap) {
    host_->PostToNode([this, root, next, snap = std::move(snap)] {
      if (rebase_writer_.joinable()) rebase_writer_.join();
      rebase_writer_ = env_.StartThread("kairos-base", [this, root, next, snap] {
        absl::StatusOr<std::string> path = WriteCheckpoint(env_, *snap, root, /*sync=*/true);
        host_->PostToNode([this, path = std::move(path), next] { Rebased(path, next); });
      });
    });
  });
}

void Journal::Rebased(const absl::StatusOr<std::string>& path, uint64_t segment) {
  rebase_busy_ = false;
  if (!path.ok()) {
    log_text_->error(
        "server {}: the update log's base snapshot failed (the log keeps its "
        "older segments): {}",
        header_.shard, std::string(path.status().message()));
    return;
  }
  rebases_.fetch_add(1);
  DropSegments(UpdateLogSegments(env_, options_.state_dir, header_.shard), segment);
  log_text_->debug("server {}: update log rebased on {}", header_.shard, *path);
}

std::string Journal::SegmentPath(uint64_t segment) const {
  return (std::filesystem::path(options_.state_dir) / UpdateLogName(header_.shard, segment))
      .string();
}

std::string Journal::BaseRoot(uint64_t segment) const {
  return (std::filesystem::path(options_.state_dir) /
          absl::StrFormat("base-%05d.%06d", header_.shard, segment))
      .string();
}

// Removes the segments below `keep_from` and their base snapshots.
void Journal::DropSegments(const Segments& segments, uint64_t keep_from) {
  for (const auto& [n, path] : segments) {
    if (n >= keep_from) continue;
    (void)env_.RemoveFile(path);
    if (n > 0) (void)env_.RemoveAll(BaseRoot(n));
  }
}

// A base record: version 1, the clock base, per worker its clock and state, the windows,
// the snapshot's path.
std::string Journal::EncodeBase(const Base& b) const {
  ByteWriter w;
  w.Put<uint32_t>(1);
  w.Put(b.clocks.clock_base);
  w.Put(static_cast<uint32_t>(b.clocks.clocks.size()));
  for (std::size_t i = 0; i < b.clocks.clocks.size(); ++i) {
    w.Put(b.clocks.clocks[i]);
    w.Put(static_cast<uint8_t>(b.clocks.states[i]));
  }
  for (const RequestWindow& window : b.windows) window.AppendBytes(&w.bytes());
  w.PutString(b.path);
  return std::move(w.bytes());
}

absl::StatusOr<Journal::Base> Journal::DecodeBase(const std::string& data) const {
  Base b;
  ByteReader in(data);
  uint32_t version = 0, n = 0;
  bool ok = in.Get(&version) && in.Get(&b.clocks.clock_base) && in.Get(&n);
  if (!ok || version != 1 || n != static_cast<uint32_t>(num_workers_)) {
    return absl::DataLossError(absl::StrFormat(
        "a base record of version %d for %d workers (this job: %d)", version, n, num_workers_));
  }
  for (uint32_t w = 0; w < n && ok; ++w) {
    int64_t clock = 0;
    uint8_t state = 0;
    ok = in.Get(&clock) && in.Get(&state) &&
         state <= static_cast<uint8_t>(policy::MemberState::kFinished);
    b.clocks.clocks.push_back(clock);
    b.clocks.states.push_back(static_cast<policy::MemberState>(state));
  }
  if (!ok || in.Peek(RequestWindow::kBytes * n) == nullptr) {
    return absl::DataLossError("a base record cut short");
  }
  for (uint32_t w = 0; w < n; ++w) {
    b.windows.push_back(RequestWindow::FromBytes(in.Peek(RequestWindow::kBytes)));
    in.Skip(RequestWindow::kBytes);
  }
  if (!in.GetString(data.size(), &b.path) || in.left() != 0) {
    return absl::DataLossError("a base record's path does not fill it");
  }
  return b;
}

}  // namespace kairos::internal
