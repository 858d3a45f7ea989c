// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// LocalCluster: every node of a job as objects of this process, each with its own I/O
// thread. Endpoint names carry a per-cluster serial so several clusters never collide.

#include "kairos/local_cluster.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kairos/coordinator.h"
#include "kairos/status.h"
#include "worker/worker_internal.h"

namespace kairos {
namespace {

std::atomic<uint64_t> cluster_serial{0};

// What a cluster takes of the process: the sockets of its shared ZeroMQ context and the
// file descriptors behind them. Every worker connects to every server and to the
// coordinator, every server to the coordinator; the coordinator and the servers listen.
// Over tcp:// and ipc:// each connection and listener is watched by two more sockets (a
// monitor pair), and each connection holds a descriptor at both of its ends (both are in
// this process). Every socket has a descriptor of its own (its mailbox), every node one
// more (its wake-up eventfd).
struct ClusterNeeds {
  int64_t sockets = 0;
  int64_t descriptors = 0;
};

ClusterNeeds NeedsOf(const ClusterOptions& o) {
  const int64_t workers = o.num_workers;
  const int64_t servers = o.num_servers;
  const int64_t connections = workers * (servers + 1) + servers;
  const int64_t listeners = servers + 1;
  const bool watched = o.transport != TransportKind::kInproc;
  ClusterNeeds needs;
  needs.sockets = (watched ? 3 : 1) * (connections + listeners) + 1 + 16;  // + ZAP, slack
  needs.descriptors = needs.sockets + (workers + servers + 1) + (watched ? 2 * connections : 0) +
                      64;  // + ZeroMQ's own, stdio
  return needs;
}

// The cluster's sockets must fit one ZeroMQ context, and its descriptors the process's
// limit: otherwise the cluster fails up front, saying so, rather than at the worker whose
// socket is one too many.
absl::Status CheckNeeds(const ClusterOptions& o, const ClusterNeeds& needs) {
  constexpr int64_t kContextSocketLimit = 65535;  // ZeroMQ's ZMQ_SOCKET_LIMIT
  if (needs.sockets > kContextSocketLimit) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "a cluster of %d workers and %d servers over %s needs about %d sockets; one ZeroMQ "
        "context holds at most %d (run the nodes as several processes: docs/launching.md)",
        o.num_workers, o.num_servers, TransportKindName(o.transport), needs.sockets,
        kContextSocketLimit));
  }
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      static_cast<uint64_t>(needs.descriptors) > limit.rlim_cur) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "a cluster of %d workers and %d servers over %s needs about %d file descriptors; "
        "this process may open %d (raise it with `ulimit -n`, up to %d here)",
        o.num_workers, o.num_servers, TransportKindName(o.transport), needs.descriptors,
        limit.rlim_cur, limit.rlim_max));
  }
  return absl::OkStatus();
}

class LocalClusterImpl final : public LocalCluster {
 public:
  explicit LocalClusterImpl(const ClusterOptions& options) : options_(options) {}

  ~LocalClusterImpl() override {
    Shutdown().IgnoreError();
    if (!ipc_dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(ipc_dir_, ignored);
    }
  }

