// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// libFuzzer target: the parsers of the strings a job description is written in. A job's
// policy, optimizers and schedules come from command lines and job files, and from the
// first worker's JOIN over the network; listening addresses come from flags and the
// environment. Every one of them is input.
//
// Input: a selector byte, then the text (any bytes, NULs included).
//   0  ParsePolicySpec: an accepted spec is valid (ValidatePolicySpec), its canonical
//      string (ToString) parses back to the same spec and is its own canonical string, and
//      the policy objects it names are built for 0 to 7 workers
//   1  ParseOptimizerSpec: ToString parses back to the very same values (bit for bit), is
//      its own canonical form, and is what CanonicalOptimizer gives for the text
//   2  ParseSchedule: ToString parses back to the same schedule, and ScheduleFactor is in
//      [0, 1] at every clock (negative, zero, the schedule's own steps, the largest)
//   3  ParsePortRange: a range read has ports 1 <= first <= last <= 65535; the wildcard test
//      and WithHost run on the text
//   4  ParseHostPort: an address read has a port in [0, 65535]
//   5  ReadLaunchEnvironment (src/process/launch_env.h) of an environment the input sets (the
//      variables kairos-launch, mpirun and srun set, in any number, with any values): a
//      refusal is InvalidArgument; an accepted one has its rank inside its size, and a
//      rank-launched one places rank 0 as the coordinator, ranks 1..S as the servers and the
//      others as workers ranked from 0
//   6  ParseRendezvous of a rendezvous file (written to a shared directory, so input): a
//      refusal is InvalidArgument; the file RendezvousText writes reads back its endpoint
// Besides these, no crash and no sanitizer report; an error is InvalidArgument.
//
// `spec_fuzzer --write-seeds=DIR` writes the seed corpus (tests/fuzz/corpus/spec).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kairos/run.h"
#include "metrics/exporter.h"
#include "policy/optimizer_spec.h"
#include "policy/policy.h"
#include "process/launch_env.h"
#include "tests/fuzz/fuzz_input.h"
#include "transport/endpoint.h"

