// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target: a coordinator's whole message handler, behind the transport seam.
//
// Each input builds a fresh coordinator (Coordinator::Create) whose transport is a
// FakeTransport (handed over by a TransportFactory) and whose clock is a
// kairos::testing::ManualEnv: the harness plays every peer and the I/O thread, all on this thread,
// and moves the clock only at the input's ticks, so an input replays the same way (only the random
// job id and worker credentials differ between runs, and nothing the harness checks depends on
// their values). The job: 1 or 2 servers, 1 to 3 workers, with or without a fixed job
// configuration, tolerate_worker_failures on or off, server restarts allowed or not
// (the config byte); join timeout 10 s, heartbeat timeout 2 s, rejoin silence 500 ms,
// server restart timeout 3 s, barrier cap 5 s.
//
// Peers are 6 connection slots; a slot's peer id changes when it disconnects (a new
// connection of the same process). Operations (a u8 selector and its fields, see Step):
//
//   join          a JOIN from a slot: server, worker or no role; a rank or shard in range,
//                 taken, out of range or none; an endpoint, none or a wildcard one; the
//                 job's configuration, one that differs in a field, none, or an invalid one
//                 (no table, chunk 0, huge sizes and counts, 1025 tables, NaN learning
//                 rate, a policy that does not parse, ... or counts from the input); an
//                 incarnation (the same or a new process)
//   message       any kind the wire defines (and an unknown one) from a slot, claiming the
//                 node id it joined as, another slot's node id, or an invented one; READY
//                 with an error status, BARRIER with timeouts, HEARTBEAT with stragglers,
//                 MEMBERSHIP with a body from the input, kinds with payloads
//   raw frames    up to 4 frames of arbitrary bytes from a slot
//   tick          the clock moves on by the input's amount (deadlines, heartbeat timeouts)
//   bring up      every server and worker joins with its own rank from its own slot
//   all ...       every joined server READY / every node HEARTBEAT / every worker BARRIER /
//                 every worker FINISH / every server answers the rejoins it was told of
//   disconnect    a slot's connection is replaced by a new one (the old one goes silent)
//
// After every delivery it checks what the coordinator sent in answer (a peer is the node
// its connection joined as, whatever its header says):
//   - every message passes Decode and is a kind a coordinator sends; nothing goes to a peer
//     that never sent anything (the transport's drop count is the undecodable deliveries);
//   - an admitted JOIN gets a new node id and a rank in range (a worker a credential, a
//     server none); in the joining phase a role's rank is never given twice, and a worker
//     rank given again while running (a rejoin) retires its holder (SHUTDOWN) at once;
//   - START goes to a connection at most once per node admitted on it, never before every
//     node joined nor after the job ended; it names every server shard and worker rank
//     exactly once, with the job's counts and a valid configuration (the fixed one when
//     given); worker credentials only to a server's connection (MEMBERSHIP ACTIVE too),
//     each worker's own (its JOIN_REPLY's; a rejoin's the same to every server);
//   - a message claiming a node id its connection did not join as gets exactly one ERROR
//     (PermissionDenied) and nothing else happens;
//   - a worker's BARRIER is answered at most once, a release only for a BARRIER that
//     waits; HEARTBEAT and FINISH answers only to their request's connection; SHUTDOWN
//     only when the job ends (to every node once) or to a worker a rejoin replaced;
//   - after the job ended nothing is admitted, started or announced (MEMBERSHIP);
//   - the counts of stats() agree: phase never goes back, at most one active worker per
//     rank and one ready server per shard, active + finished + dead = joined workers.
// At the end two ticks past every timeout must end the job, and every worker's BARRIER
// must have been answered.
//
// KAIROS_FUZZ_VERBOSE=1 prints every operation and every message the coordinator sends.
//
// Input layout: u8 config, then operations (u8 selector and its fields, see Step); at most
// kMaxOps. `coordinator_fuzzer --write-seeds=DIR` writes the seed corpus
// (tests/fuzz/corpus/coordinator).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "fakes/fake_transport.h"
#include "google/protobuf/stubs/logging.h"
#include "kairos/coordinator.h"
#include "kairos/job.h"
#include "kairos/options.h"
#include "kairos/testing/manual_env.h"
#include "tests/fuzz/fuzz_input.h"
#include "transport/node_bringup.h"
#include "transport/transport.h"
#include "wire/convert.h"
#include "wire/message.h"

