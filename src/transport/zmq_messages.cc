// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ZmqTransport's messages (zmq_transport.h), on the I/O thread: sending a Message as its
// frames (payloads by reference from zero_copy_min_bytes on), receiving and decoding them
// in batches, and the table of the listening endpoint's remote peers (their PeerIds,
// addresses, and the forgetting of idle ones beyond max_peers).

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "kairos/buffer.h"
#include "transport/transport.h"
#include "transport/zmq_transport.h"
#include "wire/message.h"
#include "wire/one_frame.h"
#include "zmq.h"

namespace kairos::internal {
namespace {

// A counter only the I/O thread writes: a plain add, without a locked read-modify-write.
void AddTo(std::atomic<uint64_t>& counter, uint64_t n) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// What a batch counts for a message's header when it decides whether it is full.
constexpr std::size_t kHeaderBytesGuess = 64;

void ReleaseBuffer(void* /*data*/, void* hint) { delete static_cast<Buffer*>(hint); }

// A received frame, kept alive by the buffers of the Message that point into it.
struct ReceivedFrame {
  ReceivedFrame() { zmq_msg_init(&msg); }
  ~ReceivedFrame() { zmq_msg_close(&msg); }
  ReceivedFrame(const ReceivedFrame&) = delete;
  ReceivedFrame& operator=(const ReceivedFrame&) = delete;
  zmq_msg_t msg;
};

// ---------------------------------------------------------------- sending (I/O thread)
// Never blocks: with unlimited high-water marks a send fails only when the socket has no
// pipe at all, which a DEALER comes to when ZeroMQ ends its session for good (a security
// handshake that failed on a protocol error); a blocking send would then hang the I/O
// thread. The message is dropped and counted instead.
bool SendFrame(void* s, zmq_msg_t* msg, bool more) {
  if (zmq_msg_send(msg, s, (more ? ZMQ_SNDMORE : 0) | ZMQ_DONTWAIT) >= 0) return true;
  zmq_msg_close(msg);
  return false;
}

bool SendBytes(void* s, const void* data, size_t size, bool more) {
  zmq_msg_t msg;
  zmq_msg_init_size(&msg, size);
  if (size > 0) std::memcpy(zmq_msg_data(&msg), data, size);
  return SendFrame(s, &msg, more);
}

}  // namespace

bool ZmqTransport::SendPayload(void* s, const Buffer& payload, bool more) {
  if (static_cast<int64_t>(payload.size_bytes()) < options_.zero_copy_min_bytes) {
    return SendBytes(s, payload.data(), payload.size_bytes(), more);
  }
  zmq_msg_t msg;
  auto* ref = new Buffer(payload);  // released by ZeroMQ through ReleaseBuffer
  zmq_msg_init_data(&msg, payload.data(), payload.size_bytes(), &ReleaseBuffer, ref);
  return SendFrame(s, &msg, more);
}

bool ZmqTransport::SocketFor(PeerId to, void*& s, const std::string*& routing_id) {
  if (to & kIncomingBit) {
    auto it = routing_id_of_peer_.find(to);
    if (listener_ == nullptr || it == routing_id_of_peer_.end()) return false;
    s = listener_;
    routing_id = &it->second.routing_id;
    listener_sent_ = true;
    return true;
  }
  // A refused connection has no pipe left: a send on it would block.
  if (to >= dealers_.size() || dealers_[to].refused) return false;
  s = dealers_[to].socket;
  routing_id = nullptr;
  dealers_[to].sent = true;
  return true;
}

bool ZmqTransport::Reachable(PeerId to) const {
  if (to & kIncomingBit) return listener_ != nullptr && routing_id_of_peer_.contains(to);
  return to < dealers_.size() && !dealers_[to].refused;
}

void ZmqTransport::SendNow(PeerId to, Message& message) {
  if (!Reachable(to)) return Drop();  // at once, not when its batch would have left
  if (!options_.batch_messages || !OneFrame(message)) {
    FlushBatch(to);  // what was sent to `to` before leaves before it
    return SendAlone(to, message);
  }
  Batch& b = batches_[to];
  if (b.messages.empty()) batched_peers_.push_back(to);
  b.bytes += kHeaderBytesGuess;
  for (const Buffer& p : message.payloads) b.bytes += p.size_bytes();
  b.messages.push_back(std::move(message));
  if (b.messages.size() >= kMaxBatchMessages || b.bytes >= kMaxBatchBytes) FlushBatch(to);
}

void ZmqTransport::FlushBatches() {
  // FlushBatch may not add peers (it sends); the list is walked once and cleared.
  for (const PeerId to : batched_peers_) FlushBatch(to);
  batched_peers_.clear();
}

void ZmqTransport::FlushBatch(PeerId to) {
  auto it = batches_.find(to);
  if (it == batches_.end() || it->second.messages.empty()) return;
  std::vector<Message>& messages = it->second.messages;
  it->second.bytes = 0;
  if (messages.size() == 1) {
    SendAlone(to, messages[0]);
    messages.clear();
    return;
  }
  const std::size_t count = messages.size();
  void* s = nullptr;
  const std::string* routing_id = nullptr;
  bool ok = SocketFor(to, s, routing_id);
  if (ok && routing_id != nullptr) {
    ok = SendBytes(s, routing_id->data(), routing_id->size(), /*more=*/true);
  }
  if (ok) {
    const std::size_t size = PrepareBatch(messages, batch_frame_);
    zmq_msg_t frame;
    zmq_msg_init_size(&frame, size);
    EncodeBatchTo(messages, batch_frame_, zmq_msg_data(&frame));
    ok = SendFrame(s, &frame, /*more=*/false);
    if (ok) {
      AddTo(messages_sent_, count);
      AddTo(bytes_sent_, size);
    }
  }
  if (!ok) dropped_.fetch_add(count);
  messages.clear();
}

void ZmqTransport::SendAlone(PeerId to, Message& message) {
  void* s = nullptr;
  const std::string* routing_id = nullptr;
  if (!SocketFor(to, s, routing_id)) return Drop();
  const bool has_payloads = !message.payloads.empty();
  bool ok = true;
  if (routing_id != nullptr) {
    ok = SendBytes(s, routing_id->data(), routing_id->size(), /*more=*/true);
  }
  // With ROUTER_MANDATORY a vanished peer fails on the first frame, before anything of
  // the message is queued, so a partial message is never left behind.
  if (!ok) return Drop();
  // The header is serialized straight into ZeroMQ's message (no string in between); a
  // small message's payloads are packed into it, one frame in all (wire/one_frame.h).
  const bool one_frame = OneFrame(message);
  const std::size_t header_size = one_frame ? PrepareOneFrame(message) : PrepareHeader(message);
  zmq_msg_t header;
  zmq_msg_init_size(&header, header_size);
  if (one_frame) {
    EncodeOneFrameTo(message, zmq_msg_data(&header));
  } else if (header_size > 0) {
    EncodeHeaderTo(message, zmq_msg_data(&header));
  }
  ok = SendFrame(s, &header, !one_frame && has_payloads);
  std::size_t bytes = header_size;
  for (size_t i = 0; ok && !one_frame && i < message.payloads.size(); ++i) {
    ok = SendPayload(s, message.payloads[i], i + 1 < message.payloads.size());
    bytes += message.payloads[i].size_bytes();
  }
  if (!ok) return Drop();
  AddTo(messages_sent_, 1);
  AddTo(bytes_sent_, bytes);
}

// -------------------------------------------------------------- receiving (I/O thread)
bool ZmqTransport::Drain(void* s, bool router, PeerId dealer) {
  for (int i = 0; i < kMaxMessagesPerWake; ++i) {
    // Each frame is received into `part` on the stack, so the receive that finds the
    // socket empty (the end of every drain) allocates nothing; a frame that is kept
    // moves into one heap object that the message's buffers share.
    zmq_msg_t part;
    zmq_msg_init(&part);
    if (zmq_msg_recv(&part, s, ZMQ_DONTWAIT) < 0) {  // empty
      zmq_msg_close(&part);
      return false;
    }
    bool more = zmq_msg_more(&part) != 0;
    PeerId from = 0;
    bool have = true;  // `part` holds a frame not yet used
    if (router) {      // the routing id
      from =
          PeerFor(std::string(static_cast<const char*>(zmq_msg_data(&part)), zmq_msg_size(&part)));
      zmq_msg_close(&part);
      have = false;
    }
    std::vector<RawFrame> frames;
    frames.reserve(3);  // the header and up to two payloads without a reallocation
    while (have || more) {
      if (!have) {
        zmq_msg_init(&part);
        if (zmq_msg_recv(&part, s, 0) < 0) {
          zmq_msg_close(&part);
          return false;
        }
        more = zmq_msg_more(&part) != 0;
      }
      have = false;
      if (router && frames.empty()) NotePeerAddress(from, &part);
      auto kept = std::make_shared<ReceivedFrame>();
      zmq_msg_move(&kept->msg, &part);
      zmq_msg_close(&part);
      RawFrame frame;
      frame.data = zmq_msg_data(&kept->msg);  // inside kept for a very small message
      frame.size = zmq_msg_size(&kept->msg);
      frame.owner = std::move(kept);
      frames.push_back(std::move(frame));
    }
    if (!router) from = dealer;
    for (const RawFrame& f : frames) AddTo(bytes_received_, f.size);
    // Each message is counted before its handler runs (which may complete a request whose
    // caller then reads the counts).
    DecodeReceived(
        std::move(frames),
        [&](Message&& message) {
          AddTo(messages_received_, 1);
          // Out of memory while handling one message drops that message (counted), not the
          // node: its sender's request ends at its deadline.
          try {
            on_message_(from, std::move(message));
          } catch (const std::bad_alloc&) {
            Drop();
          }
        },
        [&](const absl::Status& why, const wire::Header* header) {
          AddTo(messages_received_, 1);
          Drop();
          if (on_malformed_) on_malformed_(from, why, header);
        });
    // What the handlers sent leaves now: the answers to a batch travel as a batch, and an
    // answer to a message that came alone is not held back behind the next ones.
    FlushBatches();
  }
  return true;
}

PeerId ZmqTransport::PeerFor(const std::string& routing_id) {
  ++activity_;
  if (auto it = peer_by_routing_id_.find(routing_id); it != peer_by_routing_id_.end()) {
    routing_id_of_peer_[it->second].last_active = activity_;
    return it->second;
  }
  if (static_cast<int64_t>(peer_by_routing_id_.size()) >=
      std::max<int64_t>(1, options_.max_peers)) {
    ForgetIdlePeers();
  }
  const PeerId peer = kIncomingBit | next_incoming_++;
  peer_by_routing_id_.emplace(routing_id, peer);
  routing_id_of_peer_.emplace(peer, Incoming{routing_id, activity_, std::string(), false});
  return peer;
}

void ZmqTransport::ForgetIdlePeers() {
  std::vector<uint64_t> ages;
  ages.reserve(routing_id_of_peer_.size());
  for (const auto& [peer, in] : routing_id_of_peer_) ages.push_back(in.last_active);
  const std::size_t forget = std::max<std::size_t>(1, ages.size() / 8);
  std::nth_element(ages.begin(), ages.begin() + (forget - 1), ages.end());
  const uint64_t cutoff = ages[forget - 1];
  std::size_t forgotten = 0;
  for (auto it = routing_id_of_peer_.begin();
       it != routing_id_of_peer_.end() && forgotten < forget;) {
    if (it->second.last_active <= cutoff) {
      peer_by_routing_id_.erase(it->second.routing_id);
      if (auto b = batches_.find(it->first); b != batches_.end() && b->second.messages.empty()) {
        batches_.erase(b);
      }
      routing_id_of_peer_.erase(it++);
      ++forgotten;
    } else {
      ++it;
    }
  }
  peers_forgotten_.fetch_add(forgotten);
}

void ZmqTransport::NotePeerAddress(PeerId from, zmq_msg_t* msg) {
  auto it = routing_id_of_peer_.find(from);
  if (it == routing_id_of_peer_.end() || it->second.address_known) return;
  it->second.address_known = true;
  const char* address = zmq_msg_gets(msg, "Peer-Address");
  if (address != nullptr) it->second.address = address;
}

}  // namespace kairos::internal
