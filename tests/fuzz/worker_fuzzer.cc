// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target: a worker's whole message handler (WorkerNode, src/worker/worker_node.h),
// behind the transport seam.
//
// Each input builds a fresh WorkerNode over a FakeTransport on a kairos::testing::ManualEnv; the
// harness plays the coordinator and the servers. It answers the JOIN (with a rejoin clock or not)
// and sends a START for a small job the input shapes (tables "w" of 10, "b" of 3 and "one"
// of 1 element, a sparse table "emb" of rows of 2 or not; 1 or 2 servers; chunks of 1 to 4
// elements; server restarts on or off; a tight flow-control budget or not), or a START
// that is wrong in one way (no tables, chunk_elements 0 or huge, a table of size 0 or
// huge, a sparse table with rows of 0, a shard named twice or not at all, shard ranks out
// of range). Then it plays the rest of the input as operations, each handled on this
// thread:
//
//   range request   a push, pull (into caller memory or gathered into a ConstBuffer),
//                   assign or eager push+pull of a table range the input picks (some out
//                   of range or on the sparse table: refused before anything is sent),
//                   with a deadline from the input
//   sparse request  a sparse push or pull of up to 5 keys (repeated keys too)
//   control         a clock, a barrier, a finish to the servers or to the coordinator, a
//                   change of a table's learning rate
//   answer          a reply to one message the worker sent: correct (the right kind, from
//                   the right peer, the right length) or changed by the input (another
//                   peer, another kind, an error status, another length, request id,
//                   offset, clocks, flags, raw float bits)
//   answer all      the right reply to every message not answered yet, so requests
//                   complete
//   coordinator     MEMBERSHIP (a server declared dead, restarted at the same or another
//                   endpoint; a worker's), HEARTBEAT, SHUTDOWN, a second START or
//                   JOIN_REPLY, a BARRIER_RELEASE with any request id
//   raw frames      up to 4 frames of arbitrary bytes from any peer
//   tick            the clock moves on by the input's amount; deadlines expire
//   refused peer    a connection refused at its handshake (ends the worker)
//
// The requests are built as WorkerImpl (src/worker/worker_impl.cc) builds them: checked,
// routed (worker/routing.h, worker/sparse_routing.h), posted to the node with the caller's
// buffers kept alive until the node is gone. After every operation it checks:
//
//   - every message the worker sends passes Decode, has a kind the worker sends to that
//     peer, carries the worker's node id (and to a server its credential), and a request's
//     message goes to the connection of the shard it was routed to (the coordinator for a
//     barrier or a finish of the job);
//   - a request completes at most once (once done it stays done with the same status, and
//     its caller's buffer does not change afterwards);
//   - a request that completes OK got an OK answer for every part, from the peer the part
//     was sent to; a read got a PULL_REPLY of exactly its part's length, and the caller's
//     memory holds exactly the bytes of those replies (a sparse pull: each key's row);
//   - after a tick at time T every request whose deadline (plus the grace) is at or before
//     T is complete, and after the node is destroyed every request is.
//
// ASan and UBSan check the rest (the caller's buffers are exactly as large as the request).
// Everything runs on this thread on virtual time: an input replays the same way.
//
// KAIROS_FUZZ_VERBOSE=1 prints each operation and every message the worker sends.
//
// Input layout: u8 job shape (Shape), [u8 START fault and its fields when kBadStart], then
// operations (u8 selector and its fields, see Step); at most kMaxOps.
// `worker_fuzzer --write-seeds=DIR` writes the seed corpus (tests/fuzz/corpus/worker).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "fakes/fake_transport.h"
#include "kairos/job.h"
#include "kairos/options.h"
#include "kairos/testing/manual_env.h"
#include "tests/fuzz/fuzz_input.h"
#include "wire/convert.h"
#include "wire/message.h"
#include "worker/request_state.h"
#include "worker/routing.h"
#include "worker/sparse_routing.h"
#include "worker/worker_node.h"

