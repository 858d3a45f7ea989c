// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The small job of the checkpoint tests (tests/engine/checkpoint_test.cc) and the checkpoint
// fuzzer (tests/fuzz/checkpoint_fuzzer.cc), and an engine host that runs lane jobs at once.

#ifndef KAIROS_TESTS_ENGINE_CHECKPOINT_JOB_H_
#define KAIROS_TESTS_ENGINE_CHECKPOINT_JOB_H_

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "engine/shard_engine.h"
#include "kairos/job.h"

namespace kairos::internal {

// Table 0 "w": dense, 10 floats in chunks of 3, adam. Table 1 "emb": sparse rows of 2,
// adagrad. Table 2 "b": dense, 2 floats, sgd (no optimizer state).
inline JobConfig CheckpointJob() {
  JobConfig job;
  job.policy = "asp";
  job.chunk_elements = 3;
  job.tables.push_back({"w", 10, Initializer::Constant(0.5f), {"adam", 0.1f}});
  job.tables.push_back(
      TableSpec::Sparse("emb", 2, Initializer::Normal(0.0f, 1.0f, 3), {"adagrad", 0.2f}));
  job.tables.push_back({"b", 2, Initializer::Zeros(), {"sgd", 1.0f}});
  return job;
}

// Runs every lane job at once, on the calling thread, and keeps the answers.
class InlineEngineHost final : public EngineHost {
 public:
  void RunOnLane(uint64_t, std::function<void()> job) override { job(); }
  void Answer(EngineAnswer a) override { answers.push_back(std::move(a)); }
  std::vector<EngineAnswer> answers;
};

}  // namespace kairos::internal

#endif  // KAIROS_TESTS_ENGINE_CHECKPOINT_JOB_H_
