// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "worker/push_merger.h"

#include "kairos/buffer.h"
#include "worker/request_state.h"

namespace kairos::internal {

namespace {

// The key a push waits under: its range, or for a sparse push its table.
RangeKey WaitKey(const wire::Header& h) {
  return h.kind() == wire::PUSH_SPARSE ? RangeKey{h.table(), 0, 0} : RangeKey::Of(h);
}

}  // namespace

bool PushMerger::Mergeable(const Part& part, const Message& message) {
  const wire::Header& h = message.header;
  if (part.shard < 0 || part.reads || part.eager != nullptr || h.pull_after() ||
      h.encoding() != 0) {
    return false;
  }
  if (h.kind() == wire::PUSH) {
    return message.payloads.size() == 1 && message.payloads[0].size() == h.length();
  }
  // The keys (uint64 in floats' storage), then length x width rows.
  return h.kind() == wire::PUSH_SPARSE && message.payloads.size() == 2 && h.length() > 0 &&
         message.payloads[0].size() == h.length() * 2 && message.payloads[1].size() > 0 &&
         message.payloads[1].size() % h.length() == 0;
}

bool PushMerger::Joins(const Waiting& w, const Part& part, const Message& next) {
  const wire::Header& a = w.message.header;
  const wire::Header& b = next.header;
  return a.clock() == b.clock() && a.worker_scale() == b.worker_scale() &&
         a.sender() == b.sender() && part.state->deadline() >= w.part.state->deadline();
}

void PushMerger::Add(Waiting& w, Part part, const Message& next) {
  if (next.header.kind() == wire::PUSH_SPARSE) {
    if (!w.rows.has_value()) {
      const Message& first = w.message;
      w.rows.emplace(static_cast<uint32_t>(first.payloads[1].size() / first.header.length()));
      w.rows->Add(first.payloads[0], first.payloads[1]);
    }
    w.rows->Add(next.payloads[0], next.payloads[1]);
    w.part.merged.push_back(std::move(part.state));
    ++merged_;
    return;
  }
  Buffer& sum = w.message.payloads[0];
  if (!w.owned) {
    sum = Buffer::CopyOf(sum.span());
    w.owned = true;
  }
  const float* add = next.payloads[0].data();
  float* to = sum.data();
  const std::size_t n = sum.size();
  for (std::size_t i = 0; i < n; ++i) to[i] += add[i];
  w.part.merged.push_back(std::move(part.state));
  ++merged_;
}

void PushMerger::Hold(Part part, Message message, Send send) {
  const std::pair<int, RangeKey> range{part.shard, WaitKey(message.header)};
  std::vector<Waiting>& shard = waiting_[static_cast<std::size_t>(part.shard)];
  if (auto it = index_.find(range); it != index_.end()) {
    Waiting& w = shard[it->second];
    if (Joins(w, part, message)) return Add(w, std::move(part), message);
    Release(part.shard, send);
  }
  index_.emplace(range, shard.size());
  shard.push_back(Waiting{std::move(part), std::move(message)});
  ++waiting_count_;
}

void PushMerger::Release(int shard, Send send) {
  if (waiting_count_ == 0 || shard < 0 || shard >= static_cast<int>(waiting_.size())) return;
  std::vector<Waiting> pushes = std::move(waiting_[static_cast<std::size_t>(shard)]);
  waiting_[static_cast<std::size_t>(shard)].clear();
  waiting_count_ -= static_cast<int>(pushes.size());
  for (Waiting& w : pushes) {
    index_.erase(std::pair<int, RangeKey>{shard, WaitKey(w.message.header)});
    if (w.rows.has_value()) {
      // The keys and rows of every push merged, in one message.
      const SummedRows& rows = *w.rows;
      w.message.header.set_length(rows.size());
      w.message.payloads = {rows.KeysPayload(), rows.RowsPayload()};
      w.part.length = rows.size() * rows.width();
      w.part.bytes = rows.size() * sizeof(uint64_t) + w.part.length * sizeof(float);
    }
    send(std::move(w.part), std::move(w.message));
  }
}

void PushMerger::ReleaseAll(Send send) {
  for (int s = 0; waiting_count_ > 0 && s < static_cast<int>(waiting_.size()); ++s) {
    Release(s, send);
  }
}

void PushMerger::FailAll(const absl::Status& status) {
  for (std::vector<Waiting>& shard : waiting_) {
    for (Waiting& w : shard) {
      w.part.state->Fail(status);
      for (const auto& follower : w.part.merged) follower->Fail(status);
    }
    shard.clear();
  }
  index_.clear();
  waiting_count_ = 0;
}

}  // namespace kairos::internal
