// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "transport/faulty_transport.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/env.h"
#include "kairos/status.h"

namespace kairos::internal {
namespace {

// FNV-1a: a seed from a name that is the same in every build (std::hash need not be).
uint64_t HashName(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// splitmix64: small, seedable, and the same everywhere.
uint64_t NextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double Uniform(uint64_t& state) { return static_cast<double>(NextRandom(state) >> 11) * 0x1.0p-53; }

}  // namespace

std::string FaultDirectionName(FaultDirection d) {
  return d == FaultDirection::kSend ? "send" : d == FaultDirection::kReceive ? "receive" : "both";
}

std::string FaultActionName(FaultAction action) {
  switch (action) {
    case FaultAction::kDrop:
      return "drop";
    case FaultAction::kDelay:
      return "delay";
    case FaultAction::kDuplicate:
      return "duplicate";
    case FaultAction::kReorder:
      return "reorder";
    case FaultAction::kPartition:
      return "partition";
  }
  return "?";
}

std::string FaultEvent::ToString() const {
  return absl::StrFormat("%s: %s %s %s peer %d", node, FaultActionName(action),
                         FaultDirectionName(direction), wire::Kind_Name(kind), peer);
}

// ------------------------------------------------------------------------- FaultLog
void FaultLog::Add(FaultEvent e) {
  absl::MutexLock lock(&mu_);
  events_.push_back(std::move(e));
}

std::vector<FaultEvent> FaultLog::events() const {
  absl::MutexLock lock(&mu_);
  return events_;
}

int64_t FaultLog::Count(FaultAction action, std::optional<wire::Kind> kind) const {
  absl::MutexLock lock(&mu_);
  return std::count_if(events_.begin(), events_.end(), [&](const FaultEvent& e) {
    return e.action == action && (!kind.has_value() || e.kind == *kind);
  });
}

std::string FaultLog::Summary() const {
  std::map<std::string, int> counts;
  for (const FaultEvent& e : events()) {
    ++counts[absl::StrCat(FaultActionName(e.action), " ", FaultDirectionName(e.direction), " ",
                          wire::Kind_Name(e.kind))];
  }
  if (counts.empty()) return "no faults";
  return absl::StrJoin(counts, ", ", [](std::string* out, const auto& kv) {
    absl::StrAppend(out, kv.second, "x ", kv.first);
  });
}

uint64_t FaultLog::activity() const {
  absl::MutexLock lock(&mu_);
  return static_cast<uint64_t>(sent_ + arrived_);
}

int64_t FaultLog::held(const std::vector<wire::Kind>& kinds) const {
  absl::MutexLock lock(&mu_);
  return Held(kinds);
}

int64_t FaultLog::Held(const std::vector<wire::Kind>& kinds) const {
  if (kinds.empty()) return held_;
  int64_t n = 0;
  for (wire::Kind k : kinds) {
    if (auto it = held_by_kind_.find(k); it != held_by_kind_.end()) n += it->second;
  }
  return n;
}

int64_t FaultLog::in_flight() const {
  absl::MutexLock lock(&mu_);
  return sent_ - arrived_;
}

bool FaultLog::AwaitInFlightAtMost(int64_t n, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto idle = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return sent_ - arrived_ <= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
}

bool FaultLog::AwaitHeld(absl::Duration timeout, const std::function<bool()>& or_until,
                         const std::vector<wire::Kind>& kinds) const {
  absl::MutexLock lock(&mu_);
  auto held = [this, &or_until, &kinds]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return Held(kinds) > 0 || (or_until && or_until());
  };
  mu_.AwaitWithTimeout(absl::Condition(&held), timeout);
  return Held(kinds) > 0;
}

// Waiters' conditions are evaluated again when the lock is released.
void FaultLog::Wake() const { absl::MutexLock lock(&mu_); }

bool FaultLog::AwaitTicked(absl::Time t, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto ticked = [this, t]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const auto& [name, last] : last_tick_) {
      if (last < t) return false;
    }
    return true;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&ticked), timeout);
}

void FaultLog::AddSent(int64_t n) {
  absl::MutexLock lock(&mu_);
  sent_ += n;
}

void FaultLog::AddArrived() {
  absl::MutexLock lock(&mu_);
  ++arrived_;
}

void FaultLog::AddHeld(wire::Kind kind, int64_t n) {
  absl::MutexLock lock(&mu_);
  held_ += n;
  held_by_kind_[kind] += n;
}

void FaultLog::Started(const std::string& name) {
  absl::MutexLock lock(&mu_);
  last_tick_[name] = absl::InfinitePast();
}

void FaultLog::Ticked(const std::string& name, absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (auto it = last_tick_.find(name); it != last_tick_.end()) it->second = now;
}

void FaultLog::Stopped(const std::string& name) {
  absl::MutexLock lock(&mu_);
  last_tick_.erase(name);
}