namespace kairos::fuzz {
namespace {

using internal::FakeTransport;
using internal::Message;
using internal::PeerId;

constexpr int kMaxOps = 256;
constexpr int kSlots = 6;  // connection slots; bring-up uses servers + workers <= 5 of them
constexpr absl::Duration kJoinTimeout = absl::Seconds(10);
constexpr absl::Duration kHeartbeatTimeout = absl::Seconds(2);
constexpr absl::Duration kRejoinSilence = absl::Milliseconds(500);
constexpr absl::Duration kRestartTimeout = absl::Seconds(3);
constexpr absl::Duration kMaxBarrierWait = absl::Seconds(5);
constexpr uint64_t kFirstRequestId = 1000;  // the harness's own; raw frames pick theirs

// The config byte.
enum Config : uint8_t {
  kTwoServers = 1,
  kWorkersShift = 1,  // bits 1-2: (value % 3) + 1 workers
  kFixedJob = 8,
  kTolerate = 16,
  kRestarts = 32,
};

enum Op : uint8_t {
  kJoin = 0,  // 0..1
  kSend = 2,  // 2..4
  kRawFrames = 5,
  kTick = 6,
  kBringUp = 7,
  kAllHeartbeat = 8,
  kAnswerRejoins = 9,
  kDisconnect = 10,
  kAllReady = 11,
  kAllBarrier = 12,
  kAllFinish = 13,
  kNumOps = 14,
};

// New entries go at the end of these lists, so that the seeds' choices keep their meaning.
constexpr wire::Role kRoles[] = {
    wire::SERVER,      wire::WORKER, wire::WORKER, wire::ROLE_UNSPECIFIED,
    wire::COORDINATOR, static_cast<wire::Role>(7),
};

// clang-format off
constexpr wire::Kind kKinds[] = {
    wire::HEARTBEAT,   wire::HEARTBEAT,  wire::READY,        wire::READY,
    wire::BARRIER,     wire::BARRIER,    wire::FINISH,       wire::MEMBERSHIP,
    wire::JOIN_REPLY,  wire::START,      wire::BARRIER_RELEASE, wire::SHUTDOWN,
    wire::PUSH,        wire::PUSH_REPLY, wire::PULL,         wire::PULL_REPLY,
    wire::CLOCK,       wire::ASSIGN,     wire::ASSIGN_REPLY, wire::SET_LEARNING_RATE,
    wire::SET_LEARNING_RATE_REPLY,       wire::ERROR,        wire::PUSH_SPARSE,
    wire::PULL_SPARSE, wire::KIND_UNSPECIFIED, static_cast<wire::Kind>(99), wire::JOIN,
    wire::FAILED,
};
// clang-format on

// Fields of a message (kSend), in `extras`.
enum Extra : uint8_t {
  kErrorStatus = 1,  // a status with code 1..17 (READY: the server could not start)
  kTimeout = 2,      // timeout_ms: a u16 ...
  kWideTimeout = 4,  // ... or a u64
  kStragglers = 8,   // up to 3 int32
  kMembership = 16,  // a Membership body from the input
  kNoRequestId = 32,
};

// How a JOIN asks for its rank (a worker's requested_rank, a server's requested_shard - 1).
constexpr int64_t kSpecialRanks[] = {
    std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), -2, 65536,
    int64_t{1} << 31, (int64_t{1} << 32) - 2,
};

constexpr int64_t kSpecialClocks[] = {-1, std::numeric_limits<int64_t>::max(),
                                      std::numeric_limits<int64_t>::min(), int64_t{1} << 40};

// The job's configuration (what the coordinator is given with kFixedJob, and what a
// well-behaved worker sends).
JobConfig BaseJob() {
  JobConfig job;
  job.policy = "bsp";
  job.chunk_elements = 4;
  job.tables.push_back({"w", 12, Initializer::Uniform(-1, 1, 5), {"sgd", 0.5f}});
  job.tables.push_back({"b", 3, Initializer::Constant(1), {"sgd", 1.0f}});
  return job;
}

// The JobConfig of a JOIN: kinds of configuration, valid and not.
enum JobKind : uint8_t {
  kBase = 0,  // 0..2
  kOtherPolicy = 3,
  kOtherChunk = 4,
  kOtherSize = 5,
  kExtraTable = 6,
  kRenamed = 7,
  kNoJob = 8,
  kNoTable = 9,
  kChunkZero = 10,
  kHugeTable = 11,      // 2^40 elements: more than kMaxTableElements
  kTooManyChunks = 12,  // 2^36 elements in chunks of 1: more than kMaxJobChunks
  kHugeJob = 13,        // 17 tables of 2^36: more than kMaxJobElements
  kTooManyTables = 14,  // kMaxTables + 1
  kNanRate = 15,
  kBadPolicy = 16,
  kChunkMax = 17,  // chunk_elements 2^64 - 1
  kSparseSized = 18,
  kBadEnums = 19,  // table kind, non-finite policy and initializer out of range
  kBadUpdater = 20,
  kFromInput = 21,  // counts, sizes, chunk and policy from the input
  kNumJobKinds = 22,
};

// The wire form of the JobKind `kind`.
std::optional<wire::JobConfig> JoinJob(uint8_t kind, ByteReader& in) {
  wire::JobConfig j;
  internal::ToWire(BaseJob(), &j);
  switch (kind % kNumJobKinds) {
    case kOtherPolicy:
      j.set_policy("asp");
      break;
    case kOtherChunk:
      j.set_chunk_elements(8);
      break;
    case kOtherSize:
      j.mutable_tables(0)->set_size(13);
      break;
    case kExtraTable:
      *j.add_tables() = j.tables(1);
      j.mutable_tables(2)->set_name("c");
      break;
    case kRenamed:
      j.mutable_tables(1)->set_name("bias");
      break;
    case kNoJob:
      return std::nullopt;
    case kNoTable:
      j.clear_tables();
      break;
    case kChunkZero:
      j.set_chunk_elements(0);
      break;
    case kHugeTable:
      j.mutable_tables(0)->set_size(uint64_t{1} << 40);
      break;
    case kTooManyChunks:
      j.mutable_tables(0)->set_size(uint64_t{1} << 36);
      j.set_chunk_elements(1);
      break;
    case kHugeJob:
      j.set_chunk_elements(uint64_t{1} << 28);
      for (int i = 0; i < 17; ++i) {
        wire::Table* t = i < j.tables_size() ? j.mutable_tables(i) : j.add_tables();
        *t = j.tables(0);
        t->set_name(absl::StrCat("t", i));
        t->set_size(uint64_t{1} << 36);
      }
      break;
    case kTooManyTables:
      for (int i = 0; static_cast<std::size_t>(j.tables_size()) <= kMaxTables; ++i) {
        wire::Table* t = j.add_tables();
        *t = j.tables(1);
        t->set_name(absl::StrCat("t", i));
      }
      break;
    case kNanRate:
      j.mutable_tables(0)->mutable_updater()->set_learning_rate(
          std::numeric_limits<float>::quiet_NaN());
      break;
    case kBadPolicy:
      j.set_policy("no-such-policy:x=");
      break;
    case kChunkMax:
      j.set_chunk_elements(std::numeric_limits<uint64_t>::max());
      break;
    case kSparseSized:
      j.mutable_tables(1)->set_kind(1);
      j.mutable_tables(1)->set_row_width(4);
      break;
    case kBadEnums:
      j.mutable_tables(0)->set_kind(7);
      j.mutable_tables(1)->set_nonfinite(9);
      j.mutable_tables(1)->mutable_init()->set_kind(99);
      break;
    case kBadUpdater:
      j.mutable_tables(0)->mutable_updater()->set_name("");
      j.mutable_tables(1)->mutable_updater()->set_name("s\x01gd");
      break;
    case kFromInput: {
      const uint8_t n = in.U8() % 8;
      j.clear_tables();
      for (int i = 0; i < n; ++i) {
        wire::Table* t = j.add_tables();
        t->set_name(i == 0 ? std::string("w") : in.Bytes(in.U8() % 8));
        t->set_size(in.Bool() ? in.U64() : in.U8());
        t->set_kind(in.U8() % 3);
        t->set_row_width(in.U8() % 3 == 0 ? in.U32() : 0);
        t->mutable_updater()->set_name("sgd");
      }
      j.set_chunk_elements(in.Bool() ? in.U64() : in.U8());
      if (in.Bool()) j.set_policy(in.Bytes(in.U8() % 32));
      break;
    }
    default:
      break;  // the job's own
  }
  return j;
}

int64_t ReadClock(ByteReader& in) {
  const uint8_t c = in.U8();
  if (c < 240) return c % 8;
  return kSpecialClocks[c % std::size(kSpecialClocks)];
}

// A requested rank: -1 (none) .. 3 mostly, else one of kSpecialRanks.
int64_t ReadRank(ByteReader& in) {
  const uint8_t v = in.U8();
  if (v < 200) return static_cast<int64_t>(v % 5) - 1;
  return kSpecialRanks[v % std::size(kSpecialRanks)];
}

bool CarriesValues(wire::Kind kind) {
  return kind == wire::PUSH || kind == wire::PULL_REPLY || kind == wire::ASSIGN;
}

const char* PhaseName(JobPhase p) {
  switch (p) {
    case JobPhase::kJoining:
      return "joining";
    case JobPhase::kStarting:
      return "starting";
    case JobPhase::kRunning:
      return "running";
    case JobPhase::kDone:
      return "done";
  }
  return "?";
}

class Harness {
 public:
  explicit Harness(uint8_t config) {
    options_.listen = "fake://coordinator";
    options_.num_servers = (config & kTwoServers) ? 2 : 1;
    options_.num_workers = ((config >> kWorkersShift) & 3) % 3 + 1;
    if (config & kFixedJob) options_.job = BaseJob();
    options_.tolerate_worker_failures = (config & kTolerate) != 0;
    options_.join_timeout = kJoinTimeout;
    options_.heartbeat_timeout = kHeartbeatTimeout;
    options_.rejoin_silence = kRejoinSilence;
    options_.server_restart_timeout = (config & kRestarts) ? kRestartTimeout : absl::ZeroDuration();
    options_.max_barrier_wait = kMaxBarrierWait;
    options_.log_level = LogLevel::kOff;  // thousands of refusals a second
    now_ = absl::UnixEpoch() + absl::Hours(24);
    env_ = std::make_shared<kairos::testing::ManualEnv>(now_);
    options_.env = env_;
    auto transport = std::make_unique<FakeTransport>("coordinator");
    transport_ = transport.get();
    options_.transport_factory = internal::OneTransportFactory(std::move(transport));
    absl::StatusOr<std::unique_ptr<Coordinator>> c = Coordinator::Create(options_);
    if (!c.ok()) std::fprintf(stderr, "%s\n", c.status().ToString().c_str());
    Require(c.ok(), "the coordinator starts");
    coordinator_ = *std::move(c);
    Require(transport_->TakeSent().empty(), "the coordinator sends nothing before a peer does");
  }

