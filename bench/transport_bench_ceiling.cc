// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos_transport_bench: the raw ZeroMQ ceiling a kairos run is compared with (raw_oneway:
// the best of the raw variants that move the same bytes, measured once per run shape) and
// the raw round trip (raw_rtt) that push_sync is compared with.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "bench/raw_zmq_workloads.h"
#include "bench/transport_bench_runner.h"

namespace kairos::bench::transport_bench {

// The raw variants (--raw-variants) that move the same bytes as a kairos run of `size`
// values with `servers` servers and `workers` workers: kairos's message size over as many
// connections, streamed (stream) or with kairos's messages in flight (window), and one
// message per value (whole; left out when that is kairos's message size already).
std::vector<Runner::RawVariant> Runner::RawVariants(uint64_t size, int servers, int workers) const {
  const WireShape shape =
      KairosWireShape(size, servers, workers, plan_.cluster.chunk_elements, plan_.pipeline);
  const std::string conns =
      shape.connections > 1 ? absl::StrFormat(" x %d conns", shape.connections) : "";
  std::vector<RawVariant> variants;
  for (const std::string& v : plan_.raw_variants) {
    RawVariant rv;
    rv.name = v;
    rv.spec.connections = shape.connections;
    rv.spec.queue_bytes = plan_.raw_queue_bytes;
    rv.spec.message_bytes = v == "whole" ? size : shape.message_bytes;
    // One message per value is the stream variant already (unless stream is left out).
    if (v == "whole" && size == shape.message_bytes && variants.size() > 0 &&
        variants.front().name == "stream") {
      continue;
    }
    if (v == "window") {
      rv.spec.mode = RawMode::kWindow;
      rv.spec.window = shape.messages_in_flight;
      rv.description =
          absl::StrFormat("%s msgs DEALER->ROUTER, %d in flight%s", FormatSize(shape.message_bytes),
                          shape.messages_in_flight, conns);
    } else if (v == "stream") {
      rv.description =
          absl::StrFormat("%s msgs PUSH->PULL, %s queued%s", FormatSize(rv.spec.message_bytes),
                          FormatSize(plan_.raw_queue_bytes), conns);
    } else {
      rv.description = absl::StrFormat("one %s msg per value PUSH->PULL, %s queued%s",
                                       FormatSize(rv.spec.message_bytes),
                                       FormatSize(plan_.raw_queue_bytes), conns);
    }
    variants.push_back(std::move(rv));
  }
  return variants;
}

// The ceiling of a kairos run of `size` values, S servers and W workers (the header's
// rule): the best of its raw variants, measured on first use (best of --raw-repetitions
// runs of each variant for one connection, of --grid-raw-repetitions for several), one
// `raw_oneway` line per variant. Null when a raw run failed.
const Ceiling* Runner::EnsureCeiling(uint64_t size, int servers, int workers) {
  const CeilingKey key{size, servers, workers};
  if (auto it = ceilings_.find(key); it != ceilings_.end()) return &it->second;
  const std::vector<RawVariant> variants = RawVariants(size, servers, workers);
  if (variants.empty()) return nullptr;
  const int runs =
      variants.front().spec.connections > 1 ? flags_.grid_raw_repetitions : flags_.raw_repetitions;
  std::vector<Throughput> measured;
  for (const RawVariant& v : variants) {
    absl::StatusOr<Throughput> t = BestOf<Throughput>(
        runs, [&] { return RawOneWay(v.spec, plan_.budget); }, Faster);
    if (!t.ok()) {
      Fail("raw_oneway", t.status());
      return nullptr;
    }
    measured.push_back(*t);
  }
  std::size_t best = 0;
  for (std::size_t i = 1; i < measured.size(); ++i) {
    if (measured[i].mb_per_s > measured[best].mb_per_s) best = i;
  }
  for (std::size_t i = 0; i < measured.size(); ++i) {
    Result r = MakeResult("raw_oneway", size, servers, workers);
    r.mb_per_s = measured[i].mb_per_s;
    r.ops_per_s = measured[i].ops_per_s;
    if (measured[i].cpu_us_per_mb > 0) r.cpu_us_per_mb = measured[i].cpu_us_per_mb;
    r.faults_per_mb = measured[i].faults_per_mb;
    r.note = absl::StrFormat("%s: %s%s%s", variants[i].name, variants[i].description,
                             BestNote(runs), i == best ? "  <- ceiling" : "");
    report_.Add(r);
  }
  Ceiling c;
  c.mb_per_s = measured[best].mb_per_s;
  c.cpu_us_per_mb = measured[best].cpu_us_per_mb;
  c.variant = variants[best].name;
  return &ceilings_.emplace(key, c).first->second;
}

void Runner::RawOneWayAll() {
  for (uint64_t size : plan_.sizes) EnsureCeiling(size, 1, 1);
}

void Runner::RawRttAll() {
  for (uint64_t size : {kRawSmallBytes, kPageValueBytes}) {
    absl::StatusOr<LatencySummary> l = BestOf<LatencySummary>(
        flags_.raw_repetitions,
        [&] { return RawRoundTrip(size, plan_.budget, flags_.latency_samples); }, Quicker);
    if (!l.ok()) {
      Fail("raw_rtt", l.status());
      continue;
    }
    raw_rtt_p50_[size] = l->p50_us;
    Result r = MakeResult("raw_rtt", size);
    r.latency = *l;
    r.note = absl::StrFormat("DEALER<->ROUTER echo, %d samples%s", l->samples,
                             BestNote(flags_.raw_repetitions));
    report_.Add(r);
  }
}

}  // namespace kairos::bench::transport_bench
