// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target: a server's whole message handler, behind the transport seam.
//
// Each input builds a fresh server over a FakeTransport (tests/server/fake_server_job.h):
// the harness answers its JOIN and sends a valid START for a small job (3 tables, 2
// workers, chunks of 4 elements) under a policy the input picks, then plays the rest of
// the input as operations, each handled synchronously on this thread:
//
//   worker request  a mostly valid PUSH, PULL, CLOCK, FINISH, ASSIGN or SET_LEARNING_RATE
//                   (or another kind) with the right node id of a worker of the START, or
//                   another sender, from that worker's peer or another one; table, range,
//                   clock, flags, values and learning rate come from the input, so requests
//                   reach the policies and the updaters
//   coordinator     MEMBERSHIP, HEARTBEAT, SHUTDOWN, JOIN_REPLY, a second START (the same
//                   or with other counts and ranks), or a worker's kind, from the
//                   coordinator's connection
//   raw frames      up to 4 frames of arbitrary bytes from a chosen peer
//   tick            the clock moves on by the input's amount; waiting reads may expire
//   all clocks      every worker reports its next clock (moves BSP/SSP rounds along)
//
// ServerOptions::inline_apply_bytes is large and apply_threads 1, so every float operation
// runs on this thread, in order: an input replays the same way (up to wall-clock times
// that the server reads itself, e.g. DSSP's interval timing).
//
// After every operation it checks what the server sent: each message passes Decode (the
// server never sends what a receiver would refuse), and its kind is one a server sends.
//
// KAIROS_FUZZ_VERBOSE=1 prints every message the server sends, to follow an input.
//
// Input layout: u8 policy, u8 job flags, then operations (u8 selector and its fields, see
// Step); at most kMaxOps. `server_fuzzer --write-seeds=DIR` writes the seed corpus
// (tests/fuzz/corpus/server).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "kairos/job.h"
#include "kairos/options.h"
#include "policy/policy.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/server/fake_server_job.h"
#include "fakes/fake_transport.h"
#include "wire/message.h"