  void Step(ByteReader& in) {
    const uint8_t op = in.U8() % kNumOps;
    if (verbose_) std::fprintf(stderr, "op %d\n", op);
    switch (op) {
      case kJoin:
      case kJoin + 1:
        Join(in);
        break;
      case kRawFrames:
        RawFrames(in);
        break;
      case kTick: {
        uint32_t ms = in.U16();
        if (ms & 0x8000) ms = (ms & 0x7fff) * 100;
        Tick(now_ + absl::Milliseconds(ms));
        break;
      }
      case kBringUp:
        BringUp();
        break;
      case kAllHeartbeat:
        for (const auto& [id, g] : CurrentGrants()) Signal(g, wire::HEARTBEAT);
        break;
      case kAnswerRejoins:
        AnswerRejoins(in);
        break;
      case kDisconnect: {
        const int slot = static_cast<int>(in.Pick(kSlots));
        ++generation_[slot];
        break;
      }
      case kAllReady:
        for (const auto& [id, g] : CurrentGrants()) {
          if (g.role == wire::SERVER) Signal(g, wire::READY);
        }
        break;
      case kAllBarrier:
        for (const auto& [id, g] : CurrentGrants()) {
          if (g.role == wire::WORKER) Signal(g, wire::BARRIER);
        }
        break;
      case kAllFinish:
        for (const auto& [id, g] : CurrentGrants()) {
          if (g.role == wire::WORKER) Signal(g, wire::FINISH);
        }
        break;
      default:
        Send(in);
    }
  }

  // Two ticks past every timeout (the join deadline, heartbeats, a server's restart) end
  // any job; then nothing may wait any more.
  void Finish() {
    Tick(now_ + absl::Hours(2));
    Tick(now_ + absl::Hours(2));
    Require(coordinator_->stats().phase == JobPhase::kDone,
            "two ticks past every timeout end the job");
    for (uint64_t id : waiting_barriers_) {
      if (tainted_.contains(id)) continue;
      std::fprintf(stderr, "BARRIER #%llu unanswered\n", static_cast<unsigned long long>(id));
      Require(false, "every BARRIER is answered by the end of the job");
    }
  }

 private:
  struct Grant {
    uint32_t node = 0;
    wire::Role role = wire::ROLE_UNSPECIFIED;  // unspecified: not known to the harness
    int rank = 0;
    PeerId peer = 0;
    std::pair<uint64_t, uint64_t> token;  // a worker's credential (JOIN_REPLY)
  };

  PeerId Peer(int slot) const {
    return FakeTransport::IncomingPeer(generation_[slot] * kSlots + static_cast<uint64_t>(slot));
  }

  // The grants whose connection is a slot's current one, and that hold their rank now.
  std::map<uint32_t, Grant> CurrentGrants() const {
    std::map<uint32_t, Grant> out;
    for (const auto& [id, g] : grants_) {
      bool connected = false;
      for (int s = 0; s < kSlots; ++s) connected |= g.peer == Peer(s);
      if (!connected || g.role == wire::ROLE_UNSPECIFIED) continue;
      const auto& holders = g.role == wire::SERVER ? server_holder_ : worker_holder_;
      auto it = holders.find(g.rank);
      if (it != holders.end() && it->second == id) out[id] = g;
    }
    return out;
  }

  uint64_t NextRequestId() { return next_request_id_++; }

  // A message of kind `kind` from grant g's own connection, naming it.
  void Signal(const Grant& g, wire::Kind kind) {
    Message m;
    m.header.set_kind(kind);
    m.header.set_request_id(NextRequestId());
    m.header.set_sender(g.node);
    Deliver(g.peer, std::move(m));
  }

  void Tick(absl::Time t) {
    now_ = t;
    env_->Set(now_);
    phase_before_ = phase_;
    transport_->Tick(now_);
    CheckSent(/*from=*/std::nullopt, nullptr);
  }

  // ------------------------------------------------------------------- operations
  void Join(ByteReader& in) {
    const int slot = static_cast<int>(in.Pick(kSlots));
    const wire::Role role = kRoles[in.Pick(std::size(kRoles))];
    const int64_t rank = ReadRank(in);
    const uint8_t endpoint = in.U8();
    const uint8_t job = in.U8();
    const uint8_t incarnation = in.U8();
    Message m;
    m.header.set_kind(wire::JOIN);
    m.header.set_request_id(NextRequestId());
    wire::Join* j = m.header.mutable_join();
    j->set_role(role);
    j->set_requested_rank(static_cast<int32_t>(rank));
    j->set_requested_shard(static_cast<uint32_t>(rank + 1));
    switch (endpoint % 4) {
      case 0:
      case 1:
        j->set_endpoint(absl::StrCat("tcp://10.0.0.", slot, ":7001"));
        break;
      case 2:
        j->set_endpoint("tcp://0.0.0.0:7001");  // a wildcard: no address known here
        break;
      default:
        break;  // none
    }
    if (std::optional<wire::JobConfig> c = JoinJob(job, in)) *j->mutable_job() = *std::move(c);
    j->set_incarnation(incarnation < 128 ? incarnation % 4 : in.U64());
    j->set_host("fuzz");
    j->set_pid(static_cast<uint32_t>(slot));
    if (endpoint & 4) m.header.set_sender(in.U32());  // a JOIN's sender means nothing
    Deliver(Peer(slot), std::move(m));
  }

