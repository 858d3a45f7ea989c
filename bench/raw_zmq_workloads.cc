// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "bench/raw_zmq_workloads.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "zmq.hpp"

namespace kairos::bench {
namespace {

double SecondsBetween(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Counts the messages ZeroMQ still holds; the free callback of a zero-copy send.
void ReleasePayload(void* /*data*/, void* hint) {
  static_cast<std::atomic<int64_t>*>(hint)->fetch_sub(1, std::memory_order_relaxed);
}

// A bound socket and the endpoint it got ("tcp://127.0.0.1:<port>").
std::string BindLoopback(zmq::socket_t& socket) {
  socket.set(zmq::sockopt::linger, 0);
  socket.bind("tcp://127.0.0.1:*");
  return socket.get(zmq::sockopt::last_endpoint);
}

// How long any raw send or receive may block: far above the time of one message (64 MiB at
// 1 GB/s is 64 ms), so that only a stuck peer reaches it.
constexpr int kRawIoTimeoutMs = 30000;

// The measured interval of a run, shared by every connection: [begin, end).
struct Interval {
  SteadyClock::time_point begin;
  SteadyClock::time_point end;
  bool Contains(SteadyClock::time_point t) const { return t >= begin && t < end; }
};

// One sender/receiver pair of RawOneWay.
class RawPair {
 public:
  RawPair(const RawSpec& spec, const std::vector<char>& payload)
      : spec_(spec),
        payload_(payload),
        tx_context_(1),
        rx_context_(1),
        rx_(rx_context_,
            spec.mode == RawMode::kStream ? zmq::socket_type::pull : zmq::socket_type::router),
        tx_(tx_context_,
            spec.mode == RawMode::kStream ? zmq::socket_type::push : zmq::socket_type::dealer) {
    if (spec.mode == RawMode::kStream) {
      // Enough messages queued to keep the connection busy, few enough that the queues drain
      // quickly at the end and the receiver's buffers stay warm in the caches.
      const int hwm =
          static_cast<int>(std::clamp<uint64_t>(spec.queue_bytes / spec.message_bytes, 4, 1000));
      rx_.set(zmq::sockopt::rcvhwm, hwm);
      tx_.set(zmq::sockopt::sndhwm, hwm);
    }
    for (zmq::socket_t* s : {&rx_, &tx_}) {
      s->set(zmq::sockopt::rcvtimeo, kRawIoTimeoutMs);
      s->set(zmq::sockopt::sndtimeo, kRawIoTimeoutMs);
    }
    const std::string endpoint = BindLoopback(rx_);
    tx_.set(zmq::sockopt::linger, 0);
    tx_.connect(endpoint);
  }
  ~RawPair() { Join(); }
  RawPair(const RawPair&) = delete;
  RawPair& operator=(const RawPair&) = delete;

  // Starts the sender and the receiver; the sender sends until `stop` is set.
  void Start(const Interval& interval, const std::atomic<bool>& stop) {
    sender_ = std::thread([this, &stop] {
      tx_status_ = Guarded(
          [&] { return spec_.mode == RawMode::kStream ? SendStream(stop) : SendWindowed(stop); });
    });
    receiver_ =
        std::thread([this, interval] { rx_status_ = Guarded([&] { return Receive(interval); }); });
  }
  void Join() {
    if (sender_.joinable()) sender_.join();
    if (receiver_.joinable()) receiver_.join();
  }
  // After Join(): the messages received in the measured interval, or the first error.
  absl::StatusOr<uint64_t> Counted() const {
    if (!tx_status_.ok()) return tx_status_;
    if (!rx_status_.ok()) return rx_status_;
    return counted_;
  }

 private:
  zmq::message_t Payload() {
    in_flight_.fetch_add(1, std::memory_order_relaxed);
    return zmq::message_t(const_cast<char*>(payload_.data()), spec_.message_bytes, &ReleasePayload,
                          &in_flight_);
  }

  absl::Status SendStream(const std::atomic<bool>& stop) {
    while (!stop.load(std::memory_order_relaxed)) {
      zmq::message_t m = Payload();
      if (!tx_.send(m, zmq::send_flags::none)) return Timeout("send");
    }
    if (!tx_.send(zmq::message_t(), zmq::send_flags::none)) return Timeout("send");  // end
    return absl::OkStatus();
  }

  // Sends while fewer than spec_.window messages are unanswered, else waits for the oldest
  // reply; at the end, sends the end marker and takes the replies up to its own (empty).
  absl::Status SendWindowed(const std::atomic<bool>& stop) {
    int unanswered = 0;
    zmq::message_t reply;
    while (!stop.load(std::memory_order_relaxed)) {
      if (unanswered == spec_.window) {
        if (!tx_.recv(reply, zmq::recv_flags::none)) return Timeout("reply");
        --unanswered;
      }
      zmq::message_t m = Payload();
      if (!tx_.send(m, zmq::send_flags::none)) return Timeout("send");
      ++unanswered;
    }
    if (!tx_.send(zmq::message_t(), zmq::send_flags::none)) return Timeout("send");
    do {
      if (!tx_.recv(reply, zmq::recv_flags::none)) return Timeout("reply");
    } while (reply.size() != 0);
    return absl::OkStatus();
  }

  // Receives until the zero-length end marker, counting the messages that arrive in
  // `interval`; under kWindow answers each (the end marker with an empty reply).
  absl::Status Receive(const Interval& interval) {
    const bool windowed = spec_.mode == RawMode::kWindow;
    zmq::message_t id, m;
    static constexpr char kAck = 1;
    for (;;) {
      if (windowed && !rx_.recv(id, zmq::recv_flags::none)) return Timeout("receive");
      if (!rx_.recv(m, zmq::recv_flags::none)) return Timeout("receive");
      const bool last = m.size() == 0;
      if (!last && interval.Contains(SteadyClock::now())) ++counted_;
      if (windowed) {
        if (!rx_.send(id, zmq::send_flags::sndmore) ||
            !rx_.send(zmq::message_t(&kAck, last ? 0 : 1), zmq::send_flags::none)) {
          return Timeout("answer");
        }
      }
      if (last) return absl::OkStatus();
    }
  }

  // A ZeroMQ error on a pair's thread becomes its status instead of ending the program.
  template <typename Body>
  static absl::Status Guarded(const Body& body) {
    try {
      return body();
    } catch (const zmq::error_t& e) {
      return absl::InternalError(absl::StrCat("raw ZeroMQ one-way: ", e.what()));
    }
  }

  static absl::Status Timeout(const char* what) {
    return absl::InternalError(
        absl::StrCat("raw ZeroMQ one-way: no ", what, " within ", kRawIoTimeoutMs, " ms"));
  }

  const RawSpec spec_;
  const std::vector<char>& payload_;
  std::atomic<int64_t> in_flight_{0};  // declared before the contexts: they outlive it
  zmq::context_t tx_context_;
  zmq::context_t rx_context_;
  zmq::socket_t rx_;
  zmq::socket_t tx_;
  std::thread sender_;
  std::thread receiver_;
  absl::Status tx_status_;
  absl::Status rx_status_;
  uint64_t counted_ = 0;  // receiver thread until Join()
};

}  // namespace

absl::StatusOr<Throughput> RawOneWay(const RawSpec& spec, const Budget& budget) {
  if (spec.message_bytes == 0 || spec.connections < 1 || spec.window < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "raw ZeroMQ one-way: message of ", spec.message_bytes, " bytes, ", spec.connections,
        " connections, window ", spec.window, " (need > 0, >= 1, >= 1)"));
  }
  // Declared first so that it outlives the pairs' contexts, which release the last references.
  const std::vector<char> payload(spec.message_bytes, 1);
  try {
    std::vector<std::unique_ptr<RawPair>> pairs;
    for (int i = 0; i < spec.connections; ++i) {
      pairs.push_back(std::make_unique<RawPair>(spec, payload));
    }
    std::atomic<bool> stop{false};
    Interval interval;
    interval.begin = After(SteadyClock::now(), budget.warmup_s);
    interval.end = After(interval.begin, budget.seconds);
    for (auto& p : pairs) p->Start(interval, stop);
    // The CPU time of the measured interval, every thread of the process (as RunPipelined).
    std::this_thread::sleep_until(interval.begin);
    const ProcessUsage begin = ReadProcessUsage();
    std::this_thread::sleep_until(interval.end);
    const ProcessUsage used = UsageSince(begin);
    stop.store(true);
    uint64_t messages = 0;
    absl::Status status;
    for (auto& p : pairs) {
      p->Join();
      absl::StatusOr<uint64_t> n = p->Counted();
      if (n.ok()) {
        messages += *n;
      } else if (status.ok()) {
        status = n.status();
      }
    }
    if (!status.ok()) return status;
    return MakeThroughput(messages, spec.message_bytes, budget.seconds, used);
  } catch (const zmq::error_t& e) {
    return absl::InternalError(absl::StrCat("raw ZeroMQ one-way: ", e.what()));
  }
}

