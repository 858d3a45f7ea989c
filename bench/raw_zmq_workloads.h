// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The ceiling: what two bare ZeroMQ sockets move over tcp://127.0.0.1 on this machine. Each
// side has its own ZeroMQ context (its own I/O thread), as two processes would.
//
// Thread-safety: each function is self-contained (its own contexts and threads); run one at
// a time so that they do not compete for the cores.

#ifndef KAIROS_BENCH_RAW_ZMQ_WORKLOADS_H_
#define KAIROS_BENCH_RAW_ZMQ_WORKLOADS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "bench/bench_report.h"

namespace kairos::bench {

// How a raw one-way run moves its messages.
enum class RawMode {
  // PUSH -> PULL, streaming: both high-water marks are set to about RawSpec::queue_bytes
  // (4 to 1000 messages), so that much is queued on each side.
  kStream,
  // DEALER -> ROUTER, as kairos's worker and server sockets: the receiver answers every
  // message with a 1-byte reply and the sender keeps at most RawSpec::window messages
  // unanswered, waiting for the oldest reply when the window is full (as a kairos worker
  // keeps requests in flight).
  kWindow,
};

// One raw one-way run: `connections` independent sender/receiver pairs at once, each side
// with its own ZeroMQ context (its own I/O thread) as separate processes would have, each
// pair moving `message_bytes` messages.
struct RawSpec {
  uint64_t message_bytes = 0;
  int connections = 1;
  RawMode mode = RawMode::kStream;
  uint64_t queue_bytes = uint64_t{64} << 20;  // kStream
  int window = 16;                            // kWindow
};

// One-way throughput of `spec`: every sender hands the same buffer to ZeroMQ without a copy
// (zmq_msg_init_data with a free callback); the receivers take every message and do not
// read it. Counted as kairos's pipelined workloads count: the messages that arrive in the
// measured interval (budget.seconds after budget.warmup_s), all connections together,
// divided by budget.seconds; ops are messages. Every send and receive has a 30 s deadline.
// Errors: InvalidArgument for an empty message size, no connections or a window below 1;
// Internal for a ZeroMQ failure or a deadline passed.
absl::StatusOr<Throughput> RawOneWay(const RawSpec& spec, const Budget& budget);

// Round trip of a `message_bytes` message between a DEALER and a ROUTER that echoes it,
// one at a time (copying sends, as for small messages). At most `max_samples` are timed.
absl::StatusOr<LatencySummary> RawRoundTrip(uint64_t message_bytes, const Budget& budget,
                                            std::size_t max_samples);

}  // namespace kairos::bench

#endif  // KAIROS_BENCH_RAW_ZMQ_WORKLOADS_H_
