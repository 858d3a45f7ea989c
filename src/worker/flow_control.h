// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// FlowControl: the worker's per-shard flow control. Every message to a shard goes through
// the shard's FIFO; it leaves when the payload bytes in flight to the shard (sent and not
// yet answered) stay within the budget, WorkerOptions::max_bytes_in_flight_per_server, so a
// server never buffers more than that for one worker (a 256 MiB pull does not become
// 256 MiB of queued replies). When nothing is in flight the first message always goes,
// whatever its size, so an oversized request cannot block the queue for good.
//
// Messages to one shard leave in the order they were submitted: a clock or a finish
// queued behind pushes leaves after them, so a shard never sees a worker's clock before
// the pushes that clock ends. A message whose request ended while it waited (expired) is
// dropped instead of sent.
//
// Thread-safety: none; the worker's I/O thread owns it.

#ifndef KAIROS_WORKER_FLOW_CONTROL_H_
#define KAIROS_WORKER_FLOW_CONTROL_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "wire/message.h"

namespace kairos::internal {

class FlowControl {
 public:
  // Sends a message to shard `shard`'s server.
  using SendFn = std::function<void(int shard, Message message)>;

  // `max_bytes_in_flight` per shard; values below 1 count as 1.
  FlowControl(int num_shards, int64_t max_bytes_in_flight, SendFn send);

  // Queues `message` for `shard` behind the messages already waiting for it and sends what
  // the budget allows. `bytes`: the payload it moves (pushed values, and the values its
  // reply brings), counted from when it leaves until Complete. A message with request id 0
  // (a clock) is never answered: it moves no bytes and is not tracked.
  void Submit(int shard, Message message, uint64_t bytes);
  // The message of request id `id` is over (answered, or its request expired). Sent: its
  // bytes no longer count, and the shard's queue moves on. Still waiting: it is dropped
  // when it reaches the front. Unknown ids are ignored.
  void Complete(uint64_t id);
  // Drops every waiting message and forgets every byte in flight (the node has ended).
  void Clear();

  int num_shards() const { return static_cast<int>(shards_.size()); }
  uint64_t max_bytes_in_flight() const { return max_in_flight_; }
  // Payload bytes sent to `shard` and not yet completed.
  uint64_t in_flight(int shard) const { return shards_[shard].in_flight; }
  // Messages waiting for `shard` (including dropped ones not yet at the front).
  std::size_t waiting(int shard) const { return shards_[shard].waiting.size(); }
  // Queue fronts Pump has looked at so far: each message once when it leaves (or is
  // dropped), plus at most one that does not fit per Complete (a Submit behind a message
  // that did not fit looks at nothing). The tests keep it at most two per message
  // whatever the number of requests waiting (no rescan of what waits).
  uint64_t examined() const { return examined_; }

 private:
  struct Ticket {
    int shard = 0;
    uint64_t bytes = 0;
    bool sent = false;
  };
  struct ShardQueue {
    std::deque<Message> waiting;
    uint64_t in_flight = 0;
  };

  // Sends the shard's waiting messages in order while the budget allows.
  void Pump(int shard);

  const uint64_t max_in_flight_;
  const SendFn send_;
  std::vector<ShardQueue> shards_;
  // Every tracked message (request id != 0) from Submit until Complete.
  absl::flat_hash_map<uint64_t, Ticket> tickets_;
  uint64_t examined_ = 0;
};

}  // namespace kairos::internal

#endif  // KAIROS_WORKER_FLOW_CONTROL_H_