// ------------------------------------------------------------------ FaultyTransport
FaultyTransport::FaultyTransport(std::unique_ptr<Transport> inner, FaultPlan plan, std::string name,
                                 std::shared_ptr<const Env> env, std::shared_ptr<FaultLog> log)
    : inner_(std::move(inner)),
      plan_(std::move(plan)),
      name_(std::move(name)),
      env_holder_(std::move(env)),
      env_(env_holder_ != nullptr ? *env_holder_ : Env::Default()),
      log_(log != nullptr ? std::move(log) : std::make_shared<FaultLog>()),
      rng_state_(plan_.seed ^ HashName(name_)),
      hits_(plan_.rules.size(), 0),
      partition_started_(plan_.rules.size(), absl::InfinitePast()) {}

FaultyTransport::~FaultyTransport() { Stop(); }

void FaultyTransport::Start(MessageHandler on_message, MalformedHandler on_malformed,
                            TickHandler on_tick) {
  on_message_ = std::move(on_message);
  on_tick_ = std::move(on_tick);
  log_->Started(name_);
  inner_->Start([this](PeerId from, Message m) { OnReceive(from, std::move(m)); },
                std::move(on_malformed), [this](absl::Time now) { OnTick(now); });
}

void FaultyTransport::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (!stopped_) {
      stopped_ = true;
      log_->Stopped(name_);
      for (Connection& c : connections_) {
        for (const Held& h : c.queue) log_->AddHeld(h.message.header.kind(), -1);
        c.queue.clear();
      }
    }
  }
  inner_->Stop();
}

Message FaultyTransport::Copy(const Message& m) {
  Message copy;
  copy.header = m.header;
  for (const Buffer& b : m.payloads) copy.payloads.push_back(Buffer::CopyOf(b.span()));
  return copy;
}

void FaultyTransport::Record(FaultAction action, FaultDirection direction, const Message& m,
                             PeerId peer) {
  log_->Add(FaultEvent{action, direction, m.header.kind(), name_, peer});
}

FaultyTransport::Verdict FaultyTransport::Decide(FaultDirection direction, const Message& m,
                                                 PeerId peer, absl::Time now) {
  Verdict v;
  const int64_t seen = messages_++;  // this message counts from the next one on
  for (size_t i = 0; i < plan_.rules.size(); ++i) {
    const FaultRule& r = plan_.rules[i];
    if (r.direction != FaultDirection::kBoth && r.direction != direction) continue;
    if (!absl::StartsWith(name_, r.node)) continue;
    if (r.action == FaultAction::kPartition) {
      absl::Time start = r.partition_start;
      if (r.partition_after_messages >= 0) {
        if (partition_started_[i] == absl::InfinitePast() && seen >= r.partition_after_messages) {
          partition_started_[i] = now;
        }
        start = partition_started_[i] == absl::InfinitePast() ? absl::InfiniteFuture()
                                                              : partition_started_[i];
      }
      if (now >= start && now < start + r.partition_length) {
        v.partition = true;
        Record(FaultAction::kPartition, direction, m, peer);
        return v;
      }
      continue;
    }
    if (!r.kinds.empty() &&
        std::find(r.kinds.begin(), r.kinds.end(), m.header.kind()) == r.kinds.end()) {
      continue;
    }
    if (r.max_hits >= 0 && hits_[i] >= r.max_hits) continue;
    if (Uniform(rng_state_) >= r.probability) continue;
    ++hits_[i];
    Record(r.action, direction, m, peer);
    switch (r.action) {
      case FaultAction::kDrop:
        v.drop = true;
        return v;
      case FaultAction::kDelay:
        v.due = std::max(v.due, now + r.delay);
        break;
      case FaultAction::kDuplicate:
        v.duplicate = true;
        break;
      case FaultAction::kReorder:
        v.overtakes = std::max(v.overtakes, std::max(1, r.reorder_after));
        break;
      case FaultAction::kPartition:
        break;
    }
  }
  return v;
}

FaultyTransport::Connection& FaultyTransport::ConnectionOf(FaultDirection direction, PeerId peer) {
  for (Connection& c : connections_) {
    if (c.direction == direction && c.peer == peer) return c;
  }
  connections_.push_back(Connection{direction, peer, {}});
  return connections_.back();
}

void FaultyTransport::Passed(FaultDirection direction, PeerId peer) {
  for (Connection& c : connections_) {
    if (c.direction != direction || c.peer == peer) continue;
    for (Held& h : c.queue) --h.overtakes_left;
  }
}

std::vector<std::pair<PeerId, Message>> FaultyTransport::TakeReleasable(FaultDirection direction,
                                                                        absl::Time now, bool tick) {
  std::vector<std::pair<PeerId, Message>> out;
  for (Connection& c : connections_) {
    if (c.direction != direction) continue;
    size_t n = 0;
    while (n < c.queue.size() && c.queue[n].due <= now &&
           (tick || c.queue[n].overtakes_left <= 0)) {
      log_->AddHeld(c.queue[n].message.header.kind(), -1);
      out.emplace_back(c.peer, std::move(c.queue[n].message));
      ++n;
    }
    if (n > 0) {
      c.queue.erase(c.queue.begin(), c.queue.begin() + static_cast<std::ptrdiff_t>(n));
    }
  }
  return out;
}

