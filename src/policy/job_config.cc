// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "kairos/job.h"
#include "policy/cache_bound.h"
#include "policy/optimizer_spec.h"
#include "policy/policy.h"
#include "policy/table_policy.h"

namespace kairos {
namespace {

std::string InitName(const Initializer& i) {
  switch (i.kind) {
    case Initializer::Kind::kZeros:
      return "zeros";
    case Initializer::Kind::kConstant:
      return absl::StrFormat("constant(%g)", i.a);
    case Initializer::Kind::kUniform:
      return absl::StrFormat("uniform(%g, %g, seed %d)", i.a, i.b, i.seed);
    case Initializer::Kind::kNormal:
      return absl::StrFormat("normal(%g, %g, seed %d)", i.a, i.b, i.seed);
  }
  return absl::StrFormat("kind %d", static_cast<int>(i.kind));
}

bool Printable(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

absl::Status CheckInitializer(const TableSpec& t) {
  const Initializer& i = t.init;
  auto bad = [&](const char* why) {
    return absl::InvalidArgumentError(
        absl::StrFormat("table '%s': initializer %s: %s", t.name, InitName(i), why));
  };
  switch (i.kind) {
    case Initializer::Kind::kZeros:
      return absl::OkStatus();
    case Initializer::Kind::kConstant:
      return std::isfinite(i.a) ? absl::OkStatus() : bad("the value is not finite");
    case Initializer::Kind::kUniform:
      if (!std::isfinite(i.a) || !std::isfinite(i.b)) return bad("a bound is not finite");
      return i.a <= i.b ? absl::OkStatus() : bad("low > high");
    case Initializer::Kind::kNormal:
      if (!std::isfinite(i.a) || !std::isfinite(i.b)) return bad("a parameter is not finite");
      return i.b >= 0 ? absl::OkStatus() : bad("the standard deviation is negative");
  }
  return bad("unknown kind");
}

std::string AdmissionName(const RowAdmission& a) {
  return absl::StrFormat("(min_count %d, probability %g, filter_slots %d, read_initial %d)",
                         a.min_count, a.probability, a.filter_slots, a.read_initial);
}

std::string EvictionName(const RowEviction& e) {
  return absl::StrFormat(
      "(max_idle_clocks %d, max_idle_seconds %g, min_norm %g, sweep_every %d, max_bytes %d, "
      "order %d)",
      e.max_idle_clocks, e.max_idle_seconds, e.min_norm, e.sweep_every, e.max_bytes,
      static_cast<int>(e.order));
}

// RowAdmission and RowEviction: in range, and set only on sparse tables.
absl::Status CheckRowPolicies(const TableSpec& t) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrFormat("table '%s': %s", t.name, why));
  };
  const RowAdmission& a = t.admission;
  const RowEviction& e = t.eviction;
  if (!t.sparse() && (!(a == RowAdmission{}) || !(e == RowEviction{}))) {
    return bad("admission and eviction are for sparse tables; a dense table keeps the defaults");
  }
  if (a.min_count > 255) {
    return bad(absl::StrFormat("admission min_count is %d; at most 255", a.min_count));
  }
  if (!(a.probability > 0.0f && a.probability <= 1.0f)) {
    return bad(absl::StrFormat("admission probability %g is not in (0, 1]", a.probability));
  }
  if (a.filter_slots == 0 || a.filter_slots > (uint32_t{1} << 30)) {
    return bad(
        absl::StrFormat("admission filter_slots is %d; it must be in [1, 2^30]", a.filter_slots));
  }
  if (e.max_idle_clocks < 0) {
    return bad(
        absl::StrFormat("eviction max_idle_clocks is %d; it must be >= 0", e.max_idle_clocks));
  }
  if (!(e.max_idle_seconds >= 0 && e.max_idle_seconds <= 1e9)) {
    return bad(
        absl::StrFormat("eviction max_idle_seconds %g is not in [0, 1e9]", e.max_idle_seconds));
  }
  if (e.max_idle_clocks > 0 && e.max_idle_seconds > 0) {
    return bad("eviction max_idle_clocks and max_idle_seconds are both set; choose one");
  }
  if (!(std::isfinite(e.min_norm) && e.min_norm >= 0)) {
    return bad(absl::StrFormat("eviction min_norm %g is not finite and >= 0", e.min_norm));
  }
  if (e.sweep_every < 1 || e.sweep_every > (int64_t{1} << 40)) {
    return bad(
        absl::StrFormat("eviction sweep_every is %d; it must be in [1, 2^40]", e.sweep_every));
  }
  if (e.order != RowEviction::Order::kLeastRecent &&
      e.order != RowEviction::Order::kLeastFrequent) {
    return bad(absl::StrFormat("unknown eviction order %d", static_cast<int>(e.order)));
  }
  return absl::OkStatus();
}