namespace kairos::fuzz {
namespace {

using internal::FakeTransport;
using internal::Message;
using internal::PeerId;
using testing::FakeJobOptions;
using testing::FakeServerJob;

constexpr int kMaxOps = 256;
constexpr uint64_t kMaxPayload = 64;  // floats
constexpr int kWorkers = 2;

constexpr const char* kPolicies[] = {
    "asp",
    "bsp",
    "ssp:s=2",
    "vsgd",
    "vsgd+weight=value:mode=bound",
    "saps",
    "saps+straggler=saps:smax=1,action=downweight,weight=0.5",
    "eager",
    "sa-asgd:n=2",
    "dssp:s=1,r=4",
    "psp:beta=2,s=1",
};
constexpr std::size_t kNumPolicies = sizeof(kPolicies) / sizeof(kPolicies[0]);

// New kinds go at the end, so that the seeds' choices keep their meaning.
constexpr wire::Kind kWorkerKinds[] = {
    wire::PUSH,  wire::PUSH,   wire::PUSH,      wire::PULL,  wire::PULL,
    wire::CLOCK, wire::CLOCK,  wire::FINISH,    wire::JOIN,  wire::HEARTBEAT,
    wire::ERROR, wire::START,  wire::PULL_REPLY, wire::PUSH_REPLY, wire::MEMBERSHIP,
    wire::SHUTDOWN, wire::ASSIGN, wire::SET_LEARNING_RATE,
};

bool CarriesValues(wire::Kind kind) {
  return kind == wire::PUSH || kind == wire::PULL_REPLY || kind == wire::ASSIGN;
}

constexpr int64_t kSpecialClocks[] = {
    -1, -2, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
    std::numeric_limits<int64_t>::max() - 1, std::numeric_limits<int64_t>::min() + 1,
    int64_t{1} << 40, 1000,
};

constexpr float kScales[] = {0.0f, 0.5f, 1.0f, 2.0f, -1.0f, 1e30f,
                             std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN()};

enum Op : uint8_t {
  kWorkerRequest = 0,  // 0..3
  kCoordinator = 4,
  kRawFrames = 5,
  kTick = 6,
  kAllClocks = 7,
  kNumOps = 8,
};

// Request fields in `extras`.
enum Extra : uint8_t {
  kPullAfter = 1,
  kTimeout = 2,
  kScale = 4,
  kWrongPayload = 8,     // one float more than `length`
  kNoRequestId = 16,     // request id 0: a refused message is dropped, not answered
  kRawValues = 32,       // payload values as raw float bits (NaN, infinities)
  kWideTimeout = 64,     // timeout_ms as a u64
};

FakeJobOptions Job(const char* policy, uint8_t flags) {
  FakeJobOptions o;
  o.job.policy = policy;
  o.job.chunk_elements = 4;
  // 12 elements: chunks [0, 4) [4, 8) [8, 12) on one server, of 3 on two; 3 elements: one
  // chunk, split between 2 servers; 1 element: a table that shard 1 of 2 does not hold.
  o.job.tables.push_back({"w", 12, Initializer::Uniform(-1, 1, 5), {"sgd", 0.5f}});
  o.job.tables.push_back({"b", 3, Initializer::Constant(1), {"sgd", 1.0f}});
  o.job.tables.push_back({"one", 1, Initializer::Zeros(), {"sgd", 0.1f}});
  o.num_servers = (flags & 1) ? 2 : 1;
  o.shard = (flags & 1) ? ((flags >> 1) & 1) : 0;
  o.num_workers = kWorkers;
  return o;
}

ServerOptions Options() {
  ServerOptions so;
  so.apply_threads = 1;
  so.inline_apply_bytes = int64_t{1} << 30;  // all float work on this thread
  so.push_log_size = 4;
  so.log_level = LogLevel::kOff;  // thousands of refusals a second
  return so;
}

int64_t ReadClock(ByteReader& in) {
  const uint8_t c = in.U8();
  if (c < 224) return c % 8;
  if (c < 248) return kSpecialClocks[c % std::size(kSpecialClocks)];
  return static_cast<int64_t>(in.U64());
}

class Harness {
 public:
  Harness(uint8_t policy, uint8_t flags)
      : job_(Job(kPolicies[policy % kNumPolicies], flags), Options()) {}

  bool Start() {
    now_ = absl::Now();
    return job_.Start().ok();
  }

  // The counters are readable whatever happened, and per-worker metrics exist for every
  // rank of the job once it started.
  void CheckStats() {
    const ServerStats stats = job_.server().stats();
    Require(stats.workers.size() == static_cast<std::size_t>(kWorkers),
            "stats has one entry per worker");
  }

  void Step(ByteReader& in) {
    const uint8_t op = in.U8() % kNumOps;
    if (verbose_) std::fprintf(stderr, "op %d\n", op);
    switch (op) {
      case kCoordinator:
        CoordinatorMessage(in);
        break;
      case kRawFrames:
        RawFrames(in);
        break;
      case kTick: {
        uint32_t ms = in.U16();
        if (ms & 0x8000) ms = (ms & 0x7fff) * 100;
        now_ += absl::Milliseconds(ms);
        job_.transport().Tick(now_);
        break;
      }
      case kAllClocks:
        for (int r = 0; r < kWorkers; ++r) {
          Deliver(FakeServerJob::worker_peer(r),
                  job_.Request(wire::CLOCK, r, 0, 0, 0, ++clocks_[r]));
        }
        break;
      default:
        WorkerRequest(in);
    }
    CheckSent();
  }

 private:
  void Deliver(PeerId from, Message m) { (void)job_.transport().Deliver(from, std::move(m)); }