  // Every server and worker joins as it should, each from its own slot.
  void BringUp() {
    int slot = 0;
    for (int s = 0; s < options_.num_servers; ++s, ++slot) {
      Message m;
      m.header.set_kind(wire::JOIN);
      m.header.set_request_id(NextRequestId());
      m.header.mutable_join()->set_role(wire::SERVER);
      m.header.mutable_join()->set_requested_shard(static_cast<uint32_t>(s + 1));
      m.header.mutable_join()->set_endpoint(absl::StrCat("tcp://10.0.0.", slot, ":7001"));
      m.header.mutable_join()->set_incarnation(1);
      Deliver(Peer(slot), std::move(m));
    }
    for (int r = 0; r < options_.num_workers; ++r, ++slot) {
      Message m;
      m.header.set_kind(wire::JOIN);
      m.header.set_request_id(NextRequestId());
      m.header.mutable_join()->set_role(wire::WORKER);
      m.header.mutable_join()->set_requested_rank(r);
      internal::ToWire(BaseJob(), m.header.mutable_join()->mutable_job());
      m.header.mutable_join()->set_incarnation(1);
      Deliver(Peer(slot), std::move(m));
    }
  }

  // Who a message claims to be: a node joined on this connection, one of another
  // connection, or an invented id.
  uint32_t Sender(ByteReader& in, PeerId from) {
    const uint8_t who = in.U8();
    std::vector<uint32_t> own, others;
    for (const auto& [id, g] : grants_) (g.peer == from ? own : others).push_back(id);
    switch (who % 8) {
      case 0:
      case 1:
      case 2:
      case 3:
        if (!own.empty()) return own[(who >> 3) % own.size()];
        [[fallthrough]];
      case 4:
      case 5:
        if (!others.empty()) return others[(who >> 3) % others.size()];
        [[fallthrough]];
      case 6:
        return in.U8();
      default:
        return (who & 8) ? in.U32() : 0;
    }
  }

  void Send(ByteReader& in) {
    const PeerId from = Peer(static_cast<int>(in.Pick(kSlots)));
    const uint32_t sender = Sender(in, from);
    const wire::Kind kind = kKinds[in.Pick(std::size(kKinds))];
    const uint8_t extras = in.U8();
    Message m;
    m.header.set_kind(kind);
    m.header.set_sender(sender);
    m.header.set_request_id((extras & kNoRequestId) ? 0 : NextRequestId());
    if (extras & kErrorStatus) {
      m.header.mutable_status()->set_code(1 + in.U8() % 16);
      m.header.mutable_status()->set_message("no memory for the shard");
    }
    if (extras & kTimeout) m.header.set_timeout_ms((extras & kWideTimeout) ? in.U64() : in.U16());
    if (extras & kStragglers) {
      for (std::size_t i = in.Pick(4); i > 0; --i) {
        m.header.add_stragglers(static_cast<int32_t>(in.U32()));
      }
    }
    if (extras & kMembership) {
      wire::Membership* ms = m.header.mutable_membership();
      ms->set_rank(static_cast<int8_t>(in.U8()) % 4);
      ms->set_node_id(in.U8());
      ms->set_state(static_cast<wire::Membership::State>(in.Pick(3)));
      ms->set_clock(ReadClock(in));
    }
    if (kind == wire::JOIN) m.header.mutable_join()->set_role(wire::WORKER);  // no job
    m.header.set_length(1);
    if (CarriesValues(kind)) m.payloads.push_back(Buffer::Zeros(1));
    if (kind == wire::PUSH_SPARSE || kind == wire::PULL_SPARSE) {
      m.payloads.push_back(Buffer::Zeros(2));  // one uint64 key
      if (kind == wire::PUSH_SPARSE) m.payloads.push_back(Buffer::Zeros(1));
    }
    Deliver(from, std::move(m));
  }

  void RawFrames(ByteReader& in) {
    const PeerId from = Peer(static_cast<int>(in.Pick(kSlots)));
    std::vector<std::string> frames(in.Pick(5));
    for (std::string& f : frames) f = in.Frame();
    DeliverFrames(from, std::move(frames));
  }

  // Each server answers every MEMBERSHIP ACTIVE (a rejoin) it was sent, with a clock.
  void AnswerRejoins(ByteReader& in) {
    std::vector<Message> to_answer;
    std::vector<PeerId> peers;
    for (auto& [peer, asked] : rejoin_questions_) {
      for (Message& q : asked) {
        Message m;
        m.header.set_kind(wire::MEMBERSHIP);
        m.header.set_request_id(q.header.request_id());
        uint32_t sender = 0;
        for (const auto& [id, g] : grants_) {
          if (g.peer == peer && g.role == wire::SERVER) sender = id;
        }
        m.header.set_sender(sender);
        wire::Membership* ms = m.header.mutable_membership();
        ms->set_node_id(q.header.membership().node_id());
        ms->set_rank(q.header.membership().rank());
        ms->set_state(wire::Membership::ACTIVE);
        ms->set_clock(ReadClock(in));
        to_answer.push_back(std::move(m));
        peers.push_back(peer);
      }
    }
    rejoin_questions_.clear();
    for (std::size_t i = 0; i < to_answer.size(); ++i) Deliver(peers[i], std::move(to_answer[i]));
  }

  // --------------------------------------------------------------- deliveries
  void Deliver(PeerId from, Message m) {
    std::vector<std::string> frames{internal::EncodeHeader(m)};
    for (const Buffer& p : m.payloads) {
      frames.emplace_back(reinterpret_cast<const char*>(p.data()), p.size_bytes());
    }
    DeliverFrames(from, std::move(frames), /*built=*/true);
  }

  static absl::StatusOr<Message> DecodeFrames(const std::vector<std::string>& frames) {
    std::vector<internal::RawFrame> raw;
    for (const std::string& f : frames) raw.push_back({nullptr, f.data(), f.size()});
    return internal::Decode(std::move(raw));
  }

  // Delivers `frames` from `from` and checks the answer. The harness decodes them too, to
  // know what the coordinator got (the same Decode, so the same verdict).
  // `built`: a message the harness built (its request id is its own, unique, or 0).
  void DeliverFrames(PeerId from, std::vector<std::string> frames, bool built = false) {
    absl::StatusOr<Message> got = DecodeFrames(frames);
    if (got.ok()) {
      const wire::Header& h = got->header;
      if (verbose_) {
        std::fprintf(stderr, "  from peer %llu: %s\n",
                     static_cast<unsigned long long>(from & 0xffff), internal::Describe(h).c_str());
      }
      if (!built && h.request_id() >= kFirstRequestId) {
        tainted_.insert(h.request_id());  // no longer unique: not checked
      }
      // A worker's barrier call must be answered. (A server's is refused at once, except
      // that a server declared dead and heard again may end the job: then its message goes
      // unanswered, and it is told SHUTDOWN.)
      auto g = grants_.find(h.sender());
      const bool worker =
          (g != grants_.end() && g->second.peer == from && g->second.role == wire::WORKER) ||
          (rejoin_peer_.contains(h.sender()) && rejoin_peer_.at(h.sender()) == from);
      if (built && worker && h.kind() == wire::BARRIER && h.request_id() != 0) {
        waiting_barriers_.insert(h.request_id());
      }
    } else {
      ++undecodable_;
    }
    phase_before_ = phase_;
    const absl::Status delivered = transport_->DeliverFrames(from, std::move(frames));
    Require(delivered.ok() == got.ok(), "the transport decodes as the harness does");
    CheckSent(from, got.ok() ? &got->header : nullptr);
  }

