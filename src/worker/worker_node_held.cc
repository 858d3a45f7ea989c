// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// WorkerNode's I/O thread: what it holds per range or row besides the messages in flight,
// the read caches (worker/read_cache.h, worker/row_cache.h) and the held pushes of
// write-back tables (worker/write_back.h).

#include <algorithm>
#include <cmath>
#include <span>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "kairos/status.h"
#include "wire/convert.h"
#include "worker/sparse_routing.h"
#include "worker/worker_node.h"

namespace kairos::internal {

namespace {

// A push the servers refuse (or skip) under any non-finite policy goes into no copy and no
// sum: it fails, or is skipped, alone.
bool AllFinite(const Buffer& values) {
  return std::all_of(values.data(), values.data() + values.size(),
                     [](float v) { return std::isfinite(v); });
}

}  // namespace

bool WorkerNode::ThroughCache(Part& part, Message& message) {
  const wire::Header& h = message.header;
  if (rows_.Caches(h.table())) return ThroughRowCache(part, message);
  if (!cache_.Caches(h.table())) return false;
  if (h.kind() == wire::ASSIGN) {
    cache_.Forget(h.table());  // this worker's own values must be read back
    return false;
  }
  if (h.kind() == wire::SET_LEARNING_RATE) {
    cache_.SetLearningRate(h.table(), h.learning_rate());
    return false;
  }
  if (h.kind() == wire::PUSH && h.encoding() == 0 && message.payloads.size() == 1 &&
      AllFinite(message.payloads[0])) {
    cache_.Push(RangeKey::Of(h), message.payloads[0].span(), h.clock());
    return false;
  }
  if (h.kind() != wire::PULL || !part.reads || part.eager != nullptr) return false;
  if (const Buffer* copy = cache_.Find(RangeKey::Of(h), h.clock())) {
    // Counted first: the caller, woken by PartDone, may read the count at once.
    reads_cached_.fetch_add(1, std::memory_order_relaxed);
    part.state->PartDone(part.at, *copy);
    return true;
  }
  part.cached_read = true;
  part.table = h.table();
  part.offset = h.offset();
  part.clock = h.clock();
  part.asked = cache_.Asking();
  return false;
}

bool WorkerNode::ThroughRowCache(Part& part, Message& message) {
  wire::Header& h = message.header;
  if (h.kind() == wire::SET_LEARNING_RATE) {
    rows_.SetLearningRate(h.table(), h.learning_rate());
    return false;
  }
  if (h.kind() == wire::PUSH_SPARSE && h.encoding() == 0 && message.payloads.size() == 2 &&
      AllFinite(message.payloads[1])) {
    rows_.Push(h.table(), KeysOf(message.payloads[0]), message.payloads[1].span(), h.clock());
    return false;
  }
  if (h.kind() != wire::PULL_SPARSE || !part.reads || part.eager != nullptr ||
      message.payloads.size() != 1) {
    return false;
  }
  const std::span<const uint64_t> keys = KeysOf(message.payloads[0]);
  if (keys.empty()) return false;
  RowLookup found = rows_.Find(h.table(), keys, h.clock());
  const uint64_t served = keys.size() - found.missing.size();
  // Counted first: the caller, woken by PartDone, may read the counts at once.
  rows_cached_.fetch_add(served, std::memory_order_relaxed);
  if (found.missing.empty()) {
    reads_cached_.fetch_add(1, std::memory_order_relaxed);
    part.state->PartDone(part.at, std::move(found.rows));
    return true;
  }
  auto sent = std::make_shared<CachedRows>();
  sent->width = static_cast<uint32_t>(part.length / keys.size());
  if (served > 0) {
    // Only the rows the cache lacks travel.
    std::vector<uint64_t> fetched(found.missing.size());
    for (std::size_t i = 0; i < fetched.size(); ++i) fetched[i] = keys[found.missing[i]];
    message.payloads[0] = KeysPayload(fetched);
    h.set_length(found.missing.size());
    part.length = found.missing.size() * sent->width;
    part.bytes = found.missing.size() * sizeof(uint64_t) + part.length * sizeof(float);
    sent->rows = std::move(found.rows);
    sent->missing = std::move(found.missing);
  }
  sent->fetched = message.payloads[0];
  part.rows_cached = std::move(sent);
  part.table = h.table();
  part.clock = h.clock();
  part.asked = rows_.Asking();
  return false;
}

void WorkerNode::KeepRows(Part& part, Message& reply) {
  const wire::Header& h = reply.header;
  if (h.kind() != wire::PULL_REPLY || !StatusOf(h).ok() || reply.payloads.size() != 1 ||
      reply.payloads[0].size() != part.length) {
    return;  // CompletePart fails the read
  }
  const CachedRows& sent = *part.rows_cached;
  // As KeepCopy: a server's min_clock that cannot be is not believed.
  if (h.min_clock() >= 0 && h.min_clock() <= part.clock) {
    rows_.Store(part.table, KeysOf(sent.fetched), reply.payloads[0].span(), part.clock,
                h.min_clock(), part.asked);
  }
  if (sent.missing.empty()) return;  // the reply holds every row
  Buffer all = sent.rows;
  const float* from = reply.payloads[0].data();
  for (std::size_t i = 0; i < sent.missing.size(); ++i) {
    std::copy_n(from + i * sent.width, sent.width, all.data() + sent.missing[i] * sent.width);
  }
  reply.payloads[0] = std::move(all);
  part.length = reply.payloads[0].size();
}

void WorkerNode::KeepCopy(const Part& part, const Message& reply) {
  const wire::Header& h = reply.header;
  if (h.kind() != wire::PULL_REPLY || !StatusOf(h).ok() || reply.payloads.size() != 1 ||
      reply.payloads[0].size() != part.length) {
    return;  // CompletePart fails the read
  }
  // The slowest active worker is at most where this one read, and no clock is negative: a
  // server that says otherwise is not believed (the read is answered, its copy not kept).
  if (h.min_clock() < 0 || h.min_clock() > part.clock) return;
  cache_.Store({part.table, part.offset, part.length}, reply.payloads[0], part.clock, h.min_clock(),
               part.asked);
}

void WorkerNode::EncodeOnSend(Part& part, Message& message) {
  wire::Header& h = message.header;
  if (h.table() >= table_by_id_.size() || !table_by_id_[h.table()]->encode_on_send) return;
  const TableEntry& table = *table_by_id_[h.table()];
  if (h.kind() == wire::PUSH && message.payloads.size() == 1 && table.residual != nullptr &&
      h.length() > 0) {
    // With error feedback, as the callers encode the other tables' pushes (RouteRange).
    const Chunk& chunk = table.partition.ChunkOf(h.offset());
    message.payloads[0] =
        table.residual->Encode(chunk.begin, chunk.end, h.offset(), message.payloads[0].span());
  } else if (h.kind() == wire::PUSH_SPARSE && message.payloads.size() == 2) {
    message.payloads[1] = Encode(table.info.compression, message.payloads[1].span());
  } else {
    return;
  }
  h.set_encoding(static_cast<uint32_t>(table.info.compression));
}

bool WorkerNode::HoldBack(Part& part, const Message& message) {
  const uint32_t table = message.header.table();
  if (!write_back_.has_value() || table >= write_back_clocks_.size() ||
      write_back_clocks_[table] == 0 || !WriteBack::Holdable(part, message)) {
    return false;
  }
  if (!AllFinite(message.payloads.back())) return false;
  const int64_t due = message.header.clock() + write_back_clocks_[table];
  if (!write_back_->Hold(part.shard, message, due)) {
    // Another scale: what the range holds leaves first.
    SendHeld(part.shard, write_back_->TakeFor(part.shard, RangeKey::Of(message.header)));
    write_back_->Hold(part.shard, message, due);
  }
  // Counted first: the caller, woken by PartDone, may read the count at once.
  pushes_held_.store(write_back_->summed(), std::memory_order_relaxed);
  part.state->PartDone(absl::OkStatus());
  return true;
}

void WorkerNode::SendHeldBefore(int shard, const Message& next) {
  if (!write_back_.has_value() || write_back_->empty()) return;
  const wire::Kind kind = next.header.kind();
  if (kind == wire::PULL || (kind == wire::PUSH && next.header.pull_after())) {
    // A push that asks for its range's values after it reads them too.
    SendHeld(shard, write_back_->TakeFor(shard, RangeKey::Of(next.header)));
  } else if (kind == wire::PULL_SPARSE && !next.payloads.empty()) {
    // The keys it fetches (those the row cache did not answer).
    SendHeld(shard, write_back_->TakeRows(shard, next.header.table(), KeysOf(next.payloads[0])));
  } else if (kind == wire::PUSH || kind == wire::PUSH_SPARSE) {
    // Pushes add up in any order: a push not held (another table's, or a non-finite one)
    // need not wait for the sums.
  } else if (kind == wire::ASSIGN || kind == wire::SET_LEARNING_RATE) {
    SendHeld(shard, write_back_->TakeTable(shard, next.header.table()));
  } else {
    SendHeld(shard, write_back_->Take(shard));
  }
}

void WorkerNode::SendAllHeld() {
  if (!write_back_.has_value()) return;
  for (int s = 0; s < num_servers_ && !write_back_->empty(); ++s) {
    SendHeld(s, write_back_->Take(s));
  }
}

void WorkerNode::SendHeld(int shard, std::vector<Message> pushes) {
  for (Message& m : pushes) {
    m.header.set_request_id(ReserveIds(1));
    const uint64_t values = m.payloads.back().size();
    const uint64_t bytes =
        m.payloads[0].size() * sizeof(float) + (m.payloads.size() > 1 ? values * sizeof(float) : 0);
    auto state = std::make_shared<RequestState>(
        RequestLabel{"held push", "", 0, 0, rank_},
        EnvOf(options_).Now() + options_.request_timeout + options_.deadline_grace, 1,
        /*spin=*/false, nullptr, EnvOf(options_));
    Part part{std::move(state), shard, m.header.kind() == wire::PUSH ? m.header.length() : values};
    part.bytes = bytes;
    part.held = true;
    ReleaseMerged(shard);
    SubmitToShard(std::move(part), std::move(m));
  }
}

}  // namespace kairos::internal