namespace kairos::fuzz {
namespace {

using internal::Batch;
using internal::FakeTransport;
using internal::Message;
using internal::PeerId;
using internal::RequestLabel;
using internal::RequestState;
using internal::TableEntry;
using internal::WorkerNode;

constexpr int kMaxOps = 256;
constexpr PeerId kCoordinator = 0;  // the node's first connection
constexpr uint32_t kNodeId = 7;
constexpr uint64_t kTokenHi = 0x1234;
constexpr uint64_t kTokenLo = 0x5678;
constexpr int kWorkers = 3;
constexpr int64_t kRejoinClock = 3;
constexpr absl::Duration kHeartbeat = absl::Milliseconds(100);
constexpr absl::Duration kRequestTimeout = absl::Seconds(2);
// A peer that is neither the coordinator nor a server (an incoming connection).
constexpr PeerId kStranger = FakeTransport::IncomingPeer(7);

// The job shape byte.
enum Shape : uint8_t {
  kTwoServers = 1,
  kSparseTable = 2,
  kRestarts = 4,      // START's server_restart_timeout_ms > 0: the worker keeps what it sent
  kRejoin = 8,        // JOIN_REPLY with a clock: the worker tells every shard first
  kTightBudget = 16,  // max_bytes_in_flight_per_server: one float
  kChunkShift = 5,    // bits 5-6: chunk_elements - 1
  kBadStart = 128,    // a START that is wrong in one way (BadStart)
};

// What is wrong with a kBadStart START. New ones go at the end (the seeds name them).
enum BadStart : uint8_t {
  kNoTables = 0,
  kChunkElements = 1,  // u8: 0, huge, ...
  kDenseSize = 2,      // u8: 0, huge, ...
  kRowWidth = 3,       // u8: 0 or huge (with the sparse table)
  kShardTwice = 4,     // one shard named twice, the other not at all
  kShardMissing = 5,   // num_servers says one more than the nodes name
  kShardRank = 6,      // u8: a shard rank out of range
  kCounts = 7,         // u8 servers, u8 workers (int8)
  kNumBadStarts = 8,
};

constexpr uint64_t kSpecialSizes[] = {
    0, 1, kMaxTableElements, kMaxTableElements + 1, std::numeric_limits<uint64_t>::max(),
    kMaxChunkElements, kMaxChunkElements + 1, uint64_t{1} << 32,
};

enum Op : uint8_t {
  kRange = 0,        // 0..2
  kSparse = 3,
  kControl = 4,      // 4..5
  kAnswer = 6,       // 6..8
  kAnswerAll = 9,    // 9..10
  kCoordinatorOp = 11,
  kRawFrames = 12,
  kTick = 13,        // 13..14
  kRefusedPeer = 15,
  kNumOps = 16,
};

// Answer changes (the answer's flags byte).
enum Change : uint8_t {
  kOtherPeer = 1,
  kOtherKind = 2,
  kErrorStatus = 4,
  kOtherLength = 8,
  kOtherId = 16,
  kOtherFields = 32,
  kRawBits = 64,
  kAnyMessage = 128,  // pick among every message sent, answered or not
};

constexpr wire::Kind kReplyKinds[] = {
    wire::PUSH_REPLY, wire::PULL_REPLY, wire::ASSIGN_REPLY, wire::SET_LEARNING_RATE_REPLY,
    wire::FINISH,     wire::ERROR,      wire::BARRIER_RELEASE, wire::HEARTBEAT,
    wire::MEMBERSHIP, wire::PUSH,       wire::CLOCK,      wire::JOIN_REPLY,
    wire::START,      wire::SHUTDOWN,   wire::PULL,       wire::KIND_UNSPECIFIED,
};

constexpr int64_t kSpecialClocks[] = {
    -1, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), 1 << 20,
};

bool CarriesValues(wire::Kind kind) {
  return kind == wire::PUSH || kind == wire::PULL_REPLY || kind == wire::ASSIGN;
}

bool SameBytes(const float* a, const float* b, std::size_t n) {
  return n == 0 || std::memcmp(a, b, n * sizeof(float)) == 0;
}

JobConfig MakeJob(uint8_t shape) {
  JobConfig job;
  job.policy = "asp";
  job.chunk_elements = 1 + ((shape >> kChunkShift) & 3);
  job.tables.push_back({"w", 10, Initializer::Zeros(), {"sgd", 0.5f}});
  job.tables.push_back({"b", 3, Initializer::Constant(1), {"sgd", 1.0f}});
  job.tables.push_back({"one", 1, Initializer::Zeros(), {"sgd", 0.1f}});
  if (shape & kSparseTable) {
    job.tables.push_back(TableSpec::Sparse("emb", 2, Initializer::Zeros(), {"sgd", 0.1f}));
  }
  return job;
}

// One message of a request (a Part) as the harness tracks it.
struct PartModel {
  std::size_t request = 0;  // index in Harness::requests_
  int shard = -1;           // -1: the coordinator
  wire::Kind kind = wire::PUSH;
  bool reads = false;
  uint64_t at = 0;
  uint64_t length = 0;
  wire::Header sent;  // the header as routed
  // The first message from the part's peer with its request id that reached the handler
  // (after the part was dispatched): the one that completed it, if any did.
  std::optional<Message> taker;
};

struct RequestModel {
  const char* what = "";
  std::shared_ptr<RequestState> state;
  std::vector<uint64_t> ids;
  bool reads = false;
  // Caller memory: a pull's (or eager push's) output, exactly `length` floats.
  std::unique_ptr<std::vector<float>> out;
  // A gathered pull's destination.
  std::unique_ptr<ConstBuffer> gathered;
  std::unique_ptr<PushPullReply> eager;
  // A sparse pull: caller key i's row is distinct row position[i] of the plan; the rows of
  // group g (its part ids[g]) start at distinct index first[g].
  uint32_t width = 0;
  std::vector<uint32_t> position;
  std::vector<uint64_t> group_first;
  std::vector<uint64_t> group_count;
  // Set at completion.
  bool checked = false;
  absl::Status status;
  std::vector<float> result;  // the caller's memory at completion
};

class Harness {
 public:
  Harness()
      : env_(std::make_shared<kairos::testing::ManualEnv>(absl::UnixEpoch() + absl::Hours(1))) {}

  ~Harness() {
    // The node first (it fails what is outstanding), then the requests' memory.
    node_.reset();
  }

  // Joins and sends the START the input shapes (or spoils).
  void Start(ByteReader& in) {
    shape_ = in.U8();
    num_servers_ = (shape_ & kTwoServers) ? 2 : 1;
    job_ = MakeJob(shape_);
    WorkerOptions o;
    o.coordinator = "fake://coordinator";
    o.job = job_;
    o.rank = 1;
    o.join_timeout = absl::Seconds(30);
    o.heartbeat_interval = kHeartbeat;
    o.request_timeout = kRequestTimeout;
    o.max_bytes_in_flight_per_server = (shape_ & kTightBudget) ? 1 : int64_t{1} << 20;
    o.env = env_;
    o.log_level = LogLevel::kOff;  // thousands of refusals a second
    options_ = o;
    auto transport = std::make_unique<FakeTransport>("worker");
    t_ = transport.get();
    node_ = std::make_unique<WorkerNode>(o, std::move(transport));
    Require(node_->SendJoin().ok(), "SendJoin works over a FakeTransport");
    std::vector<FakeTransport::Sent> sent = t_->TakeSent();
    Require(sent.size() == 1 && sent[0].message.header.kind() == wire::JOIN &&
                sent[0].to == kCoordinator,
            "the worker sends one JOIN to the coordinator");
    Message reply;
    reply.header.set_kind(wire::JOIN_REPLY);
    reply.header.set_request_id(sent[0].message.header.request_id());
    reply.header.mutable_join_reply()->set_node_id(kNodeId);
    reply.header.mutable_join_reply()->set_rank(1);
    reply.header.mutable_join_reply()->set_token_hi(kTokenHi);
    reply.header.mutable_join_reply()->set_token_lo(kTokenLo);
    if (shape_ & kRejoin) reply.header.mutable_join_reply()->set_clock(kRejoinClock);
    Require(t_->Deliver(kCoordinator, std::move(reply)).ok(), "JOIN_REPLY is delivered");

    Message start = StartMessage();
    bad_start_ = (shape_ & kBadStart) != 0;
    if (bad_start_) SpoilStart(in, start);
    const std::size_t connected = t_->connections().size();
    start_message_ = start;
    Require(t_->Deliver(kCoordinator, std::move(start)).ok(), "START is delivered");
    Require(node_->joined(), "START (good or bad) ends the wait for it");
    started_ = node_->EndStatus().ok();
    Require(started_ || bad_start_, "a valid START starts the worker");
    shard_peer_.assign(num_servers_, kStranger);
    if (started_) {
      // Every shard is a connection of its own, made at START to the endpoint START gave
      // for it.
      Require(node_->num_servers() == num_servers_, "the worker has START's servers");
      const std::vector<std::string> conns = t_->connections();
      Require(conns.size() == connected + num_servers_, "START connects to every server once");
      for (const wire::Node& n : start_message_.header.start().nodes()) {
        if (n.role() != wire::SERVER) continue;
        Require(n.rank() >= 0 && n.rank() < num_servers_, "an accepted START's shards exist");
        for (std::size_t i = connected; i < conns.size(); ++i) {
          if (conns[i] == n.endpoint()) shard_peer_[n.rank()] = i;
        }
      }
      for (int s = 0; s < num_servers_; ++s) {
        Require(shard_peer_[s] != kStranger, "every shard has a connection of its own");
      }
    }
    if (verbose_) {
      std::fprintf(stderr, "shape %d: %d servers, START %s (%s)\n", shape_, num_servers_,
                   bad_start_ ? "spoiled" : "valid",
                   node_->EndStatus().ToString().c_str());
    }
    CheckSent();
  }

