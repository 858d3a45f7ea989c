// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// SimServer (see sim_server.h): events of the simulation turned into the engine's, and its
// answers into served reads (with an eager read's refresh verdict).

#include "sim/sim_server.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kairos/job.h"

namespace kairos::sim {

using internal::EngineAnswer;
using internal::EngineRequest;
using policy::MemberState;
using policy::Tick;
using policy::WorkerId;

SimServer::SimServer(const policy::PolicySpec& spec, int num_workers,
                     const Eigen::VectorXf& initial_params, float learning_rate,
                     int push_log_size)
    : size_(static_cast<uint64_t>(initial_params.size())) {
  JobConfig job;
  job.policy = policy::ToString(spec);
  job.chunk_elements = size_;  // one chunk: the simulated server holds the whole vector
  job.tables.push_back({"params", size_, Initializer::Zeros(), {"sgd", learning_rate}});
  internal::EngineOptions options;
  options.inline_apply_bytes = std::numeric_limits<int64_t>::max();  // all on this thread
  options.max_read_wait = absl::InfiniteDuration();  // virtual time has no tick
  options.push_log_size = push_log_size;
  absl::StatusOr<std::unique_ptr<internal::ShardEngine>> engine =
      internal::ShardEngine::Create(job, spec, /*shard=*/0, /*num_shards=*/1, num_workers,
                                    options, this);
  // Only an allocation failure or a bad spec can fail, both excluded by the REQUIRES.
  if (!engine.ok()) std::abort();
  engine_ = *std::move(engine);
  internal::ShardChunk& chunk = engine_->shard().tables()[0].chunks[0];
  std::copy(initial_params.begin(), initial_params.end(), chunk.values.data());
}

Eigen::Map<const Eigen::VectorXf> SimServer::params() const {
  const internal::ShardChunk& chunk = engine_->shard().tables()[0].chunks[0];
  return Eigen::Map<const Eigen::VectorXf>(chunk.values.data(),
                                           static_cast<Eigen::Index>(size_));
}

std::vector<uint64_t> SimServer::dropped() const {
  std::vector<uint64_t> out;
  for (const WorkerMetrics& m : engine_->metrics()) out.push_back(m.dropped);
  return out;
}

void SimServer::RunOnLane(uint64_t /*key*/, std::function<void()> job) { job(); }

void SimServer::Answer(EngineAnswer answer) {
  switch (answer.kind) {
    case EngineAnswer::Kind::kRead:
      // The values are read through params(); holding them would make the next update
      // copy the chunk.
      served_.push_back({answer.request.rank, answer.request.clock, answer.refresh});
      return;
    case EngineAnswer::Kind::kPushed:  // the simulation needs no acknowledgement
    case EngineAnswer::Kind::kFinished:
    case EngineAnswer::Kind::kError:
    case EngineAnswer::Kind::kAssigned:  // the simulation sends neither
    case EngineAnswer::Kind::kLearningRateSet:
      return;
  }
}

EngineRequest SimServer::Request(EngineRequest::Kind kind, WorkerId w, Tick clock) {
  EngineRequest r;
  r.kind = kind;
  r.request_id = next_id_++;
  r.sender = static_cast<uint32_t>(w);
  r.rank = w;
  r.table = 0;
  r.offset = 0;
  r.length = size_;
  r.clock = clock;
  return r;
}

std::vector<ServedRead> SimServer::TakeServed() { return std::exchange(served_, {}); }

std::vector<ServedRead> SimServer::OnRead(WorkerId w, Tick clock, absl::Time now) {
  engine_->OnPull(Request(EngineRequest::Kind::kPull, w, clock), now);
  return TakeServed();
}

std::vector<ServedRead> SimServer::OnPush(WorkerId w, Tick clock,
                                          const Eigen::VectorXf& gradient, absl::Time now,
                                          float extra, bool pull_after) {
  EngineRequest r = Request(EngineRequest::Kind::kPush, w, clock);
  r.worker_scale = extra;
  r.pull_after = pull_after;
  Buffer g = Buffer::Allocate(size_);
  std::copy(gradient.begin(), gradient.end(), g.data());
  engine_->OnPush(r, std::move(g), now);
  return TakeServed();
}

std::vector<ServedRead> SimServer::OnClock(WorkerId w, Tick clock, absl::Time now) {
  engine_->OnClock(Request(EngineRequest::Kind::kClock, w, clock), now);
  return TakeServed();
}

std::vector<ServedRead> SimServer::OnLeave(WorkerId w, MemberState why, absl::Time now) {
  engine_->OnLeave(w, why, now);
  return TakeServed();
}

}  // namespace kairos::sim
