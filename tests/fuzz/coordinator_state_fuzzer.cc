// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A coordinator resuming a job from a state file of arbitrary content
// (src/coordinator/coordinator_resume.cc; docs/durability.md, "Coordinator restarts"), over
// the FakeTransport on a kairos::testing::ManualEnv. The state is read like any input: it may be
// another job's, or damaged in ways its checksum cannot see.
//
// Input: a byte of the coordinator's own counts (1 or 2 servers, 1 to 3 workers), then the
// body of the state's record, a wire::CoordinatorState in protobuf's encoding (an input
// that does not parse as one is skipped: the record's checksum and the protobuf parser are
// the state file's reader, which checkpoint_fuzzer and the unit tests cover). The harness
// writes it with WriteCoordinatorState, so it reaches Restore whole.
//
// Besides no crash: Create either fails with DataLoss or FailedPrecondition (the state is
// refused, naming the file), or resumes a job running or starting, whose counts agree (each
// worker rank counted once: active, finished or dead; no more ready or dead servers than
// the job has); then every node the state names asks to be taken back (a resume JOIN with
// its incarnation, from a connection of its own), and each JOIN gets exactly one JOIN_REPLY,
// an admission naming that node or a refusal that says why; past every timeout the job ends.

#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "coordinator/state_file.h"
#include "fakes/fake_transport.h"
#include "google/protobuf/stubs/logging.h"
#include "kairos/coordinator.h"
#include "kairos/job.h"
#include "kairos/options.h"
#include "kairos/testing/manual_env.h"
#include "tests/fuzz/fuzz_input.h"
#include "transport/node_bringup.h"
#include "wire/convert.h"
#include "wire/message.h"

