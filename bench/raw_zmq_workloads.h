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

// One-way throughput of `value_bytes` messages from a PUSH to a PULL socket: the sender
// hands the same buffer to ZeroMQ without a copy (zmq_msg_init_data with a free callback);
// both high-water marks are set to about `queue_bytes` (4 to 1000 messages), so that much
// is queued on each side; the receiver takes every message and does not read it.
// Errors: Internal for a ZeroMQ failure.
absl::StatusOr<Throughput> RawOneWay(uint64_t value_bytes, uint64_t queue_bytes,
                                     const Budget& budget);

// Round trip of a `message_bytes` message between a DEALER and a ROUTER that echoes it,
// one at a time (copying sends, as for small messages). At most `max_samples` are timed.
absl::StatusOr<LatencySummary> RawRoundTrip(uint64_t message_bytes, const Budget& budget,
                                            std::size_t max_samples);

}  // namespace kairos::bench

#endif  // KAIROS_BENCH_RAW_ZMQ_WORKLOADS_H_
