// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The Prometheus text of a node's statistics (metrics/prometheus.h), checked exactly: the
// names, labels, HELP and TYPE lines, and each histogram's cumulative buckets, +Inf, _sum
// and _count. Also the bucket edges of RealHistogram the exported bounds rely on.

#include "metrics/prometheus.h"

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/metrics.h"

namespace kairos::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Checks the exposition format's structure: every family has one HELP and one TYPE line,
// its samples follow them without another family in between, and sample names belong to
// their family (histograms: _bucket, _sum, _count). Returns "name{labels}" -> value.
std::map<std::string, std::string> Parse(const std::string& text) {
  std::map<std::string, std::string> samples;
  std::set<std::string> families;
  std::string family, type;
  EXPECT_TRUE(text.empty() || text.back() == '\n');
  for (const std::string& line : Lines(text)) {
    if (line.rfind("# HELP ", 0) == 0) {
      family = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(families.insert(family).second) << "family written twice: " << family;
      type.clear();
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_EQ(line.substr(7, family.size() + 1), family + " ") << line;
      type = line.substr(7 + family.size() + 1);
      continue;
    }
    EXPECT_FALSE(type.empty()) << "sample before its TYPE: " << line;
    const size_t space = line.rfind(' ');
    const std::string key = line.substr(0, space);
    const std::string name = key.substr(0, key.find('{'));
    if (type == "histogram") {
      EXPECT_TRUE(name == family + "_bucket" || name == family + "_sum" ||
                  name == family + "_count")
          << line;
    } else {
      EXPECT_EQ(name, family) << line;
    }
    EXPECT_TRUE(samples.emplace(key, line.substr(space + 1)).second) << "twice: " << line;
  }
  return samples;
}

TEST(PrometheusTest, FormatsValuesExactly) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(12), "12");
  EXPECT_EQ(FormatValue(-3), "-3");
  EXPECT_EQ(FormatValue(0.25), "0.25");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(0x1.0p-16), "1.52587890625e-05");
  EXPECT_EQ(FormatValue(1e21), "1e+21");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
}

TEST(PrometheusTest, EscapesHelpAndLabelValues) {
  PrometheusWriter out;
  out.Family("kairos_x", PrometheusWriter::Type::kGauge, "a \\ b\nc \"q\"");
  out.Sample("kairos_x", {{"a", "x\"y\\z\nw"}, {"b", "2"}}, uint64_t{7});
  out.Sample("kairos_x", {}, 1.5);
  EXPECT_EQ(out.Take(),
            "# HELP kairos_x a \\\\ b\\nc \"q\"\n"
            "# TYPE kairos_x gauge\n"
            "kairos_x{a=\"x\\\"y\\\\z\\nw\",b=\"2\"} 7\n"
            "kairos_x 1.5\n");
}

TEST(PrometheusTest, RealHistogramBucketsIncludeTheirUpperEnd) {
  // Bucket 0 holds [0, 2^-31], bucket i holds (2^(i-32), 2^(i-31)], the last (2^32, inf).
  EXPECT_EQ(RealHistogram::BucketOf(0.0), 0);
  EXPECT_EQ(RealHistogram::BucketOf(0x1.0p-31), 0);
  EXPECT_EQ(RealHistogram::BucketOf(0x1.0p-30), 1);
  EXPECT_EQ(RealHistogram::BucketOf(0.5), 30);
  EXPECT_EQ(RealHistogram::BucketOf(0.75), 31);
  EXPECT_EQ(RealHistogram::BucketOf(1.0), 31);
  EXPECT_EQ(RealHistogram::BucketOf(1.0000001), 32);
  EXPECT_EQ(RealHistogram::BucketOf(0x1.0p32), 63);
  EXPECT_EQ(RealHistogram::BucketOf(0x1.0p33), 64);
  EXPECT_EQ(RealHistogram::BucketOf(-1.0), 0);
}

