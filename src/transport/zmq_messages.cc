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
#include "zmq.h"

namespace kairos::internal {
namespace {

// A counter only the I/O thread writes: a plain add, without a locked read-modify-write.
void AddTo(std::atomic<uint64_t>& counter, uint64_t n) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

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

void ZmqTransport::SendNow(PeerId to, Message& message) {
  void* s = nullptr;
  const std::string* routing_id = nullptr;
  if (to & kIncomingBit) {
    auto it = routing_id_of_peer_.find(to);
    if (listener_ == nullptr || it == routing_id_of_peer_.end()) return Drop();
    s = listener_;
    routing_id = &it->second.routing_id;
    listener_sent_ = true;
  } else {
    // A refused connection has no pipe left: a send on it would block.
    if (to >= dealers_.size() || dealers_[to].refused) return Drop();
    s = dealers_[to].socket;
    dealers_[to].sent = true;
  }
  const bool has_payloads = !message.payloads.empty();
  bool ok = true;
  if (routing_id != nullptr) {
    ok = SendBytes(s, routing_id->data(), routing_id->size(), /*more=*/true);
  }
  // With ROUTER_MANDATORY a vanished peer fails on the first frame, before anything of
  // the message is queued, so a partial message is never left behind.
  if (!ok) return Drop();
  // The header is serialized straight into ZeroMQ's message (no string in between).
  const std::size_t header_size = PrepareHeader(message);
  zmq_msg_t header;
  zmq_msg_init_size(&header, header_size);
  if (header_size > 0) EncodeHeaderTo(message, zmq_msg_data(&header));
  ok = SendFrame(s, &header, has_payloads);
  std::size_t bytes = header_size;
  for (size_t i = 0; ok && i < message.payloads.size(); ++i) {
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
    AddTo(messages_received_, 1);
    for (const RawFrame& f : frames) AddTo(bytes_received_, f.size);
    std::optional<wire::Header> header;
    absl::StatusOr<Message> message = Decode(std::move(frames), &header);
    if (message.ok()) {
      // Out of memory while handling one message drops that message (counted), not the
      // node: its sender's request ends at its deadline.
      try {
        on_message_(from, *std::move(message));
      } catch (const std::bad_alloc&) {
        Drop();
      }
    } else {
      Drop();
      if (on_malformed_) {
        on_malformed_(from, message.status(), header.has_value() ? &*header : nullptr);
      }
    }
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