  // ------------------------------------------------------------------- checks
  // The nodes admitted on `peer`, rejoining ones included.
  int NodesAt(PeerId peer) const {
    int n = grants_at_.contains(peer) ? grants_at_.at(peer) : 0;
    for (const auto& [id, p] : rejoin_peer_) n += p == peer ? 1 : 0;
    return n;
  }

  // Whether a node of `role` was admitted on `peer` (a worker: or is rejoining there).
  bool Holds(PeerId peer, wire::Role role) const {
    for (const auto& [id, g] : grants_) {
      if (g.peer == peer && g.role == role) return true;
    }
    if (role == wire::WORKER) {
      for (const auto& [id, p] : rejoin_peer_) {
        if (p == peer) return true;
      }
    }
    return false;
  }

  // The answer to one delivery from `from` (whose header is `got` when it decoded), or to
  // a tick (no `from`).
  void CheckSent(std::optional<PeerId> from, const wire::Header* got) {
    const CoordinatorStats stats = coordinator_->stats();
    phase_ = stats.phase;
    // The fake drops (and counts) a send to a peer that never sent anything.
    Require(transport_->dropped() == undecodable_,
            "the coordinator sends only to connections it heard from");
    std::vector<FakeTransport::Sent> sent = transport_->TakeSent();
    // A message claiming a node id its connection did not join as: one ERROR, no more.
    if (from.has_value() && got != nullptr && got->kind() != wire::JOIN) {
      auto it = grants_.find(got->sender());
      const bool proved =
          (it != grants_.end() && it->second.peer == *from) ||
          (rejoin_peer_.contains(got->sender()) && rejoin_peer_.at(got->sender()) == *from);
      if (!proved) {
        Require(sent.size() == 1 && sent[0].to == *from &&
                    sent[0].message.header.kind() == wire::ERROR &&
                    sent[0].message.header.status().code() ==
                        static_cast<int>(absl::StatusCode::kPermissionDenied),
                "a message naming a node its connection did not join as gets one "
                "PermissionDenied ERROR and nothing else");
      }
    }
    std::map<PeerId, int> shut_down;  // the job's end: SHUTDOWNs per connection
    for (FakeTransport::Sent& s : sent) {
      const wire::Header& h = s.message.header;
      if (verbose_) {
        std::fprintf(stderr, "  sent to peer %llu (%s): %s %s%s\n",
                     static_cast<unsigned long long>(s.to & 0xffff), PhaseName(phase_),
                     internal::Describe(h).c_str(), h.status().message().c_str(),
                     h.has_membership() ? h.membership().ShortDebugString().c_str() : "");
      }
      CheckDecodes(s.message);
      switch (h.kind()) {
        case wire::JOIN_REPLY:
          CheckJoinReply(s.to, h, from, got);
          break;
        case wire::START:
          CheckStart(s.to, h);
          break;
        case wire::MEMBERSHIP:
          CheckMembership(s.to, h, from);
          break;
        case wire::SHUTDOWN:
          Require(phase_before_ != JobPhase::kDone, "nothing is shut down after the job ended");
          if (phase_ == JobPhase::kDone) {
            Require(++shut_down[s.to] <= NodesAt(s.to), "the job's end shuts each node down once");
          } else {
            // A worker replaced by a rejoin.
            Require(h.status().code() == static_cast<int>(absl::StatusCode::kAborted),
                    "a SHUTDOWN while the job goes on retires a replaced worker (Aborted)");
            Require(Holds(s.to, wire::WORKER), "only a worker's connection is retired");
            retired_.insert(s.to);
          }
          break;
        case wire::HEARTBEAT:
          Require(got != nullptr && got->kind() == wire::HEARTBEAT && s.to == *from,
                  "HEARTBEAT answers a HEARTBEAT, on its connection");
          break;
        case wire::FINISH:
          Require(got != nullptr && got->kind() == wire::FINISH && s.to == *from,
                  "FINISH answers a FINISH, on its connection");
          break;
        case wire::BARRIER_RELEASE:
          Require(h.request_id() < kFirstRequestId || tainted_.contains(h.request_id()) ||
                      waiting_barriers_.erase(h.request_id()) == 1,
                  "a barrier release answers a BARRIER that waits, once");
          break;
        case wire::ERROR:
          Require(!h.status().message().empty() && h.status().code() != 0,
                  "an ERROR says what is wrong");
          waiting_barriers_.erase(h.request_id());
          break;
        default:
          Require(false,
                  "the coordinator sends only JOIN_REPLY, START, HEARTBEAT, BARRIER_RELEASE, "
                  "MEMBERSHIP, FINISH, SHUTDOWN and ERROR");
      }
    }
    // A rejoin retires the rank's previous holder in the same breath.
    for (uint32_t old_node : must_retire_) {
      Require(retired_.contains(grants_.at(old_node).peer),
              "a worker rank given to a new incarnation retires the old one (SHUTDOWN)");
    }
    must_retire_.clear();
    retired_.clear();
    CheckStats(stats);
  }

  void CheckDecodes(Message& m) {
    std::vector<std::string> frames{internal::EncodeHeader(m)};
    for (const Buffer& p : m.payloads) {
      frames.emplace_back(reinterpret_cast<const char*>(p.data()), p.size_bytes());
    }
    absl::StatusOr<Message> decoded = DecodeFrames(frames);
    if (!decoded.ok()) std::fprintf(stderr, "%s\n", decoded.status().ToString().c_str());
    Require(decoded.ok(), "every message the coordinator sends decodes");
    Require(m.payloads.empty(), "the coordinator's messages carry no payload");
  }

