// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A training program for the multi-process tests: each process is one worker (started by
// kairos-launch); under BSP it checks every read against the sequential computation and
// prints "rank R ok". --fail-rank R makes that worker exit 3 in the middle of the job (before
// its read at clock 2); --fail-once-rank R makes it exit 3 after that read, only in its first
// incarnation (KAIROS_RESTARTS unset or 0): started again by kairos-launch --restart-workers,
// it rejoins at clock 2 and goes on. --check 0 skips the comparison (a job that loses a
// worker averages fewer gradients).
// --kill-server-1-in DIR makes rank 0 kill (SIGKILL) the server of shard 1 whose state
// directory is DIR, after its read at clock 2 (kairos-launch --state-dir DIR
// --restart-servers starts it again; the job must not notice but for the wait).
// --kill-coordinator-in DIR makes rank 0 kill (SIGKILL) the coordinator whose state
// directory is DIR, after its read at clock 2 (kairos-launch --state-dir DIR
// --restart-coordinator starts it again, and it resumes the job); --barrier-at T makes every
// worker call Barrier before its read at clock T.
// --policy P trains under policy P (default bsp). --final 1 makes every worker, after its
// last iteration, wait at a barrier (every push is in), read the table and print
// "rank R final <digest of its bytes>".
// --chaos SCHEDULE --chaos-dir DIR kills (SIGKILL) processes of the job at the given
// iterations: SCHEDULE is "T:TARGET,..." with TARGET c (the coordinator whose state
// directory is DIR), sN (the server of shard N in DIR) or wN (worker N, itself). Rank 0
// kills the coordinator and servers after its read at clock T; worker N kills itself after
// its read at clock T, once (its K-th event fires in its incarnation K, KAIROS_RESTARTS),
// before it pushes, so that its successor, rejoined at clock T, pushes round T once.
// --updater signsgd trains with the example plugin's updater (w -= lr * sign(mean g); every
// gradient here is positive), which the servers load with --updater-plugin.

#include <signal.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "kairos/kairos.h"
#include "kairos/run.h"