TEST(PrometheusTest, IntegerHistogramIsCumulativeAndExact) {
  kairos::Histogram h;
  for (uint64_t v : {0, 2, 5, 5, 100000}) h.Add(v);
  PrometheusWriter out;
  out.Family("kairos_h", PrometheusWriter::Type::kHistogram, "help");
  out.Histogram("kairos_h", {{"shard", "0"}, {"worker", "1"}}, h);
  const std::string l = "{shard=\"0\",worker=\"1\"";
  std::vector<std::string> want = {"# HELP kairos_h help", "# TYPE kairos_h histogram"};
  const std::vector<std::pair<std::string, int>> buckets = {
      {"0", 1},    {"1", 1},    {"3", 2},     {"7", 4},     {"15", 4},    {"31", 4},
      {"63", 4},   {"127", 4},  {"255", 4},   {"511", 4},   {"1023", 4},  {"2047", 4},
      {"4095", 4}, {"8191", 4}, {"16383", 4}, {"32767", 4}, {"65535", 4}, {"+Inf", 5}};
  for (const auto& [le, n] : buckets) {
    want.push_back("kairos_h_bucket" + l + ",le=\"" + le + "\"} " + std::to_string(n));
  }
  want.push_back("kairos_h_sum" + l + "} 100012");
  want.push_back("kairos_h_count" + l + "} 5");
  EXPECT_EQ(Lines(out.Take()), want);
}

TEST(PrometheusTest, RealHistogramIsCumulativeAndExact) {
  RealHistogram h;
  // 1.0 and 0.25 are bounds themselves: they count at le="1" and le="0.25".
  for (double v : {0.0, 0.25, 0.375, 1.0, 3.0, 1e6}) h.Add(v);
  PrometheusWriter out;
  out.Family("kairos_r", PrometheusWriter::Type::kHistogram, "help");
  out.Histogram("kairos_r", {{"worker", "0"}}, h);
  std::vector<std::string> want = {"# HELP kairos_r help", "# TYPE kairos_r histogram"};
  const std::vector<std::pair<std::string, int>> buckets = {{"1.52587890625e-05", 1},
                                                            {"6.103515625e-05", 1},
                                                            {"0.000244140625", 1},
                                                            {"0.0009765625", 1},
                                                            {"0.00390625", 1},
                                                            {"0.015625", 1},
                                                            {"0.0625", 1},
                                                            {"0.25", 2},
                                                            {"1", 4},
                                                            {"4", 5},
                                                            {"16", 5},
                                                            {"64", 5},
                                                            {"256", 5},
                                                            {"1024", 5},
                                                            {"4096", 5},
                                                            {"16384", 5},
                                                            {"65536", 5},
                                                            {"+Inf", 6}};
  for (const auto& [le, n] : buckets) {
    want.push_back("kairos_r_bucket{worker=\"0\",le=\"" + le + "\"} " + std::to_string(n));
  }
  want.push_back("kairos_r_sum{worker=\"0\"} 1000004.625");
  want.push_back("kairos_r_count{worker=\"0\"} 6");
  EXPECT_EQ(Lines(out.Take()), want);
}

TEST(PrometheusTest, NodeMetrics) {
  PrometheusWriter out;
  RenderNodeMetrics({"0.1.0", "Release", absl::Milliseconds(2500)}, out);
  EXPECT_EQ(out.Take(),
            "# HELP kairos_build_info Always 1; the labels name the kairos version and the "
            "build type of the node.\n"
            "# TYPE kairos_build_info gauge\n"
            "kairos_build_info{version=\"0.1.0\",build_type=\"Release\"} 1\n"
            "# HELP kairos_uptime_seconds Seconds since the node was created, in the node's "
            "time.\n"
            "# TYPE kairos_uptime_seconds gauge\n"
            "kairos_uptime_seconds 2.5\n");
  const NodeInfo info = BuildInfo(absl::Seconds(3));
  EXPECT_FALSE(info.version.empty());
  EXPECT_FALSE(info.build_type.empty());
  EXPECT_EQ(info.uptime, absl::Seconds(3));
}

ServerStats SampleServerStats() {
  ServerStats s;
  s.shard = 1;
  s.pushes = 7;
  s.pulls = 5;
  s.bytes_in = 1000;
  s.bytes_out = 2000;
  s.wire_bytes_in = 1100;
  s.wire_bytes_out = 2100;
  s.errors_replied = 2;
  s.dropped = 1;
  s.version = 9;
  s.coalesced = 3;
  s.sparse_rows = 4;
  s.sparse_bytes = 512;
  s.refused.bad_clock = 2;
  s.refused.duplicates = 1;
  s.refused.waits_capped = 6;
  s.handshakes_refused = 8;
  for (int rank : {0, 1}) {
    WorkerMetrics w;
    w.rank = rank;
    w.pushes = 3 + rank;
    w.pulls = 2 + rank;
    w.blocked_reads = rank;
    w.blocked_time = absl::Milliseconds(250 * rank);
    w.max_read_lead = 2;
    w.dropped = rank;
    w.refreshes = 2 * rank;
    w.nonfinite = 0;
    for (uint64_t i = 0; i < w.pushes; ++i) {
      w.staleness.Add(i);
      w.scale.Add(1.0);
    }
    s.workers.push_back(w);
  }
  s.stragglers = {1};
  SparseTableStats emb;
  emb.table = "emb";
  emb.rows = 4;
  emb.bytes = 512;
  emb.bytes_bound = 4096;
  emb.rows_created = 9;
  emb.pushes_unadmitted = 11;
  emb.evicted_idle = 2;
  emb.evicted_norm = 1;
  emb.evicted_budget = 2;
  s.sparse_tables.push_back(emb);
  return s;
}

