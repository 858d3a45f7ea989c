// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The shard engine's tests' fixture: a recording host that runs lane jobs when the test
// says so (or at once), so a test can hold a chunk's work and see what is decided before
// it runs, and an engine over one table driven by events.

#ifndef KAIROS_TESTS_ENGINE_ENGINE_FIXTURE_H_
#define KAIROS_TESTS_ENGINE_ENGINE_FIXTURE_H_

#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "engine/shard_engine.h"
#include "gtest/gtest.h"
#include "kairos/job.h"
#include "kairos/updater.h"
#include "policy/policy.h"

namespace kairos::internal {

inline const absl::Time kT0 = absl::UnixEpoch();

// A sparse request's key frame: the keys as little-endian uint64 in a float buffer.
inline Buffer Keys(const std::vector<uint64_t>& keys) {
  Buffer b = Buffer::Allocate(keys.size() * 2);
  if (!keys.empty()) std::memcpy(b.data(), keys.data(), keys.size() * sizeof(uint64_t));
  return b;
}

// A sparse push or pull of `keys` of table `table`.
inline EngineRequest SparseRequest(EngineRequest::Kind kind, uint64_t id, int rank,
                                   int64_t clock, const std::vector<uint64_t>& keys,
                                   uint32_t table = 0) {
  EngineRequest r;
  r.kind = kind;
  r.request_id = id;
  r.rank = rank;
  r.table = table;
  r.length = keys.size();
  r.clock = clock;
  r.keys = Keys(keys);
  return r;
}

// Records answers; runs lane jobs at once, or holds them until Release().
class RecordingHost final : public EngineHost {
 public:
  void RunOnLane(uint64_t /*key*/, std::function<void()> job) override {
    if (hold_) {
      held_.push_back(std::move(job));
    } else {
      job();
    }
  }
  void Answer(EngineAnswer a) override { answers.push_back(std::move(a)); }

  void Hold() { hold_ = true; }
  void Release() {
    hold_ = false;
    while (!held_.empty()) {
      std::function<void()> job = std::move(held_.front());
      held_.pop_front();
      job();
    }
  }
  std::vector<EngineAnswer> Take() { return std::exchange(answers, {}); }

  std::vector<EngineAnswer> answers;

 private:
  bool hold_ = false;
  std::deque<std::function<void()>> held_;
};

struct EngineFixture {
  // One table "w" of `size` zeros, SGD with learning rate `lr` (1), chunks of `chunk`
  // elements, its non-finite pushes refused or skipped (`nonfinite`).
  EngineFixture(const std::string& policy, int workers, uint64_t size = 4, uint64_t chunk = 4,
                EngineOptions options = {}, float lr = 1.0f,
                NonFinitePolicy nonfinite = NonFinitePolicy::kRefuse) {
    JobConfig job;
    job.policy = policy;
    job.chunk_elements = chunk;
    job.tables.push_back({"w", size, Initializer::Zeros(), {"sgd", lr}, nonfinite});
    absl::StatusOr<policy::PolicySpec> spec = policy::ParsePolicySpec(policy);
    EXPECT_TRUE(spec.ok()) << spec.status();
    auto e = ShardEngine::Create(job, *spec, 0, 1, workers, options, &host);
    EXPECT_TRUE(e.ok()) << e.status();
    engine = *std::move(e);
  }

  EngineRequest Req(EngineRequest::Kind kind, int rank, int64_t clock, uint64_t offset = 0,
                    uint64_t length = 4) {
    EngineRequest r;
    r.kind = kind;
    r.request_id = next_id++;
    r.sender = static_cast<uint32_t>(10 + rank);
    r.rank = rank;
    r.offset = offset;
    r.length = length;
    r.clock = clock;
    return r;
  }
  void Push(int rank, int64_t clock, std::vector<float> g, absl::Time at = kT0,
            uint64_t offset = 0) {
    EngineRequest r = Req(EngineRequest::Kind::kPush, rank, clock, offset, g.size());
    engine->OnPush(r, Buffer::CopyOf(g), at);
  }
  void Pull(int rank, int64_t clock, absl::Time at = kT0, uint64_t timeout_ms = 0) {
    EngineRequest r = Req(EngineRequest::Kind::kPull, rank, clock);
    r.timeout_ms = timeout_ms;
    engine->OnPull(r, at);
  }
  void Clock(int rank, int64_t clock, absl::Time at = kT0) {
    engine->OnClock(Req(EngineRequest::Kind::kClock, rank, clock), at);
  }
  void Assign(int rank, uint64_t offset, std::vector<float> values) {
    EngineRequest r = Req(EngineRequest::Kind::kAssign, rank, 0, offset, values.size());
    engine->OnAssign(r, Buffer::CopyOf(values), kT0);
  }
  void SetLearningRate(int rank, float lr, uint32_t table = 0) {
    EngineRequest r = Req(EngineRequest::Kind::kSetLearningRate, rank, 0, 0, 0);
    r.table = table;
    r.learning_rate = lr;
    engine->OnSetLearningRate(r, kT0);
  }
  std::vector<float> Values(int chunk = 0) {
    const Buffer& v = engine->shard().tables()[0].chunks[chunk].values;
    return std::vector<float>(v.data(), v.data() + v.size());
  }

  RecordingHost host;
  std::unique_ptr<ShardEngine> engine;
  uint64_t next_id = 1;
};

inline std::vector<EngineAnswer::Kind> Kinds(const std::vector<EngineAnswer>& answers) {
  std::vector<EngineAnswer::Kind> out;
  for (const EngineAnswer& a : answers) out.push_back(a.kind);
  return out;
}

}  // namespace kairos::internal

#endif  // KAIROS_TESTS_ENGINE_ENGINE_FIXTURE_H_