namespace {

constexpr uint64_t kSize = 300;

float Gradient(int rank, int t, uint64_t i) {
  return static_cast<float>((rank + 1) * (t + 1) + static_cast<int>(i % 5));
}

// FNV-1a of the values' bytes.
uint64_t Digest(const std::vector<float>& values) {
  uint64_t h = 1469598103934665603ULL;
  for (float v : values) {
    unsigned char b[sizeof(float)];
    std::memcpy(b, &v, sizeof(v));
    for (unsigned char c : b) h = (h ^ c) * 1099511628211ULL;
  }
  return h;
}

struct ChaosEvent {
  int iteration = 0;
  char kind = 'c';  // c, s, w
  int index = 0;
};

std::vector<ChaosEvent> ParseChaos(const std::string& spec) {
  std::vector<ChaosEvent> events;
  for (std::size_t at = 0; at < spec.size();) {
    std::size_t end = spec.find(',', at);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(at, end - at);
    const std::size_t colon = item.find(':');
    ChaosEvent e;
    e.iteration = std::atoi(item.substr(0, colon).c_str());
    e.kind = item[colon + 1];
    e.index = std::atoi(item.substr(colon + 2).c_str());
    events.push_back(e);
    at = end + 1;
  }
  return events;
}

// The events of iteration t that this worker carries out.
absl::Status RunChaos(const std::vector<ChaosEvent>& events, int rank, int t,
                      const std::string& dir) {
  const char* restarts = std::getenv("KAIROS_RESTARTS");
  const int incarnation = restarts == nullptr ? 0 : std::atoi(restarts);
  int own = 0;  // this worker's self-kills before this one
  for (const ChaosEvent& e : events) {
    if (e.kind == 'w' && e.index == rank) {
      if (e.iteration == t && own == incarnation) {
        std::printf("chaos: worker %d kills itself at clock %d\n", rank, t);
        std::fflush(stdout);
        ::raise(SIGKILL);
      }
      ++own;
      continue;
    }
    if (rank != 0 || e.iteration != t || e.kind == 'w') continue;
    // "[k]", "[-]": the pattern does not match the shell that runs pkill.
    const std::string pattern =
        e.kind == 'c' ? "[k]airos-coordinator .*--state-dir " + dir
                      : "[-]-state-dir " + dir + " --shard " + std::to_string(e.index) + "( |$)";
    const std::string kill = "pkill -KILL -f -- '" + pattern + "'";
    // The target may be between a kill and its restart by kairos-launch: it is killed once
    // it is back.
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (std::system(kill.c_str()) != 0) {
      if (absl::Now() > deadline)
        return absl::InternalError("chaos: no process matches " + pattern);
      absl::SleepFor(absl::Milliseconds(20));
    }
    std::printf("chaos: rank 0 killed %s at clock %d\n",
                e.kind == 'c' ? "the coordinator" : ("server " + std::to_string(e.index)).c_str(),
                t);
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 5;
  int fail_rank = -1;
  int fail_once_rank = -1;
  bool check = true;
  std::string updater = "sgd";
  std::string kill_server_in;
  std::string kill_coordinator_in;
  int barrier_at = -1;
  std::string policy = "bsp";
  bool final_digest = false;
  std::string chaos;
  std::string chaos_dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--final") final_digest = std::atoi(argv[i + 1]) != 0;
    if (flag == "--policy") policy = argv[i + 1];
    if (flag == "--chaos") chaos = argv[i + 1];
    if (flag == "--chaos-dir") chaos_dir = argv[i + 1];
    if (flag == "--iterations") iterations = std::atoi(argv[i + 1]);
    if (flag == "--fail-rank") fail_rank = std::atoi(argv[i + 1]);
    if (flag == "--fail-once-rank") fail_once_rank = std::atoi(argv[i + 1]);
    if (flag == "--check") check = std::atoi(argv[i + 1]) != 0;
    if (flag == "--updater") updater = argv[i + 1];
    if (flag == "--kill-server-1-in") kill_server_in = argv[i + 1];
    if (flag == "--kill-coordinator-in") kill_coordinator_in = argv[i + 1];
    if (flag == "--barrier-at") barrier_at = std::atoi(argv[i + 1]);
  }
  kairos::ClusterOptions options;
  options.job.policy = policy;
  const std::vector<ChaosEvent> events = ParseChaos(chaos);
  options.job.chunk_elements = 64;
  options.job.tables.push_back({"w", kSize, kairos::Initializer::Zeros(), {updater, 0.5f}});
  absl::Status s = kairos::RunWorkers(options, [&](kairos::Worker& w) -> absl::Status {
    const int workers = w.num_workers();
    std::vector<float> params(kSize), grad(kSize), expected(kSize, 0.0f);
    const auto advance = [&](int t) {
      for (uint64_t i = 0; i < kSize; ++i) {
        float sum = 0;
        for (int r = 0; r < workers; ++r) sum += Gradient(r, t, i);
        expected[i] -= updater == "signsgd" ? 0.5f : 0.5f * (sum / static_cast<float>(workers));
      }
    };
    const char* restarts = std::getenv("KAIROS_RESTARTS");
    const bool first_incarnation = restarts == nullptr || std::string(restarts) == "0";
    // A restarted worker continues from the clock the job counts it from.
    const int start = static_cast<int>(w.clock());
    if (start > 0) std::printf("rank %d rejoined at clock %d\n", w.rank(), start);
    for (int t = 0; t < start; ++t) advance(t);
    for (int t = start; t < iterations; ++t) {
      if (w.rank() == fail_rank && t == 2) {
        std::fprintf(stderr, "rank %d failing on purpose\n", w.rank());
        std::exit(3);
      }
      if (t == barrier_at) KAIROS_RETURN_IF_ERROR(w.Barrier());
      KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
      if (w.rank() == fail_once_rank && first_incarnation && t == 2) {
        std::fprintf(stderr, "rank %d failing once on purpose\n", w.rank());
        std::exit(3);
      }
      if (w.rank() == 0 && !kill_server_in.empty() && t == 2) {
        // "[-]": the pattern does not match the shell that runs pkill, only the server.
        const std::string kill =
            "pkill -KILL -f -- '[-]-state-dir " + kill_server_in + " --shard 1'";
        if (std::system(kill.c_str()) != 0) {
          return absl::InternalError("rank 0: no server of shard 1 to kill");
        }
        std::printf("rank 0 killed server 1\n");
        std::fflush(stdout);
      }
      if (absl::Status s = RunChaos(events, w.rank(), t, chaos_dir); !s.ok()) return s;
      if (w.rank() == 0 && !kill_coordinator_in.empty() && t == 2) {
        const std::string kill =
            "pkill -KILL -f -- '[k]airos-coordinator .*--state-dir " + kill_coordinator_in + "'";
        if (std::system(kill.c_str()) != 0) {
          return absl::InternalError("rank 0: no coordinator to kill");
        }
        std::printf("rank 0 killed the coordinator\n");
        std::fflush(stdout);
      }
      if (check && params != expected) {
        return absl::InternalError(absl::StrFormat("rank %d: round %d differs", w.rank(), t));
      }
      for (uint64_t i = 0; i < kSize; ++i) grad[i] = Gradient(w.rank(), t, i);
      KAIROS_RETURN_IF_ERROR(w.Push("w", grad));
      KAIROS_RETURN_IF_ERROR(w.AdvanceClock());
      advance(t);
    }
    if (final_digest) {
      KAIROS_RETURN_IF_ERROR(w.Barrier());
      KAIROS_RETURN_IF_ERROR(w.Pull("w", params));
      std::printf("rank %d final %016llx\n", w.rank(),
                  static_cast<unsigned long long>(Digest(params)));
    }
    std::printf("rank %d ok\n", w.rank());
    return absl::OkStatus();
  });
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