  void Step(ByteReader& in) {
    const uint8_t op = in.U8() % kNumOps;
    if (verbose_) std::fprintf(stderr, "op %d\n", op);
    switch (op) {
      case kRange:
      case kRange + 1:
      case kRange + 2:
        RangeRequest(in);
        break;
      case kSparse:
        SparseRequest(in);
        break;
      case kControl:
      case kControl + 1:
        Control(in);
        break;
      case kAnswer:
      case kAnswer + 1:
      case kAnswer + 2:
        Answer(in);
        break;
      case kAnswerAll:
      case kAnswerAll + 1:
        AnswerAll();
        break;
      case kCoordinatorOp:
        CoordinatorMessage(in);
        break;
      case kRawFrames:
        RawFrames(in);
        break;
      case kTick:
      case kTick + 1: {
        uint32_t ms = in.U16();
        if (ms & 0x8000) ms = (ms & 0x7fff) * 100;
        env_->Advance(absl::Milliseconds(ms));
        t_->Tick(env_->Now());
        break;
      }
      default: {
        // Refused handshakes are rare: a second byte must agree.
        const uint8_t which = in.U8();
        if ((which & 0xf0) != 0xf0) break;
        const PeerId peer = which & 1 ? kCoordinator : ServerPeer(0);
        t_->FailConnect(peer, absl::PermissionDeniedError("fake://x: CURVE handshake refused"));
        break;
      }
    }
    CheckSent();
    CheckRequests(op == kTick || op == kTick + 1);
  }

  // The end of the input: every request is complete once the node is gone.
  void Finish() {
    node_.reset();
    for (RequestModel& r : requests_) {
      Require(r.state->done(), "every request is complete once the node is destroyed");
    }
    CheckRequests(false, /*again=*/true);
  }

 private:
  PeerId ServerPeer(int shard) const {
    return shard < static_cast<int>(shard_peer_.size()) ? shard_peer_[shard] : kStranger;
  }
  PeerId PartPeer(const PartModel& p) const {
    return p.shard < 0 ? kCoordinator : ServerPeer(p.shard);
  }

