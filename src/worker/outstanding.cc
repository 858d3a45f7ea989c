// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "worker/outstanding.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "wire/convert.h"

namespace kairos::internal {
namespace {

// Runs on the I/O thread before the part completes, so the caller sees it after Wait.
void MergeEagerReport(const wire::Header& h, PushPullReply& r) {
  for (int w = 0; w < h.clocks_size() && w < static_cast<int>(r.clocks.size()); ++w) {
    r.clocks[w] = std::max(r.clocks[w], h.clocks(w));
  }
  r.dropped = r.dropped || h.dropped();
  r.refresh = r.refresh || h.refresh();
}

}  // namespace

Part OutstandingParts::Take(uint64_t id) {
  ++visited_;
  auto it = parts_.find(id);
  Part part = std::move(it->second);
  parts_.erase(it);
  return part;
}

void OutstandingParts::Expire(absl::Time now,
                              absl::FunctionRef<void(uint64_t id, const Part&)> released,
                              const std::function<std::string(int shard)>& describe) {
  // Ordered by request, so that each request is failed once, naming all its silent nodes.
  std::map<std::shared_ptr<RequestState>, std::vector<int>> expired;
  for (auto it = parts_.begin(); it != parts_.end();) {
    ++visited_;
    if (it->second.state->deadline() <= now) {
      expired[it->second.state].push_back(it->second.shard);
      for (const auto& follower : it->second.merged) expired[follower].push_back(it->second.shard);
      const uint64_t id = it->first;
      const Part part = std::move(it->second);
      parts_.erase(it++);
      released(id, part);
    } else {
      ++it;
    }
  }
  for (const auto& [state, shards] : expired) {
    std::vector<std::string> who;
    for (int s : shards) {
      who.push_back(s < 0      ? std::string("the coordinator")
                    : describe ? describe(s)
                               : absl::StrCat("server ", s));
    }
    state->Fail(absl::DeadlineExceededError(
        absl::StrCat("no answer before the deadline from ", absl::StrJoin(who, ", "))));
  }
}

void OutstandingParts::FailAll(const absl::Status& status) {
  for (auto& [id, part] : parts_) {
    part.state->Fail(status);
    for (const auto& follower : part.merged) follower->Fail(status);
  }
  parts_.clear();
}

void CompletePart(const Part& part, Message& reply) {
  const wire::Header& h = reply.header;
  absl::Status status = StatusOf(h);
  if (part.reads && status.ok()) {
    // A read completes OK only with its values: any other answer that says OK would leave
    // the caller's memory as it was (or a gathered pull empty) under an OK status.
    if (h.kind() != wire::PULL_REPLY) {
      return part.state->PartDone(absl::InternalError(
          absl::StrFormat("shard %d answered a read with %s, which carries no values",
                          part.shard, wire::Kind_Name(h.kind()))));
    }
    const std::size_t got = reply.payloads.size() == 1 ? reply.payloads[0].size() : 0;
    if (reply.payloads.size() != 1 || got != part.length) {
      return part.state->PartDone(absl::InternalError(absl::StrFormat(
          "shard %d answered %d values for %d", part.shard, got, part.length)));
    }
    if (part.eager != nullptr) MergeEagerReport(h, *part.eager);
    return part.state->PartDone(part.at, std::move(reply.payloads[0]));
  }
  part.state->PartDone(status);
  for (const auto& follower : part.merged) follower->PartDone(status);
}

}  // namespace kairos::internal