  void CheckJoinReply(PeerId to, const wire::Header& h, std::optional<PeerId> from,
                      const wire::Header* got) {
    if (h.has_status() && h.status().code() != 0) {
      Require(!h.has_join_reply() || h.join_reply().node_id() == 0,
              "a refused JOIN gets no node id");
      return;
    }
    Require(phase_before_ != JobPhase::kDone, "no node is admitted after the job ended");
    const wire::JoinReply& r = h.join_reply();
    Require(r.node_id() != 0 && !grants_.contains(r.node_id()),
            "an admitted node gets a node id never given before");
    Grant g;
    g.node = r.node_id();
    g.rank = r.rank();
    g.peer = to;
    if (rejoin_peer_.contains(g.node)) {
      g.role = wire::WORKER;  // a rejoin, admitted when every server answered
      Require(rejoin_peer_.at(g.node) == to, "a rejoin is answered on its connection");
      rejoin_peer_.erase(g.node);
    } else {
      // Otherwise the answer to the JOIN just delivered, on its connection.
      Require(got != nullptr && got->kind() == wire::JOIN && from.has_value() && *from == to &&
                  got->request_id() == h.request_id(),
              "a JOIN is admitted in answer to itself");
      g.role = got->join().role();
    }
    const bool has_token = r.token_hi() != 0 || r.token_lo() != 0;
    g.token = {r.token_hi(), r.token_lo()};
    if (auto told = rejoin_token_.find(g.node); told != rejoin_token_.end()) {
      Require(told->second == g.token,
              "a rejoined worker gets the credential the servers were given for it");
    }
    if (g.role == wire::SERVER) {
      Require(g.rank >= 0 && g.rank < options_.num_servers, "a server's shard is in range");
      Require(!has_token, "a server gets no worker credential");
      GiveRank(server_holder_, g, "a server shard is given twice before the job runs");
    } else if (g.role == wire::WORKER) {
      Require(g.rank >= 0 && g.rank < options_.num_workers, "a worker's rank is in range");
      Require(has_token, "a worker gets its credential");
      if (!worker_holder_.contains(g.rank) || worker_holder_.at(g.rank) != g.node) {
        GiveRank(worker_holder_, g, "a worker rank is given twice before the job runs");
      }
    } else {
      Require(false, "only a server or a worker is admitted");
    }
    grants_[g.node] = g;
    ++grants_at_[to];
  }

  void GiveRank(std::map<int, uint32_t>& holders, const Grant& g, const char* what) {
    auto it = holders.find(g.rank);
    if (it != holders.end()) {
      // Given again: only to a new incarnation of a running job's node.
      Require(phase_before_ == JobPhase::kRunning, what);
    }
    holders[g.rank] = g.node;
  }

  void CheckStart(PeerId to, const wire::Header& h) {
    Require(phase_ == JobPhase::kStarting || phase_ == JobPhase::kRunning,
            "START goes out only once every node joined, never after the job ended");
    Require(++starts_at_[to] <= grants_at_[to],
            "START goes to a connection at most once per node admitted on it");
    const wire::Start& s = h.start();
    Require(s.num_servers() == options_.num_servers && s.num_workers() == options_.num_workers,
            "START carries the job's counts");
    std::set<int> servers, workers;
    std::set<uint32_t> ids;
    bool tokens = false, all_tokens = true;
    for (const wire::Node& n : s.nodes()) {
      Require(ids.insert(n.node_id()).second, "START names each node once");
      Require(grants_.contains(n.node_id()) || rejoin_peer_.contains(n.node_id()),
              "START names only admitted nodes");
      if (n.role() == wire::SERVER) {
        Require(n.rank() >= 0 && n.rank() < options_.num_servers, "START's shards are in range");
        Require(servers.insert(n.rank()).second, "START names each server shard once");
        Require(!n.endpoint().empty(), "START tells where each server is");
        Require(n.token_hi() == 0 && n.token_lo() == 0, "a server has no credential");
      } else {
        Require(n.role() == wire::WORKER, "START names servers and workers only");
        Require(n.rank() >= 0 && n.rank() < options_.num_workers, "START's ranks are in range");
        Require(workers.insert(n.rank()).second, "START names each worker rank once");
        const bool token = n.token_hi() != 0 || n.token_lo() != 0;
        tokens |= token;
        // The servers learn each worker's own credential (its JOIN_REPLY's, or the one a
        // rejoin told them).
        const std::pair<uint64_t, uint64_t> t{n.token_hi(), n.token_lo()};
        auto g = grants_.find(n.node_id());
        auto told = rejoin_token_.find(n.node_id());
        if (token && g != grants_.end()) {
          Require(g->second.token == t, "START gives a worker's own credential");
        } else if (token && told != rejoin_token_.end()) {
          Require(told->second == t, "START gives a rejoining worker's own credential");
        }
        all_tokens &= token;
      }
    }
    Require(static_cast<int>(servers.size()) == options_.num_servers &&
                static_cast<int>(workers.size()) == options_.num_workers,
            "START names every server shard and worker rank");
    if (tokens) {
      Require(all_tokens, "a START with credentials has every worker's");
      Require(Holds(to, wire::SERVER), "worker credentials go only to a server's connection");
    } else {
      Require(Holds(to, wire::WORKER), "a START without credentials goes to a worker");
    }
    const JobConfig job = internal::FromWire(s.job());
    Require(ValidateJobConfig(job).ok(), "START's job configuration is valid");
    if (options_.job.has_value()) {
      Require(job == *options_.job, "START carries the coordinator's job configuration");
    }
  }

  void CheckMembership(PeerId to, const wire::Header& h, std::optional<PeerId> from) {
    Require(phase_before_ != JobPhase::kDone, "no membership news after the job ended");
    const wire::Membership& m = h.membership();
    const bool token = m.token_hi() != 0 || m.token_lo() != 0;
    if (m.role() == wire::SERVER) {
      // To workers: a server is away or back.
      Require(Holds(to, wire::WORKER), "server news go to workers");
      Require(!token, "server news carry no credential");
      Require(m.state() == wire::Membership::DEAD || m.state() == wire::Membership::ACTIVE,
              "a server is away or back");
      return;
    }
    Require(Holds(to, wire::SERVER), "worker news go to servers");
    Require(m.rank() >= 0 && m.rank() < options_.num_workers, "worker news name a rank");
    if (m.state() != wire::Membership::ACTIVE) {
      Require(!token, "a dead or finished worker's news carry no credential");
      return;
    }
    // A rejoin (or its repetition to a restarted server): the new node's credential.
    Require(token && h.request_id() != 0, "a rejoin carries its credential and request id");
    rejoin_questions_[to].push_back(Message{h, {}});
    const uint32_t node = m.node_id();
    // Every server is told the same credential, the one the worker will get.
    const std::pair<uint64_t, uint64_t> t{m.token_hi(), m.token_lo()};
    auto [told, fresh] = rejoin_token_.try_emplace(node, t);
    Require(told->second == t, "every server is told a rejoining worker's one credential");
    if (auto g = grants_.find(node); g != grants_.end()) {
      Require(g->second.token == t, "a rejoin is repeated with the worker's credential");
    }
    if (!grants_.contains(node) && !rejoin_peer_.contains(node)) {
      // New this delivery: the JOIN just delivered is the rejoin.
      Require(from.has_value() && phase_before_ == JobPhase::kRunning,
              "a rejoin starts at a JOIN while the job runs");
      rejoin_peer_[node] = *from;
      auto old = worker_holder_.find(m.rank());
      if (old != worker_holder_.end() && grants_.contains(old->second)) {
        must_retire_.insert(old->second);
      }
      worker_holder_[m.rank()] = node;
    }
  }