  // Who claims to send (the header's sender) and which connection it comes from.
  void Route(ByteReader& in, uint32_t* sender, PeerId* peer, int* rank) {
    const uint8_t who = in.U8();
    *rank = who & 1;
    switch ((who >> 1) & 3) {
      case 0:
      case 1:
        *sender = job_.worker_node(*rank);
        break;
      case 2:
        *sender = job_.server_node(0);
        break;
      default:
        *sender = in.U32();
    }
    switch ((who >> 3) & 3) {
      case 0:
      case 1:
        *peer = FakeServerJob::worker_peer(*rank);
        break;
      case 2:
        *peer = FakeServerJob::worker_peer(1 - *rank);
        break;
      default:
        *peer = FakeTransport::IncomingPeer(5);  // a node that is no worker of the START
    }
  }

  void WorkerRequest(ByteReader& in) {
    uint32_t sender = 0;
    PeerId peer = 0;
    int rank = 0;
    Route(in, &sender, &peer, &rank);
    const wire::Kind kind = kWorkerKinds[in.Pick(std::size(kWorkerKinds))];
    const uint32_t table = static_cast<uint32_t>(in.Pick(4));  // 3: no such table
    const uint8_t wide = in.U8();
    const uint64_t offset = (wide & 1) ? in.U64() : in.U8() % 14;
    const uint64_t length = (wide & 2) ? in.U64() : in.U8() % 6;
    const int64_t clock = ReadClock(in);
    const uint8_t extras = in.U8();

    Message m = job_.Request(kind, rank, table, offset, length, clock);
    m.header.set_sender(sender);
    if (extras & kNoRequestId) m.header.set_request_id(0);
    if (extras & kPullAfter) m.header.set_pull_after(true);
    if (extras & kTimeout) m.header.set_timeout_ms((extras & kWideTimeout) ? in.U64() : in.U16());
    if (extras & kScale) m.header.set_worker_scale(kScales[in.Pick(std::size(kScales))]);
    // The learning rate from the same values as the scale (0, negative, huge, NaN, inf).
    if (kind == wire::SET_LEARNING_RATE) {
      m.header.set_learning_rate(kScales[in.Pick(std::size(kScales))]);
    }
    if (CarriesValues(kind)) {
      uint64_t n = std::min(length, kMaxPayload);
      if (extras & kWrongPayload) ++n;
      Buffer values = Buffer::Allocate(n);
      for (float& v : values.span()) {
        if (extras & kRawValues) {
          const uint32_t bits = in.U32();
          std::memcpy(&v, &bits, sizeof(v));
        } else {
          v = static_cast<int8_t>(in.U8()) / 4.0f;
        }
      }
      m.payloads.push_back(std::move(values));
    }
    Deliver(peer, std::move(m));
  }

  void CoordinatorMessage(ByteReader& in) {
    Message m;
    switch (in.Pick(7)) {
      case 0:
        m.header.set_kind(wire::MEMBERSHIP);
        m.header.mutable_membership()->set_rank(static_cast<int8_t>(in.U8()) % 4);
        m.header.mutable_membership()->set_node_id(in.U8());
        m.header.mutable_membership()->set_state(
            static_cast<wire::Membership::State>(in.Pick(3)));
        break;
      case 1:
        m.header.set_kind(wire::HEARTBEAT);
        break;
      case 2:
        m.header.set_kind(wire::SHUTDOWN);
        m.header.mutable_status()->set_code(in.U8() % 18);
        m.header.mutable_status()->set_message("job over");
        break;
      case 3:
        m.header.set_kind(wire::JOIN_REPLY);
        m.header.mutable_join_reply()->set_node_id(in.Bool() ? job_.server_node(0) : in.U32());
        m.header.mutable_join_reply()->set_rank(static_cast<int8_t>(in.U8()) % 4);
        if (in.Bool()) m.header.mutable_status()->set_code(in.U8() % 18);
        break;
      case 4:
        m = job_.StartMessage();  // the same START again
        break;
      case 5: {
        // A START with other counts and worker ranks than the job's.
        m = job_.StartMessage();
        wire::Start* s = m.header.mutable_start();
        s->set_num_servers(static_cast<int8_t>(in.U8()) % 4);
        s->set_num_workers(static_cast<int8_t>(in.U8()) % 5);
        for (wire::Node& n : *s->mutable_nodes()) {
          if (n.role() == wire::WORKER) n.set_rank(static_cast<int8_t>(in.U8()) % 5);
        }
        break;
      }
      default:
        // A worker's kind on the coordinator's connection.
        m = job_.Request(kWorkerKinds[in.Pick(std::size(kWorkerKinds))], 0, 0, 0, 1, 0);
        if (CarriesValues(m.header.kind())) m.payloads.push_back(Buffer::Zeros(1));
    }
    Deliver(job_.coordinator(), std::move(m));
  }