  Message StartMessage() const {
    Message start;
    start.header.set_kind(wire::START);
    wire::Start* s = start.header.mutable_start();
    internal::ToWire(job_, s->mutable_job());
    s->set_num_servers(num_servers_);
    s->set_num_workers(kWorkers);
    s->set_job_id(42);
    if (shape_ & kRestarts) s->set_server_restart_timeout_ms(60'000);
    for (int i = 0; i < num_servers_; ++i) {
      wire::Node* n = s->add_nodes();
      n->set_node_id(100 + i);
      n->set_role(wire::SERVER);
      n->set_rank(i);
      n->set_endpoint("fake://server-" + std::to_string(i));
    }
    for (int i = 0; i < kWorkers; ++i) {
      wire::Node* n = s->add_nodes();
      n->set_node_id(i == 1 ? kNodeId : 200 + i);
      n->set_role(wire::WORKER);
      n->set_rank(i);
    }
    return start;
  }

  void SpoilStart(ByteReader& in, Message& start) {
    wire::Start* s = start.header.mutable_start();
    wire::JobConfig* job = s->mutable_job();
    switch (in.U8() % kNumBadStarts) {
      case kNoTables:
        job->clear_tables();
        break;
      case kChunkElements:
        job->set_chunk_elements(kSpecialSizes[in.Pick(std::size(kSpecialSizes))]);
        break;
      case kDenseSize:
        job->mutable_tables(in.Pick(3))->set_size(kSpecialSizes[in.Pick(std::size(kSpecialSizes))]);
        break;
      case kRowWidth:
        if (job->tables_size() > 3) {
          job->mutable_tables(3)->set_row_width(in.Bool() ? 0 : kMaxRowWidth + 1);
        } else {
          job->mutable_tables(0)->set_row_width(2);  // a dense table with rows
        }
        break;
      case kShardTwice:
        for (wire::Node& n : *s->mutable_nodes()) {
          if (n.role() == wire::SERVER) n.set_rank(0);
        }
        if (num_servers_ == 1) {
          s->set_num_servers(2);
          num_servers_ = 2;
        }
        break;
      case kShardMissing:
        s->set_num_servers(num_servers_ + 1);
        num_servers_ += 1;
        break;
      case kShardRank:
        for (wire::Node& n : *s->mutable_nodes()) {
          if (n.role() == wire::SERVER) n.set_rank(static_cast<int8_t>(in.U8()));
        }
        break;
      default:
        s->set_num_servers(static_cast<int8_t>(in.U8()));
        s->set_num_workers(static_cast<int8_t>(in.U8()));
        num_servers_ = std::clamp(s->num_servers(), 0, 8);
    }
  }

  // ------------------------------------------------------------------ requests

  // WorkerImpl::Usable, and the table lookup: an error means refused, nothing sent.
  const TableEntry* Usable(std::string_view table) {
    if (!started_ || !node_->EndStatus().ok()) return nullptr;
    absl::StatusOr<const TableEntry*> t = node_->Table(table);
    return t.ok() ? *t : nullptr;
  }

  absl::Time Deadline(ByteReader& in) {
    const uint8_t d = in.U8();
    return env_->Now() + (d == 0 ? kRequestTimeout : absl::Milliseconds(10 * d));
  }

  uint64_t TimeoutMs(absl::Time deadline) const {
    return static_cast<uint64_t>(
        std::max<int64_t>(1, absl::ToInt64Milliseconds(deadline - env_->Now())));
  }

  // Registers the batch's parts and posts it, as WorkerImpl does.
  void Post(RequestModel r, Batch batch) {
    const std::size_t index = requests_.size();
    for (const auto& [part, message] : batch) {
      PartModel p;
      p.request = index;
      p.shard = part.shard;
      p.kind = message.header.kind();
      p.reads = part.reads;
      p.at = part.at;
      p.length = part.length;
      p.sent = message.header;
      r.ids.push_back(message.header.request_id());
      Require(parts_.emplace(message.header.request_id(), std::move(p)).second,
              "request ids are unique");
    }
    const char* what = r.what;
    requests_.push_back(std::move(r));
    node_->Post(std::move(batch), what);
    t_->RunPosted();
  }

  float NextValue() { return static_cast<float>(++values_ % 1000) * 0.25f; }

  void RangeRequest(ByteReader& in) {
    const uint8_t sel = in.U8();
    const TableSpec& spec = job_.tables[in.Pick(job_.tables.size())];
    const uint64_t offset = in.U8() % 12;
    const uint64_t length = in.U8() % 12;
    const absl::Time deadline = Deadline(in);
    enum { kPush, kPull, kAssign, kPushPull };
    const int kind = sel % 4;
    const bool gather = (sel & 4) != 0;
    const TableEntry* t = Usable(spec.name);
    if (t == nullptr || t->info.sparse) return;
    const char* verb = kind == kPull ? "pull" : kind == kAssign ? "assign" : "push";
    if (!internal::CheckRange(verb, t->info, offset, length).ok()) return;
    std::span<const internal::Chunk> chunks = t->partition.Overlapping(offset, offset + length);
    const int parts = static_cast<int>(chunks.size());
    RequestModel r;
    r.what = verb;
    r.state = std::make_shared<RequestState>(
        RequestLabel{verb, t->info.name, offset, offset + length},
        deadline + options_.deadline_grace, parts, /*spin=*/true, node_->wait_tuning(), *env_);
    internal::RangeRoute route;
    route.kind = kind == kPull ? wire::PULL : kind == kAssign ? wire::ASSIGN : wire::PUSH;
    route.table = t->info.id;
    route.offset = offset;
    route.length = length;
    if (kind != kPull) {
      route.payload = Buffer::Allocate(length);
      for (float& v : route.payload.span()) v = NextValue();
    }
    if (kind == kPull || kind == kPushPull) {
      r.reads = true;
      if (kind == kPull && gather) {
        r.gathered = std::make_unique<ConstBuffer>();
        r.state->GatherInto(r.gathered.get(), length);
      } else {
        r.out = std::make_unique<std::vector<float>>(length, -7.0f);
        r.state->ReceiveInto(r.out->data());
      }
    }
    if (kind == kPushPull) {
      r.eager = std::make_unique<PushPullReply>();
      r.eager->clocks.assign(node_->num_workers(), 0);
      route.eager = r.eager.get();
      route.scale = (sel & 8) ? 0.5f : 1.0f;
    }
    const internal::Stamp stamp{.sender = node_->node_id(),
                                .clock = clock_value_,
                                .timeout_ms = TimeoutMs(deadline),
                                .first_id = node_->ReserveIds(parts)};
    Batch batch = internal::RouteRange(route, chunks, stamp, r.state);
    Post(std::move(r), std::move(batch));
    if (kind == kPushPull) PostClock();  // PushPullAsync: the push, then Clock()
  }

  void SparseRequest(ByteReader& in) {
    const bool push = in.Bool();
    const std::size_t n = in.U8() % 6;
    std::vector<uint64_t> keys(n);
    for (uint64_t& k : keys) {
      const uint8_t v = in.U8();
      k = v < 200 ? v % 8 : in.U64();
    }
    const absl::Time deadline = Deadline(in);
    const TableEntry* t = Usable("emb");
    if (t == nullptr || n == 0) return;
    const uint32_t width = t->info.row_width;
    std::vector<float> rows(n * width);
    for (float& v : rows) v = NextValue();
    internal::SparsePlan plan = internal::PlanSparse(keys, node_->num_servers());
    const Buffer summed = push ? internal::SumRows(plan, rows, width) : Buffer();
    const int parts = static_cast<int>(plan.groups.size());
    const uint64_t values = plan.distinct.size() * width;
    const char* verb = push ? "sparse push" : "sparse pull";
    RequestModel r;
    r.what = verb;
    r.state = std::make_shared<RequestState>(RequestLabel{verb, t->info.name, 0, n},
                                             deadline + options_.deadline_grace, parts,
                                             /*spin=*/true, node_->wait_tuning(), *env_);
    if (!push) {
      // As WorkerImpl::IssueSparse: the rows arrive in plan order into `gathered`; Wait then
      // copies each caller key's row into place.
      r.reads = true;
      r.width = width;
      r.out = std::make_unique<std::vector<float>>(n * width, -7.0f);
      r.gathered = std::make_unique<ConstBuffer>();
      r.position = plan.position;
      for (const internal::SparsePlan::Group& g : plan.groups) {
        r.group_first.push_back(g.first);
        r.group_count.push_back(g.count);
      }
      r.state->GatherInto(r.gathered.get(), values);
      r.state->AfterDelivery([gathered = r.gathered.get(), position = plan.position,
                              out = r.out->data(), width] {
        const float* from = gathered->data();
        for (std::size_t i = 0; i < position.size(); ++i) {
          std::copy_n(from + std::size_t{position[i]} * width, width, out + i * width);
        }
      });
    }
    const internal::Stamp stamp{.sender = node_->node_id(),
                                .clock = clock_value_,
                                .timeout_ms = TimeoutMs(deadline),
                                .first_id = node_->ReserveIds(parts)};
    Batch batch = internal::RouteSparse(push ? wire::PUSH_SPARSE : wire::PULL_SPARSE,
                                        t->info.id, width, plan, summed, stamp, r.state);
    Post(std::move(r), std::move(batch));
  }

  void PostClock() {
    node_->PostClock(++clock_value_);
    t_->RunPosted();
  }

  void Control(ByteReader& in) {
    const uint8_t which = in.U8() % 5;
    const absl::Time deadline = Deadline(in);
    const std::string table = job_.tables[in.Pick(job_.tables.size())].name;
    if (!started_ || !node_->EndStatus().ok()) return;
    if (which == 0) return PostClock();
    RequestModel r;
    Batch batch;
    if (which == 4) {
      const TableEntry* t = Usable(table);
      if (t == nullptr) return;
      std::vector<int> shards;
      for (int s = 0; s < node_->num_servers(); ++s) {
        if (t->info.sparse || !t->partition.shard_chunks(s).empty()) shards.push_back(s);
      }
      const int parts = static_cast<int>(shards.size());
      r.what = "learning rate change";
      r.state = std::make_shared<RequestState>(
          RequestLabel{"set learning rate", t->info.name, 0, t->info.size},
          deadline + options_.deadline_grace, parts, false, nullptr, *env_);
      const internal::Stamp stamp{.sender = node_->node_id(),
                                  .clock = clock_value_,
                                  .timeout_ms = TimeoutMs(deadline),
                                  .first_id = node_->ReserveIds(parts)};
      batch = internal::RouteLearningRate(t->info.id, 0.25f, shards, stamp, r.state);
    } else {
      // 1: barrier (coordinator), 2: finish to the servers, 3: finish to the coordinator.
      const wire::Kind kind = which == 1 ? wire::BARRIER : wire::FINISH;
      const bool to_servers = which == 2;
      const int n = to_servers ? node_->num_servers() : 1;
      r.what = which == 1 ? "barrier" : "finish";
      r.state = std::make_shared<RequestState>(RequestLabel{r.what, "", 0, 0, 1},
                                               deadline + options_.deadline_grace, n, false,
                                               nullptr, *env_);
      const internal::Stamp stamp{.sender = node_->node_id(),
                                  .clock = clock_value_,
                                  .timeout_ms = TimeoutMs(deadline),
                                  .first_id = node_->ReserveIds(n)};
      batch = internal::RouteControl(kind, to_servers ? n : 0, stamp, r.state);
    }
    Post(std::move(r), std::move(batch));
  }

  // ------------------------------------------------------------------ answers

  // Delivers `m` from `peer` and notes which part it completes, if any (see PartModel).
  void Deliver(PeerId peer, Message m) {
    Message copy = m;
    if (!t_->Deliver(peer, std::move(m)).ok()) return;
    Handled(peer, std::move(copy));
  }

  // `m` reached the worker's handler from `peer`.
  void Handled(PeerId peer, Message m) {
    const wire::Kind kind = m.header.kind();
    if (peer == kCoordinator &&
        (kind == wire::JOIN_REPLY || kind == wire::START || kind == wire::SHUTDOWN ||
         kind == wire::HEARTBEAT || kind == wire::MEMBERSHIP)) {
      return;  // the coordinator's control messages never answer a request
    }
    auto it = parts_.find(m.header.request_id());
    if (it == parts_.end() || it->second.taker.has_value() || PartPeer(it->second) != peer) {
      return;
    }
    it->second.taker = std::move(m);
  }

  // The right answer to `request` (a message the worker sent to `shard`, -1: the
  // coordinator).
  Message RightAnswer(const Message& request) {
    const wire::Header& h = request.header;
    wire::Kind kind = wire::PUSH_REPLY;
    switch (h.kind()) {
      case wire::PUSH:
        kind = h.pull_after() ? wire::PULL_REPLY : wire::PUSH_REPLY;
        break;
      case wire::PULL:
      case wire::PULL_SPARSE:
        kind = wire::PULL_REPLY;
        break;
      case wire::ASSIGN:
        kind = wire::ASSIGN_REPLY;
        break;
      case wire::SET_LEARNING_RATE:
        kind = wire::SET_LEARNING_RATE_REPLY;
        break;
      case wire::BARRIER:
        kind = wire::BARRIER_RELEASE;
        break;
      case wire::FINISH:
        kind = wire::FINISH;
        break;
      default:
        break;
    }
    Message m;
    m.header = internal::ReplyHeader(h, kind, 100);
    if (kind == wire::PULL_REPLY) {
      uint64_t n = h.length();
      if (h.kind() == wire::PULL_SPARSE) {
        auto it = parts_.find(h.request_id());
        n = it == parts_.end() ? 0 : it->second.length;  // keys x row width
      }
      m.header.set_length(n);
      Buffer values = Buffer::Allocate(n);
      for (float& v : values.span()) v = NextValue();
      m.payloads.push_back(std::move(values));
      if (h.pull_after()) {
        for (int w = 0; w < kWorkers; ++w) m.header.add_clocks(clock_value_);
      }
    }
    return m;
  }

  void Answer(ByteReader& in) {
    const uint16_t which = in.U16();
    const uint8_t change = in.U8();
    std::vector<std::size_t> candidates;
    for (std::size_t i = 0; i < outgoing_.size(); ++i) {
      if ((change & kAnyMessage) || !outgoing_[i].answered) candidates.push_back(i);
    }
    if (candidates.empty()) return;
    Outgoing& o = outgoing_[candidates[which % candidates.size()]];
    o.answered = true;
    Message m = RightAnswer(o.message);
    PeerId peer = o.to;
    if (change & kOtherPeer) {
      const PeerId peers[] = {kCoordinator, ServerPeer(0), ServerPeer(1), kStranger, 3};
      peer = peers[in.Pick(std::size(peers))];
    }
    if (change & kOtherKind) {
      m.header.set_kind(kReplyKinds[in.Pick(std::size(kReplyKinds))]);
      if (!CarriesValues(m.header.kind())) {
        m.payloads.clear();
      } else if (m.payloads.empty()) {
        m.payloads.push_back(Buffer::Zeros(m.header.length()));
      }
    }
    if (change & kErrorStatus) {
      m.header.mutable_status()->set_code(in.U8() % 18);
      m.header.mutable_status()->set_message("refused by the fuzzer");
    }
    if (change & kOtherLength) {
      const uint64_t n = in.U8() % 16;
      m.header.set_length(n);
      if (!m.payloads.empty()) m.payloads[0] = Buffer::Zeros(n);
    }
    if (change & kOtherId) {
      const uint8_t id = in.U8();
      m.header.set_request_id(id < 128 ? m.header.request_id() + (id % 8) - 4
                                       : (id < 250 ? id % 64 : in.U64()));
    }
    if (change & kOtherFields) {
      m.header.set_offset(in.U8() < 128 ? in.U8() : in.U64());
      m.header.clear_clocks();
      for (int i = in.U8() % 6; i > 0; --i) {
        const uint8_t c = in.U8();
        m.header.add_clocks(c < 200 ? c % 8 : kSpecialClocks[c % std::size(kSpecialClocks)]);
      }
      m.header.set_dropped(in.Bool());
      m.header.set_refresh(in.Bool());
      m.header.set_version(in.U8());
      m.header.set_clock(static_cast<int8_t>(in.U8()));
    }
    if ((change & kRawBits) && !m.payloads.empty()) {
      for (float& v : m.payloads[0].span()) {
        const uint32_t bits = in.U32();
        std::memcpy(&v, &bits, sizeof(v));
      }
    }
    if (verbose_) {
      std::fprintf(stderr, "  answer %s from peer %llx\n",
                   internal::Describe(m.header).c_str(),
                   static_cast<unsigned long long>(peer));
    }
    Deliver(peer, std::move(m));
  }

  void AnswerAll() {
    for (std::size_t i = 0; i < outgoing_.size(); ++i) {
      if (outgoing_[i].answered) continue;
      outgoing_[i].answered = true;
      Deliver(outgoing_[i].to, RightAnswer(outgoing_[i].message));
    }
  }

  void CoordinatorMessage(ByteReader& in) {
    Message m;
    const std::size_t connections = t_->connections().size();
    int restarted = -1;
    switch (in.Pick(8)) {
      case 0: {
        // A server declared dead, or restarted (at its address or another one).
        m.header.set_kind(wire::MEMBERSHIP);
        wire::Membership* mb = m.header.mutable_membership();
        mb->set_role(in.Bool() ? wire::SERVER : wire::WORKER);
        mb->set_rank(static_cast<int8_t>(in.U8()) % 3);
        mb->set_node_id(100 + in.U8() % 4);
        mb->set_state(static_cast<wire::Membership::State>(in.Pick(3)));
        const uint8_t e = in.U8() % 4;
        mb->set_endpoint(e < 2 ? "fake://server-" + std::to_string(e)
                               : "fake://server-" + std::to_string(e - 2) + "-restarted");
        mb->set_clock(in.U8());
        restarted = mb->rank();
        break;
      }
      case 1:
        m.header.set_kind(wire::HEARTBEAT);
        break;
      case 2:
        m.header.set_kind(wire::SHUTDOWN);
        m.header.mutable_status()->set_code(in.U8() % 18);
        m.header.mutable_status()->set_message("job over");
        break;
      case 3:
        m = start_message_;  // the same START again
        break;
      case 4: {
        // Another START: other counts and server ranks.
        m = StartMessage();
        wire::Start* s = m.header.mutable_start();
        s->set_num_servers(static_cast<int8_t>(in.U8()) % 4);
        for (wire::Node& n : *s->mutable_nodes()) n.set_rank(static_cast<int8_t>(in.U8()) % 4);
        break;
      }
      case 5:
        m.header.set_kind(wire::JOIN_REPLY);
        m.header.mutable_join_reply()->set_node_id(in.U8());
        m.header.mutable_join_reply()->set_rank(static_cast<int8_t>(in.U8()));
        if (in.Bool()) m.header.mutable_status()->set_code(in.U8() % 18);
        break;
      case 6:
        // A barrier's release for any request id (a barrier's, a server's part, nothing).
        m.header.set_kind(in.Bool() ? wire::BARRIER_RELEASE : wire::FINISH);
        m.header.set_request_id(in.U8() % 64);
        if (in.Bool()) m.header.mutable_status()->set_code(in.U8() % 18);
        break;
      default: {
        // A server's answer on the coordinator's connection.
        m.header.set_kind(kReplyKinds[in.Pick(std::size(kReplyKinds))]);
        m.header.set_request_id(in.U8() % 64);
        m.header.set_length(in.U8() % 8);
        if (CarriesValues(m.header.kind())) m.payloads.push_back(Buffer::Zeros(m.header.length()));
      }
    }
    if (verbose_) std::fprintf(stderr, "  coordinator: %s\n", internal::Describe(m.header).c_str());
    Deliver(kCoordinator, std::move(m));
    // A restarted server at another address: the worker connected to it.
    const std::vector<std::string> conns = t_->connections();
    if (conns.size() > connections) {
      Require(conns.size() == connections + 1 && restarted >= 0 && restarted < num_servers_,
              "the worker connects only to a restarted server of the job");
      shard_peer_[restarted] = conns.size() - 1;
    }
  }

  void RawFrames(ByteReader& in) {
    PeerId peer = kStranger;
    switch (in.Pick(4)) {
      case 0:
        peer = kCoordinator;
        break;
      case 1:
      case 2:
        peer = ServerPeer(in.Pick(2));
        break;
      default:
        break;
    }
    std::vector<std::string> frames(in.Pick(5));
    for (std::string& f : frames) f = in.Frame();
    // What the worker's handler gets when the frames decode.
    std::vector<internal::RawFrame> raw;
    for (const std::string& f : frames) raw.push_back({nullptr, f.data(), f.size()});
    absl::StatusOr<Message> decoded = internal::Decode(std::move(raw));
    std::optional<Message> copy;
    if (decoded.ok()) {
      // Its payloads point into `frames` when aligned: copy them before the strings go.
      copy.emplace();
      copy->header = decoded->header;
      for (const Buffer& p : decoded->payloads) copy->payloads.push_back(Buffer::CopyOf(p.span()));
    }
    const bool handled = t_->DeliverFrames(peer, std::move(frames)).ok();
    Require(handled == decoded.ok(), "the transport decodes as Decode does");
    if (handled) Handled(peer, *std::move(copy));
  }

  // ------------------------------------------------------------------ checks

  struct Outgoing {
    PeerId to = 0;
    Message message;
    bool answered = false;
  };

  void CheckSent() {
    const std::vector<std::string> conns = t_->connections();
    for (FakeTransport::Sent& s : t_->TakeSent()) {
      const wire::Header& h = s.message.header;
      const wire::Kind kind = h.kind();
      if (verbose_) {
        std::fprintf(stderr, "  sent to %llx: %s\n", static_cast<unsigned long long>(s.to),
                     internal::Describe(h).c_str());
      }
      // Every message decodes.
      std::vector<std::string> frames{internal::EncodeHeader(s.message)};
      for (const Buffer& p : s.message.payloads) {
        frames.emplace_back(reinterpret_cast<const char*>(p.data()), p.size_bytes());
      }
      std::vector<internal::RawFrame> raw;
      for (const std::string& f : frames) raw.push_back({nullptr, f.data(), f.size()});
      absl::StatusOr<Message> decoded = internal::Decode(std::move(raw));
      if (!decoded.ok()) std::fprintf(stderr, "%s\n", decoded.status().ToString().c_str());
      Require(decoded.ok(), "every message the worker sends decodes");
      Require(kind == wire::JOIN || h.sender() == kNodeId,
              "every message after the JOIN carries the worker's node id");

      if (s.to == kCoordinator) {
        Require(kind == wire::HEARTBEAT || kind == wire::BARRIER || kind == wire::FINISH ||
                    kind == wire::JOIN || kind == wire::FAILED,
                "the worker sends the coordinator only JOIN, HEARTBEAT, BARRIER, FINISH or "
                "FAILED");
        if (kind == wire::FAILED) {
          Require(
              !node_->EndStatus().ok() && h.status().code() != 0 && !h.status().message().empty(),
              "a worker says FAILED, with why, only as it ends");
          continue;
        }
      } else {
        Require(kind == wire::PUSH || kind == wire::PULL || kind == wire::CLOCK ||
                    kind == wire::ASSIGN || kind == wire::SET_LEARNING_RATE ||
                    kind == wire::FINISH || kind == wire::PUSH_SPARSE ||
                    kind == wire::PULL_SPARSE,
                "the worker sends servers only requests and clocks");
        Require(h.token_hi() == kTokenHi && h.token_lo() == kTokenLo,
                "a message to a server carries the worker's credential");
        Require(s.to < conns.size() && conns[s.to].rfind("fake://server-", 0) == 0,
                "messages to servers go to connections made to servers");
      }
      if (kind == wire::HEARTBEAT || kind == wire::JOIN) continue;
      if (kind == wire::CLOCK) {
        Require(h.request_id() == 0 && h.clock() > 0, "a CLOCK is a positive clock, unanswered");
        Require(s.to != kCoordinator, "CLOCK goes to servers");
        continue;
      }
      // A request's message: routed by the harness, sent where it was routed.
      auto it = parts_.find(h.request_id());
      Require(it != parts_.end(), "every request message the worker sends was routed");
      const PartModel& p = it->second;
      Require(s.to == PartPeer(p), "a request's message goes to the shard it was routed to");
      Require(kind == p.kind && h.table() == p.sent.table() && h.offset() == p.sent.offset() &&
                  h.length() == p.sent.length(),
              "a request's message is sent as it was routed");
      outgoing_.push_back({s.to, std::move(s.message), false});
    }
  }

  // Checks the requests that completed since the last look. After a tick: every request
  // past its deadline is complete. `again`: also the ones checked before (a request
  // completes once: the same status, and its memory unchanged).
  void CheckRequests(bool ticked, bool again = false) {
    for (RequestModel& r : requests_) {
      if (r.checked && !again) continue;
      if (!r.state->done()) {
        Require(!r.checked, "a complete request stays complete");
        Require(!ticked || r.state->deadline() > env_->Now(),
                "the tick completes every request past its deadline");
        continue;
      }
      const absl::Status s = r.state->Wait(absl::InfinitePast());
      if (r.checked) {
        Require(s.code() == r.status.code(), "a request completes once, with one status");
        const std::vector<float> now = Memory(r);
        Require(now.size() == r.result.size() &&
                    SameBytes(now.data(), r.result.data(), now.size()),
                "a complete request's memory does not change");
        continue;
      }
      r.checked = true;
      r.status = s;
      r.result = Memory(r);
      if (verbose_) std::fprintf(stderr, "  %s: %s\n", r.what, s.ToString().c_str());
      if (s.ok()) CheckOk(r);
    }
  }

  std::vector<float> Memory(const RequestModel& r) const {
    if (r.out != nullptr) return *r.out;
    if (r.gathered != nullptr) return {r.gathered->data(), r.gathered->data() + r.gathered->size()};
    return {};
  }

  // `r` completed OK: each part was answered OK by its peer; a read holds its answers.
  void CheckOk(const RequestModel& r) {
    for (std::size_t g = 0; g < r.ids.size(); ++g) {
      const PartModel& p = parts_.at(r.ids[g]);
      Require(p.taker.has_value(), "a request completes OK only once every part is answered");
      const Message& a = *p.taker;
      Require(internal::StatusOf(a.header).ok(),
              "a request completes OK only when every answer is OK");
      if (!p.reads) continue;
      Require(a.header.kind() == wire::PULL_REPLY,
              "a read completes OK only when every part was answered with values");
      Require(a.payloads.size() == 1 && a.payloads[0].size() == p.length,
              "a read completes OK only with exactly the values asked for");
      const float* got = a.payloads[0].data();
      if (r.width > 0) {
        // A sparse pull: each caller key's row is its row in its shard's answer.
        for (std::size_t i = 0; i < r.position.size(); ++i) {
          const uint64_t pos = r.position[i];
          if (pos < r.group_first[g] || pos >= r.group_first[g] + r.group_count[g]) continue;
          Require(SameBytes(r.out->data() + i * r.width,
                            got + (pos - r.group_first[g]) * r.width, r.width),
                  "a sparse pull's rows are the bytes the servers sent");
        }
        continue;
      }
      const std::vector<float>& mem = r.result;
      Require(p.at + p.length <= mem.size(), "a read's part lies within its request");
      Require(SameBytes(mem.data() + p.at, got, p.length),
              "a read's memory holds exactly the bytes the servers sent");
    }
  }

  const std::shared_ptr<kairos::testing::ManualEnv> env_;
  const bool verbose_ = std::getenv("KAIROS_FUZZ_VERBOSE") != nullptr;
  uint8_t shape_ = 0;
  int num_servers_ = 1;
  JobConfig job_;
  WorkerOptions options_;
  bool bad_start_ = false;
  bool started_ = false;
  Message start_message_;
  std::vector<PeerId> shard_peer_;
  int64_t clock_value_ = 0;
  uint64_t values_ = 0;

  // Declared before node_: the callers' memory outlives the node.
  std::vector<RequestModel> requests_;
  std::map<uint64_t, PartModel> parts_;
  std::vector<Outgoing> outgoing_;
  FakeTransport* t_ = nullptr;  // owned by node_
  std::unique_ptr<WorkerNode> node_;
};

void Run(const uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  Harness h;
  h.Start(in);
  for (int i = 0; i < kMaxOps && !in.empty(); ++i) h.Step(in);
  h.Finish();
}

// ------------------------------------------------------------------------ seed corpus
// Writes operations in the layout Harness reads.
class Script {
 public:
  explicit Script(uint8_t shape, std::vector<uint8_t> bad_start = {}) {
    w_.U8(shape);
    for (uint8_t b : bad_start) w_.U8(b);
  }