  void CheckStats(const CoordinatorStats& s) {
    Require(static_cast<int>(phase_) >= static_cast<int>(phase_before_),
            "the job's phase never goes back");
    Require(s.servers_joined <= options_.num_servers && s.workers_joined <= options_.num_workers,
            "no more nodes join than the job has");
    Require(s.workers_active <= options_.num_workers, "at most one active worker per rank");
    Require(s.servers_ready <= options_.num_servers, "at most one ready server per shard");
    Require(s.workers_active >= 0 && s.workers_finished >= 0 && s.workers_dead >= 0 &&
                s.servers_ready >= 0 && s.servers_dead >= 0,
            "no count is negative");
    Require(s.workers_active + s.workers_finished + s.workers_dead == s.workers_joined,
            "every joined worker is active, finished or dead");
    Require(s.servers_away >= 0 && s.servers_away <= options_.num_servers,
            "at most every server is away");
    Require(s.barrier_waiting >= 0 && s.barrier_waiting <= options_.num_workers,
            "at most one barrier waiter per worker rank");
    Require(
        s.servers_expected == options_.num_servers && s.workers_expected == options_.num_workers,
        "the expected counts are the options'");
  }

  CoordinatorOptions options_;
  std::shared_ptr<kairos::testing::ManualEnv> env_;
  FakeTransport* transport_ = nullptr;  // owned by coordinator_
  std::unique_ptr<Coordinator> coordinator_;
  // KAIROS_FUZZ_VERBOSE=1: print every operation and message (to replay an input).
  const bool verbose_ = std::getenv("KAIROS_FUZZ_VERBOSE") != nullptr;
  absl::Time now_;
  uint64_t generation_[kSlots] = {};
  uint64_t next_request_id_ = kFirstRequestId;
  uint64_t undecodable_ = 0;
  JobPhase phase_ = JobPhase::kJoining;
  JobPhase phase_before_ = JobPhase::kJoining;  // before the delivery or tick being checked

  std::map<uint32_t, Grant> grants_;                         // admitted nodes, by node id
  std::map<PeerId, int> grants_at_;                          // admitted nodes per connection
  std::map<PeerId, int> starts_at_;                          // STARTs per connection
  std::map<int, uint32_t> server_holder_;                    // shard -> the node that holds it now
  std::map<int, uint32_t> worker_holder_;                    // rank -> the node that holds it now
  std::map<uint32_t, PeerId> rejoin_peer_;                   // rejoining nodes not yet answered
  std::map<PeerId, std::vector<Message>> rejoin_questions_;  // MEMBERSHIP ACTIVE per server
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> rejoin_token_;  // told the servers
  std::set<uint64_t> waiting_barriers_;  // the harness's BARRIERs not answered yet
  std::set<uint64_t> tainted_;           // its request ids that raw frames reused
  std::set<uint32_t> must_retire_;       // this delivery: old holders a rejoin replaced
  std::set<PeerId> retired_;             // this delivery: connections told SHUTDOWN
};

void Run(const uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  Harness h(in.U8());
  for (int i = 0; i < kMaxOps && !in.empty(); ++i) h.Step(in);
  h.Finish();
}

// ------------------------------------------------------------------------ seed corpus
// Writes operations in the layout Harness reads.
class Script {
 public:
  explicit Script(uint8_t config) { w_.U8(config); }

  // A JOIN from `slot`: kRoles[role], rank byte (see ReadRank: r + 1 for rank r, 0 none),
  // endpoint byte (0: an endpoint, 2: wildcard, 3: none), job kind, incarnation (< 4).
  Script& Join(uint8_t slot, uint8_t role, uint8_t rank, uint8_t endpoint, uint8_t job,
               uint8_t incarnation) {
    w_.U8(kJoin).U8(slot).U8(role).U8(rank).U8(endpoint).U8(job).U8(incarnation);
    return *this;
  }
  // A message of kKinds[kind] from `slot`; `who` picks the claimed node (0: the slot's
  // first, 4: another slot's, 7: none); `fields` follow the extras byte.
  Script& Send(uint8_t slot, uint8_t who, uint8_t kind, uint8_t extras,
               std::vector<uint8_t> fields = {}) {
    w_.U8(kSend).U8(slot).U8(who).U8(kind).U8(extras);
    for (uint8_t f : fields) w_.U8(f);
    return *this;
  }
  Script& Raw(uint8_t slot, std::vector<std::string> frames) {
    w_.U8(kRawFrames).U8(slot).Frames(frames);
    return *this;
  }
  Script& Tick(uint16_t ms) {
    w_.U8(kTick).U16(ms);
    return *this;
  }
  Script& Op(Op op, std::vector<uint8_t> fields = {}) {
    w_.U8(op);
    for (uint8_t f : fields) w_.U8(f);
    return *this;
  }
  const std::string& data() const { return w_.data(); }