std::string NonFiniteName(NonFinitePolicy p) {
  return p == NonFinitePolicy::kRefuse ? "refuse" : p == NonFinitePolicy::kSkip ? "skip" : "?";
}

// The canonical form of a policy spec, so that two spellings of one policy agree
// ("vsgd" and "ssp:s=3+weight=value"); the text itself when it does not parse.
std::string CanonicalPolicy(const std::string& text) {
  absl::StatusOr<policy::PolicySpec> spec = policy::ParsePolicySpec(text);
  return spec.ok() ? policy::ToString(*spec) : text;
}

}  // namespace

namespace {

// TableSpec::write_back_clocks: a worker's reported clock lags its own by up to N - 1 while
// it holds a push back, and its own reads of every table must still pass their gates.
absl::Status CheckWriteBack(const JobConfig& job, const policy::PolicySpec& job_spec,
                            const std::vector<policy::PolicySpec>& specs) {
  for (const TableSpec& t : job.tables) {
    const uint32_t n = t.write_back_clocks;
    if (n == 0) continue;
    if (n > kMaxWriteBackClocks) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table '%s': write_back_clocks %d is more than %d", t.name, n, kMaxWriteBackClocks));
    }
    if (job_spec.pull.kind == policy::PullSpec::Kind::kEager) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table '%s': write_back_clocks does not apply under eager pull (an eager push "
          "carries the next read)",
          t.name));
    }
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const policy::Tick s = policy::GateStaleness(specs[i]);
      if (s != policy::kUnbounded && static_cast<policy::Tick>(n) > s + 1) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "table '%s': write_back_clocks %d lags the worker's reported clock by up to %d, "
            "but table '%s' is gated with staleness %d: at most %d there",
            t.name, n, n - 1, job.tables[i].name, s, s + 1));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateJobConfig(const JobConfig& job) {
  if (job.tables.empty()) return absl::InvalidArgumentError("the job declares no table");
  if (job.tables.size() > kMaxTables) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the job declares %d tables; at most %d are allowed", job.tables.size(), kMaxTables));
  }
  if (job.chunk_elements == 0 || job.chunk_elements > kMaxChunkElements) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "chunk_elements is %d; it must be in [1, %d] (2^28)", job.chunk_elements,
        kMaxChunkElements));
  }
  if (job.policy.size() > kMaxPolicyLength) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the policy spec has %d characters; at most %d are allowed", job.policy.size(),
        kMaxPolicyLength));
  }
  std::set<std::string> names;
  uint64_t elements = 0;  // <= kMaxTables * kMaxTableElements: no overflow
  uint64_t chunks = 0;
  for (std::size_t i = 0; i < job.tables.size(); ++i) {
    const TableSpec& t = job.tables[i];
    if (t.name.empty() || t.name.size() > kMaxTableNameLength) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table %d: the name must have 1 to %d characters (it has %d)", i,
          kMaxTableNameLength, t.name.size()));
    }
    if (!Printable(t.name)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table %d: the name must be printable ASCII (it is '%s')", i,
          absl::CHexEscape(t.name)));
    }
    if (!names.insert(t.name).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("table '%s' is declared twice", t.name));
    }
    if (t.kind != TableKind::kDense && t.kind != TableKind::kSparse) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table '%s': unknown table kind %d (0 dense, 1 sparse)", t.name,
          static_cast<int>(t.kind)));
    }
    if (t.sparse()) {
      if (t.size != 0) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "table '%s': a sparse table has no size (every uint64 key is a row); size is %d, "
            "it must be 0",
            t.name, t.size));
      }
      if (t.row_width == 0 || t.row_width > kMaxRowWidth) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "table '%s': row_width is %d; a sparse table's rows must have 1 to %d (2^16) "
            "floats",
            t.name, t.row_width, kMaxRowWidth));
      }
    } else if (t.row_width != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table '%s': row_width is %d but the table is dense (row_width is for sparse "
          "tables; it must be 0)",
          t.name, t.row_width));
    } else if (t.size == 0 || t.size > kMaxTableElements) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table '%s': size is %d elements; it must be in [1, %d] (2^36, 256 GiB of float32)",
          t.name, t.size, kMaxTableElements));
    }
    if (!t.sparse()) {
      elements += t.size;
      chunks += (t.size - 1) / job.chunk_elements + 1;
    }
    if (absl::Status s = CheckInitializer(t); !s.ok()) return s;
    if (t.updater.name.empty() || t.updater.name.size() > kMaxUpdaterNameLength ||
        !Printable(t.updater.name)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table '%s': the updater name must be 1 to %d printable characters", t.name,
          kMaxUpdaterNameLength));
    }
    if (!std::isfinite(t.updater.learning_rate)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table '%s': the learning rate %g is not finite", t.name, t.updater.learning_rate));
    }
    if (t.updater.learning_rate < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table '%s': the learning rate %g is negative", t.name, t.updater.learning_rate));
    }
    if (t.updater.schedule.size() > kMaxScheduleLength || !Printable(t.updater.schedule)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table '%s': the learning-rate schedule must be at most %d printable characters", t.name,
          kMaxScheduleLength));
    }
    if (absl::StatusOr<policy::ScheduleSpec> s = policy::ParseSchedule(t.updater.schedule);
        !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("table '%s': %s", t.name, s.status().message()));
    }
    if (t.nonfinite != NonFinitePolicy::kRefuse && t.nonfinite != NonFinitePolicy::kSkip) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table '%s': unknown non-finite policy %d", t.name, static_cast<int>(t.nonfinite)));
    }
    if (absl::Status s = CheckRowPolicies(t); !s.ok()) return s;
    if (static_cast<int>(t.compression) > static_cast<int>(Compression::kInt8)) {
      return absl::InvalidArgumentError(absl::StrFormat("table '%s': unknown compression %d",
                                                        t.name, static_cast<int>(t.compression)));
    }
    if (t.cache_clocks > 0 && t.sparse() && t.cache_rows == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table '%s': a sparse table's cache_clocks needs cache_rows, the most rows a worker "
          "keeps",
          t.name));
    }
    if (t.cache_rows > 0 && (!t.sparse() || t.cache_clocks == 0)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table '%s': cache_rows applies to a sparse table with cache_clocks (a dense table "
          "keeps one copy per pull message)",
          t.name));
    }
    if (t.cache_rows > kMaxCacheRows) {
      return absl::InvalidArgumentError(absl::StrFormat("table '%s': cache_rows %d is more than %d",
                                                        t.name, t.cache_rows, kMaxCacheRows));
    }
    if (t.cache_clocks > kMaxCacheClocks) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table '%s': cache_clocks %d is more than %d", t.name, t.cache_clocks, kMaxCacheClocks));
    }
    if (t.policy.size() > kMaxPolicyLength || !Printable(t.policy)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("table '%s': the policy spec must be at most %d printable characters",
                          t.name, kMaxPolicyLength));
    }
  }
  if (elements > kMaxJobElements) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the job's tables hold %d elements together; at most %d (2^40) are allowed", elements,
        kMaxJobElements));
  }
  if (chunks > kMaxJobChunks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the job's tables make %d chunks of at most %d elements; at most %d (2^24) are "
        "allowed: raise chunk_elements",
        chunks, job.chunk_elements, kMaxJobChunks));
  }
  absl::StatusOr<policy::PolicySpec> spec = policy::ParsePolicySpec(job.policy);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<std::vector<policy::PolicySpec>> tables = policy::TablePolicies(job, *spec);
  if (!tables.ok()) return tables.status();
  return CheckWriteBack(job, *spec, *tables);
}

