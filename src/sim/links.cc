// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "sim/links.h"

#include <algorithm>

namespace kairos::sim {

Links::Links(int num_workers, absl::Duration to_server, absl::Duration to_worker,
             double worker_bandwidth, double server_bandwidth, int num_shards)
    : to_server_(to_server),
      to_worker_(to_worker),
      workers_(static_cast<size_t>(num_workers)),
      servers_(static_cast<size_t>(num_shards)) {
  for (Link& l : workers_) l.bandwidth = worker_bandwidth;
  for (Link& l : servers_) l.bandwidth = server_bandwidth;
}

absl::Time Links::Send(int from, int to, double bytes, absl::Time at) {
  Link& up = Of(from);
  Link& down = Of(to);
  const absl::Duration latency = from < 0 ? to_worker_ : to_server_;
  const absl::Time up_start = std::max(at, up.up_free);
  const absl::Time up_end = up_start + up.Time(bytes);
  up.up_free = up_end;
  const absl::Time down_start = std::max(up_start + latency, down.down_free);
  const absl::Time down_end = std::max(down_start + down.Time(bytes), up_end + latency);
  down.down_free = down_end;
  return down_end;
}

}  // namespace kairos::sim
