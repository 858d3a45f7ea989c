// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "transport/zap_handler.h"

#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "zmq.h"

namespace kairos::internal {
namespace {

// Where libzmq looks for the handler (RFC 27), inside each context.
constexpr char kZapEndpoint[] = "inproc://zeromq.zap.01";
// A request: version, request id, domain, address, identity, mechanism, credentials...
constexpr std::size_t kRequestFrames = 6;

}  // namespace

absl::StatusOr<std::unique_ptr<ZapHandler>> ZapHandler::Start(void* context) {
  void* socket = zmq_socket(context, ZMQ_REP);
  if (socket == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot create the CURVE authentication socket: ", zmq_strerror(zmq_errno())));
  }
  int linger = 0;  // replies to handshakes that are gone are not worth waiting for
  zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof(linger));
  if (zmq_bind(socket, kZapEndpoint) != 0) {
    const int err = zmq_errno();
    zmq_close(socket);
    return absl::UnavailableError(
        absl::StrCat("cannot start the CURVE authentication handler: ", kZapEndpoint,
                     " cannot be bound in this context (", zmq_strerror(err),
                     "); another ZAP handler uses the context"));
  }
  const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    zmq_close(socket);
    return absl::InternalError(absl::StrCat("eventfd failed: ", std::strerror(err)));
  }
  std::unique_ptr<ZapHandler> handler(new ZapHandler(socket, fd));
  // The socket moves to the thread here; thread creation is a full memory barrier.
  handler->thread_ = std::thread([h = handler.get()] {
    pthread_setname_np(pthread_self(), "kairos-zap");
    h->Loop();
  });
  return handler;
}

ZapHandler::ZapHandler(void* socket, int stop_fd) : socket_(socket), stop_fd_(stop_fd) {}

ZapHandler::~ZapHandler() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(stop_fd_, &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  zmq_close(socket_);
  ::close(stop_fd_);
}

void ZapHandler::Register(const std::string& domain, const std::string& client_key) {
  absl::MutexLock lock(&mu_);
  keys_[domain] = client_key;
}

void ZapHandler::Unregister(const std::string& domain) {
  absl::MutexLock lock(&mu_);
  keys_.erase(domain);
}

uint64_t ZapHandler::accepted() const {
  absl::MutexLock lock(&mu_);
  return accepted_;
}

uint64_t ZapHandler::refused() const {
  absl::MutexLock lock(&mu_);
  return refused_;
}

// The poll has no timeout: the destructor's eventfd write is what ends it, and a failed poll
// (the context terminated, which the context's owner does only after destroying this) ends
// it too.
void ZapHandler::Loop() {
  zmq_pollitem_t items[2] = {{socket_, 0, ZMQ_POLLIN, 0}, {nullptr, stop_fd_, ZMQ_POLLIN, 0}};
  for (;;) {
    const int ready = zmq_poll(items, 2, -1);
    if (ready < 0) {
      if (zmq_errno() == EINTR) continue;
      return;
    }
    if (items[1].revents & ZMQ_POLLIN) return;
    if (items[0].revents & ZMQ_POLLIN) AnswerAll();
  }
}

bool ZapHandler::Accepts(const std::string& domain, const std::string& mechanism,
                         const std::string& key) const {
  if (mechanism != "CURVE") return false;
  absl::MutexLock lock(&mu_);
  auto it = keys_.find(domain);
  return it != keys_.end() && it->second == key;
}

void ZapHandler::AnswerAll() {
  for (;;) {
    std::vector<std::string> frames;
    bool more = true;
    while (more) {
      zmq_msg_t frame;
      zmq_msg_init(&frame);
      // The first frame only may be missing: the others of a message arrive with it.
      if (zmq_msg_recv(&frame, socket_, frames.empty() ? ZMQ_DONTWAIT : 0) < 0) {
        zmq_msg_close(&frame);
        return;
      }
      frames.emplace_back(static_cast<const char*>(zmq_msg_data(&frame)), zmq_msg_size(&frame));
      more = zmq_msg_more(&frame) != 0;
      zmq_msg_close(&frame);
    }
    const bool well_formed = frames.size() >= kRequestFrames && frames[0] == "1.0";
    const bool ok = well_formed && frames.size() == kRequestFrames + 1 &&
                    Accepts(frames[2], frames[5], frames[6]);
    {
      absl::MutexLock lock(&mu_);
      ++(ok ? accepted_ : refused_);
    }
    // The reply: version, request id, status code, status text, user id, metadata. A REP
    // socket must answer before it can receive again, so even a malformed request gets one
    // (libzmq only sends well-formed ones).
    const std::string request_id = frames.size() > 1 ? frames[1] : std::string();
    const std::string code = ok ? "200" : "400";
    const std::string text = ok ? "OK" : "not the job's CURVE key";
    const std::string reply[] = {"1.0", request_id, code, text, "", ""};
    for (std::size_t i = 0; i < std::size(reply); ++i) {
      zmq_send(socket_, reply[i].data(), reply[i].size(),
               i + 1 < std::size(reply) ? ZMQ_SNDMORE : 0);
    }
  }
}

absl::StatusOr<ZapHandler*> ZapHandlerOf(TransportContext& context) {
  auto& internals = TransportContextAccess::InternalsOf(context);
  absl::MutexLock lock(&internals.mu);
  if (internals.zap == nullptr) {
    absl::StatusOr<std::unique_ptr<ZapHandler>> started =
        ZapHandler::Start(TransportContextAccess::NativeHandle(context));
    if (!started.ok()) return started.status();
    internals.zap = *std::move(started);
  }
  return internals.zap.get();
}

}  // namespace kairos::internal