absl::StatusOr<LatencySummary> RawRoundTrip(uint64_t message_bytes, const Budget& budget,
                                            std::size_t max_samples) {
  try {
    zmq::context_t client_context(1);
    zmq::context_t server_context(1);
    zmq::socket_t server(server_context, zmq::socket_type::router);
    zmq::socket_t client(client_context, zmq::socket_type::dealer);
    const std::string endpoint = BindLoopback(server);
    client.set(zmq::sockopt::linger, 0);
    client.connect(endpoint);
    std::thread echo([&server] {
      for (;;) {
        zmq::message_t id, body;
        (void)server.recv(id, zmq::recv_flags::none);
        (void)server.recv(body, zmq::recv_flags::none);
        const bool last = body.size() == 0;
        server.send(id, zmq::send_flags::sndmore);
        server.send(body, zmq::send_flags::none);
        if (last) return;
      }
    });
    const std::vector<char> payload(message_bytes, 1);
    auto round_trip = [&] {
      zmq::message_t reply;
      client.send(zmq::buffer(payload), zmq::send_flags::none);
      (void)client.recv(reply, zmq::recv_flags::none);
    };
    const auto warm_end = SteadyClock::now() + std::chrono::duration<double>(budget.warmup_s);
    while (SteadyClock::now() < warm_end) round_trip();
    std::vector<double> samples;
    samples.reserve(max_samples);
    const auto end = SteadyClock::now() + std::chrono::duration<double>(budget.seconds);
    while (samples.size() < max_samples && SteadyClock::now() < end) {
      const auto start = SteadyClock::now();
      round_trip();
      samples.push_back(1e6 * SecondsBetween(start, SteadyClock::now()));
    }
    client.send(zmq::message_t(), zmq::send_flags::none);  // stops the echo thread
    zmq::message_t last;
    (void)client.recv(last, zmq::recv_flags::none);
    echo.join();
    return Summarize(samples);
  } catch (const zmq::error_t& e) {
    return absl::InternalError(absl::StrCat("raw ZeroMQ round trip: ", e.what()));
  }
}

}  // namespace kairos::bench
