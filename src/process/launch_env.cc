// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "process/launch_env.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace kairos::internal {
namespace {

using Role = LaunchEnvironment::Role;

// A rendezvous file is three short lines; only this much of a file is read.
constexpr std::size_t kMaxRendezvousBytes = 4096;

// One way a launcher names a process's rank: its variables, in the order they are tried.
struct RankSource {
  const char* rank;
  const char* size;
  // Without `size`, the rank alone is an error (true), or says nothing (false: an sbatch
  // script has SLURM_PROCID but is no task of a step; only srun sets the step's size).
  bool size_required;
  const char* local_size;  // processes on this host, or null (unknown)
  const char* nodes;       // hosts of the job, or null (unknown)
};

constexpr RankSource kSources[] = {
    {"KAIROS_WORLD_RANK", "KAIROS_WORLD_SIZE", true, nullptr, nullptr},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", true, "OMPI_COMM_WORLD_LOCAL_SIZE", nullptr},
    {"PMI_RANK", "PMI_SIZE", true, "MPI_LOCALNRANKS", nullptr},
    {"SLURM_PROCID", "SLURM_STEP_NUM_TASKS", false, nullptr, "SLURM_STEP_NUM_NODES"},
};

absl::Status Malformed(const char* name, const char* value, const char* want) {
  return absl::InvalidArgumentError(absl::StrFormat("%s must be %s, got '%s'", name, want, value));
}

// Reads `name` as an integer >= `min`; `fallback` when unset.
absl::StatusOr<int> Int(const EnvLookup& env, const char* name, int min, int fallback) {
  const char* v = env(name);
  if (v == nullptr) return fallback;
  int n = 0;
  if (!absl::SimpleAtoi(v, &n) || n < min) {
    return Malformed(name, v, min == 0 ? "a non-negative integer" : "a positive integer");
  }
  return n;
}

}  // namespace

absl::StatusOr<std::optional<absl::Duration>> ReadSendDelay(const EnvLookup& env) {
  const char* v = env("KAIROS_SEND_DELAY_US");
  if (v == nullptr) return std::optional<absl::Duration>();
  int us = 0;
  if (!absl::SimpleAtoi(v, &us) || us < 0 || us > kMaxSendDelayMicros) {
    return Malformed("KAIROS_SEND_DELAY_US", v, "a whole number of microseconds, 0 to 60000000");
  }
  return std::optional<absl::Duration>(absl::Microseconds(us));
}

namespace {

// The launcher's job id, for the default rendezvous file and to tell jobs' files apart.
std::string JobId(const EnvLookup& env, const RankSource& source) {
  if (const char* id = env("KAIROS_JOB_ID")) return id;
  const absl::string_view rank = source.rank;
  if (rank == "OMPI_COMM_WORLD_RANK") {
    if (const char* id = env("OMPI_MCA_ess_base_jobid")) return id;
    if (const char* id = env("PMIX_NAMESPACE")) return id;
  }
  if (rank == "SLURM_PROCID") {
    const char* job = env("SLURM_JOB_ID");
    const char* step = env("SLURM_STEP_ID");
    if (job != nullptr) return absl::StrCat(job, ".", step != nullptr ? step : "0");
  }
  return "";
}

// A job id as part of a file name: letters, digits, '.', '-' and '_' kept, others '_'.
std::string FileSafe(std::string id) {
  for (char& c : id) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') {
      c = '_';
    }
  }
  return id;
}

// The variables of kairos-launch and of a worker started by hand.
absl::StatusOr<LaunchEnvironment> ReadWorker(const EnvLookup& env, const char* source) {
  LaunchEnvironment e;
  e.role = Role::kWorker;
  e.source = source;
  e.coordinator = env("KAIROS_COORDINATOR");
  absl::StatusOr<int> rank = Int(env, "KAIROS_RANK", 0, -1);
  if (!rank.ok()) return rank.status();
  e.rank = *rank;
  absl::StatusOr<int> servers = Int(env, "KAIROS_NUM_SERVERS", 1, 0);
  if (!servers.ok()) return servers.status();
  absl::StatusOr<int> workers = Int(env, "KAIROS_NUM_WORKERS", 1, 0);
  if (!workers.ok()) return workers.status();
  e.num_servers = *servers;
  e.num_workers = *workers;
  if (e.num_workers > 0 && e.rank >= e.num_workers) {
    return absl::InvalidArgumentError(
        absl::StrFormat("KAIROS_RANK is %d but KAIROS_NUM_WORKERS is %d", e.rank, e.num_workers));
  }
  if (const char* id = env("KAIROS_JOB_ID")) e.job_id = id;
  return e;
}