  void RawFrames(ByteReader& in) {
    PeerId peer = 0;
    switch (in.Pick(4)) {
      case 0:
        peer = job_.coordinator();
        break;
      case 1:
      case 2:
        peer = FakeServerJob::worker_peer(in.Pick(2));
        break;
      default:
        peer = FakeTransport::IncomingPeer(5);
    }
    std::vector<std::string> frames(in.Pick(5));
    for (std::string& f : frames) f = in.Frame();
    (void)job_.transport().DeliverFrames(peer, std::move(frames));
  }

  void CheckSent() {
    for (FakeTransport::Sent& s : job_.transport().TakeSent()) {
      const wire::Kind kind = s.message.header.kind();
      if (verbose_) {
        std::fprintf(stderr, "  sent to %s: %s %s\n",
                     s.to == job_.coordinator() ? "coordinator" : "worker",
                     internal::Describe(s.message.header).c_str(),
                     s.message.header.status().message().c_str());
      }
      if (s.to == job_.coordinator()) {
        // MEMBERSHIP: the answer to a rejoin (MEMBERSHIP ACTIVE), the clock the shard
        // re-admitted the worker at.
        Require(kind == wire::JOIN || kind == wire::READY || kind == wire::HEARTBEAT ||
                    kind == wire::ERROR || kind == wire::FAILED ||
                    (kind == wire::MEMBERSHIP &&
                     s.message.header.membership().state() == wire::Membership::ACTIVE &&
                     s.message.header.membership().clock() >= 0),
                "the server sends the coordinator only JOIN, READY, HEARTBEAT, ERROR, FAILED or "
                "the answer to a rejoin");
      } else {
        Require(kind == wire::PUSH_REPLY || kind == wire::PULL_REPLY || kind == wire::ERROR ||
                    kind == wire::FINISH || kind == wire::ASSIGN_REPLY ||
                    kind == wire::SET_LEARNING_RATE_REPLY,
                "the server answers workers only with replies, errors and FINISH");
      }
      std::vector<std::string> frames{internal::EncodeHeader(s.message)};
      for (const Buffer& p : s.message.payloads) {
        frames.emplace_back(reinterpret_cast<const char*>(p.data()), p.size_bytes());
      }
      std::vector<internal::RawFrame> raw;
      for (const std::string& f : frames) raw.push_back({nullptr, f.data(), f.size()});
      absl::StatusOr<Message> decoded = internal::Decode(std::move(raw));
      if (!decoded.ok()) std::fprintf(stderr, "%s\n", decoded.status().ToString().c_str());
      Require(decoded.ok(), "every message the server sends decodes");
    }
  }

  FakeServerJob job_;
  // KAIROS_FUZZ_VERBOSE=1: print every message the server sends (to replay an input).
  const bool verbose_ = std::getenv("KAIROS_FUZZ_VERBOSE") != nullptr;
  absl::Time now_;
  int64_t clocks_[kWorkers] = {0, 0};
};

void Run(const uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  const uint8_t policy = in.U8();
  const uint8_t flags = in.U8();
  Harness h(policy, flags);
  Require(h.Start(), "the server starts on a valid START");
  for (int i = 0; i < kMaxOps && !in.empty(); ++i) h.Step(in);
  h.CheckStats();
}

// ------------------------------------------------------------------------ seed corpus
// Writes operations in the layout Harness reads.
class Script {
 public:
  Script(uint8_t policy, uint8_t flags) { w_.U8(policy).U8(flags); }

