// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "worker/routing.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace kairos::internal {

absl::Status CheckRange(const char* verb, const TableInfo& info, uint64_t offset,
                        uint64_t length) {
  if (length == 0 || offset >= info.size || length > info.size - offset) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s of table '%s': range [%d, %d) (%d values) does not fit the table's %d elements",
        verb, info.name, offset, offset + length, length, info.size));
  }
  return absl::OkStatus();
}

Batch RouteRange(const RangeRoute& route, std::span<const Chunk> chunks, const Stamp& stamp,
                 const std::shared_ptr<RequestState>& state) {
  const bool push = route.kind == wire::PUSH;
  const bool eager = push && route.eager != nullptr;
  // Whether the message carries values (a push or an assign), and whether its reply does.
  const bool carries = push || route.kind == wire::ASSIGN;
  const bool reads = route.kind == wire::PULL || eager;
  const uint64_t end_of_range = route.offset + route.length;
  Batch batch;
  batch.reserve(chunks.size());
  uint64_t id = stamp.first_id;
  for (const Chunk& c : chunks) {
    const uint64_t begin = std::max(route.offset, c.begin);
    const uint64_t end = std::min(end_of_range, c.end);
    const uint64_t bytes = (end - begin) * sizeof(float);
    Message m;
    m.header.set_kind(route.kind);
    m.header.set_request_id(id++);
    m.header.set_sender(stamp.sender);
    m.header.set_table(route.table);
    m.header.set_offset(begin);
    m.header.set_length(end - begin);
    m.header.set_clock(stamp.clock);
    Part part{state, c.shard, end - begin, eager ? route.eager : nullptr};
    // Flow control counts what crosses the link both ways: the pushed values, and the
    // values the reply brings back.
    part.bytes = (carries ? bytes : 0) + (reads ? bytes : 0);
    if (push && route.residual != nullptr) {
      const Buffer slice = route.payload.Slice(begin - route.offset, end - begin);
      m.payloads.push_back(route.residual->Encode(c.begin, c.end, begin, slice.span()));
      m.header.set_encoding(static_cast<uint32_t>(route.residual->compression()));
    } else if (carries) {
      m.payloads.push_back(route.payload.Slice(begin - route.offset, end - begin));
    }
    if (reads) {
      m.header.set_timeout_ms(stamp.timeout_ms);
      part.reads = true;
      part.at = begin - route.offset;
    }
    if (eager) {
      m.header.set_pull_after(true);
      if (route.scale != 1.0f) m.header.set_worker_scale(route.scale);
    }
    batch.emplace_back(std::move(part), std::move(m));
  }
  return batch;
}

Batch RouteControl(wire::Kind kind, int num_servers, const Stamp& stamp,
                   const std::shared_ptr<RequestState>& state) {
  const int n = num_servers > 0 ? num_servers : 1;
  Batch batch;
  batch.reserve(n);
  for (int i = 0; i < n; ++i) {
    Message m;
    m.header.set_kind(kind);
    m.header.set_request_id(stamp.first_id + i);
    m.header.set_sender(stamp.sender);
    m.header.set_clock(stamp.clock);
    m.header.set_timeout_ms(stamp.timeout_ms);
    batch.emplace_back(Part{state, num_servers > 0 ? i : -1}, std::move(m));
  }
  return batch;
}

Batch RouteLearningRate(uint32_t table, float learning_rate, std::span<const int> shards,
                        const Stamp& stamp, const std::shared_ptr<RequestState>& state) {
  Batch batch;
  batch.reserve(shards.size());
  uint64_t id = stamp.first_id;
  for (int shard : shards) {
    Message m;
    m.header.set_kind(wire::SET_LEARNING_RATE);
    m.header.set_request_id(id++);
    m.header.set_sender(stamp.sender);
    m.header.set_table(table);
    m.header.set_clock(stamp.clock);
    m.header.set_learning_rate(learning_rate);
    batch.emplace_back(Part{state, shard}, std::move(m));
  }
  return batch;
}

}  // namespace kairos::internal
