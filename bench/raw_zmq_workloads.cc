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

using SteadyClock = std::chrono::steady_clock;

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

// Receives until the zero-length end marker; measures the messages that arrive in
// (t0, t0 + seconds], where t0 is the first arrival after the warm-up, then sets `stop`.
Throughput ReceiveMeasured(zmq::socket_t& rx, uint64_t value_bytes, const Budget& budget,
                           std::atomic<bool>& stop) {
  zmq::message_t m;
  (void)rx.recv(m, zmq::recv_flags::none);
  const SteadyClock::time_point warm_end =
      SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                               std::chrono::duration<double>(budget.warmup_s));
  bool measuring = false;
  uint64_t counted = 0;
  uint64_t result_ops = 0;
  SteadyClock::time_point t0, t1;
  double cpu0 = 0, cpu1 = 0;
  while (m.size() != 0) {
    (void)rx.recv(m, zmq::recv_flags::none);
    if (m.size() == 0 || stop.load(std::memory_order_relaxed)) continue;
    const SteadyClock::time_point now = SteadyClock::now();
    if (!measuring) {
      if (now >= warm_end) {
        measuring = true;
        t0 = now;
        cpu0 = ProcessCpuSeconds();
      }
      continue;
    }
    ++counted;
    if (SecondsBetween(t0, now) >= budget.seconds) {
      t1 = now;
      cpu1 = ProcessCpuSeconds();
      result_ops = counted;
      stop.store(true);
    }
  }
  return MakeThroughput(result_ops, value_bytes, SecondsBetween(t0, t1), cpu1 - cpu0);
}

}  // namespace

absl::StatusOr<Throughput> RawOneWay(uint64_t value_bytes, uint64_t queue_bytes,
                                     const Budget& budget) {
  // Declared first so that it outlives the contexts, which release the last references.
  std::vector<char> payload(value_bytes, 1);
  std::atomic<int64_t> in_flight{0};
  try {
    zmq::context_t tx_context(1);
    zmq::context_t rx_context(1);
    zmq::socket_t rx(rx_context, zmq::socket_type::pull);
    zmq::socket_t tx(tx_context, zmq::socket_type::push);
    // Enough messages queued to keep the connection busy, few enough that the queues drain
    // quickly at the end and the receiver's buffers stay warm in the caches.
    const int hwm = static_cast<int>(std::clamp<uint64_t>(queue_bytes / value_bytes, 4, 1000));
    rx.set(zmq::sockopt::rcvhwm, hwm);
    tx.set(zmq::sockopt::sndhwm, hwm);
    const std::string endpoint = BindLoopback(rx);
    tx.set(zmq::sockopt::linger, 0);
    tx.connect(endpoint);
    std::atomic<bool> stop{false};
    std::thread sender([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        in_flight.fetch_add(1, std::memory_order_relaxed);
        zmq::message_t m(payload.data(), payload.size(), &ReleasePayload, &in_flight);
        (void)tx.send(m, zmq::send_flags::none);
      }
      (void)tx.send(zmq::message_t(), zmq::send_flags::none);  // the end marker
    });
    Throughput t = ReceiveMeasured(rx, value_bytes, budget, stop);
    sender.join();
    return t;
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