  // A valid request of worker `rank` from its own connection. A SET_LEARNING_RATE asks
  // for kScales[lr].
  Script& Request(wire::Kind kind, int rank, uint8_t table, uint8_t offset, uint8_t length,
                  uint8_t clock, uint8_t extras = 0, uint16_t timeout_ms = 0, uint8_t lr = 1) {
    std::size_t k = 0;
    while (kWorkerKinds[k] != kind) ++k;
    w_.U8(kWorkerRequest).U8(static_cast<uint8_t>(rank)).U8(static_cast<uint8_t>(k));
    w_.U8(table).U8(0).U8(offset).U8(length).U8(clock).U8(extras);
    if (extras & kTimeout) w_.U16(timeout_ms);
    if (extras & kScale) w_.U8(1);  // 0.5
    if (kind == wire::SET_LEARNING_RATE) w_.U8(lr);
    if (kind == wire::PUSH || kind == wire::ASSIGN) {
      const int n = length + ((extras & kWrongPayload) ? 1 : 0);
      for (int i = 0; i < n; ++i) w_.U8(static_cast<uint8_t>(4 * (i + 1)));
    }
    return *this;
  }
  Script& Coordinator(uint8_t which, std::vector<uint8_t> fields = {}) {
    w_.U8(kCoordinator).U8(which);
    for (uint8_t f : fields) w_.U8(f);
    return *this;
  }
  Script& Raw(uint8_t peer, std::vector<std::string> frames) {
    w_.U8(kRawFrames).U8(peer).Frames(frames);
    return *this;
  }
  Script& Tick(uint16_t ms) {
    w_.U8(kTick).U16(ms);
    return *this;
  }
  Script& AllClocks() {
    w_.U8(kAllClocks);
    return *this;
  }
  const std::string& data() const { return w_.data(); }

