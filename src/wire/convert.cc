// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "wire/convert.h"

namespace kairos::internal {

void ToWire(const absl::Status& status, wire::Status* out) {
  out->set_code(static_cast<int32_t>(status.code()));
  out->set_message(std::string(status.message()));
}

absl::Status FromWire(const wire::Status& status) {
  // A code from the network is any int32: one absl does not define becomes kUnknown, and
  // "OK" with a message is not OK-with-a-message (absl drops it) but stays OK.
  const int32_t code = status.code();
  const bool known = code >= 0 && code <= static_cast<int32_t>(absl::StatusCode::kUnauthenticated);
  return absl::Status(known ? static_cast<absl::StatusCode>(code) : absl::StatusCode::kUnknown,
                      status.message());
}

absl::Status StatusOf(const wire::Header& header) {
  return header.has_status() ? FromWire(header.status()) : absl::OkStatus();
}

void ToWire(const JobConfig& job, wire::JobConfig* out) {
  out->Clear();
  out->set_policy(job.policy);
  out->set_chunk_elements(job.chunk_elements);
  for (const TableSpec& t : job.tables) {
    wire::Table* w = out->add_tables();
    w->set_name(t.name);
    w->set_size(t.size);
    w->mutable_init()->set_kind(static_cast<int32_t>(t.init.kind));
    w->mutable_init()->set_a(t.init.a);
    w->mutable_init()->set_b(t.init.b);
    w->mutable_init()->set_seed(t.init.seed);
    w->mutable_updater()->set_name(t.updater.name);
    w->mutable_updater()->set_learning_rate(t.updater.learning_rate);
    w->mutable_updater()->set_schedule(t.updater.schedule);
    w->set_nonfinite(static_cast<int32_t>(t.nonfinite));
    w->set_kind(static_cast<int32_t>(t.kind));
    w->set_row_width(t.row_width);
    w->set_policy(t.policy);
    w->set_admit_min_count(t.admission.min_count);
    w->set_admit_probability(t.admission.probability);
    w->set_admit_filter_slots(t.admission.filter_slots);
    w->set_admit_read_zeros(!t.admission.read_initial);
    w->set_evict_idle_clocks(t.eviction.max_idle_clocks);
    w->set_evict_min_norm(t.eviction.min_norm);
    w->set_evict_sweep_every(t.eviction.sweep_every);
    w->set_evict_max_bytes(t.eviction.max_bytes);
    w->set_evict_order(static_cast<int32_t>(t.eviction.order));
    w->set_evict_idle_seconds(t.eviction.max_idle_seconds);
    w->set_compression(static_cast<int32_t>(t.compression));
    w->set_merge_pushes(t.merge_pushes);
    w->set_cache_clocks(t.cache_clocks);
    w->set_cache_rows(t.cache_rows);
    w->set_write_back_clocks(t.write_back_clocks);
  }
}

JobConfig FromWire(const wire::JobConfig& job) {
  JobConfig out;
  out.policy = job.policy();
  out.chunk_elements = job.chunk_elements();
  for (const wire::Table& w : job.tables()) {
    TableSpec t;
    t.name = w.name();
    t.size = w.size();
    t.init.kind = static_cast<Initializer::Kind>(w.init().kind());
    t.init.a = w.init().a();
    t.init.b = w.init().b();
    t.init.seed = w.init().seed();
    t.updater.name = w.updater().name();
    t.updater.learning_rate = w.updater().learning_rate();
    if (!w.updater().schedule().empty()) t.updater.schedule = w.updater().schedule();
    // Any int32 is a valid value of these enums' underlying type; ValidateJobConfig refuses
    // the ones that name nothing.
    t.nonfinite = static_cast<NonFinitePolicy>(w.nonfinite());
    t.kind = static_cast<TableKind>(w.kind());
    t.row_width = w.row_width();
    t.policy = w.policy();
    t.admission.min_count = w.admit_min_count();
    t.admission.probability = w.admit_probability();
    t.admission.filter_slots = w.admit_filter_slots();
    t.admission.read_initial = !w.admit_read_zeros();
    t.eviction.max_idle_clocks = w.evict_idle_clocks();
    t.eviction.min_norm = w.evict_min_norm();
    t.eviction.sweep_every = w.evict_sweep_every();
    t.eviction.max_bytes = w.evict_max_bytes();
    t.eviction.order = static_cast<RowEviction::Order>(w.evict_order());
    t.eviction.max_idle_seconds = w.evict_idle_seconds();
    // Compression's underlying type is 8 bits: a wider value becomes 255, which names
    // nothing either.
    t.compression = static_cast<Compression>(
        w.compression() >= 0 && w.compression() <= 255 ? w.compression() : 255);
    t.merge_pushes = w.merge_pushes();
    t.cache_clocks = w.cache_clocks();
    t.cache_rows = w.cache_rows();
    t.write_back_clocks = w.write_back_clocks();
    out.tables.push_back(std::move(t));
  }
  return out;
}

}  // namespace kairos::internal