TEST(PrometheusTest, ServerMetricsNamesLabelsAndValues) {
  PrometheusWriter out;
  RenderServerMetrics(SampleServerStats(), out);
  const std::string text = out.Take();
  const std::map<std::string, std::string> m = Parse(text);
  const auto at = [&m](const std::string& key) {
    auto it = m.find(key);
    return it == m.end() ? std::string("<missing>") : it->second;
  };
  EXPECT_EQ(at("kairos_server_pushes_total{shard=\"1\"}"), "7");
  EXPECT_EQ(at("kairos_server_pulls_total{shard=\"1\"}"), "5");
  EXPECT_EQ(at("kairos_server_received_bytes_total{shard=\"1\"}"), "1000");
  EXPECT_EQ(at("kairos_server_sent_bytes_total{shard=\"1\"}"), "2000");
  EXPECT_EQ(at("kairos_server_wire_received_bytes_total{shard=\"1\"}"), "1100");
  EXPECT_EQ(at("kairos_server_wire_sent_bytes_total{shard=\"1\"}"), "2100");
  EXPECT_EQ(at("kairos_server_error_replies_total{shard=\"1\"}"), "2");
  EXPECT_EQ(at("kairos_server_dropped_messages_total{shard=\"1\"}"), "1");
  EXPECT_EQ(at("kairos_server_updates_total{shard=\"1\"}"), "9");
  EXPECT_EQ(at("kairos_server_coalesced_pushes_total{shard=\"1\"}"), "3");
  EXPECT_EQ(at("kairos_server_sparse_rows{shard=\"1\"}"), "4");
  EXPECT_EQ(at("kairos_server_sparse_bytes{shard=\"1\"}"), "512");
  EXPECT_EQ(at("kairos_sparse_table_rows{shard=\"1\",table=\"emb\"}"), "4");
  EXPECT_EQ(at("kairos_sparse_table_bytes{shard=\"1\",table=\"emb\"}"), "512");
  EXPECT_EQ(at("kairos_sparse_table_bytes_bound{shard=\"1\",table=\"emb\"}"), "4096");
  EXPECT_EQ(at("kairos_sparse_rows_created_total{shard=\"1\",table=\"emb\"}"), "9");
  EXPECT_EQ(at("kairos_sparse_pushes_unadmitted_total{shard=\"1\",table=\"emb\"}"), "11");
  EXPECT_EQ(at("kairos_sparse_rows_evicted_total{shard=\"1\",table=\"emb\",reason=\"idle\"}"), "2");
  EXPECT_EQ(at("kairos_sparse_rows_evicted_total{shard=\"1\",table=\"emb\",reason=\"norm\"}"), "1");
  EXPECT_EQ(at("kairos_sparse_rows_evicted_total{shard=\"1\",table=\"emb\",reason=\"budget\"}"),
            "2");
  EXPECT_EQ(at("kairos_refused_total{shard=\"1\",reason=\"bad_clock\"}"), "2");
  EXPECT_EQ(at("kairos_refused_total{shard=\"1\",reason=\"duplicates\"}"), "1");
  EXPECT_EQ(at("kairos_refused_total{shard=\"1\",reason=\"malformed\"}"), "0");
  EXPECT_EQ(at("kairos_waits_capped_total{shard=\"1\"}"), "6");
  EXPECT_EQ(at("kairos_handshakes_refused_total{shard=\"1\"}"), "8");
  EXPECT_EQ(at("kairos_pushes_total{shard=\"1\",worker=\"0\"}"), "3");
  EXPECT_EQ(at("kairos_pushes_total{shard=\"1\",worker=\"1\"}"), "4");
  EXPECT_EQ(at("kairos_pulls_total{shard=\"1\",worker=\"1\"}"), "3");
  EXPECT_EQ(at("kairos_blocked_reads_total{shard=\"1\",worker=\"1\"}"), "1");
  EXPECT_EQ(at("kairos_blocked_seconds_total{shard=\"1\",worker=\"1\"}"), "0.25");
  EXPECT_EQ(at("kairos_blocked_seconds_total{shard=\"1\",worker=\"0\"}"), "0");
  EXPECT_EQ(at("kairos_max_read_lead{shard=\"1\",worker=\"0\"}"), "2");
  EXPECT_EQ(at("kairos_dropped_pushes_total{shard=\"1\",worker=\"1\"}"), "1");
  EXPECT_EQ(at("kairos_refreshes_total{shard=\"1\",worker=\"1\"}"), "2");
  EXPECT_EQ(at("kairos_nonfinite_pushes_total{shard=\"1\",worker=\"1\"}"), "0");
  EXPECT_EQ(at("kairos_downweighted_pushes_total{shard=\"1\",worker=\"1\"}"), "0");
  EXPECT_EQ(at("kairos_dssp_zero_answers_total{shard=\"1\",worker=\"1\"}"), "0");
  EXPECT_EQ(at("kairos_dssp_grants_total{shard=\"1\",worker=\"1\"}"), "0");
  EXPECT_EQ(at("kairos_straggler{shard=\"1\",worker=\"0\"}"), "0");
  EXPECT_EQ(at("kairos_straggler{shard=\"1\",worker=\"1\"}"), "1");
  // Worker 1 pushed with staleness 0, 1, 2, 3 and scale 1 each time.
  EXPECT_EQ(at("kairos_push_staleness_bucket{shard=\"1\",worker=\"1\",le=\"0\"}"), "1");
  EXPECT_EQ(at("kairos_push_staleness_bucket{shard=\"1\",worker=\"1\",le=\"1\"}"), "2");
  EXPECT_EQ(at("kairos_push_staleness_bucket{shard=\"1\",worker=\"1\",le=\"3\"}"), "4");
  EXPECT_EQ(at("kairos_push_staleness_bucket{shard=\"1\",worker=\"1\",le=\"+Inf\"}"), "4");
  EXPECT_EQ(at("kairos_push_staleness_sum{shard=\"1\",worker=\"1\"}"), "6");
  EXPECT_EQ(at("kairos_push_staleness_count{shard=\"1\",worker=\"1\"}"), "4");
  EXPECT_EQ(at("kairos_push_scale_bucket{shard=\"1\",worker=\"1\",le=\"0.25\"}"), "0");
  EXPECT_EQ(at("kairos_push_scale_bucket{shard=\"1\",worker=\"1\",le=\"1\"}"), "4");
  EXPECT_EQ(at("kairos_push_scale_sum{shard=\"1\",worker=\"1\"}"), "4");
  EXPECT_EQ(at("kairos_push_value_staleness_count{shard=\"1\",worker=\"0\"}"), "0");
  EXPECT_EQ(at("kairos_push_value_staleness_bucket{shard=\"1\",worker=\"0\",le=\"+Inf\"}"), "0");
  // The HELP and TYPE of a few families, verbatim.
  EXPECT_THAT(text, HasSubstr("# HELP kairos_pushes_total Push messages the shard received "
                              "from the worker (applied, accumulated or dropped).\n"
                              "# TYPE kairos_pushes_total counter\n"
                              "kairos_pushes_total{shard=\"1\",worker=\"0\"} 3\n"
                              "kairos_pushes_total{shard=\"1\",worker=\"1\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE kairos_push_staleness histogram\n"
                              "kairos_push_staleness_bucket{shard=\"1\",worker=\"0\",le=\"0\"} "
                              "1\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE kairos_server_sparse_rows gauge\n"));
  // Checkpoints: the three counters; the clocks only once there is one.
  EXPECT_EQ(at("kairos_checkpoints_written_total{shard=\"1\"}"), "0");
  EXPECT_EQ(at("kairos_checkpoints_failed_total{shard=\"1\"}"), "0");
  EXPECT_EQ(at("kairos_checkpoints_skipped_total{shard=\"1\"}"), "0");
  EXPECT_EQ(m.count("kairos_last_checkpoint_clock{shard=\"1\"}"), 0u);
  EXPECT_EQ(m.count("kairos_restored_clock{shard=\"1\"}"), 0u);
  // The update log: 7 counters, all zero without a log.
  EXPECT_EQ(at("kairos_log_records_total{shard=\"1\"}"), "0");
  EXPECT_EQ(at("kairos_log_replayed_total{shard=\"1\"}"), "0");
  EXPECT_EQ(at("kairos_log_rebases_total{shard=\"1\"}"), "0");
  EXPECT_EQ(at("kairos_retries_answered_total{shard=\"1\"}"), "0");
  // 12 shard counters and gauges (2 of wire bytes), 3 checkpoint counters, 7 update-log
  // counters, 12 refusal reasons, waits capped, handshakes; 5 sparse-table families and 3
  // eviction reasons for the one sparse table; 12 per-worker families and 3 histograms (17
  // bounds, +Inf, _sum, _count) for each of 2 workers.
  EXPECT_EQ(m.size(), 12u + 3 + 7 + 12 + 1 + 1 + 5 + 3 + 2 * (12 + 3 * 20));
}