 private:
  ByteWriter w_;
};

Seeds MakeSeeds() {
  Seeds s;
  // Every policy: both workers push and pull every chunk of "w", clock, and finish.
  for (uint8_t p = 0; p < kNumPolicies; ++p) {
    Script sc(p, 0);
    for (int iter = 0; iter < 2; ++iter) {
      for (int r = 0; r < kWorkers; ++r) {
        sc.Request(wire::PULL, r, 0, 0, 4, iter).Request(wire::PULL, r, 0, 4, 4, iter);
        sc.Request(wire::PUSH, r, 0, 0, 4, iter).Request(wire::PUSH, r, 0, 5, 3, iter);
        sc.Request(wire::PUSH, r, 1, 0, 3, iter);
      }
      sc.AllClocks();
    }
    sc.Tick(600).Request(wire::FINISH, 0, 0, 0, 0, 0).Request(wire::PULL, 1, 0, 0, 4, 3);
    std::string name = kPolicies[p];
    for (char& c : name) {
      if (c == ':' || c == '=' || c == ',' || c == '+' || c == '.') c = '_';
    }
    s.push_back({"policy-" + name, sc.data()});
  }
  // A read waits for a slow worker, then expires at a tick.
  s.push_back({"bsp-read-expires",
               Script(1, 0)
                   .Request(wire::CLOCK, 0, 0, 0, 0, 1)
                   .Request(wire::PULL, 0, 0, 0, 4, 1, kTimeout, 5)
                   .Tick(1000)
                   .data()});
  // Eager pull: a push answered by the read of the next clock.
  s.push_back({"eager-pull-after",
               Script(7, 0)
                   .Request(wire::PUSH, 0, 0, 0, 4, 0, kPullAfter)
                   .Request(wire::PUSH, 1, 0, 0, 4, 0, kPullAfter | kScale)
                   .AllClocks()
                   .data()});
  // A worker declared dead while a read waits for it.
  s.push_back({"bsp-membership-dead",
               Script(1, 0)
                   .Request(wire::CLOCK, 0, 0, 0, 0, 1)
                   .Request(wire::PULL, 0, 0, 0, 4, 1)
                   .Coordinator(0, {1, 4, 1})
                   .data()});
  // Two servers: requests for the other shard's range are refused.
  s.push_back({"two-servers-shard-1",
               Script(0, 3)
                   .Request(wire::PULL, 0, 0, 0, 4, 0)
                   .Request(wire::PUSH, 0, 0, 6, 2, 0)
                   .Request(wire::PUSH, 1, 2, 0, 1, 0)
                   .data()});
  // Refusals: bad table, range, clock going back, wrong payload, garbage frames.
  s.push_back({"refusals",
               Script(2, 0)
                   .Request(wire::PULL, 0, 3, 0, 1, 0)
                   .Request(wire::PULL, 0, 0, 10, 5, 0)
                   .Request(wire::CLOCK, 0, 0, 0, 0, 3)
                   .Request(wire::CLOCK, 0, 0, 0, 0, 1)
                   .Request(wire::PUSH, 1, 0, 0, 2, 0, kWrongPayload)
                   .Raw(1, {"\xff\xff junk", "abc"})
                   .Raw(0, {""})
                   .data()});
  // Assigns between pushes (on "w" and on the table that shard 1 of 2 lacks), under BSP with
  // a round open and under VSGD's drift; learning-rate changes, good and bad.
  for (uint8_t p : {uint8_t{1}, uint8_t{3}}) {
    s.push_back({p == 1 ? "assign-learning-rate-bsp" : "assign-learning-rate-vsgd",
                 Script(p, 0)
                     .Request(wire::PUSH, 0, 0, 0, 4, 0)
                     .Request(wire::ASSIGN, 1, 0, 0, 4, 0)
                     .Request(wire::ASSIGN, 1, 0, 5, 3, 0)
                     .Request(wire::SET_LEARNING_RATE, 0, 0, 0, 0, 0, 0, 0, /*0.5*/ 1)
                     .Request(wire::SET_LEARNING_RATE, 0, 1, 0, 0, 0, 0, 0, /*-1*/ 4)
                     .Request(wire::SET_LEARNING_RATE, 1, 2, 0, 0, 0, 0, 0, /*NaN*/ 7)
                     .Request(wire::PUSH, 1, 0, 0, 4, 0)
                     .Request(wire::PULL, 0, 0, 0, 4, 0)
                     .AllClocks()
                     .Request(wire::ASSIGN, 0, 2, 0, 1, 1)
                     .Request(wire::PULL, 1, 0, 0, 4, 1)
                     .data()});
  }
  s.push_back({"assign-two-servers-shard-1",
               Script(0, 3)
                   .Request(wire::ASSIGN, 0, 0, 6, 2, 0)
                   .Request(wire::ASSIGN, 0, 2, 0, 1, 0)
                   .Request(wire::SET_LEARNING_RATE, 1, 2, 0, 0, 0, 0, 0, 2)
                   .Request(wire::ASSIGN, 1, 0, 0, 2, 0, kWrongPayload)
                   .data()});
  // The coordinator's control messages, and a second START.
  s.push_back({"coordinator",
               Script(5, 0)
                   .Request(wire::PUSH, 0, 0, 0, 4, 0)
                   .Coordinator(1)
                   .Coordinator(4)
                   .Coordinator(3, {1, 0, 0})
                   .Coordinator(2, {0})
                   .Request(wire::PULL, 0, 0, 0, 4, 0)
                   .data()});
  return s;
}

}  // namespace
}  // namespace kairos::fuzz

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  kairos::fuzz::MaybeWriteSeeds(argc, argv, kairos::fuzz::MakeSeeds);
  // A harness bug, not a server bug: every policy of the list must parse.
  for (const char* p : kairos::fuzz::kPolicies) {
    if (!kairos::policy::ParsePolicySpec(p).ok()) {
      std::fprintf(stderr, "server_fuzzer: policy '%s' does not parse\n", p);
      std::abort();
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  kairos::fuzz::Run(data, size);
  return 0;
}
