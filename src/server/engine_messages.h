// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The server node's translation between wire messages and the shard engine's requests and
// answers (src/engine/shard_engine.h). Pure functions, tested directly.

#ifndef KAIROS_SERVER_ENGINE_MESSAGES_H_
#define KAIROS_SERVER_ENGINE_MESSAGES_H_

#include <cstdint>

#include "engine/shard_engine.h"
#include "transport/transport.h"
#include "wire/message.h"

namespace kairos::internal {

// The engine's view of a worker's PUSH, PULL, CLOCK, FINISH, ASSIGN or SET_LEARNING_RATE
// `h` that arrived from `from` and whose sender was proven to be worker `rank`.
EngineRequest ToEngine(PeerId from, const wire::Header& h, int rank);

// The same for a whole message whose header Decode checked: the sparse keys and the
// values (of a push, assign or sparse push: `*values`) are moved out of `m`'s payloads.
EngineRequest TakeRequest(PeerId from, Message& m, int rank, Buffer* values);

// The header of the request `r` stands for, as far as a reply echoes it (ReplyHeader).
wire::Header RequestHeader(const EngineRequest& r);

// The reply of a successful answer (pushed, read, finished, assigned, learning rate set),
// sent by node `self`; a read's values become its payload. REQUIRES: a.kind != kError
// (errors are the node's to word).
Message ToMessage(EngineAnswer a, uint32_t self);

// A compressed table's read (TableSpec::compression): the PULL_REPLY's values encoded
// (wire/encoding.h). Nothing changes for kNone or for another kind of message.
void EncodeReplyValues(Compression compression, Message& reply);

}  // namespace kairos::internal

#endif  // KAIROS_SERVER_ENGINE_MESSAGES_H_