 private:
  ByteWriter w_;
};

constexpr uint8_t kServerRole = 0, kWorkerRole = 1, kNoRole = 3;
constexpr uint8_t kHeartbeatKind = 0, kReadyKind = 2, kBarrierKind = 4, kFinishKind = 6,
                  kMembershipKind = 7;

uint8_t Workers(int n) { return static_cast<uint8_t>((n - 1) << kWorkersShift); }

Seeds MakeSeeds() {
  Seeds s;
  // A whole job: join, start, a barrier, finish; every shape.
  for (uint8_t config : {uint8_t{0}, uint8_t(kTwoServers | Workers(3)),
                         uint8_t(kFixedJob | Workers(2)), uint8_t(kTolerate | kRestarts)}) {
    s.push_back({absl::StrCat("whole-job-", static_cast<int>(config)),
                 Script(config)
                     .Op(kBringUp)
                     .Op(kAllReady)
                     .Op(kAllHeartbeat)
                     .Op(kAllBarrier)
                     .Tick(500)
                     .Op(kAllHeartbeat)
                     .Op(kAllFinish)
                     .data()});
  }
  // Joins one by one, from the slots and with the ranks the script names.
  s.push_back({"joins-by-hand",
               Script(kTwoServers | Workers(2))
                   .Join(0, kServerRole, 0, 0, 0, 1)
                   .Join(1, kServerRole, 2, 0, 0, 1)
                   .Join(2, kWorkerRole, 2, 0, 0, 1)
                   .Join(3, kWorkerRole, 0, 0, 0, 1)
                   .Send(0, 0, kReadyKind, 0)
                   .Send(1, 0, kReadyKind, 0)
                   .Send(2, 0, kBarrierKind, kTimeout, {100, 0})
                   .Tick(200)
                   .Send(3, 0, kFinishKind, 0)
                   .Send(2, 0, kFinishKind, 0)
                   .data()});
  // Refused joins: no role, taken and out-of-range ranks, no endpoint, and every kind of
  // job configuration (with and without a fixed one).
  for (uint8_t config : {uint8_t(Workers(2)), uint8_t(kFixedJob | Workers(2))}) {
    Script sc(config);
    sc.Join(0, kNoRole, 0, 0, 0, 1)
        .Join(0, kServerRole, 0, 3, 0, 1)
        .Join(0, kServerRole, 3, 0, 0, 1)
        .Join(0, kServerRole, 0, 2, 0, 1)
        .Join(1, kServerRole, 1, 0, 0, 1)
        .Join(2, kWorkerRole, 4, 0, 0, 1);
    // Before any worker is admitted (checked on their own), then after (compared).
    for (int pass = 0; pass < 2; ++pass) {
      for (uint8_t job = pass == 0 ? kNoJob : kOtherPolicy; job < kFromInput; ++job) {
        sc.Join(2, kWorkerRole, 1, 0, job, 1);
      }
      if (pass == 0) sc.Join(2, kWorkerRole, 200, 0, 0, 1);  // no rank asked: the first free
    }
    sc.Join(2, kWorkerRole, 1, 0, kBase, 1).Join(3, kWorkerRole, 1, 0, kBase, 2);
    s.push_back({config & kFixedJob ? "join-refusals-fixed-job" : "join-refusals",
                 sc.Join(3, kWorkerRole, 0, 0, kBase, 1).data()});
  }
  // A job configuration from the input: 2 tables, chunk 4.
  s.push_back({"join-job-from-input",
               Script(0)
                   .Join(0, kServerRole, 0, 0, 0, 1)
                   .Op(kJoin, {1, kWorkerRole, 0, 0, kFromInput, 2, 0, 1, 16, 1, 0, 0, 1, 'b',
                               1, 200, 2, 0, 0, 4, 0, 1})
                   .data()});
  // Impersonation: messages naming another connection's node, or none.
  s.push_back({"impersonation",
               Script(Workers(2))
                   .Op(kBringUp)
                   .Send(4, 4, kReadyKind, 0)
                   .Send(1, 4, kFinishKind, 0)
                   .Send(5, 7, kHeartbeatKind, 0)
                   .Send(2, 4, kBarrierKind, 0)
                   .Op(kAllReady)
                   .Send(0, 4, kHeartbeatKind, 0)
                   .data()});
  // Every kind the wire defines, from a joined worker and a joined server.
  {
    Script sc(0);
    sc.Op(kBringUp);
    for (uint8_t k = 0; k < std::size(kKinds); ++k) sc.Send(1, 0, k, 0).Send(0, 0, k, 0);
    s.push_back({"every-kind", sc.data()});
  }
  // A server that cannot build its shard ends the job.
  s.push_back({"server-not-ready",
               Script(0).Op(kBringUp).Send(0, 0, kReadyKind, kErrorStatus, {7}).data()});
  // Heartbeats: stragglers, then silence past the timeout.
  s.push_back({"heartbeat-timeout",
               Script(kTwoServers | Workers(2))
                   .Op(kBringUp)
                   .Op(kAllReady)
                   .Send(0, 0, kHeartbeatKind, kStragglers, {2, 1, 0, 0, 0, 255, 255, 255, 255})
                   .Tick(1500)
                   .Op(kAllHeartbeat)
                   .Tick(1500)
                   .Send(2, 0, kHeartbeatKind, 0)
                   .Tick(1500)
                   .data()});
  // Nobody joins in time.
  s.push_back({"join-timeout",
               Script(Workers(3)).Join(0, kWorkerRole, 0, 0, kBase, 1).Tick(11000).data()});
  // Barriers: capped and short timeouts, one superseded, one expiring.
  s.push_back({"barriers",
               Script(Workers(3))
                   .Op(kBringUp)
                   .Op(kAllReady)
                   .Send(1, 0, kBarrierKind, kTimeout, {0, 0})
                   .Send(1, 0, kBarrierKind, kTimeout | kWideTimeout, {255, 255, 255, 255, 255,
                                                                         255, 255, 255})
                   .Send(2, 0, kBarrierKind, kTimeout, {100, 0})
                   .Tick(150)
                   .Op(kAllBarrier)
                   .Op(kAllFinish)
                   .data()});
  // A worker declared dead, tolerated or not.
  for (uint8_t config : {uint8_t(Workers(2)), uint8_t(kTolerate | Workers(2))}) {
    s.push_back({config & kTolerate ? "dead-worker-tolerated" : "dead-worker",
                 Script(config)
                     .Op(kBringUp)
                     .Op(kAllReady)
                     .Tick(1500)
                     .Send(0, 0, kHeartbeatKind, 0)
                     .Send(1, 0, kHeartbeatKind, 0)
                     .Tick(1000)
                     .Send(1, 0, kFinishKind, 0)
                     .data()});
  }
  // A worker rejoins (a new incarnation after its old one went silent), the servers answer.
  s.push_back({"worker-rejoin",
               Script(kTwoServers | Workers(2))
                   .Op(kBringUp)
                   .Op(kAllReady)
                   .Op(kDisconnect, {2})
                   .Tick(600)
                   .Join(2, kWorkerRole, 1, 0, kBase, 2)
                   .Op(kAnswerRejoins, {3, 5})
                   .Op(kAllHeartbeat)
                   .Op(kAllFinish)
                   .data()});
  // A server restarts with its shard (restarts allowed), and is READY again.
  s.push_back({"server-restart",
               Script(kRestarts | Workers(2))
                   .Op(kBringUp)
                   .Op(kAllReady)
                   .Op(kDisconnect, {0})
                   .Tick(600)
                   .Join(0, kServerRole, 1, 0, 0, 2)
                   .Send(0, 0, kReadyKind, 0)
                   .Op(kAllHeartbeat)
                   .Op(kAllFinish)
                   .data()});
  // A server declared dead and heard again before it restarted.
  s.push_back({"server-heard-again",
               Script(kRestarts | Workers(1))
                   .Op(kBringUp)
                   .Op(kAllReady)
                   .Send(1, 0, kHeartbeatKind, 0)
                   .Tick(1500)
                   .Send(1, 0, kHeartbeatKind, 0)
                   .Tick(1500)
                   .Send(0, 0, kHeartbeatKind, 0)
                   .Op(kAllFinish)
                   .data()});
  // Rejoin answers that do not match, and membership bodies from the input.
  s.push_back({"membership",
               Script(Workers(2))
                   .Op(kBringUp)
                   .Op(kAllReady)
                   .Send(0, 0, kMembershipKind, kMembership, {1, 3, 0, 2})
                   .Send(1, 0, kMembershipKind, kMembership, {0, 2, 1, 0})
                   .data()});
  // Garbage frames from a joined and an unknown connection.
  s.push_back({"raw-frames",
               Script(0)
                   .Op(kBringUp)
                   .Raw(0, {"\xff\xff junk", "abc"})
                   .Raw(5, {""})
                   .Raw(1, {std::string("\x08\x02\x10\x05", 4)})
                   .data()});
  return s;
}

}  // namespace
}  // namespace kairos::fuzz

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  kairos::fuzz::MaybeWriteSeeds(argc, argv, kairos::fuzz::MakeSeeds);
  // Protobuf logs each string field with invalid UTF-8 (raw frames, names from the input)
  // to stderr, thousands of lines a minute; Decode refuses those messages all the same.
  google::protobuf::SetLogHandler(nullptr);
  // A harness bug, not a coordinator bug: the job the harness sends must be valid.
  if (!kairos::ValidateJobConfig(kairos::fuzz::BaseJob()).ok()) {
    std::fprintf(stderr, "coordinator_fuzzer: the harness's job is invalid\n");
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  kairos::fuzz::Run(data, size);
  return 0;
}