absl::Status CompareJobConfig(const JobConfig& ours, const JobConfig& theirs) {
  auto differs = [](const std::string& field, const std::string& got,
                    const std::string& want) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is %s here but %s in the job", field, got, want));
  };
  if (theirs.policy != ours.policy &&
      CanonicalPolicy(theirs.policy) != CanonicalPolicy(ours.policy)) {
    return differs("policy", "'" + theirs.policy + "'", "'" + ours.policy + "'");
  }
  if (theirs.chunk_elements != ours.chunk_elements) {
    return differs("chunk_elements", std::to_string(theirs.chunk_elements),
                   std::to_string(ours.chunk_elements));
  }
  if (theirs.tables.size() != ours.tables.size()) {
    return differs("the number of tables", std::to_string(theirs.tables.size()),
                   std::to_string(ours.tables.size()));
  }
  for (std::size_t i = 0; i < ours.tables.size(); ++i) {
    const TableSpec& a = ours.tables[i];
    const TableSpec& b = theirs.tables[i];
    const std::string where = absl::StrFormat("table %d ('%s')", i, a.name);
    if (b.name != a.name) return differs(absl::StrFormat("table %d's name", i), b.name, a.name);
    if (b.kind != a.kind) {
      return differs(where + " kind", b.sparse() ? "sparse" : "dense",
                     a.sparse() ? "sparse" : "dense");
    }
    if (b.row_width != a.row_width) {
      return differs(where + " row_width", std::to_string(b.row_width),
                     std::to_string(a.row_width));
    }
    if (b.size != a.size) {
      return differs(where + " size", std::to_string(b.size), std::to_string(a.size));
    }
    if (!(b.init == a.init)) return differs(where + " initializer", InitName(b.init), InitName(a.init));
    if (b.updater.name != a.updater.name &&
        policy::CanonicalOptimizer(b.updater.name) != policy::CanonicalOptimizer(a.updater.name)) {
      return differs(where + " updater", "'" + b.updater.name + "'", "'" + a.updater.name + "'");
    }
    if (b.updater.schedule != a.updater.schedule &&
        policy::CanonicalSchedule(b.updater.schedule) !=
            policy::CanonicalSchedule(a.updater.schedule)) {
      return differs(where + " schedule", "'" + b.updater.schedule + "'",
                     "'" + a.updater.schedule + "'");
    }
    if (b.policy != a.policy && (b.policy.empty() || a.policy.empty() ||
                                 CanonicalPolicy(b.policy) != CanonicalPolicy(a.policy))) {
      auto name = [](const std::string& p) { return p.empty() ? "the job's" : "'" + p + "'"; };
      return differs(where + " policy", name(b.policy), name(a.policy));
    }
    if (!(b.admission == a.admission)) {
      return differs(where + " admission", AdmissionName(b.admission), AdmissionName(a.admission));
    }
    if (!(b.eviction == a.eviction)) {
      return differs(where + " eviction", EvictionName(b.eviction), EvictionName(a.eviction));
    }
    if (b.compression != a.compression) {
      return differs(where + " compression", std::string(CompressionName(b.compression)),
                     std::string(CompressionName(a.compression)));
    }
    if (b.cache_clocks != a.cache_clocks) {
      return differs(where + " cache_clocks", absl::StrFormat("%d", b.cache_clocks),
                     absl::StrFormat("%d", a.cache_clocks));
    }
    if (b.write_back_clocks != a.write_back_clocks) {
      return differs(where + " write_back_clocks", absl::StrFormat("%d", b.write_back_clocks),
                     absl::StrFormat("%d", a.write_back_clocks));
    }
    if (b.cache_rows != a.cache_rows) {
      return differs(where + " cache_rows", absl::StrFormat("%d", b.cache_rows),
                     absl::StrFormat("%d", a.cache_rows));
    }
    if (b.merge_pushes != a.merge_pushes) {
      auto name = [](bool on) { return std::string(on ? "on" : "off"); };
      return differs(where + " merge_pushes", name(b.merge_pushes), name(a.merge_pushes));
    }
    if (b.nonfinite != a.nonfinite) {
      return differs(where + " nonfinite policy", NonFiniteName(b.nonfinite),
                     NonFiniteName(a.nonfinite));
    }
    if (b.updater.learning_rate != a.updater.learning_rate) {
      return differs(where + " learning_rate", absl::StrFormat("%g", b.updater.learning_rate),
                     absl::StrFormat("%g", a.updater.learning_rate));
    }
  }
  return absl::OkStatus();
}

}  // namespace kairos