// The contents of `path` (at most kMaxRendezvousBytes), nullopt when it does not exist yet.
// A file another user owns is refused: in a shared directory (/tmp) anyone could otherwise
// point this job at a coordinator of theirs.
absl::StatusOr<std::optional<std::string>> ReadOwnFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return absl::UnavailableError(
        absl::StrFormat("cannot read the rendezvous file %s: %s", path, std::strerror(errno)));
  }
  struct stat st = {};
  std::string text;
  absl::Status status = absl::OkStatus();
  if (::fstat(fd, &st) != 0) {
    status = absl::UnavailableError(
        absl::StrFormat("cannot stat the rendezvous file %s: %s", path, std::strerror(errno)));
  } else if (st.st_uid != ::getuid()) {
    status = absl::PermissionDeniedError(absl::StrFormat(
        "the rendezvous file %s belongs to user %d, not to this user (%d): refusing the "
        "coordinator it names; remove it or use another KAIROS_RENDEZVOUS",
        path, st.st_uid, ::getuid()));
  } else {
    char buffer[kMaxRendezvousBytes];
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      status = absl::UnavailableError(
          absl::StrFormat("cannot read the rendezvous file %s: %s", path, std::strerror(errno)));
    } else {
      text.assign(buffer, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  if (!status.ok()) return status;
  return std::optional<std::string>(std::move(text));
}

}  // namespace

absl::StatusOr<LaunchEnvironment> ReadLaunchEnvironment(const EnvLookup& env, unsigned uid) {
  const char* role = env("KAIROS_ROLE");
  if (role != nullptr && absl::string_view(role) != "worker") {
    return Malformed("KAIROS_ROLE", role, "'worker' (set by kairos-launch) or unset");
  }
  // kairos-launch says so; its variables win over any rank variables inherited.
  if (role != nullptr && env("KAIROS_COORDINATOR") != nullptr) {
    return ReadWorker(env, "kairos-launch");
  }
  for (const RankSource& source : kSources) {
    const char* rank_text = env(source.rank);
    if (rank_text == nullptr) continue;
    const char* size_name = source.size;
    const char* size_text = env(size_name);
    if (size_text == nullptr && !source.size_required) continue;
    if (size_text == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s is set but %s is not", source.rank, source.size));
    }
    LaunchEnvironment e;
    if (!absl::SimpleAtoi(rank_text, &e.world_rank) || e.world_rank < 0) {
      return Malformed(source.rank, rank_text, "a non-negative integer");
    }
    if (!absl::SimpleAtoi(size_text, &e.world_size) || e.world_size < 1) {
      return Malformed(size_name, size_text, "a positive integer");
    }
    if (e.world_rank >= e.world_size) {
      return absl::InvalidArgumentError(absl::StrFormat("%s is %d but %s is %d", source.rank,
                                                        e.world_rank, size_name, e.world_size));
    }
    if (e.world_size == 1) break;  // one process: embedded, or a worker started by hand
    e.source = source.rank;
    absl::StatusOr<int> servers = Int(env, "KAIROS_NUM_SERVERS", 1, 1);
    if (!servers.ok()) return servers.status();
    e.num_servers = *servers;
    e.num_workers = e.world_size - 1 - e.num_servers;
    if (e.num_workers < 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%d processes cannot hold a coordinator, %d server%s (KAIROS_NUM_SERVERS) and at "
          "least one worker: start at least %d",
          e.world_size, e.num_servers, e.num_servers == 1 ? "" : "s", e.num_servers + 2));
    }
    absl::StatusOr<int> workers = Int(env, "KAIROS_NUM_WORKERS", 1, e.num_workers);
    if (!workers.ok()) return workers.status();
    if (*workers != e.num_workers) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "KAIROS_NUM_WORKERS is %d, but %d processes with %d server%s leave %d workers "
          "(leave KAIROS_NUM_WORKERS unset)",
          *workers, e.world_size, e.num_servers, e.num_servers == 1 ? "" : "s", e.num_workers));
    }
    if (e.world_rank == 0) {
      e.role = Role::kCoordinator;
    } else if (e.world_rank <= e.num_servers) {
      e.role = Role::kServer;
    } else {
      e.role = Role::kWorker;
      e.rank = e.world_rank - 1 - e.num_servers;
    }
    if (source.local_size != nullptr) {
      if (const char* local = env(source.local_size)) {
        int n = 0;
        e.multi_host = absl::SimpleAtoi(local, &n) && n < e.world_size;
      }
    }
    if (source.nodes != nullptr) {
      const char* nodes = env(source.nodes);
      int n = 0;
      e.multi_host = nodes != nullptr && absl::SimpleAtoi(nodes, &n) && n > 1;
    }
    if (absl::string_view(source.rank) == "KAIROS_WORLD_RANK") e.multi_host = true;
    if (const char* host = env("KAIROS_ADVERTISE_HOST")) e.advertise_host = host;
    if (const char* ports = env("KAIROS_PORT_RANGE")) {
      std::vector<std::string> parts = absl::StrSplit(ports, '-');
      int first = 0;
      int last = 0;
      if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &first) ||
          !absl::SimpleAtoi(parts[1], &last) || first < 1 || last > 65535 || first > last) {
        return Malformed("KAIROS_PORT_RANGE", ports, "FIRST-LAST with 1 <= FIRST <= LAST <= 65535");
      }
      e.port_range = absl::StrCat(first, "-", last);
    }
    e.job_id = JobId(env, source);
    if (const char* coordinator = env("KAIROS_COORDINATOR")) {
      e.coordinator = coordinator;
      return e;
    }
    if (const char* path = env("KAIROS_RENDEZVOUS")) {
      e.rendezvous = path;
      return e;
    }
    if (e.multi_host) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the %d processes run on several hosts, so rank 0 cannot tell the others where "
          "its coordinator is through a local file: set KAIROS_RENDEZVOUS to a path on a file "
          "system every host shares, or KAIROS_COORDINATOR to tcp://HOST:PORT of rank 0's "
          "host (docs/multi_host.md)",
          e.world_size));
    }
    if (e.job_id.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s gives no job id to name the rendezvous file after: set KAIROS_RENDEZVOUS (a "
          "fresh path for each job), KAIROS_JOB_ID, or KAIROS_COORDINATOR",
          source.rank));
    }
    const char* tmp = env("TMPDIR");
    e.rendezvous = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/kairos-rendezvous-", uid, "-",
                                FileSafe(e.job_id));
    return e;
  }
  if (env("KAIROS_COORDINATOR") != nullptr) return ReadWorker(env, "KAIROS_COORDINATOR");
  return LaunchEnvironment();
}

