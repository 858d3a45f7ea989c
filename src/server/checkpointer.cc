// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "server/checkpointer.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace kairos::internal {

Checkpointer::Checkpointer(const Env& env, Options options,
                           std::function<void(std::function<void()>)> post,
                           std::shared_ptr<spdlog::logger> log)
    : env_(env), options_(std::move(options)), post_(std::move(post)), log_(std::move(log)) {}

Checkpointer::~Checkpointer() {
  if (writer_.joinable()) writer_.join();
}

void Checkpointer::Begin(int shard, TakeSnapshot snapshot, int64_t clock, absl::Time now) {
  shard_ = shard;
  snapshot_ = std::move(snapshot);
  next_clock_ = clock + 1;
  if (options_.every_clocks > 0) {
    next_clock_ = (clock / options_.every_clocks + 1) * options_.every_clocks;
  }
  next_time_ = now + options_.every;
}

void Checkpointer::Request(Done done) {
  if (options_.dir.empty() || !snapshot_) {
    if (done) {
      done(absl::FailedPreconditionError(absl::StrFormat(
          "server %d: %s", shard_,
          options_.dir.empty() ? "no checkpoint directory (ServerOptions::checkpoint_dir, "
                                 "kairos-server --checkpoint-dir)"
                               : "the job has not started")));
    }
    return;
  }
  if (busy_) {
    if (done) {
      waiters_.push_back(std::move(done));
    } else {
      skipped_.fetch_add(1);
    }
    return;
  }
  if (done) waiters_.push_back(std::move(done));
  busy_ = true;
  const bool delta = options_.deltas > 0 && chain_clock_ >= 0 && chain_deltas_ < options_.deltas;
  snapshot_(delta ? chain_clock_ : -1, [this](std::shared_ptr<ShardSnapshot> snap) {
    // On a lane of the engine, or here: the writer starts on the owner's thread.
    post_([this, snap = std::move(snap)] { Write(snap); });
  });
}

void Checkpointer::Write(std::shared_ptr<ShardSnapshot> snap) {
  if (writer_.joinable()) writer_.join();  // the previous one has finished
  writer_ = env_.StartThread("kairos-ckpt", [this, snap = std::move(snap)] {
    absl::StatusOr<std::string> path = WriteCheckpoint(env_, *snap, options_.dir, options_.sync);
    const int64_t clock = snap->clock;
    const bool delta = snap->delta_of >= 0;
    post_([this, path = std::move(path), clock, delta] { Written(path, clock, delta); });
  });
}

void Checkpointer::Written(const absl::StatusOr<std::string>& path, int64_t clock, bool delta) {
  busy_ = false;
  if (path.ok()) {
    written_.fetch_add(1);
    if (delta) deltas_written_.fetch_add(1);
    last_clock_.store(clock);
    chain_deltas_ = delta ? chain_deltas_ + 1 : 0;
    chain_clock_ = clock;
    log_->info("server {}: {} of clock {} written to {}", shard_,
               delta ? "delta checkpoint" : "checkpoint", clock, *path);
  } else {
    chain_clock_ = -1;  // what the failed one cut is in no file: the next is whole
    failed_.fetch_add(1);
    log_->error("server {}: checkpoint of clock {} failed: {}", shard_, clock,
                std::string(path.status().message()));
  }
  for (Done& done : std::exchange(waiters_, {})) done(path);
  if (std::exchange(last_due_, false)) return Request({});
  if (then_.has_value()) (*std::exchange(then_, std::nullopt))();
}

void Checkpointer::TakeLast() {
  if (last_taken_ || !options_.at_end || options_.dir.empty() || !snapshot_) return;
  last_taken_ = true;
  if (busy_) {
    last_due_ = true;
  } else {
    Request({});
  }
}

void Checkpointer::AfterProgress(int64_t clock, bool all_left) {
  if (options_.dir.empty() || !snapshot_) return;
  if (all_left) return TakeLast();
  if (options_.every_clocks > 0 && clock >= next_clock_) {
    next_clock_ = (clock / options_.every_clocks + 1) * options_.every_clocks;
    Request({});
  }
}

void Checkpointer::OnTick(absl::Time now) {
  if (!snapshot_ || options_.every <= absl::ZeroDuration() || now < next_time_) return;
  next_time_ = now + options_.every;
  Request({});
}

void Checkpointer::Finish(std::function<void()> then) {
  TakeLast();
  if (!busy_) return then();
  then_ = std::move(then);
}

Checkpointer::Counters Checkpointer::counters() const {
  return Counters{written_.load(), failed_.load(), skipped_.load(), deltas_written_.load(),
                  last_clock_.load()};
}

}  // namespace kairos::internal
