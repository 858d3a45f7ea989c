// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "metrics/prometheus.h"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

namespace kairos::internal {
namespace {

using Type = PrometheusWriter::Type;

// Staleness: 2^k - 1 for k = 0..16, the largest integer of Histogram's bucket k.
constexpr int kIntegerBounds = 17;
constexpr std::array<uint64_t, kIntegerBounds> kIntegerBoundValues = [] {
  std::array<uint64_t, kIntegerBounds> a{};
  for (int k = 0; k < kIntegerBounds; ++k) a[k] = (uint64_t{1} << k) - 1;
  return a;
}();

// Scales and distances: 2^k for k = -16, -14, ..., 16, the upper end of RealHistogram's
// bucket k + 31.
constexpr int kRealBounds = 17;
constexpr int kRealFirstExponent = -16;
constexpr int kRealExponentStep = 2;
const std::array<double, kRealBounds> kRealBoundValues = [] {
  std::array<double, kRealBounds> a{};
  for (int i = 0; i < kRealBounds; ++i) {
    a[i] = std::ldexp(1.0, kRealFirstExponent + kRealExponentStep * i);
  }
  return a;
}();

std::string_view TypeName(Type type) {
  switch (type) {
    case Type::kCounter:
      return "counter";
    case Type::kGauge:
      return "gauge";
    case Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// HELP text: backslash and newline escaped.
void AppendHelp(std::string& out, std::string_view text) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

// A label value: backslash, double quote and newline escaped.
void AppendLabelValue(std::string& out, std::string_view text) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

std::string FormatInteger(uint64_t value) { return absl::StrCat(value); }

Labels With(Labels labels, std::string_view name, std::string value) {
  labels.emplace_back(name, std::move(value));
  return labels;
}

}  // namespace

std::span<const uint64_t> IntegerBucketBounds() { return kIntegerBoundValues; }
std::span<const double> RealBucketBounds() { return kRealBoundValues; }

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Integers up to 2^53 print exactly as integers; everything else in the shortest form
  // that reads back to the same double.
  if (value == std::trunc(value) && std::fabs(value) <= 0x1.0p53) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  char buffer[64];
  const std::to_chars_result r = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, r.ptr);
}

void PrometheusWriter::Family(std::string_view name, Type type, std::string_view help) {
  out_.append("# HELP ").append(name).append(" ");
  AppendHelp(out_, help);
  out_.append("\n# TYPE ").append(name).append(" ").append(TypeName(type)).append("\n");
}

void PrometheusWriter::Line(std::string_view name, const Labels& labels,
                            std::string_view extra_label, std::string_view extra_value,
                            std::string_view value) {
  out_ += name;
  if (!labels.empty() || !extra_label.empty()) {
    out_ += '{';
    bool first = true;
    for (const auto& [label, label_value] : labels) {
      if (!first) out_ += ',';
      first = false;
      out_.append(label).append("=\"");
      AppendLabelValue(out_, label_value);
      out_ += '"';
    }
    if (!extra_label.empty()) {
      if (!first) out_ += ',';
      out_.append(extra_label).append("=\"");
      AppendLabelValue(out_, extra_value);
      out_ += '"';
    }
    out_ += '}';
  }
  out_.append(" ").append(value).append("\n");
}

void PrometheusWriter::Sample(std::string_view name, const Labels& labels, double value) {
  Line(name, labels, "", "", FormatValue(value));
}

void PrometheusWriter::Sample(std::string_view name, const Labels& labels, uint64_t value) {
  Line(name, labels, "", "", FormatInteger(value));
}

void PrometheusWriter::Histogram(std::string_view name, const Labels& labels,
                                 const kairos::Histogram& h) {
  const std::string bucket = std::string(name) + "_bucket";
  uint64_t cumulative = 0;
  int next = 0;  // the histogram's next bucket to add
  for (int k = 0; k < kIntegerBounds; ++k) {
    // Bound 2^k - 1 is the upper end of bucket k.
    for (; next <= k; ++next) cumulative += h.bucket(next);
    Line(bucket, labels, "le", FormatInteger(kIntegerBoundValues[k]), FormatInteger(cumulative));
  }
  Line(bucket, labels, "le", "+Inf", FormatInteger(h.count()));
  Line(std::string(name) + "_sum", labels, "", "", FormatInteger(h.sum()));
  Line(std::string(name) + "_count", labels, "", "", FormatInteger(h.count()));
}

void PrometheusWriter::Histogram(std::string_view name, const Labels& labels,
                                 const RealHistogram& h) {
  const std::string bucket = std::string(name) + "_bucket";
  uint64_t cumulative = 0;
  int next = 0;
  for (int i = 0; i < kRealBounds; ++i) {
    // Bound 2^k is the upper end of bucket k + 31.
    const int last = kRealFirstExponent + kRealExponentStep * i + 31;
    for (; next <= last; ++next) cumulative += h.bucket(next);
    Line(bucket, labels, "le", FormatValue(kRealBoundValues[i]), FormatInteger(cumulative));
  }
  Line(bucket, labels, "le", "+Inf", FormatInteger(h.count()));
  Line(std::string(name) + "_sum", labels, "", "", FormatValue(h.sum()));
  Line(std::string(name) + "_count", labels, "", "", FormatInteger(h.count()));
}

void RenderNodeMetrics(const NodeInfo& node, PrometheusWriter& out) {
  out.Family("kairos_build_info", Type::kGauge,
             "Always 1; the labels name the kairos version and the build type of the node.");
  out.Sample("kairos_build_info", {{"version", node.version}, {"build_type", node.build_type}},
             uint64_t{1});
  out.Family("kairos_uptime_seconds", Type::kGauge,
             "Seconds since the node was created, in the node's time.");
  out.Sample("kairos_uptime_seconds", {}, absl::ToDoubleSeconds(node.uptime));
}

namespace {

// The refusal reasons (RefusalCounts) as label values; waits_capped is not a refusal and
// has its own metric.
struct Reason {
  std::string_view name;
  uint64_t RefusalCounts::*counter;
};
constexpr Reason kServerReasons[] = {
    {"unauthenticated", &RefusalCounts::unauthenticated},
    {"not_active", &RefusalCounts::not_active},
    {"not_started", &RefusalCounts::not_started},
    {"wrong_kind", &RefusalCounts::wrong_kind},
    {"bad_range", &RefusalCounts::bad_range},
    {"bad_clock", &RefusalCounts::bad_clock},
    {"bad_scale", &RefusalCounts::bad_scale},
    {"nonfinite", &RefusalCounts::nonfinite},
    {"nonfinite_skipped", &RefusalCounts::nonfinite_skipped},
    {"too_many_waiting", &RefusalCounts::too_many_waiting},
    {"malformed", &RefusalCounts::malformed},
    {"duplicates", &RefusalCounts::duplicates},
};
// The reasons the coordinator counts (kairos/coordinator.h).
constexpr Reason kCoordinatorReasons[] = {
    {"unauthenticated", &RefusalCounts::unauthenticated},
    {"wrong_kind", &RefusalCounts::wrong_kind},
    {"malformed", &RefusalCounts::malformed},
    {"joins", &RefusalCounts::joins},
};

constexpr std::string_view kRefusedHelp =
    "Messages the node refused, by reason (docs/wire_format.md); a refused message changes "
    "nothing.";
constexpr std::string_view kWaitsCappedHelp =
    "Waits (reads in the gate, barriers) whose timeout was 0 or above the node's cap and "
    "got the cap.";
constexpr std::string_view kHandshakesHelp =
    "Connections refused at the CURVE security handshake (each retry counts).";

// One family of a per-worker value.
template <typename F>
void PerWorker(PrometheusWriter& out, const ServerStats& s, const std::string& shard,
               std::string_view name, Type type, std::string_view help, F value) {
  out.Family(name, type, help);
  for (const WorkerMetrics& w : s.workers) {
    out.Sample(name, {{"shard", shard}, {"worker", absl::StrCat(w.rank)}}, value(w));
  }
}

// Each sparse table's rows, admissions and removals (docs/sparse.md, "Admission and
// eviction"), labelled by shard and table.
void PerSparseTable(PrometheusWriter& out, const ServerStats& s, const Labels& labels) {
  if (s.sparse_tables.empty()) return;
  const auto family = [&](std::string_view name, Type type, std::string_view help,
                          uint64_t SparseTableStats::*field) {
    out.Family(name, type, help);
    for (const SparseTableStats& t : s.sparse_tables) {
      out.Sample(name, With(labels, "table", t.table), t.*field);
    }
  };
  family("kairos_sparse_table_rows", Type::kGauge, "Rows of the sparse table the shard holds.",
         &SparseTableStats::rows);
  family("kairos_sparse_table_bytes", Type::kGauge,
         "Bytes of the table's rows (rows x bytes per row; what RowEviction::max_bytes bounds).",
         &SparseTableStats::bytes);
  family("kairos_sparse_table_bytes_bound", Type::kGauge,
         "The bound on the table's rows per shard (RowEviction::max_bytes; 0: none).",
         &SparseTableStats::bytes_bound);
  family("kairos_sparse_rows_created_total", Type::kCounter,
         "Rows of the table the shard created (admitted).", &SparseTableStats::rows_created);
  family("kairos_sparse_pushes_unadmitted_total", Type::kCounter,
         "Pushed rows of keys admission refused a row: counted, not applied.",
         &SparseTableStats::pushes_unadmitted);
  out.Family("kairos_sparse_rows_evicted_total", Type::kCounter,
             "Rows of the table the shard removed, by reason (idle, norm, budget).");
  for (const SparseTableStats& t : s.sparse_tables) {
    const Labels table = With(labels, "table", t.table);
    out.Sample("kairos_sparse_rows_evicted_total", With(table, "reason", "idle"), t.evicted_idle);
    out.Sample("kairos_sparse_rows_evicted_total", With(table, "reason", "norm"), t.evicted_norm);
    out.Sample("kairos_sparse_rows_evicted_total", With(table, "reason", "budget"),
               t.evicted_budget);
  }
}

}  // namespace

void RenderServerMetrics(const ServerStats& s, PrometheusWriter& out) {
  if (s.shard < 0) return;
  const std::string shard = absl::StrCat(s.shard);
  const Labels labels = {{"shard", shard}};
  const auto counter = [&](std::string_view name, std::string_view help, uint64_t value) {
    out.Family(name, Type::kCounter, help);
    out.Sample(name, labels, value);
  };
  const auto gauge = [&](std::string_view name, std::string_view help, uint64_t value) {
    out.Family(name, Type::kGauge, help);
    out.Sample(name, labels, value);
  };
  counter("kairos_server_pushes_total",
          "Push messages the shard applied or accumulated (one per chunk of a push).", s.pushes);
  counter("kairos_server_pulls_total", "Pull messages the shard served (one per chunk).", s.pulls);
  counter("kairos_server_received_bytes_total", "Payload bytes received.", s.bytes_in);
  counter("kairos_server_sent_bytes_total", "Payload bytes sent.", s.bytes_out);
  counter("kairos_server_wire_received_bytes_total",
          "Bytes of the messages received, as they travelled (headers, encoded payloads).",
          s.wire_bytes_in);
  counter("kairos_server_wire_sent_bytes_total",
          "Bytes of the messages sent, as they travelled (headers, encoded payloads).",
          s.wire_bytes_out);
  counter("kairos_server_error_replies_total", "Requests answered with an error.",
          s.errors_replied);
  counter("kairos_server_dropped_messages_total",
          "Messages dropped with nobody to answer (malformed, or queued when the transport "
          "stopped).",
          s.dropped);
  counter("kairos_server_updates_total",
          "Updates applied to the shard's chunks, all together (the shard's version).", s.version);
  counter("kairos_server_coalesced_pushes_total",
          "Pushes applied in one pass over a chunk with an earlier push of the same range.",
          s.coalesced);
  counter("kairos_checkpoints_written_total",
          "Checkpoints of the shard written (docs/durability.md).", s.checkpoints_written);
  counter("kairos_checkpoints_failed_total", "Checkpoints that failed (the error is logged).",
          s.checkpoints_failed);
  counter("kairos_checkpoints_skipped_total",
          "Periodic checkpoints not taken: the one before was still being written.",
          s.checkpoints_skipped);
  if (s.last_checkpoint_clock >= 0) {
    gauge("kairos_last_checkpoint_clock", "The clock the last checkpoint written is named by.",
          static_cast<uint64_t>(s.last_checkpoint_clock));
  }
  if (s.restored_clock >= 0) {
    gauge("kairos_restored_clock", "The clock of the checkpoint the job was started from.",
          static_cast<uint64_t>(s.restored_clock));
  }
  counter("kairos_log_records_total",
          "Records appended to the shard's update log by this process (docs/durability.md).",
          s.log_records);
  counter("kairos_log_bytes_total", "Bytes of the shard's update log file.", s.log_bytes);
  counter("kairos_log_commits_total", "Writes of the update log (each a group of records).",
          s.log_commits);
  counter("kairos_log_syncs_total", "fdatasync calls of the update log (log_sync machine).",
          s.log_syncs);
  counter("kairos_log_replayed_total",
          "Events replayed from the update log when the server restarted into its job.",
          s.log_replayed);
  counter("kairos_log_rebases_total",
          "New bases of the update log written (each dropped the segments before it).",
          s.log_rebases);
  counter("kairos_retries_answered_total",
          "Requests sent again by workers after a restart that the replay had already taken.",
          s.retries_answered);
  gauge("kairos_server_sparse_rows", "Rows of sparse tables the shard holds.", s.sparse_rows);
  gauge("kairos_server_sparse_bytes", "Bytes the shard's sparse rows take.", s.sparse_bytes);
  PerSparseTable(out, s, labels);

  out.Family("kairos_refused_total", Type::kCounter, kRefusedHelp);
  for (const Reason& r : kServerReasons) {
    out.Sample("kairos_refused_total", With(labels, "reason", std::string(r.name)),
               s.refused.*r.counter);
  }
  counter("kairos_waits_capped_total", kWaitsCappedHelp, s.refused.waits_capped);
  counter("kairos_handshakes_refused_total", kHandshakesHelp, s.handshakes_refused);

  PerWorker(out, s, shard, "kairos_pushes_total", Type::kCounter,
            "Push messages the shard received from the worker (applied, accumulated or "
            "dropped).",
            [](const WorkerMetrics& w) { return w.pushes; });
  PerWorker(out, s, shard, "kairos_pulls_total", Type::kCounter,
            "Pull messages of the worker the shard served.",
            [](const WorkerMetrics& w) { return w.pulls; });
  PerWorker(out, s, shard, "kairos_blocked_reads_total", Type::kCounter,
            "Pull messages of the worker that the gate made wait.",
            [](const WorkerMetrics& w) { return w.blocked_reads; });
  PerWorker(out, s, shard, "kairos_blocked_seconds_total", Type::kCounter,
            "Seconds the worker's pulls waited in the gate, all together (served or expired).",
            [](const WorkerMetrics& w) { return absl::ToDoubleSeconds(w.blocked_time); });
  PerWorker(out, s, shard, "kairos_max_read_lead", Type::kGauge,
            "The largest lead of a served read: its clock minus the smallest clock of an "
            "active worker when it was served.",
            [](const WorkerMetrics& w) { return static_cast<double>(w.max_read_lead); });
  PerWorker(out, s, shard, "kairos_dropped_pushes_total", Type::kCounter,
            "Pushes of the worker dropped as too stale (SaPS).",
            [](const WorkerMetrics& w) { return w.dropped; });
  PerWorker(out, s, shard, "kairos_refreshes_total", Type::kCounter,
            "Replies that told the worker to read fresh parameters (SaPS).",
            [](const WorkerMetrics& w) { return w.refreshes; });
  PerWorker(out, s, shard, "kairos_downweighted_pushes_total", Type::kCounter,
            "Pushes of the worker down-weighted as too stale (SaPS, action=downweight).",
            [](const WorkerMetrics& w) { return w.downweighted; });
  PerWorker(out, s, shard, "kairos_dssp_zero_answers_total", Type::kCounter,
            "Answers r* = 0 of the shard's DSSP controller for the worker (its read waits).",
            [](const WorkerMetrics& w) { return w.zero_answers; });
  PerWorker(out, s, shard, "kairos_dssp_grants_total", Type::kCounter,
            "Grants of extra clocks the shard's DSSP controller gave the worker.",
            [](const WorkerMetrics& w) { return w.grants; });
  PerWorker(out, s, shard, "kairos_nonfinite_pushes_total", Type::kCounter,
            "Pushes (and assigns) of the worker holding NaN or Inf, refused or skipped.",
            [](const WorkerMetrics& w) { return w.nonfinite; });
  PerWorker(out, s, shard, "kairos_straggler", Type::kGauge,
            "1 when the shard's straggler policy (SaPS) flags the worker, else 0.",
            [&s](const WorkerMetrics& w) {
              for (int r : s.stragglers) {
                if (r == w.rank) return uint64_t{1};
              }
              return uint64_t{0};
            });

  const auto histograms = [&](std::string_view name, std::string_view help, auto member) {
    out.Family(name, Type::kHistogram, help);
    for (const WorkerMetrics& w : s.workers) {
      out.Histogram(name, {{"shard", shard}, {"worker", absl::StrCat(w.rank)}}, w.*member);
    }
  };
  histograms("kairos_push_staleness",
             "Version staleness of each push: updates applied to the pushed chunk between the "
             "worker's last read of it and the push's arrival.",
             &WorkerMetrics::staleness);
  histograms("kairos_push_value_staleness",
             "Value staleness of each push under VSGD weighting: the distance between the "
             "parameters the worker read and the chunk's current ones (empty otherwise).",
             &WorkerMetrics::value_staleness);
  histograms("kairos_push_scale",
             "The multiplier each applied push was given (weighting x straggler down-weight x "
             "the worker's eager-pull scale).",
             &WorkerMetrics::scale);
}

void RenderCoordinatorMetrics(const CoordinatorStats& s, uint64_t handshakes_refused,
                              const std::vector<int>& stragglers, PrometheusWriter& out) {
  constexpr std::pair<JobPhase, std::string_view> kPhases[] = {
      {JobPhase::kJoining, "joining"},
      {JobPhase::kStarting, "starting"},
      {JobPhase::kRunning, "running"},
      {JobPhase::kDone, "done"},
  };
  out.Family("kairos_coordinator_phase", Type::kGauge,
             "1 for the job's current phase (joining, starting, running, done), 0 for the "
             "others.");
  for (const auto& [phase, name] : kPhases) {
    out.Sample("kairos_coordinator_phase", {{"phase", std::string(name)}},
               uint64_t{s.phase == phase ? 1u : 0u});
  }
  const auto by_role = [&](std::string_view name, std::string_view help, int servers, int workers) {
    out.Family(name, Type::kGauge, help);
    out.Sample(name, {{"role", "server"}}, static_cast<uint64_t>(servers));
    out.Sample(name, {{"role", "worker"}}, static_cast<uint64_t>(workers));
  };
  const auto gauge = [&](std::string_view name, std::string_view help, uint64_t value) {
    out.Family(name, Type::kGauge, help);
    out.Sample(name, {}, value);
  };
  by_role("kairos_coordinator_expected_nodes", "Nodes the job waits for, by role.",
          s.servers_expected, s.workers_expected);
  by_role("kairos_coordinator_joined_nodes", "Nodes admitted to the job so far, by role.",
          s.servers_joined, s.workers_joined);
  by_role("kairos_coordinator_dead_nodes",
          "Nodes declared dead (silent for the heartbeat timeout), by role.", s.servers_dead,
          s.workers_dead);
  out.Family("kairos_coordinator_worker_rejoins_total", Type::kCounter,
             "Workers that joined the running job again with their rank.");
  out.Sample("kairos_coordinator_worker_rejoins_total", {}, s.workers_rejoined);
  out.Family("kairos_coordinator_server_restarts_total", Type::kCounter,
             "Servers declared dead that restarted into the running job.");
  out.Sample("kairos_coordinator_server_restarts_total", {}, s.servers_restarted);
  gauge("kairos_coordinator_away_servers",
        "Servers declared dead that the job waits for (server_restart_timeout).",
        static_cast<uint64_t>(s.servers_away));
  gauge("kairos_coordinator_ready_servers", "Servers that built their shards.",
        static_cast<uint64_t>(s.servers_ready));
  gauge("kairos_coordinator_active_workers",
        "Workers that joined and neither finished nor were declared dead.",
        static_cast<uint64_t>(s.workers_active));
  gauge("kairos_coordinator_finished_workers", "Workers that finished.",
        static_cast<uint64_t>(s.workers_finished));
  out.Family("kairos_coordinator_barriers_total", Type::kCounter,
             "Barriers released (every active worker reached them).");
  out.Sample("kairos_coordinator_barriers_total", {}, s.barriers_released);
  gauge("kairos_coordinator_barrier_waiting", "Workers waiting in the barrier now.",
        static_cast<uint64_t>(s.barrier_waiting));
  gauge("kairos_coordinator_stragglers",
        "Workers some server's straggler policy (SaPS) flagged in its latest heartbeat.",
        stragglers.size());

  out.Family("kairos_refused_total", Type::kCounter, kRefusedHelp);
  for (const Reason& r : kCoordinatorReasons) {
    out.Sample("kairos_refused_total", {{"reason", std::string(r.name)}}, s.refused.*r.counter);
  }
  out.Family("kairos_waits_capped_total", Type::kCounter, kWaitsCappedHelp);
  out.Sample("kairos_waits_capped_total", {}, s.refused.waits_capped);
  out.Family("kairos_handshakes_refused_total", Type::kCounter, kHandshakesHelp);
  out.Sample("kairos_handshakes_refused_total", {}, handshakes_refused);
}

}  // namespace kairos::internal