namespace kairos::fuzz {
namespace {

using internal::FakeTransport;
using internal::Message;

// One directory for the process, its state file rewritten by every input; removed at exit.
struct TempDir {
  TempDir() {
    path = "/tmp/kairos-coordinator-state-fuzzer-XXXXXX";
    Require(::mkdtemp(path.data()) != nullptr, "a temporary directory");
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string path;
};

const std::string& StateDir() {
  static const TempDir dir;
  return dir.path;
}

void Run(const uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  const uint8_t counts = in.U8();
  wire::CoordinatorState state;
  if (!state.ParseFromString(in.Bytes(in.remaining()))) return;
  Require(internal::WriteCoordinatorState(Env::Default(), StateDir(), state).ok(), "the state is written");

  CoordinatorOptions o;
  o.listen = "fake://coordinator";
  o.num_servers = 1 + (counts & 1);
  o.num_workers = 1 + (counts >> 1) % 3;
  o.state_dir = StateDir();
  o.heartbeat_timeout = absl::Seconds(2);
  o.log_level = LogLevel::kOff;
  auto env = std::make_shared<kairos::testing::ManualEnv>(absl::UnixEpoch() + absl::Hours(24));
  o.env = env;
  auto owned = std::make_unique<FakeTransport>("coordinator");
  FakeTransport* t = owned.get();
  o.transport_factory = internal::OneTransportFactory(std::move(owned));
  absl::StatusOr<std::unique_ptr<Coordinator>> c = Coordinator::Create(o);
  if (!c.ok()) {
    const absl::StatusCode code = c.status().code();
    Require(code == absl::StatusCode::kDataLoss || code == absl::StatusCode::kFailedPrecondition,
            "a state refused is DataLoss or FailedPrecondition");
    Require(!c.status().message().empty(), "a refusal says why");
    return;
  }
  const CoordinatorStats s = (*c)->stats();
  Require(s.phase == JobPhase::kJoining || s.phase == JobPhase::kStarting ||
              s.phase == JobPhase::kRunning,
          "a coordinator resumes a job that runs, or starts a new one");
  if (s.phase != JobPhase::kJoining) {
    Require(s.workers_active + s.workers_finished + s.workers_dead == o.num_workers,
            "each worker rank of a resumed job is counted once");
    Require(s.servers_ready + s.servers_dead <= o.num_servers,
            "no more ready or dead servers than the job has");
  }
  uint64_t peer = 0;
  for (const wire::StateNode& n : state.nodes()) {
    if (peer == 16) break;
    Message join;
    join.header.set_kind(wire::JOIN);
    join.header.set_request_id(1000 + peer);
    join.header.mutable_join()->set_role(n.role());
    join.header.mutable_join()->set_incarnation(n.incarnation());
    join.header.mutable_join()->set_resume_node_id(n.node_id());
    const internal::PeerId from = FakeTransport::IncomingPeer(peer++);
    if (!t->Deliver(from, std::move(join)).ok()) continue;
    int replies = 0;
    for (const FakeTransport::Sent& sent : t->TakeSent()) {
      if (sent.to != from || sent.message.header.kind() != wire::JOIN_REPLY) continue;
      ++replies;
      const absl::Status status = internal::StatusOf(sent.message.header);
      Require(status.ok() ? sent.message.header.join_reply().node_id() == n.node_id()
                          : !status.message().empty(),
              "a resume is admitted as the node it names, or refused saying why");
    }
    // A node id of a job that is not resumed (the state refused as ended, or none) is
    // answered all the same: a refusal.
    Require(replies == 1, "every resume JOIN gets one JOIN_REPLY");
  }
  // Past every timeout the job ends, so the destructor has nothing to wait for.
  for (int i = 0; i < 3; ++i) {
    env->Advance(absl::Hours(1));
    t->Tick(env->Now());
  }
  Require((*c)->stats().phase == JobPhase::kDone, "past every timeout the job has ended");
}

wire::CoordinatorState Valid(int servers, int workers, int phase) {
  wire::CoordinatorState s;
  s.set_job_id(42);
  JobConfig job;
  job.policy = "bsp";
  job.chunk_elements = 4;
  job.tables.push_back({"w", 8, Initializer::Zeros(), {"sgd", 0.5f}});
  internal::ToWire(job, s.mutable_job());
  s.set_num_servers(servers);
  s.set_num_workers(workers);
  s.set_endpoint("fake://coordinator");
  s.set_phase(phase);
  uint32_t id = 1;
  for (int r = 0; r < servers; ++r) {
    wire::StateNode* n = s.add_nodes();
    n->set_node_id(id++);
    n->set_role(wire::SERVER);
    n->set_rank(r);
    n->set_endpoint("fake://server");
    n->set_incarnation(7);
    n->set_state(1);  // ready
    n->set_current(true);
  }
  for (int r = 0; r < workers; ++r) {
    wire::StateNode* n = s.add_nodes();
    n->set_node_id(id++);
    n->set_role(wire::WORKER);
    n->set_rank(r);
    n->set_token_hi(5);
    n->set_token_lo(static_cast<uint64_t>(r));
    n->set_incarnation(9);
    n->set_state(r == 0 ? 2 : 1);  // worker 0 finished
    n->set_current(true);
    n->set_released_barrier(3);
  }
  s.set_next_node_id(id);
  return s;
}

Seeds MakeSeeds() {
  Seeds seeds;
  const auto seed = [&](const std::string& name, uint8_t counts, const wire::CoordinatorState& s) {
    seeds.push_back({name, ByteWriter().U8(counts).Bytes(s.SerializeAsString()).data()});
  };
  seed("running-1x1", 0, Valid(1, 1, 2));
  seed("running-2x3", 5, Valid(2, 3, 2));
  seed("starting-1x2", 2, Valid(1, 2, 1));
  seed("other-shape", 0, Valid(2, 3, 2));  // the coordinator has 1 x 1
  seed("ended", 0, Valid(1, 1, 3));
  wire::CoordinatorState dup = Valid(1, 2, 2);
  dup.mutable_nodes(2)->set_rank(0);  // two current nodes for worker 0
  seed("two-holders", 2, dup);
  return seeds;
}

}  // namespace
}  // namespace kairos::fuzz

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  kairos::fuzz::MaybeWriteSeeds(argc, argv, kairos::fuzz::MakeSeeds);
  // Protobuf logs each string field with invalid UTF-8 to stderr, thousands of lines a
  // minute; such a state does not parse, and is skipped all the same.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  kairos::fuzz::Run(data, size);
  return 0;
}