  absl::Status Init() {
    if (options_.num_servers < 1 || options_.num_workers < 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "a cluster needs at least 1 server and 1 worker (got %d and %d)",
          options_.num_servers, options_.num_workers));
    }
    KAIROS_RETURN_IF_ERROR(ValidateJobConfig(options_.job));
    const ClusterNeeds needs = NeedsOf(options_);
    KAIROS_RETURN_IF_ERROR(CheckNeeds(options_, needs));
    TransportContextOptions context;
    context.max_sockets = static_cast<int>(std::max<int64_t>(1023, needs.sockets));
    context_ = TransportContext::Create(context);
    KAIROS_RETURN_IF_ERROR(StartCoordinator());
    for (int s = 0; s < options_.num_servers; ++s) {
      ServerOptions so = options_.server;
      so.coordinator = coordinator_->endpoint();
      so.listen = Endpoint(absl::StrCat("server-", s));
      so.context = context_;
      if (options_.keys.has_value()) so.keys = options_.keys;
      if (options_.env != nullptr) so.env = options_.env;
      if (options_.transport_factory != nullptr) so.transport_factory = options_.transport_factory;
      KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Create(so));
      servers_.push_back(std::move(server));
    }
    return StartWorkers();
  }

  int num_workers() const override { return options_.num_workers; }
  int num_servers() const override { return options_.num_servers; }
  Worker& worker(int rank) override { return *workers_[rank]; }
  ServerStats server_stats(int shard) const override {
    for (const auto& s : servers_) {
      ServerStats stats = s->stats();
      if (stats.shard == shard) return stats;
    }
    return ServerStats();
  }

  std::vector<int> stragglers() const override {
    return coordinator_ != nullptr ? coordinator_->stragglers() : std::vector<int>();
  }

  absl::Status Run(const std::function<absl::Status(Worker&)>& fn) override {
    std::vector<absl::Status> results(workers_.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      threads.emplace_back([&, i] {
        Worker& w = *workers_[i];
        absl::Status s = fn(w);
        absl::Status f = w.Shutdown();
        results[i] = s.ok() ? f : s;
      });
    }
    for (std::thread& t : threads) t.join();
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (!results[i].ok()) {
        return absl::Status(results[i].code(), absl::StrFormat("worker %d: %s",
                                                                workers_[i]->rank(),
                                                                results[i].message()));
      }
    }
    return absl::OkStatus();
  }

  void KillWorker(int rank) override { internal::CrashWorker(*workers_[rank]); }

  absl::Status RestartWorker(int rank) override {
    if (rank < 0 || rank >= static_cast<int>(workers_.size())) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "worker %d is out of range: the cluster has %d workers", rank, workers_.size()));
    }
    KAIROS_ASSIGN_OR_RETURN(std::unique_ptr<Worker> worker, Worker::Create(WorkerOptionsOf(rank)));
    workers_[rank] = std::move(worker);
    return absl::OkStatus();
  }

  absl::Status Shutdown() override {
    if (coordinator_ == nullptr) return absl::OkStatus();
    for (auto& w : workers_) w->Shutdown().IgnoreError();
    absl::Status status = coordinator_->Wait(absl::Seconds(30));
    workers_.clear();
    // Servers that write checkpoints end once their last one is written
    // (ServerOptions::checkpoint_at_end): let them, within the same deadline.
    if (status.ok() && !options_.server.checkpoint_dir.empty()) {
      for (auto& s : servers_) s->Wait(absl::Seconds(30)).IgnoreError();
    }
    for (auto& s : servers_) s->Shutdown();
    servers_.clear();
    coordinator_.reset();
    return status;
  }

 private:
  std::string Endpoint(const std::string& name) {
    if (options_.transport == TransportKind::kTcp) return "tcp://127.0.0.1:*";
    if (options_.transport == TransportKind::kIpc) {
      return absl::StrCat("ipc://", ipc_dir_, "/", name);
    }
    return absl::StrFormat("inproc://kairos-%d-%d/%s", ::getpid(), serial_, name);
  }

  absl::Status StartCoordinator() {
    if (options_.transport == TransportKind::kIpc) {
      std::string tmpl =
          (std::filesystem::temp_directory_path() / "kairos-cluster-XXXXXX").string();
      if (::mkdtemp(tmpl.data()) == nullptr) {
        return absl::InternalError("cannot create a directory for ipc endpoints");
      }
      ipc_dir_ = tmpl;
    } else if (options_.transport != TransportKind::kInproc &&
               options_.transport != TransportKind::kTcp) {
      return absl::InvalidArgumentError(
          absl::StrFormat("unknown transport kind %d; use kInproc, kTcp or kIpc",
                          static_cast<int>(options_.transport)));
    }
    CoordinatorOptions co = options_.coordinator;
    co.listen = Endpoint("coordinator");
    co.num_servers = options_.num_servers;
    co.num_workers = options_.num_workers;
    co.job = options_.job;
    co.context = context_;
    if (options_.keys.has_value()) co.keys = options_.keys;
    if (options_.env != nullptr) co.env = options_.env;
    if (options_.transport_factory != nullptr) co.transport_factory = options_.transport_factory;
    KAIROS_ASSIGN_OR_RETURN(coordinator_, Coordinator::Create(co));
    return absl::OkStatus();
  }

  // Workers join in parallel: each Create blocks until the whole job has started.
  absl::Status StartWorkers() {
    const int n = options_.num_workers;
    std::vector<absl::StatusOr<std::unique_ptr<Worker>>> made(n);
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
      threads.emplace_back([&, r] { made[r] = Worker::Create(WorkerOptionsOf(r)); });
    }
    for (std::thread& t : threads) t.join();
    for (int r = 0; r < n; ++r) {
      if (!made[r].ok()) {
        return absl::Status(made[r].status().code(),
                            absl::StrFormat("worker %d: %s", r, made[r].status().message()));
      }
      workers_.push_back(*std::move(made[r]));
    }
    return absl::OkStatus();
  }

  WorkerOptions WorkerOptionsOf(int rank) const {
    WorkerOptions wo = options_.worker;
    wo.coordinator = coordinator_->endpoint();
    wo.job = options_.job;
    wo.rank = rank;
    wo.context = context_;
    if (options_.keys.has_value()) wo.keys = options_.keys;
    if (options_.env != nullptr) wo.env = options_.env;
    if (options_.transport_factory != nullptr) wo.transport_factory = options_.transport_factory;
    return wo;
  }

  const ClusterOptions options_;
  const uint64_t serial_ = cluster_serial.fetch_add(1);
  std::shared_ptr<TransportContext> context_;
  std::string ipc_dir_;
  std::unique_ptr<Coordinator> coordinator_;
  std::vector<std::unique_ptr<Server>> servers_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace

std::string_view TransportKindName(TransportKind kind) {
  switch (kind) {
    case TransportKind::kInproc:
      return "inproc";
    case TransportKind::kTcp:
      return "tcp";
    case TransportKind::kIpc:
      return "ipc";
  }
  return "unknown";
}

absl::StatusOr<TransportKind> ParseTransportKind(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(std::string(name));
  for (TransportKind kind : {TransportKind::kInproc, TransportKind::kTcp, TransportKind::kIpc}) {
    if (lower == TransportKindName(kind)) return kind;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown transport '%s'; use inproc, tcp or ipc", name));
}

absl::StatusOr<std::unique_ptr<LocalCluster>> LocalCluster::Create(
    const ClusterOptions& options) {
  auto cluster = std::make_unique<LocalClusterImpl>(options);
  KAIROS_RETURN_IF_ERROR(cluster->Init());
  return cluster;
}

}  // namespace kairos
