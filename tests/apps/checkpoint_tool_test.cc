// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Reading checkpoint files from outside a job: kairos/checkpoint.h (ReadCheckpointFile,
// CheckpointChain) and the kairos-checkpoint program (KAIROS_CHECKPOINT_PATH), on the files
// of a real job: a whole checkpoint at clock 1 and a delta at clock 2 whose sparse table
// lost a row to eviction. Exact values throughout (SGD with learning rate 1 from zeros).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/kairos.h"
#include "tests/apps/run_program.h"
#include "tests/common/scratch_dir.h"

namespace kairos::launch {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ProgramRun;

class CheckpointToolTest : public ::testing::Test {
 protected:
  // One server, one worker: "w" (4 floats) and "emb" (rows of 2, rows idle for more than one
  // clock removed). Iteration 0 pushes w += 1 and rows 1: (1, 2), 2: (3, 4); iteration 1
  // w += 1 and row 2: (1, 1). Checkpoints at clocks 1 (whole) and 2 (a delta: row 2
  // changed, row 1 removed by the sweep at clock 2, before the checkpoint's snapshot).
  static void SetUpTestSuite() {
    dir_ = std::make_unique<::kairos::testing::UniqueTempDir>("kairos_ckpt_tool_");
    ASSERT_TRUE(dir_->ok());
    ClusterOptions o;
    o.num_servers = 1;
    o.num_workers = 1;
    o.job.policy = "asp";
    o.job.tables.push_back({"w", 4, Initializer::Zeros(), {"sgd", 1.0f}});
    TableSpec emb = TableSpec::Sparse("emb", 2, Initializer::Zeros(), {"sgd", 1.0f});
    emb.eviction.max_idle_clocks = 1;
    o.job.tables.push_back(emb);
    o.server.checkpoint_dir = dir_->path();
    o.server.checkpoint_every_clocks = 1;
    o.server.checkpoint_deltas = 1;
    o.server.checkpoint_at_end = false;
    o.server.checkpoint_sync = false;
    auto cluster = LocalCluster::Create(o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    // Each iteration waits for its checkpoint, so that none is skipped.
    auto written = [&](uint64_t n) { return (*cluster)->server_stats(0).checkpoints_written >= n; };
    absl::Status run = (*cluster)->Run([&](Worker& w) -> absl::Status {
      const std::vector<std::vector<uint64_t>> keys = {{1, 2}, {2}};
      const std::vector<std::vector<float>> rows = {{1, 2, 3, 4}, {1, 1}};
      for (int t = 0; t < 2; ++t) {
        KAIROS_RETURN_IF_ERROR(w.Push("w", std::vector<float>(4, 1.0f)));
        KAIROS_RETURN_IF_ERROR(w.PushSparse("emb", keys[t], rows[t]));
        KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
        const absl::Time deadline = absl::Now() + absl::Seconds(30);
        while (!written(static_cast<uint64_t>(t) + 1)) {
          if (absl::Now() > deadline) return absl::DeadlineExceededError("no checkpoint");
          std::this_thread::yield();
        }
      }
      return absl::OkStatus();
    });
    ASSERT_TRUE(run.ok()) << run;
    ASSERT_TRUE((*cluster)->Shutdown().ok());
  }

  static void TearDownTestSuite() { dir_.reset(); }

  static std::string File(int clock) {
    return *dir_ / ((clock == 1 ? "clock-000000000001" : "clock-000000000002") +
                    std::string("/shard-00000-of-00001.kcp"));
  }

  static ProgramRun Tool(const std::vector<std::string>& args) {
    return ::kairos::testing::RunProgram(KAIROS_CHECKPOINT_PATH, args, absl::Seconds(30));
  }

  static inline std::unique_ptr<::kairos::testing::UniqueTempDir> dir_;
};

TEST_F(CheckpointToolTest, ReadCheckpointFileHoldsTheRowsAndTheRemovedKeys) {
  absl::StatusOr<CheckpointFile> whole = ReadCheckpointFile(File(1));
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->clock, 1);
  EXPECT_EQ(whole->delta_of, -1);
  ASSERT_EQ(whole->tables.size(), 2u);
  EXPECT_EQ(whole->tables[1].name, "emb");
  EXPECT_EQ(whole->tables[1].row_width, 2u);
  ASSERT_EQ(whole->ranges.size(), 1u);
  EXPECT_THAT(whole->ranges[0].values, ElementsAre(-1, -1, -1, -1));
  ASSERT_EQ(whole->rows.size(), 1u);
  ASSERT_EQ(whole->rows[0].keys.size(), 2u);
  const bool one_first = whole->rows[0].keys[0] == 1;
  EXPECT_THAT(whole->rows[0].values,
              one_first ? ElementsAre(-1, -2, -3, -4) : ElementsAre(-3, -4, -1, -2));
  EXPECT_THAT(whole->rows[0].updates, ElementsAre(1, 1));

