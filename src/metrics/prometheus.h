// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A node's statistics in the Prometheus text exposition format (version 0.0.4): pure
// functions from ServerStats / CoordinatorStats to text, so that what a scrape returns is
// tested exactly (tests/metrics/prometheus_test.cc). docs/operations.md lists every metric.
//
// Every metric is named kairos_*; a server's carry the label shard="S", per-worker ones
// worker="W" too. Each family is written once, "# HELP" and "# TYPE" first, then all of its
// samples. Histograms are cumulative: _bucket{le="..."} for each bound of a fixed set, then
// le="+Inf" (the count), _sum and _count.
//
// Thread-safety: the functions are pure; PrometheusWriter is not shared between threads.

#ifndef KAIROS_METRICS_PROMETHEUS_H_
#define KAIROS_METRICS_PROMETHEUS_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "kairos/coordinator.h"
#include "kairos/metrics.h"
#include "kairos/server.h"

namespace kairos::internal {

// What every node reports about itself.
struct NodeInfo {
  std::string version;     // kairos's version, e.g. "0.1.0"
  std::string build_type;  // CMAKE_BUILD_TYPE of the build ("Release", ...), or "unknown"
  absl::Duration uptime;   // since the node was created, in the node's time (its Env)
};

// The version and build type this library was built with, and `uptime`.
NodeInfo BuildInfo(absl::Duration uptime);

// The bounds (`le`) of the exported histograms. A bound is the upper end of one of the
// histogram's own power-of-two buckets, so each cumulative count is exact:
//   staleness (Histogram, integers): 0, 1, 3, 7, ..., 2^16 - 1;
//   value staleness and scale (RealHistogram): 2^-16, 2^-14, ..., 2^16 (a factor of 4).
// Larger samples count in le="+Inf" only.
std::span<const uint64_t> IntegerBucketBounds();
std::span<const double> RealBucketBounds();

// Formats a sample value: integers as integers, others in the shortest form that reads
// back to the same double; "+Inf", "-Inf", "NaN".
std::string FormatValue(double value);

// Label pairs, in the order written.
using Labels = std::vector<std::pair<std::string_view, std::string>>;

// Writes metric families. Each Family call starts one (HELP and TYPE lines); the samples
// that follow belong to it.
class PrometheusWriter {
 public:
  enum class Type { kCounter, kGauge, kHistogram };

  void Family(std::string_view name, Type type, std::string_view help);
  void Sample(std::string_view name, const Labels& labels, double value);
  void Sample(std::string_view name, const Labels& labels, uint64_t value);
  // One histogram's samples under the current family `name`.
  void Histogram(std::string_view name, const Labels& labels, const kairos::Histogram& h);
  void Histogram(std::string_view name, const Labels& labels, const RealHistogram& h);

  std::string Take() { return std::move(out_); }

 private:
  void Line(std::string_view name, const Labels& labels, std::string_view extra_label,
            std::string_view extra_value, std::string_view value);

  std::string out_;
};

// kairos_build_info and kairos_uptime_seconds.
void RenderNodeMetrics(const NodeInfo& node, PrometheusWriter& out);
// A server's metrics (nothing while it has no shard index, i.e. before the coordinator
// accepted its join).
void RenderServerMetrics(const ServerStats& stats, PrometheusWriter& out);
// The coordinator's metrics; `handshakes_refused` and `stragglers` are read beside its
// stats (Coordinator::handshakes_refused(), stragglers()).
void RenderCoordinatorMetrics(const CoordinatorStats& stats, uint64_t handshakes_refused,
                              const std::vector<int>& stragglers, PrometheusWriter& out);

}  // namespace kairos::internal

#endif  // KAIROS_METRICS_PROMETHEUS_H_
