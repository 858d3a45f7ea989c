// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ValidateSimOptions: the documented range of every SimOptions field, checked before a run.

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "policy/policy.h"
#include "sim/simulator.h"

namespace kairos::sim {
namespace {

absl::Status Bad(absl::string_view field, absl::string_view rule, absl::string_view got) {
  return absl::InvalidArgumentError(
      absl::StrCat("simulator option ", field, " must be ", rule, ", got ", got));
}

absl::Status CheckCompute(const ComputeOptions& c, int num_workers) {
  if (c.compute_time <= absl::ZeroDuration() || c.compute_time == absl::InfiniteDuration()) {
    return Bad("compute.compute_time", "> 0 and finite", absl::FormatDuration(c.compute_time));
  }
  if (c.slowdown.size() > static_cast<size_t>(num_workers)) {
    return Bad("compute.slowdown", "at most num_workers long",
               absl::StrCat(c.slowdown.size(), " entries"));
  }
  for (double s : c.slowdown) {
    if (!(s > 0.0) || !std::isfinite(s)) {
      return Bad("compute.slowdown", "> 0 and finite per worker", absl::StrCat(s));
    }
  }
  if (!(c.jitter_shift > 0.0) || !std::isfinite(c.jitter_shift)) {
    return Bad("compute.jitter_shift", "> 0", absl::StrCat(c.jitter_shift));
  }
  if (!(c.jitter_mean >= 0.0) || !std::isfinite(c.jitter_mean)) {
    return Bad("compute.jitter_mean", ">= 0", absl::StrCat(c.jitter_mean));
  }
  if (!(c.straggler_prob >= 0.0 && c.straggler_prob <= 1.0)) {
    return Bad("compute.straggler_prob", "in [0, 1]", absl::StrCat(c.straggler_prob));
  }
  if (!(c.straggler_factor >= 1.0) || !std::isfinite(c.straggler_factor)) {
    return Bad("compute.straggler_factor", ">= 1", absl::StrCat(c.straggler_factor));
  }
  if (c.measured.size() > kMaxProfiles) {
    return Bad("compute.measured", absl::StrCat("at most ", kMaxProfiles, " profiles long"),
               absl::StrCat(c.measured.size()));
  }
  for (size_t p = 0; p < c.measured.size(); ++p) {
    const std::vector<absl::Duration>& q = c.measured[p];
    const std::string field = absl::StrCat("compute.measured[", p, "]");
    if (q.empty() || q.size() > kMaxProfilePoints) {
      return Bad(field, absl::StrCat("1 to ", kMaxProfilePoints, " points"),
                 absl::StrCat(q.size()));
    }
    for (size_t i = 0; i < q.size(); ++i) {
      if (q[i] <= absl::ZeroDuration() || q[i] == absl::InfiniteDuration()) {
        return Bad(field, "> 0 and finite per point", absl::FormatDuration(q[i]));
      }
      if (i > 0 && q[i] < q[i - 1]) {
        return Bad(field, "nondecreasing",
                   absl::StrCat(absl::FormatDuration(q[i]), " after ",
                                absl::FormatDuration(q[i - 1])));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckNetwork(const NetworkOptions& n) {
  if (n.server_shards < 1 || n.server_shards > kMaxServerShards) {
    return Bad("network.server_shards", absl::StrCat("1 to ", kMaxServerShards),
               absl::StrCat(n.server_shards));
  }
  for (const auto& [name, d] : {std::pair{"network.latency", n.latency},
                                std::pair{"network.worker_send_delay", n.worker_send_delay},
                                std::pair{"network.server_send_delay", n.server_send_delay}}) {
    if (d < absl::ZeroDuration() || d == absl::InfiniteDuration()) {
      return Bad(name, ">= 0 and finite", absl::FormatDuration(d));
    }
  }
  if (!(n.bandwidth_bytes_per_s >= 0.0) || !std::isfinite(n.bandwidth_bytes_per_s)) {
    return Bad("network.bandwidth_bytes_per_s", ">= 0 (0: infinite)",
               absl::StrCat(n.bandwidth_bytes_per_s));
  }
  if (!std::isfinite(n.server_bandwidth_bytes_per_s)) {
    return Bad("network.server_bandwidth_bytes_per_s", "finite (< 0: the workers')",
               absl::StrCat(n.server_bandwidth_bytes_per_s));
  }
  return absl::OkStatus();
}

absl::Status CheckIterations(const SimOptions& o) {
  if (o.iterations < 0) return Bad("iterations", ">= 0", absl::StrCat(o.iterations));
  if (!o.iterations_per_worker.empty() &&
      o.iterations_per_worker.size() != static_cast<size_t>(o.num_workers)) {
    return Bad("iterations_per_worker", "empty or num_workers long",
               absl::StrCat(o.iterations_per_worker.size(), " entries"));
  }
  for (int64_t n : o.iterations_per_worker) {
    if (n < 0) return Bad("iterations_per_worker", ">= 0 per worker", absl::StrCat(n));
  }
  if (o.max_time <= absl::ZeroDuration()) {
    return Bad("max_time", "> 0", absl::FormatDuration(o.max_time));
  }
  return absl::OkStatus();
}

absl::Status CheckServerCost(const ServerCostOptions& c) {
  for (const auto& [name, d] :
       {std::pair{"server_cost.apply", c.apply}, std::pair{"server_cost.read", c.read},
        std::pair{"server_cost.receive", c.receive},
        std::pair{"server_cost.queued_read", c.queued_read.value_or(absl::ZeroDuration())},
        std::pair{"server_cost.drift_pass", c.drift_pass}}) {
    if (d < absl::ZeroDuration() || d == absl::InfiniteDuration()) {
      return Bad(name, ">= 0 and finite", absl::FormatDuration(d));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckWorkerCost(const WorkerCostOptions& c) {
  for (const auto& [name, d] :
       {std::pair{"worker_cost.local", c.local},
        std::pair{"worker_cost.eager_local", c.eager_local.value_or(absl::ZeroDuration())},
        std::pair{"worker_cost.receive", c.receive}}) {
    if (d < absl::ZeroDuration() || d == absl::InfiniteDuration()) {
      return Bad(name, ">= 0 and finite", absl::FormatDuration(d));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckHost(const HostOptions& h, bool serialize_links) {
  for (const auto& [name, x] :
       {std::pair{"host.cores", h.cores}, std::pair{"host.background", h.background}}) {
    if (!(x >= 0.0 && std::isfinite(x))) return Bad(name, ">= 0 and finite", absl::StrCat(x));
  }
  for (const auto& [name, d] : {std::pair{"host.gradient_cpu", h.gradient_cpu},
                                std::pair{"host.transfer_cpu_per_mb", h.transfer_cpu_per_mb}}) {
    if (d < absl::ZeroDuration() || d == absl::InfiniteDuration()) {
      return Bad(name, ">= 0 and finite", absl::FormatDuration(d));
    }
    if (d > absl::ZeroDuration() && h.cores == 0.0) {
      return Bad(name, "0 without a host (host.cores 0)", absl::FormatDuration(d));
    }
  }
  if (h.run_to_completion && h.cores == 0.0) {
    return Bad("host.run_to_completion", "false without a host (host.cores 0)", "true");
  }
  if (!(h.transfer_cpu_after_link >= 0.0 && h.transfer_cpu_after_link <= 1.0)) {
    return Bad("host.transfer_cpu_after_link", "in [0, 1]",
               absl::StrCat(h.transfer_cpu_after_link));
  }
  if (h.transfer_cpu_per_mb > absl::ZeroDuration() && !serialize_links) {
    return Bad("host.transfer_cpu_per_mb", "0 without network.serialize_links",
               absl::FormatDuration(h.transfer_cpu_per_mb));
  }
  return absl::OkStatus();
}

absl::Status CheckFailures(const SimOptions& o) {
  std::vector<bool> seen(static_cast<size_t>(o.num_workers), false);
  for (const WorkerFailure& f : o.failures) {
    if (f.worker < 0 || f.worker >= o.num_workers) {
      return Bad("failures[].worker", "a worker (0 .. num_workers - 1)", absl::StrCat(f.worker));
    }
    if (seen[static_cast<size_t>(f.worker)]) {
      return Bad("failures", "at most one per worker", absl::StrCat("two for ", f.worker));
    }
    seen[static_cast<size_t>(f.worker)] = true;
    if (f.at < absl::ZeroDuration() || f.at == absl::InfiniteDuration()) {
      return Bad("failures[].at", ">= 0 and finite", absl::FormatDuration(f.at));
    }
  }
  if (o.detection_delay < absl::ZeroDuration() ||
      o.detection_delay == absl::InfiniteDuration()) {
    return Bad("detection_delay", ">= 0 and finite", absl::FormatDuration(o.detection_delay));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateSimOptions(const SimOptions& o) {
  if (o.num_workers < 1) return Bad("num_workers", ">= 1", absl::StrCat(o.num_workers));
  if (!(o.learning_rate > 0.0f) || !std::isfinite(o.learning_rate)) {
    return Bad("learning_rate", "> 0", absl::StrCat(o.learning_rate));
  }
  if (o.batch_size < 1) return Bad("batch_size", ">= 1", absl::StrCat(o.batch_size));
  if (!(o.stop_at_accuracy >= 0.0 && o.stop_at_accuracy <= 1.0)) {
    return Bad("stop_at_accuracy", "in [0, 1]", absl::StrCat(o.stop_at_accuracy));
  }
  if (o.sample_interval <= absl::ZeroDuration() ||
      o.sample_interval == absl::InfiniteDuration()) {
    return Bad("sample_interval", "> 0 and finite", absl::FormatDuration(o.sample_interval));
  }
  if (o.average_window < absl::ZeroDuration() || o.average_window == absl::InfiniteDuration()) {
    return Bad("average_window", ">= 0 and finite", absl::FormatDuration(o.average_window));
  }
  if (o.cache_clocks > 0) {
    // (A spec that does not parse is refused by Simulate, which parses it first.)
    absl::StatusOr<policy::PolicySpec> spec = policy::ParsePolicySpec(o.policy);
    if (spec.ok() && spec->pull.kind == policy::PullSpec::Kind::kEager) {
      return Bad("cache_clocks",
                 "0 under pull=eager (an eager read rides on the push and is never cached)",
                 absl::StrCat(o.cache_clocks));
    }
  }
  for (absl::Status s :
       {CheckIterations(o), CheckCompute(o.compute, o.num_workers), CheckNetwork(o.network),
        CheckServerCost(o.server_cost), CheckWorkerCost(o.worker_cost),
        CheckHost(o.host, o.network.serialize_links), CheckFailures(o)}) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace kairos::sim