  absl::StatusOr<CheckpointFile> delta = ReadCheckpointFile(File(2));
  ASSERT_TRUE(delta.ok()) << delta.status();
  EXPECT_EQ(delta->delta_of, 1);
  EXPECT_THAT(delta->ranges[0].values, ElementsAre(-2, -2, -2, -2));
  EXPECT_THAT(delta->rows[0].keys, ElementsAre(2));
  EXPECT_THAT(delta->rows[0].values, ElementsAre(-4, -5));
  EXPECT_THAT(delta->rows[0].updates, ElementsAre(2));
  ASSERT_EQ(delta->removed.size(), 1u);
  EXPECT_THAT(delta->removed[0].keys, ElementsAre(1));

  absl::StatusOr<std::vector<std::string>> chain = CheckpointChain(File(2));
  ASSERT_TRUE(chain.ok()) << chain.status();
  EXPECT_THAT(*chain, ElementsAre(File(1), File(2)));
  EXPECT_EQ(ReadCheckpointFile(File(2) + ".nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(CheckpointToolTest, TheProgramPrintsSummariesChainsAndRows) {
  ProgramRun summary = Tool({File(1), File(2)});
  EXPECT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_EQ(summary.output,
            File(1) +
                ": shard 0 of 1, clock 1, whole; w: dense, 4 of 4 elements; emb: sparse, "
                "2 rows\n" +
                File(2) +
                ": shard 0 of 1, clock 2, delta of clock 1; w: dense, 4 of 4 "
                "elements; emb: sparse, 1 rows, 1 removed\n");
  ProgramRun chain = Tool({"--chain", File(2)});
  EXPECT_EQ(chain.exit_code, 0) << chain.output;
  EXPECT_EQ(chain.output, File(1) + "\n" + File(2) + "\n");
  ProgramRun rows = Tool({"--rows", "emb", File(2)});
  EXPECT_EQ(rows.exit_code, 0) << rows.output;
  EXPECT_EQ(rows.output, "2 -4 -5\nremoved 1\n");
}

TEST_F(CheckpointToolTest, TheProgramRefusesWhatItCannotReadByName) {
  ProgramRun missing = Tool({File(2) + ".nope"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.output, HasSubstr(".nope"));
  ProgramRun no_table = Tool({"--rows", "w", File(1)});
  EXPECT_EQ(no_table.exit_code, 1);
  EXPECT_THAT(no_table.output, HasSubstr("has no sparse table 'w'"));
  EXPECT_EQ(Tool({}).exit_code, 2);
  // A torn file: DataLoss, named.
  const std::string torn = *dir_ / "torn.kcp";
  fs::copy_file(File(1), torn);
  fs::resize_file(torn, fs::file_size(torn) - 5);
  ProgramRun bad = Tool({torn});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.output, HasSubstr(torn));
}

}  // namespace
}  // namespace kairos::launch