std::string RendezvousText(const std::string& job_id, const std::string& endpoint) {
  return absl::StrCat("kairos-rendezvous 1\njob ", job_id, "\ncoordinator ", endpoint, "\n");
}

absl::StatusOr<std::optional<std::string>> ParseRendezvous(const std::string& text,
                                                           const std::string& job_id) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (lines.size() < 3 || lines[0] != "kairos-rendezvous 1" ||
      !absl::StartsWith(lines[1], "job ") || !absl::StartsWith(lines[2], "coordinator ")) {
    return absl::InvalidArgumentError(
        "not a kairos rendezvous file (want the lines 'kairos-rendezvous 1', 'job ID', "
        "'coordinator ENDPOINT')");
  }
  const absl::string_view job = lines[1].substr(4);
  const absl::string_view endpoint = lines[2].substr(12);
  if (endpoint.empty()) return absl::InvalidArgumentError("the rendezvous file names no endpoint");
  if (!job_id.empty() && job != job_id) return std::optional<std::string>();
  return std::optional<std::string>(std::string(endpoint));
}

absl::Status PublishRendezvous(const std::string& path, const std::string& job_id,
                               const std::string& endpoint) {
  const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << RendezvousText(job_id, endpoint);
    out.close();
    if (!out) {
      return absl::UnavailableError(
          absl::StrFormat("cannot write the rendezvous file %s: %s", tmp, std::strerror(errno)));
    }
  }
  std::error_code error;
  std::filesystem::rename(tmp, path, error);
  if (error) {
    std::filesystem::remove(tmp, error);
    return absl::UnavailableError(
        absl::StrFormat("cannot put the rendezvous file at %s: %s", path, error.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> AwaitRendezvous(const std::string& path, const std::string& job_id,
                                            absl::Duration timeout) {
  // A file on a shared (network) file system announces no change, so this polls; the
  // interval grows so that many waiting processes do not load the file server.
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + timeout;
  std::string problem = "it does not exist";
  while (true) {
    absl::StatusOr<std::optional<std::string>> text = ReadOwnFile(path);
    if (!text.ok()) return text.status();
    if (text->has_value()) {
      absl::StatusOr<std::optional<std::string>> endpoint = ParseRendezvous(**text, job_id);
      if (!endpoint.ok()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("rendezvous file %s: %s", path, endpoint.status().message()));
      }
      if (endpoint->has_value()) return **endpoint;
      problem = "it belongs to another job (remove it, or use a fresh KAIROS_RENDEZVOUS)";
    }
    const absl::Time now = absl::Now();
    if (now >= deadline) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "rank 0 did not publish the coordinator's endpoint in the rendezvous file %s within "
          "%s (%s): is rank 0 running, and is the file on a file system this host shares "
          "with it? (docs/multi_host.md)",
          path, absl::FormatDuration(timeout), problem));
    }
    const absl::Duration step =
        now - start < absl::Seconds(2) ? absl::Milliseconds(20) : absl::Milliseconds(200);
    std::this_thread::sleep_for(absl::ToChronoNanoseconds(std::min(step, deadline - now)));
  }
}

absl::StatusOr<std::string> ThisHostAddress() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) {
    return absl::NotFoundError(absl::StrCat("cannot read this host's name: ", std::strerror(errno),
                                            "; set KAIROS_ADVERTISE_HOST"));
  }
  addrinfo hints = {};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(name, nullptr, &hints, &found) == 0) {
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
      if ((ntohl(in->sin_addr.s_addr) >> 24) == 127) continue;  // 127.0.0.0/8
      char text[INET_ADDRSTRLEN] = {};
      if (::inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text)) != nullptr) {
        ::freeaddrinfo(found);
        return std::string(text);
      }
    }
    ::freeaddrinfo(found);
  }
  return absl::NotFoundError(absl::StrFormat(
      "the host name '%s' resolves to no address other hosts can reach (only loopback, or "
      "none): set KAIROS_ADVERTISE_HOST to this host's address",
      name));
}

}  // namespace kairos::internal
