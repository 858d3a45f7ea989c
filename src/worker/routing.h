// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Request routing: how a worker's call becomes messages. A push, pull or assign of a table
// range is cut at the chunk boundaries of the table's partition (common/partition.h) into
// one message per chunk, addressed to the chunk's shard; a control request (FINISH,
// BARRIER) is one message to every shard or one to the coordinator; a change of a table's
// learning rate one message to every shard that owns part of the table. Each message comes
// with its Part: what the worker's I/O thread needs to track it until it is answered
// (worker/outstanding.h) and to count its bytes (worker/flow_control.h).
//
// Pure functions: no I/O, no clock. Thread-safe.

#ifndef KAIROS_WORKER_ROUTING_H_
#define KAIROS_WORKER_ROUTING_H_

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/partition.h"
#include "kairos/buffer.h"
#include "kairos/worker.h"
#include "wire/encoding.h"
#include "wire/message.h"
#include "worker/request_state.h"

namespace kairos::internal {

// A sparse pull of a table that caches hot rows (worker/row_cache.h), as it was sent.
struct CachedRows {
  Buffer fetched;  // the keys the message asks for (uint64 in floats' storage)
  // Set when the cache answered some of the group's keys: all its rows (keys x width) with
  // those in place, and the indices of the fetched ones, where the reply's rows go.
  Buffer rows;
  std::vector<uint32_t> missing;
  uint32_t width = 0;
};

// One message of a request, as the worker's I/O thread tracks it until its answer.
struct Part {
  std::shared_ptr<RequestState> state;
  int shard = -1;                  // -1: the coordinator
  uint64_t length = 0;             // elements of the range the message covers
  PushPullReply* eager = nullptr;  // eager push+pull: where the shard's report goes
  uint64_t bytes = 0;              // payload bytes it moves (push and reply): flow control
  bool reads = false;              // the reply carries values: elements [at, at + length) of
  uint64_t at = 0;                 // the request's result (RequestState::PartDone)
  // Pushes summed into this one's message (worker/push_merger.h): each completes, or fails,
  // with it.
  std::vector<std::shared_ptr<RequestState>> merged{};
  // A pull of a caching table (worker/read_cache.h): its reply is kept under the message's
  // range of `table` from `offset`, read at `clock`, asked at the cache's mark `asked`.
  bool cached_read = false;
  // A push write-back held and sent on its own (worker/write_back.h): nobody waits for it,
  // so its failure ends the worker.
  bool held = false;
  // A sparse pull of a table that caches rows: its reply is kept (and completed) with this.
  std::shared_ptr<CachedRows> rows_cached{};
  uint32_t table = 0;
  uint64_t offset = 0;
  int64_t clock = 0;
  uint64_t asked = 0;
};

// A request's messages, each with its Part, in the order they are to be sent.
using Batch = std::vector<std::pair<Part, Message>>;

// What every message of one request carries besides its range.
struct Stamp {
  uint32_t sender = 0;      // the worker's node id
  int64_t clock = 0;        // the worker's clock when the call was made
  uint64_t timeout_ms = 0;  // reads and control requests: how long the server may hold them
  uint64_t first_id = 0;    // request ids first_id, first_id + 1, ...: one per message
};

// A push, pull or assign of elements [offset, offset + length) of one table.
struct RangeRoute {
  wire::Kind kind = wire::PUSH;  // PUSH, PULL or ASSIGN
  uint32_t table = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  // A push or assign: its `length` values. Each message carries a slice of it (shared, not
  // copied).
  Buffer payload{};
  // An eager push+pull (a push only): each message also asks for its range as it is after
  // the push (pull_after), the shard's report goes here, and `scale` multiplies the update.
  PushPullReply* eager = nullptr;
  float scale = 1.0f;
  // A push to a compressed table: each message's values are encoded with error feedback.
  PushResidual* residual = nullptr;
};

// Checks that [offset, offset + length) is a non-empty range of the table `info`;
// InvalidArgument naming the call (`verb`: "push", "pull"), the table and both sizes.
absl::Status CheckRange(const char* verb, const TableInfo& info, uint64_t offset,
                        uint64_t length);

// One message per chunk of `chunks` (the chunks the range overlaps, in order:
// TablePartition::Overlapping), to the chunk's shard, each covering the range's part of its
// chunk. The parts complete `state`. REQUIRES: CheckRange passed; chunks are those of
// TablePartition::Overlapping(route.offset, route.offset + route.length).
Batch RouteRange(const RangeRoute& route, std::span<const Chunk> chunks, const Stamp& stamp,
                 const std::shared_ptr<RequestState>& state);

// A control request (`kind`: FINISH or BARRIER): one message to each of `num_servers`
// shards, in shard order, or with num_servers == 0 one to the coordinator.
Batch RouteControl(wire::Kind kind, int num_servers, const Stamp& stamp,
                   const std::shared_ptr<RequestState>& state);

// A SET_LEARNING_RATE of table `table` to `learning_rate`: one message to each shard of
// `shards` (those that own a part of the table), in the order given.
Batch RouteLearningRate(uint32_t table, float learning_rate, std::span<const int> shards,
                        const Stamp& stamp, const std::shared_ptr<RequestState>& state);

}  // namespace kairos::internal

#endif  // KAIROS_WORKER_ROUTING_H_
