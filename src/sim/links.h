// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Links: the simulated network with contention (NetworkOptions::serialize_links). Every
// node (the server and each worker) has a full-duplex link: an uplink for what it sends and
// a downlink for what it receives, each carrying one message at a time at the node's
// bandwidth, in the order the messages were sent. A message crosses the sender's uplink,
// the sender's latency, then the receiver's downlink, cut through: its bytes start down the
// receiver's link as soon as they arrive (one latency after they started up), and it has arrived
// once its last byte is down, no sooner than one latency after it left the uplink. Alone on both
// links a message takes latency + bytes / bandwidth, as NetworkOptions says without
// contention; the server's link, shared by every worker, is where their replies and pushes
// queue (BSP's replies all leave at once, one after the other).
//
// Thread-safety: none; one simulation owns it. Send must be called in non-decreasing `at`
// order per link (the simulation calls it when the message is sent, in event order).

#ifndef KAIROS_SIM_LINKS_H_
#define KAIROS_SIM_LINKS_H_

#include <vector>

#include "absl/time/time.h"

namespace kairos::sim {

class Links {
 public:
  // The server's node (shard 0's); shard i's is Shard(i).
  static constexpr int kServer = -1;
  static constexpr int Shard(int i) { return -1 - i; }

  // `worker_bandwidth` and `server_bandwidth` (each shard's) in bytes per second, 0:
  // infinite; a message from a worker takes `to_server` of latency, one from a shard
  // `to_worker`. REQUIRES: num_workers >= 1, num_shards >= 1, latencies >= 0, bandwidths
  // >= 0.
  Links(int num_workers, absl::Duration to_server, absl::Duration to_worker,
        double worker_bandwidth, double server_bandwidth, int num_shards = 1);

  // When a message of `bytes` sent by `from` to `to` at `at` has fully arrived (nodes:
  // a shard's or a worker's index), with both links reserved for it.
  absl::Time Send(int from, int to, double bytes, absl::Time at);

 private:
  struct Link {
    double bandwidth = 0.0;  // bytes per second, 0: infinite
    absl::Time up_free = absl::InfinitePast();
    absl::Time down_free = absl::InfinitePast();
    absl::Duration Time(double bytes) const {
      return bandwidth > 0.0 ? absl::Seconds(bytes / bandwidth) : absl::ZeroDuration();
    }
  };
  Link& Of(int node) {
    return node < 0 ? servers_[static_cast<size_t>(-1 - node)]
                    : workers_[static_cast<size_t>(node)];
  }

  const absl::Duration to_server_;
  const absl::Duration to_worker_;
  std::vector<Link> workers_;
  std::vector<Link> servers_;  // one per shard
};

}  // namespace kairos::sim

#endif  // KAIROS_SIM_LINKS_H_