namespace kairos::fuzz {
namespace {

void RequireRefusal(const absl::Status& s) {
  Require(absl::IsInvalidArgument(s), "a refused text is InvalidArgument");
  Require(!s.message().empty(), "a refusal says why");
}

void Policy(const std::string& text) {
  absl::StatusOr<policy::PolicySpec> s = policy::ParsePolicySpec(text);
  if (!s.ok()) return RequireRefusal(s.status());
  Require(policy::ValidatePolicySpec(*s).ok(), "an accepted policy is valid");
  const std::string canonical = policy::ToString(*s);
  absl::StatusOr<policy::PolicySpec> again = policy::ParsePolicySpec(canonical);
  Require(again.ok() && *again == *s, "the canonical policy string parses back the same");
  Require(policy::ToString(*again) == canonical, "the canonical string is its own canonical");
  for (int workers = 0; workers < 8; ++workers) {
    Require(policy::MakeGate(*s, workers) != nullptr, "a gate");
    Require(policy::MakeAggregation(*s, workers) != nullptr, "an aggregation");
    Require(policy::MakeWeighting(*s, workers) != nullptr, "a weighting");
    Require(policy::MakeStragglerPolicy(*s, workers) != nullptr, "a straggler policy");
  }
}

bool SameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

void Optimizer(const std::string& text) {
  absl::StatusOr<policy::OptimizerSpec> s = policy::ParseOptimizerSpec(text);
  if (!s.ok()) return RequireRefusal(s.status());
  Require(s->def != nullptr && s->values.size() == s->def->params.size(),
          "an accepted optimizer has a value per parameter");
  for (const double v : s->values) Require(std::isfinite(v), "finite parameter values");
  const std::string canonical = policy::ToString(*s);
  absl::StatusOr<policy::OptimizerSpec> again = policy::ParseOptimizerSpec(canonical);
  Require(again.ok() && again->def == s->def && SameBits(again->values, s->values),
          "the canonical optimizer string parses back to the same values");
  Require(policy::ToString(*again) == canonical, "the canonical string is its own canonical");
  Require(policy::CanonicalOptimizer(text) == canonical, "CanonicalOptimizer agrees");
}

void Schedule(const std::string& text, int64_t extra_t) {
  absl::StatusOr<policy::ScheduleSpec> s = policy::ParseSchedule(text);
  if (!s.ok()) return RequireRefusal(s.status());
  const std::string canonical = policy::ToString(*s);
  absl::StatusOr<policy::ScheduleSpec> again = policy::ParseSchedule(canonical);
  Require(again.ok() && *again == *s, "the canonical schedule string parses back the same");
  Require(policy::ToString(*again) == canonical, "the canonical string is its own canonical");
  const int64_t big = std::numeric_limits<int64_t>::max();
  for (const int64_t t : {int64_t{-1}, int64_t{0}, int64_t{1}, s->every, s->steps, s->warmup,
                          s->warmup + 1, s->steps + 1, big - 1, big, extra_t}) {
    const double f = policy::ScheduleFactor(*s, t);
    Require(std::isfinite(f) && f >= 0.0 && f <= 1.0, "the schedule's factor is in [0, 1]");
  }
}

void PortRange(const std::string& text, const std::string& host) {
  absl::StatusOr<std::optional<internal::PortRange>> r = internal::ParsePortRange(text);
  if (!r.ok()) {
    RequireRefusal(r.status());
  } else if (r->has_value()) {
    Require((*r)->first >= 1 && (*r)->first <= (*r)->last && (*r)->last <= 65535,
            "a port range inside 1..65535");
  }
  (void)internal::HasWildcardHost(text);
  const std::string replaced = internal::WithHost(text, host);
  if (host.empty()) Require(replaced == text, "WithHost of no host keeps the endpoint");
}

void HostPort(const std::string& text) {
  absl::StatusOr<internal::HostPort> a = internal::ParseHostPort(text, "fuzz");
  if (!a.ok()) return RequireRefusal(a.status());
  Require(a->port >= 0 && a->port <= 65535, "a port in [0, 65535]");
}

// The variables ReadLaunchEnvironment reads.
constexpr const char* kLaunchVariables[] = {
    "KAIROS_ROLE",          "KAIROS_COORDINATOR",         "KAIROS_RANK",
    "KAIROS_NUM_WORKERS",   "KAIROS_NUM_SERVERS",         "KAIROS_WORLD_RANK",
    "KAIROS_WORLD_SIZE",    "OMPI_COMM_WORLD_RANK",       "OMPI_COMM_WORLD_SIZE",
    "PMI_RANK",             "PMI_SIZE",                   "SLURM_PROCID",
    "SLURM_STEP_NUM_TASKS", "SLURM_STEP_NUM_NODES",       "OMPI_COMM_WORLD_LOCAL_SIZE",
    "MPI_LOCALNRANKS",      "KAIROS_RENDEZVOUS",          "KAIROS_JOB_ID",
    "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE",          "SLURM_JOB_ID",
    "SLURM_STEP_ID",        "TMPDIR",                     "KAIROS_ADVERTISE_HOST",
    "KAIROS_PORT_RANGE",
};

void Launch(ByteReader& in) {
  std::map<std::string, std::string> vars;
  while (!in.empty()) {
    const char* name = kLaunchVariables[in.Pick(std::size(kLaunchVariables))];
    std::string value = in.Frame();
    value = value.substr(0, value.find('\0'));  // an environment value ends at a NUL
    vars[name] = std::move(value);
  }
  const internal::EnvLookup env = [&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  absl::StatusOr<LaunchEnvironment> e = internal::ReadLaunchEnvironment(env, 1000);
  if (!e.ok()) return RequireRefusal(e.status());
  using Role = LaunchEnvironment::Role;
  Require(e->world_size >= 1 && e->world_rank >= 0 && e->world_rank < e->world_size,
          "the rank lies inside the size");
  Require(e->num_servers >= 0 && e->num_workers >= 0, "no negative counts");
  const bool ranked = e->role == Role::kCoordinator || e->role == Role::kServer ||
                      (e->role == Role::kWorker && e->world_size > 1 &&
                       e->source != "kairos-launch" && e->source != "KAIROS_COORDINATOR");
  if (!ranked) return;
  Require(e->num_servers >= 1 && e->num_workers >= 1 &&
              e->world_size == 1 + e->num_servers + e->num_workers,
          "a rank-launched job holds a coordinator, its servers and its workers");
  switch (e->role) {
    case Role::kCoordinator:
      Require(e->world_rank == 0, "rank 0 is the coordinator");
      break;
    case Role::kServer:
      Require(e->world_rank >= 1 && e->world_rank <= e->num_servers, "ranks 1..S serve");
      break;
    case Role::kWorker:
      Require(e->rank == e->world_rank - 1 - e->num_servers && e->rank >= 0 &&
                  e->rank < e->num_workers,
              "the other ranks are the workers, from 0");
      break;
    case Role::kEmbedded:
      break;
  }
}

void Rendezvous(ByteReader& in) {
  const std::string job = in.Frame();
  const std::string endpoint = in.Frame();
  const std::string text = in.Bytes(in.remaining());
  absl::StatusOr<std::optional<std::string>> got = internal::ParseRendezvous(text, job);
  if (!got.ok()) RequireRefusal(got.status());
  if (endpoint.empty() || job.find('\n') != std::string::npos ||
      endpoint.find('\n') != std::string::npos) {
    return;
  }
  absl::StatusOr<std::optional<std::string>> back =
      internal::ParseRendezvous(internal::RendezvousText(job, endpoint), job);
  Require(back.ok() && back->has_value() && **back == endpoint,
          "a rendezvous file written reads back its endpoint");
}

void Run(const uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  const std::size_t which = in.Pick(7);
  if (which == 5) return Launch(in);
  if (which == 6) return Rendezvous(in);
  if (which == 2) {
    const auto t = static_cast<int64_t>(in.U64());
    return Schedule(in.Bytes(in.remaining()), t);
  }
  if (which == 3) {
    const std::string host = in.Frame();
    return PortRange(in.Bytes(in.remaining()), host);
  }
  const std::string text = in.Bytes(in.remaining());
  if (which == 0) return Policy(text);
  if (which == 1) return Optimizer(text);
  HostPort(text);
}

Seeds MakeSeeds() {
  Seeds s;
  const auto add = [&](const std::string& name, uint8_t which, const std::string& text) {
    s.push_back({name, ByteWriter().U8(which).Bytes(text).data()});
  };
  for (const char* p : {"bsp", "asp", "ssp:s=3", "dssp:s=2,r_max=8", "lr_tau", "vsgd",
                        "ps_plus", "saps", "psp:beta=0.5", "gate=ssp:s=1,agg=softsync:n=2",
                        "gate=bsp,agg=round_average"}) {
    add(std::string("policy-") + p, 0, p);
  }
  for (const char* o : {"sgd", "sgd:weight_decay=0.01", "momentum:mu=0.9,nesterov=1", "adam",
                        "adam:beta1=0.8,beta2=0.99,eps=1e-6", "adagrad:lr_decay=0.01",
                        "adamw", "rmsprop"}) {
    add(std::string("optimizer-") + o, 1, o);
  }
  for (const char* sc : {"", "constant", "step:every=500,gamma=0.5", "cosine:steps=1000,min=0.1",
                         "invsqrt:warmup=100", "constant:warmup=10"}) {
    s.push_back({std::string("schedule-") + (*sc != 0 ? sc : "empty"),
                 ByteWriter().U8(2).U64(250).Bytes(sc).data()});
  }
  for (const char* e : {"tcp://0.0.0.0:7000-7099", "tcp://[::]:7000-7001", "tcp://10.0.0.1:*",
                        "ipc:///tmp/x", "tcp://h:9-8"}) {
    s.push_back({std::string("ports-") + std::to_string(s.size()),
                 ByteWriter().U8(3).Frame("10.1.2.3").Bytes(e).data()});
  }
  for (const char* a : {"127.0.0.1:9090", "[::1]:0", "localhost:65535", "host:65536", ":80"}) {
    add(std::string("hostport-") + std::to_string(s.size()), 4, a);
  }
  const auto env = [&](const std::string& name,
                       std::vector<std::pair<int, std::string>> vars) {
    ByteWriter w;
    w.U8(5);
    for (const auto& [index, value] : vars) w.U8(static_cast<uint8_t>(index)).Frame(value);
    s.push_back({"launch-" + name, w.data()});
  };
  // Indices into kLaunchVariables.
  env("kairos-launch", {{0, "worker"}, {1, "tcp://127.0.0.1:5555"}, {2, "1"}, {3, "2"}, {4, "1"}});
  env("mpirun-worker", {{7, "3"}, {8, "4"}, {4, "1"}, {18, "1234"}});
  env("mpirun-coordinator", {{7, "0"}, {8, "4"}, {4, "2"}, {18, "1234"}});
  env("srun-server", {{11, "1"}, {12, "5"}, {20, "77"}, {21, "0"}, {13, "2"}});
  env("world", {{5, "2"}, {6, "3"}, {1, "tcp://10.0.0.1:7000"}, {24, "7000-7010"}});
  env("by-hand", {{1, "tcp://h:1"}, {2, "-1"}});
  s.push_back({"rendezvous", ByteWriter()
                                 .U8(6)
                                 .Frame("1234")
                                 .Frame("tcp://10.0.0.1:7000")
                                 .Bytes("kairos-rendezvous 1\njob 1234\ncoordinator tcp://h:1\n")
                                 .data()});
  return s;
}

}  // namespace
}  // namespace kairos::fuzz

KAIROS_FUZZ_TARGET(kairos::fuzz::Run, kairos::fuzz::MakeSeeds)