TEST(PrometheusTest, CheckpointClocksOnceThereAreAny) {
  ServerStats s;
  s.shard = 0;
  s.checkpoints_written = 3;
  s.last_checkpoint_clock = 12;
  s.restored_clock = 4;
  PrometheusWriter out;
  RenderServerMetrics(s, out);
  const std::string text = out.Take();
  EXPECT_THAT(text, HasSubstr("kairos_checkpoints_written_total{shard=\"0\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE kairos_last_checkpoint_clock gauge\n"
                              "kairos_last_checkpoint_clock{shard=\"0\"} 12\n"));
  EXPECT_THAT(text, HasSubstr("kairos_restored_clock{shard=\"0\"} 4\n"));
}

TEST(PrometheusTest, NoServerMetricsBeforeTheShardIsKnown) {
  ServerStats s;
  PrometheusWriter out;
  RenderServerMetrics(s, out);
  EXPECT_EQ(out.Take(), "");
}

TEST(PrometheusTest, CoordinatorMetrics) {
  CoordinatorStats s;
  s.phase = JobPhase::kRunning;
  s.servers_expected = 2;
  s.workers_expected = 3;
  s.servers_joined = 2;
  s.workers_joined = 3;
  s.servers_ready = 2;
  s.workers_active = 1;
  s.workers_finished = 1;
  s.workers_dead = 1;
  s.barriers_released = 4;
  s.barrier_waiting = 1;
  s.workers_rejoined = 6;
  s.servers_restarted = 7;
  s.servers_away = 1;
  s.refused.joins = 2;
  s.refused.waits_capped = 3;
  PrometheusWriter out;
  RenderCoordinatorMetrics(s, 5, {0, 2}, out);
  const std::string text = out.Take();
  const std::map<std::string, std::string> m = Parse(text);
  std::vector<std::string> samples;
  for (const auto& [key, value] : m) samples.push_back(key + " " + value);
  EXPECT_THAT(
      samples,
      ElementsAre("kairos_coordinator_active_workers 1", "kairos_coordinator_away_servers 1",
                  "kairos_coordinator_barrier_waiting 1",
                  "kairos_coordinator_barriers_total 4",
                  "kairos_coordinator_dead_nodes{role=\"server\"} 0",
                  "kairos_coordinator_dead_nodes{role=\"worker\"} 1",
                  "kairos_coordinator_expected_nodes{role=\"server\"} 2",
                  "kairos_coordinator_expected_nodes{role=\"worker\"} 3",
                  "kairos_coordinator_finished_workers 1",
                  "kairos_coordinator_joined_nodes{role=\"server\"} 2",
                  "kairos_coordinator_joined_nodes{role=\"worker\"} 3",
                  "kairos_coordinator_phase{phase=\"done\"} 0",
                  "kairos_coordinator_phase{phase=\"joining\"} 0",
                  "kairos_coordinator_phase{phase=\"running\"} 1",
                  "kairos_coordinator_phase{phase=\"starting\"} 0",
                  "kairos_coordinator_ready_servers 2",
                  "kairos_coordinator_server_restarts_total 7",
                  "kairos_coordinator_stragglers 2",
                  "kairos_coordinator_worker_rejoins_total 6",
                  "kairos_handshakes_refused_total 5", "kairos_refused_total{reason=\"joins\"} 2",
                  "kairos_refused_total{reason=\"malformed\"} 0",
                  "kairos_refused_total{reason=\"unauthenticated\"} 0",
                  "kairos_refused_total{reason=\"wrong_kind\"} 0", "kairos_waits_capped_total 3"));
  EXPECT_THAT(text, HasSubstr("# HELP kairos_coordinator_barriers_total Barriers released "
                              "(every active worker reached them).\n"
                              "# TYPE kairos_coordinator_barriers_total counter\n"));
}

}  // namespace
}  // namespace kairos::internal
