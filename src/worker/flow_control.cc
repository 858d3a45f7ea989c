// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "worker/flow_control.h"

#include <algorithm>
#include <utility>

namespace kairos::internal {

FlowControl::FlowControl(int num_shards, int64_t max_bytes_in_flight, SendFn send)
    : max_in_flight_(static_cast<uint64_t>(std::max<int64_t>(1, max_bytes_in_flight))),
      send_(std::move(send)),
      shards_(num_shards) {}

void FlowControl::Submit(int shard, Message message, uint64_t bytes) {
  const uint64_t id = message.header.request_id();
  if (id != 0) tickets_[id] = Ticket{shard, bytes, false};
  ShardQueue& q = shards_[shard];
  // Behind a waiting message that did not fit (the queue's front, still live) this one
  // cannot go either, until a Complete pumps: no look at the queue per submission.
  bool blocked = false;
  if (!q.waiting.empty()) {
    const uint64_t front = q.waiting.front().header.request_id();
    blocked = front == 0 || tickets_.contains(front);
  }
  q.waiting.push_back(std::move(message));
  if (!blocked) Pump(shard);
}

void FlowControl::Complete(uint64_t id) {
  auto it = tickets_.find(id);
  if (it == tickets_.end()) return;
  const Ticket ticket = it->second;
  tickets_.erase(it);
  if (!ticket.sent) return;  // dropped when it reaches the front of its queue
  shards_[ticket.shard].in_flight -= ticket.bytes;
  Pump(ticket.shard);
}

void FlowControl::Clear() {
  for (ShardQueue& q : shards_) q = ShardQueue();
  tickets_.clear();
}

void FlowControl::Pump(int shard) {
  ShardQueue& q = shards_[shard];
  while (!q.waiting.empty()) {
    ++examined_;
    Message& m = q.waiting.front();
    const uint64_t id = m.header.request_id();
    auto it = id == 0 ? tickets_.end() : tickets_.find(id);
    if (id != 0 && it == tickets_.end()) {  // completed (expired) while it waited
      q.waiting.pop_front();
      continue;
    }
    const uint64_t bytes = it == tickets_.end() ? 0 : it->second.bytes;
    if (q.in_flight > 0 && q.in_flight + bytes > max_in_flight_) break;
    if (it != tickets_.end()) it->second.sent = true;
    q.in_flight += bytes;
    Message out = std::move(m);
    q.waiting.pop_front();
    // Last: the send may re-enter (a fake transport answering at once).
    send_(shard, std::move(out));
  }
}

}  // namespace kairos::internal
