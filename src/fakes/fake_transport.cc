// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "fakes/fake_transport.h"

#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kairos/job.h"

namespace kairos::internal {

class FakeTransport::IoScope {
 public:
  explicit IoScope(FakeTransport& t) : t_(t) {
    if (t_.io_depth_++ == 0) t_.io_thread_.store(std::this_thread::get_id());
  }
  ~IoScope() {
    if (--t_.io_depth_ == 0) t_.io_thread_.store(std::thread::id());
  }
  IoScope(const IoScope&) = delete;
  IoScope& operator=(const IoScope&) = delete;

 private:
  FakeTransport& t_;
};

FakeTransport::FakeTransport(std::string name) : name_(std::move(name)) {}

absl::StatusOr<std::string> FakeTransport::Listen(const std::string& endpoint) {
  absl::MutexLock lock(&mu_);
  if (stopped_) {
    return absl::UnavailableError(
        absl::StrCat(name_, ": cannot listen at ", endpoint, ": the transport is stopped"));
  }
  if (!listen_endpoint_.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(name_, ": already listening at ", listen_endpoint_));
  }
  listen_endpoint_ = endpoint;
  return absl::StrCat("fake://", name_, "/listen");
}

absl::StatusOr<PeerId> FakeTransport::Connect(const std::string& endpoint) {
  absl::MutexLock lock(&mu_);
  if (stopped_) {
    return absl::UnavailableError(
        absl::StrCat(name_, ": cannot connect to ", endpoint, ": the transport is stopped"));
  }
  const PeerId id = connections_.size();
  connections_.push_back(endpoint);
  known_peers_.insert(id);
  return id;
}

void FakeTransport::Start(MessageHandler on_message, MalformedHandler on_malformed,
                          TickHandler on_tick) {
  absl::MutexLock lock(&mu_);
  on_message_ = std::move(on_message);
  on_malformed_ = std::move(on_malformed);
  on_tick_ = std::move(on_tick);
  started_ = true;
}

void FakeTransport::Send(PeerId to, Message message) {
  absl::MutexLock lock(&mu_);
  if (stopped_ || !known_peers_.contains(to)) {
    dropped_.fetch_add(1);
    return;
  }
  // What the ZeroMQ transport's EncodeHeader sets on the way out.
  message.header.set_protocol_version(kProtocolVersion);
  message.header.set_payload_frames(static_cast<uint32_t>(message.payloads.size()));
  sent_.push_back({to, std::move(message)});
}

void FakeTransport::Post(std::function<void()> fn) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopped_) {
      posted_.push_back(std::move(fn));
      return;
    }
  }
  // Destroyed here, unrun, without the lock (its captures may call back).
  fn = nullptr;
}

void FakeTransport::Stop() {
  std::deque<std::function<void()>> discarded;
  absl::MutexLock lock(&mu_);
  stopped_ = true;
  discarded.swap(posted_);
  // `discarded` is destroyed after the lock is released (declared before it).
}

bool FakeTransport::OnIoThread() const {
  return io_thread_.load() == std::this_thread::get_id();
}

absl::Status FakeTransport::Deliver(PeerId from, Message message) {
  std::vector<RawFrame> frames;
  auto header = std::make_shared<std::string>(EncodeHeader(message));
  frames.push_back({header, header->data(), header->size()});
  for (Buffer& payload : message.payloads) {
    auto owner = std::make_shared<Buffer>(std::move(payload));
    frames.push_back({owner, owner->data(), owner->size_bytes()});
  }
  return DeliverFrames(from, std::move(frames));
}

absl::Status FakeTransport::DeliverFrames(PeerId from, std::vector<std::string> frames) {
  std::vector<RawFrame> raw;
  raw.reserve(frames.size());
  for (std::string& f : frames) {
    auto owner = std::make_shared<std::string>(std::move(f));
    raw.push_back({owner, owner->data(), owner->size()});
  }
  return DeliverFrames(from, std::move(raw));
}