  // kind: 0 push, 1 pull, 2 assign, 3 push+pull; +4: a gathered pull. deadline: 10 ms
  // steps, 0: the default.
  Script& Range(uint8_t kind, uint8_t table, uint8_t offset, uint8_t length,
                uint8_t deadline = 0) {
    w_.U8(kRange).U8(kind).U8(table).U8(offset).U8(length).U8(deadline);
    return *this;
  }
  Script& Sparse(bool push, std::vector<uint8_t> keys, uint8_t deadline = 0) {
    w_.U8(kSparse).U8(push ? 1 : 0).U8(static_cast<uint8_t>(keys.size()));
    for (uint8_t k : keys) w_.U8(k);
    w_.U8(deadline);
    return *this;
  }
  // 0 clock, 1 barrier, 2 finish (servers), 3 finish (coordinator), 4 learning rate of
  // `table`.
  Script& Control(uint8_t which, uint8_t deadline = 0, uint8_t table = 0) {
    w_.U8(kControl).U8(which).U8(deadline).U8(table);
    return *this;
  }
  Script& Answer(uint16_t which, uint8_t change = 0, std::vector<uint8_t> fields = {}) {
    w_.U8(kAnswer).U16(which).U8(change);
    for (uint8_t f : fields) w_.U8(f);
    return *this;
  }
  Script& AnswerAll() {
    w_.U8(kAnswerAll);
    return *this;
  }
  Script& Coordinator(uint8_t which, std::vector<uint8_t> fields = {}) {
    w_.U8(kCoordinatorOp).U8(which);
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
  Script& RefusedPeer(uint8_t which) {
    w_.U8(kRefusedPeer).U8(which);
    return *this;
  }
  const std::string& data() const { return w_.data(); }

 private:
  ByteWriter w_;
};

Seeds MakeSeeds() {
  Seeds s;
  // Every shape of a good START: pushes, pulls (both kinds), an assign, a push+pull, a
  // clock and a learning rate change, all answered; then a finish, answered.
  for (uint8_t shape : {0, 1, 2 | 32, 3 | 96, 4 | 1, 8 | 3 | 64, 16 | 1 | 32}) {
    Script sc(shape);
    sc.Range(1, 0, 0, 10).Range(5, 0, 2, 7).Range(0, 0, 0, 10).Range(2, 1, 0, 3);
    sc.Range(3, 0, 1, 4).Control(0).Control(4, 0, 1);
    if (shape & kSparseTable) sc.Sparse(true, {1, 2, 1}).Sparse(false, {3, 1, 3, 5});
    sc.AnswerAll().Control(2).AnswerAll().Control(3).AnswerAll().Tick(50);
    s.push_back({"shape-" + std::to_string(shape), sc.data()});
  }
  // Answers one by one, some wrong: another peer, another kind, an error, other lengths,
  // other ids, other fields.
  s.push_back({"wrong-answers",
               Script(1 | 2)
                   .Range(1, 0, 0, 10)
                   .Range(1, 1, 0, 3)
                   .Range(3, 0, 0, 4)
                   .Sparse(false, {1, 2, 3})
                   .Answer(0, kOtherPeer, {1})
                   .Answer(0, kOtherKind, {0})
                   .Answer(0, kErrorStatus, {5})
                   .Answer(0, kOtherLength, {3})
                   .Answer(0, kOtherId, {129})
                   .Answer(0, kOtherFields, {7, 3, 3, 1, 250, 2, 1, 0, 9, 1})
                   .Answer(0, kErrorStatus, {0})
                   .Answer(1, kAnyMessage)
                   .AnswerAll()
                   .data()});
  // Deadlines expire with requests waiting in flow control and at the servers.
  s.push_back({"deadlines",
               Script(1 | 16)
                   .Range(1, 0, 0, 10, 5)
                   .Range(0, 0, 0, 10, 20)
                   .Control(1, 3)
                   .Answer(0)
                   .Tick(60)
                   .Tick(200)
                   .AnswerAll()
                   .Tick(0x8000 | 30)
                   .data()});
  // Server restarts: a server declared dead, then back at another address; every request
  // it had not answered goes to it again.
  s.push_back({"server-restart",
               Script(1 | 4 | 8)
                   .Range(1, 0, 0, 10)
                   .Range(0, 0, 0, 10)
                   .Control(0)
                   .Coordinator(0, {1, 1, 1, 1, 3, 0})
                   .Coordinator(0, {1, 1, 1, 0, 3, 0})
                   .AnswerAll()
                   .Coordinator(0, {1, 0, 0, 0, 0, 0})
                   .data()});
  // The coordinator: heartbeats, a second START and JOIN_REPLY, releases, then SHUTDOWN.
  s.push_back({"coordinator",
               Script(0)
                   .Control(1)
                   .Coordinator(1)
                   .Coordinator(3)
                   .Coordinator(4, {2, 0, 1, 2, 3, 0})
                   .Coordinator(5, {3, 1, 0})
                   .Coordinator(6, {1, 3, 0})
                   .Coordinator(7, {1, 3, 2})
                   .Range(1, 0, 0, 5)
                   .Coordinator(2, {14})
                   .Range(1, 0, 0, 5)
                   .data()});
  // The coordinator falls silent; a handshake is refused.
  s.push_back({"silent-coordinator", Script(0).Range(1, 0, 0, 5).Tick(0x8000 | 25).data()});
  s.push_back({"refused-handshake", Script(1).Range(1, 0, 0, 10).RefusedPeer(0xf0).data()});
  // Raw frames from each peer.
  s.push_back({"raw-frames",
               Script(1)
                   .Range(1, 0, 0, 10)
                   .Raw(0, {"\xff\xff junk", "abc"})
                   .Raw(1, {""})
                   .Raw(3, {"\x08\x01", "abcd"})
                   .AnswerAll()
                   .data()});
  // Refused calls: out of range, the sparse table as a dense one, no keys.
  s.push_back({"refused-calls",
               Script(2)
                   .Range(1, 0, 5, 6)
                   .Range(1, 0, 0, 0)
                   .Range(1, 3, 0, 1)
                   .Sparse(true, {})
                   .AnswerAll()
                   .data()});
  // Each way a START can be wrong.
  const std::vector<std::pair<std::string, std::vector<uint8_t>>> bad = {
      {"no-tables", {kNoTables}},
      {"chunk-elements-0", {kChunkElements, 0}},
      {"chunk-elements-huge", {kChunkElements, 6}},
      {"dense-size-0", {kDenseSize, 1, 0}},
      {"dense-size-huge", {kDenseSize, 0, 3}},
      {"row-width-0", {kRowWidth, 1}},
      {"shard-twice", {kShardTwice}},
      {"shard-missing", {kShardMissing}},
      {"shard-rank", {kShardRank, 5, 0}},
      {"counts", {kCounts, 0, 3}},
  };
  for (const auto& [name, fields] : bad) {
    s.push_back({"bad-start-" + name,
                 Script(kBadStart | 1 | 2, fields).Range(1, 0, 0, 10).AnswerAll().data()});
  }
  return s;
}

}  // namespace
}  // namespace kairos::fuzz

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  kairos::fuzz::MaybeWriteSeeds(argc, argv, kairos::fuzz::MakeSeeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  kairos::fuzz::Run(data, size);
  return 0;
}