std::vector<std::pair<PeerId, Message>> FaultyTransport::Pass(FaultDirection direction, PeerId peer,
                                                              Message message, absl::Time now) {
  std::vector<std::pair<PeerId, Message>> out;
  const Verdict v = Decide(direction, message, peer, now);
  if (v.partition || v.drop) return out;
  Connection& c = ConnectionOf(direction, peer);
  std::vector<Message> copies;
  if (v.duplicate) copies.push_back(Copy(message));
  copies.insert(copies.begin(), std::move(message));
  bool first = true;
  for (Message& m : copies) {
    const bool hold = !c.queue.empty() || (first && (v.due > now || v.overtakes > 0));
    if (hold) {
      log_->AddHeld(m.header.kind(), 1);
      c.queue.push_back(
          Held{std::move(m), first ? v.due : absl::InfinitePast(), first ? v.overtakes : 0});
    } else {
      out.emplace_back(peer, std::move(m));
    }
    first = false;
  }
  Passed(direction, peer);
  for (auto& released : TakeReleasable(direction, now, /*tick=*/false)) {
    out.push_back(std::move(released));
  }
  return out;
}

// Sends under mu_: the inner transport's Send never calls back into this one, and holding
// the lock keeps one connection's messages in the order they were decided.
void FaultyTransport::Send(PeerId to, Message message) {
  absl::MutexLock lock(&mu_);
  if (stopped_) return inner_->Send(to, std::move(message));  // dropped and counted there
  for (auto& [peer, m] : Pass(FaultDirection::kSend, to, std::move(message), env_.Now())) {
    SendOut(peer, std::move(m));
  }
}

void FaultyTransport::Post(std::function<void()> fn) {
  // The guard counts the function done when it is destroyed: after it ran, or unrun when
  // the transport discards it. Made in place: a temporary Done would count it done at once.
  struct Done {
    explicit Done(std::shared_ptr<FaultLog> l) : log(std::move(l)) {}
    Done(const Done&) = delete;
    Done& operator=(const Done&) = delete;
    ~Done() { log->AddArrived(); }
    std::shared_ptr<FaultLog> log;
  };
  log_->AddSent(1);
  inner_->Post([fn = std::move(fn), done = std::make_shared<Done>(log_)] { fn(); });
}

void FaultyTransport::Deliver(PeerId from, Message message) {
  on_message_(from, std::move(message));
}

// Counted before it goes, so that the receiver's count never runs ahead of it.
void FaultyTransport::SendOut(PeerId to, Message message) {
  log_->AddSent(1);
  inner_->Send(to, std::move(message));
}

void FaultyTransport::OnReceive(PeerId from, Message message) {
  // Arrived once handled (or dropped, or held): replies it causes are counted first.
  struct Arrival {
    FaultLog& log;
    ~Arrival() { log.AddArrived(); }
  } arrival{*log_};
  std::vector<std::pair<PeerId, Message>> deliver;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    deliver = Pass(FaultDirection::kReceive, from, std::move(message), env_.Now());
  }
  // Without the lock: the node's handler sends (through this transport).
  for (auto& [peer, m] : deliver) Deliver(peer, std::move(m));
}

void FaultyTransport::OnTick(absl::Time now) {
  std::vector<std::pair<PeerId, Message>> deliver;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    for (auto& [peer, m] : TakeReleasable(FaultDirection::kSend, now, /*tick=*/true)) {
      SendOut(peer, std::move(m));
    }
    deliver = TakeReleasable(FaultDirection::kReceive, now, /*tick=*/true);
  }
  for (auto& [peer, m] : deliver) Deliver(peer, std::move(m));
  if (on_tick_) on_tick_(now);
  log_->Ticked(name_, now);
}

// ----------------------------------------------------------- FaultyTransportFactory
FaultyTransportFactory::FaultyTransportFactory(FaultPlan plan,
                                               std::shared_ptr<TransportFactory> inner)
    : plan_(std::move(plan)), inner_(std::move(inner)) {}

absl::StatusOr<std::unique_ptr<Transport>> FaultyTransportFactory::Make(
    const TransportOptions& options) {
  std::unique_ptr<Transport> inner;
  if (inner_ != nullptr) {
    KAIROS_ASSIGN_OR_RETURN(inner, inner_->Make(options));
  } else {
    KAIROS_ASSIGN_OR_RETURN(inner, MakeZmqTransport(options));
  }
  std::string name;
  {
    absl::MutexLock lock(&mu_);
    name = absl::StrCat(options.name, "#", made_[options.name]++);
  }
  return std::make_unique<FaultyTransport>(std::move(inner), plan_, std::move(name), options.env,
                                           log_);
}

}  // namespace kairos::internal