absl::Status FakeTransport::DeliverFrames(PeerId from, std::vector<RawFrame> frames) {
  {
    absl::MutexLock lock(&mu_);
    if (!started_) {
      return absl::FailedPreconditionError(
          absl::StrCat(name_, ": a delivery before Start"));
    }
    if (stopped_) {
      return absl::UnavailableError(
          absl::StrCat(name_, ": a delivery after Stop: the transport is stopped"));
    }
    known_peers_.insert(from);
  }
  absl::Status status = Dispatch(from, std::move(frames));
  RunPosted();
  return status;
}

absl::Status FakeTransport::Dispatch(PeerId from, std::vector<RawFrame> frames) {
  IoScope io(*this);
  // As ZmqTransport::Drain does.
  std::optional<wire::Header> header;
  absl::StatusOr<Message> message = Decode(std::move(frames), &header);
  if (message.ok()) {
    on_message_(from, *std::move(message));
    return absl::OkStatus();
  }
  dropped_.fetch_add(1);
  if (on_malformed_) {
    on_malformed_(from, message.status(), header.has_value() ? &*header : nullptr);
  }
  return message.status();
}

void FakeTransport::Tick(absl::Time now) {
  {
    absl::MutexLock lock(&mu_);
    if (!started_ || stopped_) return;
  }
  {
    IoScope io(*this);
    if (on_tick_) on_tick_(now);
  }
  RunPosted();
}

void FakeTransport::SetConnectErrorHandler(ConnectErrorHandler on_connect_error) {
  on_connect_error_ = std::move(on_connect_error);
}

void FakeTransport::FailConnect(PeerId peer, const absl::Status& why) {
  {
    IoScope io(*this);
    if (on_connect_error_) on_connect_error_(peer, why);
  }
  RunPosted();
}

bool FakeTransport::AwaitPosted(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto posted_or_stopped = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !posted_.empty() || stopped_;
  };
  mu_.AwaitWithTimeout(absl::Condition(&posted_or_stopped), timeout);
  return !posted_.empty();
}

int FakeTransport::RunPosted() {
  IoScope io(*this);
  int ran = 0;
  while (true) {
    std::function<void()> fn;
    {
      absl::MutexLock lock(&mu_);
      if (posted_.empty()) break;
      fn = std::move(posted_.front());
      posted_.pop_front();
    }
    fn();
    ++ran;
  }
  // With passes on, the functions run are one pass, which the batch handler ends; what it
  // posts is the next pass.
  if (ran == 0 || !on_batch_) return ran;
  on_batch_();
  return ran + RunPosted();
}

bool FakeTransport::SetBatchHandler(std::function<void()> on_batch) {
  if (!passes_) return false;
  on_batch_ = std::move(on_batch);
  return true;
}

std::vector<FakeTransport::Sent> FakeTransport::sent() const {
  absl::MutexLock lock(&mu_);
  return sent_;
}

std::vector<FakeTransport::Sent> FakeTransport::TakeSent() {
  absl::MutexLock lock(&mu_);
  std::vector<Sent> out;
  out.swap(sent_);
  return out;
}

void FakeTransport::ClearSent() {
  absl::MutexLock lock(&mu_);
  sent_.clear();
}

std::size_t FakeTransport::sent_count() const {
  absl::MutexLock lock(&mu_);
  return sent_.size();
}

std::size_t FakeTransport::posted_count() const {
  absl::MutexLock lock(&mu_);
  return posted_.size();
}

bool FakeTransport::started() const {
  absl::MutexLock lock(&mu_);
  return started_;
}

bool FakeTransport::stopped() const {
  absl::MutexLock lock(&mu_);
  return stopped_;
}

std::string FakeTransport::listen_endpoint() const {
  absl::MutexLock lock(&mu_);
  return listen_endpoint_;
}

std::vector<std::string> FakeTransport::connections() const {
  absl::MutexLock lock(&mu_);
  return connections_;
}

}  // namespace kairos::internal
