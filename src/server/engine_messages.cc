// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "server/engine_messages.h"

#include <utility>

#include "wire/encoding.h"

namespace kairos::internal {

EngineRequest ToEngine(PeerId from, const wire::Header& h, int rank) {
  EngineRequest r;
  switch (h.kind()) {
    case wire::PUSH:
      r.kind = EngineRequest::Kind::kPush;
      break;
    case wire::PULL:
      r.kind = EngineRequest::Kind::kPull;
      break;
    case wire::CLOCK:
      r.kind = EngineRequest::Kind::kClock;
      break;
    case wire::ASSIGN:
      r.kind = EngineRequest::Kind::kAssign;
      break;
    case wire::SET_LEARNING_RATE:
      r.kind = EngineRequest::Kind::kSetLearningRate;
      break;
    case wire::PUSH_SPARSE:
      r.kind = EngineRequest::Kind::kPushSparse;
      break;
    case wire::PULL_SPARSE:
      r.kind = EngineRequest::Kind::kPullSparse;
      break;
    default:
      r.kind = EngineRequest::Kind::kFinish;
      break;
  }
  r.peer = from;
  r.request_id = h.request_id();
  r.sender = h.sender();
  r.rank = rank;
  r.table = h.table();
  r.offset = h.offset();
  r.length = h.length();
  r.clock = h.clock();
  r.timeout_ms = h.timeout_ms();
  r.worker_scale = h.worker_scale();
  r.pull_after = h.pull_after();
  r.learning_rate = h.learning_rate();
  return r;
}

EngineRequest TakeRequest(PeerId from, Message& m, int rank, Buffer* values) {
  EngineRequest r = ToEngine(from, m.header, rank);
  // Decode checked the frames: a sparse request's keys first, then the values.
  std::size_t next = 0;
  if (r.kind == EngineRequest::Kind::kPushSparse || r.kind == EngineRequest::Kind::kPullSparse) {
    r.keys = std::move(m.payloads[next++]);
  }
  if (r.kind == EngineRequest::Kind::kPush || r.kind == EngineRequest::Kind::kAssign ||
      r.kind == EngineRequest::Kind::kPushSparse) {
    *values = std::move(m.payloads[next]);
  }
  return r;
}

wire::Header RequestHeader(const EngineRequest& r) {
  static constexpr wire::Kind kKinds[] = {wire::PUSH,        wire::PULL,
                                          wire::CLOCK,       wire::FINISH,
                                          wire::ASSIGN,      wire::SET_LEARNING_RATE,
                                          wire::PUSH_SPARSE, wire::PULL_SPARSE};
  wire::Header h;
  h.set_kind(kKinds[static_cast<int>(r.kind)]);
  h.set_request_id(r.request_id);
  h.set_sender(r.sender);
  h.set_table(r.table);
  h.set_offset(r.offset);
  h.set_length(r.length);
  h.set_clock(r.clock);
  return h;
}

Message ToMessage(EngineAnswer a, uint32_t self) {
  const wire::Header request = RequestHeader(a.request);
  Message reply;
  switch (a.kind) {
    case EngineAnswer::Kind::kPushed:
      reply.header = ReplyHeader(request, wire::PUSH_REPLY, self);
      reply.header.set_dropped(a.dropped);
      reply.header.set_refresh(a.refresh);
      reply.header.set_version(a.version);
      break;
    case EngineAnswer::Kind::kRead:
      reply.header = ReplyHeader(request, wire::PULL_REPLY, self);
      reply.header.set_version(a.version);
      reply.header.set_min_clock(a.min_clock);
      // The values it carries (a sparse read: keys x row_width, not the keys).
      reply.header.set_length(a.values.size());
      if (a.eager) {
        reply.header.set_dropped(a.dropped);
        reply.header.set_refresh(a.refresh);
        for (int64_t c : a.clocks) reply.header.add_clocks(c);
      }
      reply.payloads.push_back(std::move(a.values));
      break;
    case EngineAnswer::Kind::kAssigned:
      reply.header = ReplyHeader(request, wire::ASSIGN_REPLY, self);
      reply.header.set_version(a.version);
      break;
    case EngineAnswer::Kind::kLearningRateSet:
      reply.header = ReplyHeader(request, wire::SET_LEARNING_RATE_REPLY, self);
      break;
    case EngineAnswer::Kind::kFinished:
    case EngineAnswer::Kind::kError:
      reply.header = ReplyHeader(request, wire::FINISH, self);
      break;
  }
  return reply;
}

void EncodeReplyValues(Compression compression, Message& reply) {
  if (compression == Compression::kNone || reply.header.kind() != wire::PULL_REPLY ||
      reply.payloads.size() != 1) {
    return;
  }
  reply.payloads[0] = Encode(compression, reply.payloads[0].span());
  reply.header.set_encoding(static_cast<uint32_t>(compression));
}

}  // namespace kairos::internal
