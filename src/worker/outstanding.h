// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// OutstandingParts: the messages a worker has sent (or is about to send) and not yet seen
// answered, by request id. An answer completes its part (CompletePart: a pull's values go
// to the request, an eager push's report to its PushPullReply); the I/O thread's tick
// expires the parts whose request is past its deadline, so a late reply never writes into
// memory the caller has been told it may reuse.
//
// Thread-safety: none; the worker's I/O thread owns it (and the node's destructor, once
// the I/O thread has stopped).

#ifndef KAIROS_WORKER_OUTSTANDING_H_
#define KAIROS_WORKER_OUTSTANDING_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "wire/message.h"
#include "worker/routing.h"

namespace kairos::internal {

class OutstandingParts {
 public:
  void Add(uint64_t id, Part part) {
    ++visited_;
    parts_[id] = std::move(part);
  }
  // The part of request id `id`, or null.
  const Part* Find(uint64_t id) const {
    ++visited_;
    auto it = parts_.find(id);
    return it == parts_.end() ? nullptr : &it->second;
  }
  // Removes the part of request id `id` and returns it. REQUIRES: Find(id) != nullptr.
  Part Take(uint64_t id);

  // Removes every part whose request's deadline is at or before `now` (a merged message's
  // is its first push's, the earliest of them), calling
  // `released(id, part)` for each, then fails each of those requests with DeadlineExceeded
  // naming the nodes that did not answer ("server 0, server 2", "the coordinator"; a server
  // as `describe(shard)` says when given, e.g. with the address that was tried).
  void Expire(absl::Time now, absl::FunctionRef<void(uint64_t id, const Part&)> released,
              const std::function<std::string(int shard)>& describe = nullptr);
  // Fails every part's request (and those of the pushes merged into it) with `status` and
  // forgets every part.
  void FailAll(const absl::Status& status);

  std::size_t size() const { return parts_.size(); }
  // Parts looked at so far: one per Add, Find and Take (by id, in a hash map), and every
  // part outstanding per Expire (once per tick, not per message). The tests keep the
  // count per answered message constant whatever the number of requests outstanding.
  uint64_t visited() const { return visited_; }

 private:
  absl::flat_hash_map<uint64_t, Part> parts_;
  mutable uint64_t visited_ = 0;
};

// Completes `part` with its answer `reply`: an answer with an error status fails the part
// with it; an OK PULL_REPLY to a reading part hands its values to the request (after
// checking it holds the part's length, and merging an eager push's report into its
// PushPullReply first, so the caller sees both once Wait returns), and any other OK answer
// to a reading part fails it (Internal: a read is complete only with its values); any
// other answer completes the part with the status it carries. The pushes merged into the
// part's message (Part::merged) complete with it.
void CompletePart(const Part& part, Message& reply);

}  // namespace kairos::internal

#endif  // KAIROS_WORKER_OUTSTANDING_H_
