// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The core of ZmqTransport (zmq_transport.h): its public methods, the queue through which
// other threads hand the I/O thread work (Enqueue, RunOnIo, the eventfd wake-up), and the
// I/O loop with its poll set and idle spin.

#include "transport/zmq_transport.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <variant>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/logging.h"
#include "kairos/env.h"
#include "transport/curve_keys.h"
#include "transport/transport.h"
#include "wire/message.h"
#include "zmq.h"

namespace kairos::internal {

ZmqTransport::ZmqTransport(const TransportOptions& options,
                           std::shared_ptr<TransportContext> context, int wake_fd)
    : options_(options),
      context_(std::move(context)),
      wake_fd_(wake_fd),
      env_(options.env != nullptr ? *options.env : Env::Default()),
      log_(MakeLogger(options.log_level, options.log_sink)) {
  if (options_.keys.has_value()) curve_ = DecodeCurveKeys(*options_.keys);
}

ZmqTransport::~ZmqTransport() {
  Stop();
  CloseSockets();
  ::close(wake_fd_);
}

absl::StatusOr<std::string> ZmqTransport::Listen(const std::string& endpoint) {
  absl::StatusOr<std::string> result = Stopped("listen at " + endpoint);
  RunOnIo([&] { result = ListenNow(endpoint); });
  return result;
}

absl::StatusOr<PeerId> ZmqTransport::Connect(const std::string& endpoint) {
  absl::StatusOr<PeerId> result = Stopped("connect to " + endpoint);
  RunOnIo([&] { result = ConnectNow(endpoint); });
  return result;
}

void ZmqTransport::Start(MessageHandler on_message, MalformedHandler on_malformed,
                         TickHandler on_tick) {
  on_message_ = std::move(on_message);
  on_malformed_ = std::move(on_malformed);
  on_tick_ = std::move(on_tick);
  {
    PlainMutexLock lock(&mu_);
    loop_ = LoopState::kRunning;  // commands queued from now on are the loop's to run
  }
  // A virtual clock: a tick when the loop starts (a move just before the watch would
  // otherwise go unseen), then one each time it moves (the watcher only flags it and
  // wakes the loop; the tick runs on the I/O thread).
  if (env_.IsVirtual()) {
    watch_id_ = env_.Watch([this] {
      clock_moved_.store(true);
      Wake();
    });
    clock_moved_.store(true);
  }
  absl::Notification started;
  io_thread_ = env_.StartThread("kairos-io", [this, &started] {
    io_thread_id_.store(std::this_thread::get_id());
    started.Notify();
    Loop();
  });
  started.WaitForNotification();
}

void ZmqTransport::Send(PeerId to, Message message) {
  if (OnIoThread()) {
    SendNow(to, message);
    return;
  }
  Enqueue(Outgoing{to, std::move(message)});
}

void ZmqTransport::Stop() {
  if (watch_id_ != 0) {
    env_.Unwatch(watch_id_);
    watch_id_ = 0;
  }
  if (!io_thread_.joinable()) return;
  stop_.store(true);
  WakeAll();
  io_thread_.join();
}

std::string ZmqTransport::PeerAddress(PeerId peer) const {
  auto it = routing_id_of_peer_.find(peer);
  return it == routing_id_of_peer_.end() ? std::string() : it->second.address;
}

bool ZmqTransport::Connected(PeerId peer) const {
  if (peer & kIncomingBit) return routing_id_of_peer_.contains(peer);
  return peer < dealers_.size() && dealers_[peer].connected;
}

TrafficCounts ZmqTransport::traffic() const {
  return {messages_sent_.load(std::memory_order_relaxed),
          bytes_sent_.load(std::memory_order_relaxed),
          messages_received_.load(std::memory_order_relaxed),
          bytes_received_.load(std::memory_order_relaxed)};
}

HandOffCounts ZmqTransport::hand_offs() const {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  return {.enqueued = enqueued_.load(kRelaxed),
          .wakes = wakes_.load(kRelaxed),
          .spins = spins_.load(kRelaxed),
          .spins_found = spins_found_.load(kRelaxed),
          .ran_here = ran_here_.load(kRelaxed),
          .waited_here = waited_here_.load(kRelaxed)};
}

absl::Status ZmqTransport::Stopped(const std::string& what) const {
  return absl::UnavailableError(
      absl::StrFormat("%s: cannot %s: the transport is stopped", options_.name, what));
}

void ZmqTransport::RunOnIo(std::function<void()> fn) {
  if (OnIoThread()) return fn();
  bool started;
  {
    PlainMutexLock lock(&mu_);
    started = loop_ != LoopState::kNotStarted;
  }
  if (!started) return fn();
  auto call = std::make_shared<IoCall>();
  auto notifier = std::make_shared<Notifier>(call);
  Enqueue([fn = std::move(fn), notifier = std::move(notifier)] {
    fn();
    notifier->call->ran = true;
  });
  call->done.WaitForNotification();
}

void ZmqTransport::Enqueue(Command command) {
  bool queued = false;
  bool wake = false;
  // From another thread than the one doing the I/O thread's work (a request beyond the
  // few a caller sends itself, the clock, another thread's call): it is the I/O thread's to
  // do, so a lease ends.
  const bool outside = !OnIoThread();
  {
    PlainMutexLock lock(&mu_);
    if (loop_ != LoopState::kEnded) {
      queue_.push_back(std::move(command));
      queued = true;
      commands_queued_.store(true, std::memory_order_release);
      wake = std::exchange(leading_ ? leader_sleeping_ : sleeping_, false);
      if (outside) EndLease();
    }
  }
  if (!queued) return Discard(command);
  enqueued_.fetch_add(1, std::memory_order_relaxed);
  if (wake) Wake();
}

void ZmqTransport::Discard(const Command& command) {
  if (std::holds_alternative<Outgoing>(command)) Drop();
}

void ZmqTransport::EndLease() {
  lease_until_ns_.store(0, std::memory_order_release);
  if (parked_) park_.Signal();
}

bool ZmqTransport::IoThreadParked() {
  PlainMutexLock lock(&mu_);
  return parked_;
}

void ZmqTransport::TakeLease() { lease_until_ns_.store(kLeading, std::memory_order_release); }

void ZmqTransport::GiveLease(bool keep) {
  PlainMutexLock lock(&mu_);
  leading_ = false;
  leader_sleeping_ = false;
  int64_t leading = kLeading;
  const int64_t lease = absl::ToUnixNanos(absl::Now() + kWaitHereLease);
  if (!keep || !queue_.empty() ||
      !lease_until_ns_.compare_exchange_strong(leading, lease, std::memory_order_acq_rel)) {
    EndLease();
  }
}

void ZmqTransport::WakeAll() {
  {
    PlainMutexLock lock(&mu_);
    EndLease();
  }
  Wake();
}

void ZmqTransport::Wake() {
  wakes_.fetch_add(1, std::memory_order_relaxed);
  uint64_t one = 1;
  // A full counter (impossible in practice) still leaves the fd readable: ignore EAGAIN.
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

// ------------------------------------------------------------------- the I/O loop
// The loop polls file descriptors itself, not through zmq_poll: the eventfd, and each
// socket's ZMQ_FD, which ZeroMQ makes readable when commands reach the socket (a pipe
// that got messages, among others). zmq_poll costs a poll syscall with timeout 0 before
// each blocking one and a ZMQ_EVENTS query per socket on each pass (each a syscall of its
// own), which made up most of the system calls of a small request. ZMQ_FD is edge
// triggered: a socket's state may change without the descriptor saying so once the
// socket was used (a send may take the command that announced a message). So a socket is
// drained (received from until it is empty) whenever its descriptor was readable, it was
// sent on since its last drain, or its last drain stopped at the batch's end, and the
// loop sleeps only once every socket's last call was a receive that found it empty. The
// tick drains every socket as well, a backstop that costs one receive per socket.

void ZmqTransport::RebuildPollItems() {
  for (Dealer& d : dealers_) {
    if (d.monitor_done) StopMonitor(d.socket, d.monitor);
  }
  items_.clear();
  items_.push_back({nullptr, wake_fd_, ZMQ_POLLIN, 0});
  if (listener_ != nullptr) items_.push_back({listener_, 0, ZMQ_POLLIN, 0});
  first_dealer_ = items_.size();
  for (const Dealer& d : dealers_) items_.push_back({d.socket, 0, ZMQ_POLLIN, 0});
  first_monitor_ = items_.size();
  if (listener_monitor_ != nullptr) items_.push_back({listener_monitor_, 0, ZMQ_POLLIN, 0});
  for (const Dealer& d : dealers_) {
    if (d.monitor != nullptr) items_.push_back({d.monitor, 0, ZMQ_POLLIN, 0});
  }
  fds_.assign(items_.size(), pollfd{wake_fd_, POLLIN, 0});
  for (size_t i = 1; i < items_.size(); ++i) {
    int fd = -1;
    size_t size = sizeof(fd);
    zmq_getsockopt(items_[i].socket, ZMQ_FD, &fd, &size);
    fds_[i].fd = fd;
  }
  pending_.assign(items_.size(), 1);  // a new poll set starts from a drain of each
  poll_dirty_ = false;
}

bool ZmqTransport::DrainSockets() {
  bool more = false;
  for (size_t i = 1; i < items_.size(); ++i) {
    void* socket = items_[i].socket;
    if (i < first_monitor_) {
      // The socket's "sent" flag, by index: the dealers sit in items_ in their order from
      // first_dealer_ on, and keep their index when a handler adds one (ConnectNow).
      const bool listener = i < first_dealer_;
      const size_t d = listener ? 0 : i - first_dealer_;
      if (!(pending_[i] || (listener ? listener_sent_ : dealers_[d].sent))) continue;
      // Cleared after the drain: a send from a handler during it comes before the
      // receive that ends it, which leaves the socket's state known again.
      pending_[i] = Drain(socket, listener, static_cast<PeerId>(d)) ? 1 : 0;
      (listener ? listener_sent_ : dealers_[d].sent) = false;
    } else if (pending_[i]) {
      pending_[i] = MonitorEvents(socket) ? 1 : 0;
    }
    more = more || pending_[i];
  }
  // A handler's send on a socket drained earlier in this pass.
  return more || SentSinceDrain();
}

bool ZmqTransport::SentSinceDrain() const {
  if (listener_sent_) return true;
  for (const Dealer& d : dealers_) {
    if (d.sent) return true;
  }
  return false;
}

bool ZmqTransport::RunCommands() {
  // Set with each command queued, under mu_: a command queued by this thread, or before
  // whatever this thread learned of, is seen here; one queued meanwhile by another thread
  // waits for the next round (MaySleep sees it).
  if (!commands_queued_.load(std::memory_order_acquire)) return false;
  std::deque<Command> batch;
  {
    PlainMutexLock lock(&mu_);
    batch.swap(queue_);
    commands_queued_.store(false, std::memory_order_relaxed);
  }
  if (batch.empty()) return false;
  while (!batch.empty()) {
    // Each command is destroyed once done, so a RunOnIo waiter wakes without waiting for
    // the rest of the batch.
    Command c = std::move(batch.front());
    batch.pop_front();
    if (auto* out = std::get_if<Outgoing>(&c)) {
      SendNow(out->to, out->message);
    } else {
      std::get<std::function<void()>>(c)();
    }
  }
  return true;
}

bool ZmqTransport::MaySleep() {
  PlainMutexLock lock(&mu_);
  if (!queue_.empty()) return false;
  sleeping_ = true;
  return true;
}

bool ZmqTransport::LeaderMaySleep() {
  PlainMutexLock lock(&mu_);
  if (!queue_.empty()) return false;
  leader_sleeping_ = true;
  return true;
}

bool ZmqTransport::Park(absl::Time next_tick) {
  if (lease_until_ns_.load(std::memory_order_acquire) == 0) return false;  // none
  bool parked = false;
  PlainMutexLock lock(&mu_);
  while (!stop_.load() && queue_.empty()) {
    const int64_t lease = lease_until_ns_.load(std::memory_order_acquire);
    const absl::Time until = std::min(absl::FromUnixNanos(lease), next_tick);
    if (absl::Now() >= until) break;
    parked_ = true;
    park_.WaitWithDeadline(&mu_, until);
    parked_ = false;
    parked = true;
  }
  return parked;
}

void ZmqTransport::TakeReady(const std::vector<pollfd>& polled) {
  if (polled[0].revents & POLLIN) {
    uint64_t count;
    [[maybe_unused]] ssize_t n = ::read(wake_fd_, &count, sizeof(count));
  }
  for (size_t i = 1; i < polled.size(); ++i) {
    if (polled[i].revents != 0) pending_[i] = 1;
  }
}

void ZmqTransport::TickIfDue() {
  const absl::Time real_now = absl::Now();
  if (real_now < next_tick_) return;
  next_tick_ = real_now + options_.tick_period;
  std::fill(pending_.begin(), pending_.end(), 1);  // the backstop (see above)
  if (on_tick_) on_tick_(env_.Now());
}

int ZmqTransport::SpinBeforeSleep(absl::Time next_tick) {
  if (options_.idle_spin <= absl::ZeroDuration()) return 0;
  if (options_.spin_wanted && !options_.spin_wanted()) return 0;
  const absl::Duration budget = idle_spin_.Next();
  if (budget <= absl::ZeroDuration()) return 0;
  spins_.fetch_add(1, std::memory_order_relaxed);
  const absl::Time until = std::min(absl::Now() + budget, next_tick);
  int ready = 0;
  bool found = false;
  do {
    for (pollfd& p : fds_) p.revents = 0;
    ready = ::poll(fds_.data(), fds_.size(), 0);
    found = ready > 0 || commands_queued_.load(std::memory_order_acquire);
  } while (!found && absl::Now() < until);
  idle_spin_.Ended(found);
  if (found) spins_found_.fetch_add(1, std::memory_order_relaxed);
  return ready > 0 ? ready : 0;
}

bool ZmqTransport::RunHere(absl::FunctionRef<void()> fn, ThreadChecker* role) {
  if (env_.IsVirtual() || OnIoThread()) return false;
  if (!token_.try_lock()) return false;  // the I/O thread (or another caller) is at work
  if (!looping_.load(std::memory_order_acquire) || poll_dirty_) {
    token_.unlock();
    return false;
  }
  TakeLease();
  const std::thread::id io = io_thread_id_.load();
  io_thread_id_.store(std::this_thread::get_id());
  if (role != nullptr) role->Bind();
  // Given back however this ends (a handler may throw): the I/O thread is then woken, to
  // look at the sockets itself.
  bool wake = true;
  absl::Cleanup give_back = [&] {
    if (role != nullptr) role->Unbind();
    io_thread_id_.store(io);
    GiveLease(!wake);
    token_.unlock();
    if (wake) Wake();
  };
  RunCommands();  // what was queued before fn, first
  fn();
  FlushBatches();
  // The sockets sent on are drained as the loop drains them before it sleeps: a send may
  // have taken the signal of a message that arrived meanwhile, which the I/O thread's poll
  // would then never see. A poll set changed by a handler is left to the I/O thread. With
  // the I/O thread parked they are not (a drain ends with a receive that finds the socket
  // empty, two system calls in ZeroMQ): they stay marked as sent on, and whoever works next
  // drains them first, this caller when it waits or sends again, or the I/O thread, which
  // drains every socket when it leaves the park.
  bool more = true;
  if (IoThreadParked()) {
    if (on_batch_) on_batch_();
    FlushBatches();
    more = false;
  }
  while (more && !poll_dirty_) {
    more = DrainSockets();
    if (on_batch_) on_batch_();
    FlushBatches();
    more = more || SentSinceDrain();
  }
  // Commands its handlers queued are the I/O thread's, which may be parked (Park).
  wake = more || poll_dirty_ || commands_queued_.load(std::memory_order_acquire);
  ran_here_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool ZmqTransport::WaitHere(absl::FunctionRef<bool()> done, absl::Time until, absl::Time spin_until,
                            ThreadChecker* role) {
  if (env_.IsVirtual() || OnIoThread()) return false;
  const auto refuse = [this] {
    PlainMutexLock lock(&mu_);
    EndLease();
    return false;
  };
  if (!token_.try_lock()) return refuse();  // the I/O thread (or another caller) is at work
  if (!looping_.load(std::memory_order_acquire) || poll_dirty_ || stop_.load()) {
    token_.unlock();
    return refuse();
  }
  TakeLease();
  {
    PlainMutexLock lock(&mu_);
    leading_ = true;
  }
  const std::thread::id io = io_thread_id_.load();
  io_thread_id_.store(std::this_thread::get_id());
  if (role != nullptr) role->Bind();
  waited_here_.fetch_add(1, std::memory_order_relaxed);
  // Ends with a lease when the wait ended as asked and nothing is left for the I/O thread;
  // otherwise the I/O thread takes over at once (however this ends: a handler may throw),
  // woken to drain what is left or to rebuild its poll set.
  bool finished = false;
  bool more = false;
  absl::Cleanup give_back = [&] {
    if (role != nullptr) role->Unbind();
    io_thread_id_.store(io);
    GiveLease(finished);
    const bool wake = more || poll_dirty_;
    token_.unlock();
    if (wake) Wake();
  };
  lead_fds_.resize(fds_.size());
  for (size_t i = 0; i < fds_.size(); ++i) {  // not revents: the I/O thread's poll writes them
    lead_fds_[i].fd = fds_[i].fd;
    lead_fds_[i].events = fds_[i].events;
  }
  for (int round = 1;; ++round) {
    RunCommands();
    FlushBatches();
    TickIfDue();
    more = DrainSockets();
    if (on_batch_) on_batch_();
    FlushBatches();
    more = more || SentSinceDrain() || commands_queued_.load(std::memory_order_acquire);
    if (poll_dirty_ || stop_.load()) return true;  // left to the I/O thread
    if (done()) {
      finished = !more;  // messages left: the I/O thread takes them at once
      return true;
    }
    if (more) continue;
    const absl::Duration wait = std::min(until, next_tick_) - absl::Now();
    if (wait <= absl::ZeroDuration()) {
      if (absl::Now() >= until) return true;
      continue;  // the tick
    }
    int timeout_ms =
        static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(wait) + 1, 1 << 30));
    if (absl::Now() < spin_until) {
      timeout_ms = 0;
      // Now and then, let a thread that waits for this core run: it may be the one bringing
      // the answer (ZeroMQ's I/O thread).
      if (round % 8 == 0) sched_yield();
    } else if (!LeaderMaySleep()) {
      timeout_ms = 0;
    }
    for (pollfd& p : lead_fds_) p.revents = 0;
    const int ready = ::poll(lead_fds_.data(), lead_fds_.size(), timeout_ms);
    if (timeout_ms != 0) {
      PlainMutexLock lock(&mu_);
      leader_sleeping_ = false;
    }
    if (ready > 0) TakeReady(lead_fds_);
  }
}

void ZmqTransport::Loop() {
  const bool virtual_time = env_.IsVirtual();
  next_tick_ = absl::Now() + options_.tick_period;
  token_.lock();
  looping_.store(true, std::memory_order_release);
  while (!stop_.load()) {
    // The queue first, every round: commands posted while the loop was busy (answers
    // being handled) are sent before it polls, without a wake-up of their own.
    RunCommands();
    FlushBatches();  // the commands' sends leave together, a peer's small ones in one frame
    // Handlers may open connections (ConnectNow), which changes the poll set: rebuilt
    // here only, so the set stays put while DrainSockets walks it.
    if (poll_dirty_) RebuildPollItems();
    bool more = DrainSockets();
    if (on_batch_) on_batch_();  // what the pass's handlers decided, acted on at once
    FlushBatches();
    more = more || SentSinceDrain();  // sent on: those sockets are drained before a sleep
    if (poll_dirty_) continue;  // a handler changed the poll set: drain the new one first
    const absl::Duration wait = next_tick_ - absl::Now();
    // A move of a virtual clock flags clock_moved_ before it wakes the loop, so a flag
    // seen here is never waited out; one set later wakes the poll.
    int timeout_ms =
        wait <= absl::ZeroDuration()
            ? 0
            : static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(wait) + 1, 1 << 30));
    if (virtual_time) timeout_ms = clock_moved_.load() ? 0 : -1;
    // A socket with messages left, or commands queued since RunCommands: look without
    // waiting. Otherwise sleeping_ is set, and the next command wakes the poll.
    if (more) timeout_ms = 0;
    // Out of work: a caller may do the work meanwhile (RunHere, WaitHere).
    const absl::Time next_tick = next_tick_;
    token_.unlock();
    int ready = 0;
    if (timeout_ms != 0 && Park(next_tick)) {
      // A caller waited here meanwhile: the sockets were not watched by this thread.
      token_.lock();
      std::fill(pending_.begin(), pending_.end(), 1);
    } else {
      // Where time moves by itself: first a spin, which may find the next work itself.
      ready = timeout_ms != 0 && !virtual_time ? SpinBeforeSleep(next_tick) : 0;
      if (ready > 0) timeout_ms = 0;
      if (timeout_ms != 0 && !MaySleep()) timeout_ms = 0;
      if (ready == 0) {
        for (pollfd& p : fds_) p.revents = 0;
        ready = ::poll(fds_.data(), fds_.size(), timeout_ms);
      }
      token_.lock();
      if (timeout_ms != 0) {
        PlainMutexLock lock(&mu_);
        sleeping_ = false;
      }
    }
    if (ready > 0) TakeReady(fds_);
    if (virtual_time) {
      if (clock_moved_.exchange(false) && on_tick_) {
        std::fill(pending_.begin(), pending_.end(), 1);
        on_tick_(env_.Now());
      }
      continue;
    }
    TickIfDue();
  }
  looping_.store(false, std::memory_order_release);
  FlushBatches();
  CloseSockets();
  std::deque<Command> discarded;
  {
    PlainMutexLock lock(&mu_);
    loop_ = LoopState::kEnded;
    discarded.swap(queue_);
  }
  token_.unlock();
  for (const Command& c : discarded) Discard(c);
}

}  // namespace kairos::internal
