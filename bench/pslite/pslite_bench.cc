// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ps-lite benchmark driver: one scheduler, one server, one worker (3 processes).
//
// Role comes from DMLC_ROLE (scheduler|server|worker); the usual ps-lite
// environment (DMLC_PS_ROOT_URI, DMLC_PS_ROOT_PORT, DMLC_NUM_SERVER,
// DMLC_NUM_WORKER, DMLC_NODE_HOST) configures the rendezvous.
//
// Server: KVServer<float>; push = in-place SGD (w -= 0.01 * g) on the stored
// value, reading the gradient straight out of the received ZeroMQ buffer;
// pull = respond with the stored SArray itself (ps-lite's ZMQ van sends it
// without copying).  One key per value: each workload uses key = value size
// in bytes, and its value is the whole payload (size/4 floats).
//
// Worker: zero-copy ZPush / ZPull.  Keeps `window` requests in flight: issue
// until `window` are outstanding, then Wait() on the oldest, repeat.
// Each workload: warm-up, drain, snapshot CPU (own getrusage + server's
// getrusage fetched by a control pull with cmd=kCmdRusage), run for the
// measured seconds, drain, snapshot again.
//
// Flags (worker only; server/scheduler ignore them):
//   --seconds=S        measured seconds per workload (default 1)
//   --warmup=S         warm-up seconds per workload (default 0.25)
//   --min-samples=N    minimum samples for lat workloads (default 20000)
//   --workloads=LIST   comma list of op:size[:window], op in push|pull|lat,
//                      size with optional K/M suffix (KiB/MiB), e.g.
//                      push:1M:16,pull:64M:4,push:64:1,lat:4K
//                      (lat = synchronous push, window 1, p50/p99 reported)
#include <sys/resource.h>
#include <sys/time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "ps/ps.h"

using namespace ps;

namespace {

const int kCmdRusage = 7;  // control pull: server answers its own CPU time

int64_t CpuMicros() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec +
         (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
}

double Now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// ---------------------------------------------------------------- server
struct Server {
  std::unordered_map<Key, SArray<float>> store;

  void Handle(const KVMeta& meta, const KVPairs<float>& req,
              KVServer<float>* srv) {
    if (meta.cmd == kCmdRusage) {
      int64_t us = CpuMicros();
      KVPairs<float> res;
      res.keys = req.keys;
      res.vals = SArray<float>(2, 0.0f);  // 8 bytes carrying an int64
      std::memcpy(res.vals.data(), &us, sizeof(us));
      srv->Response(meta, res);
      return;
    }
    CHECK_EQ(req.keys.size(), 1u) << "bench uses one key per request";
    Key key = req.keys[0];
    if (meta.push) {
      SArray<float>& w = store[key];
      size_t n = req.vals.size();
      if (w.size() != n) w = SArray<float>(n, 0.0f);
      float* wp = w.data();
      const float* gp = req.vals.data();
      for (size_t i = 0; i < n; ++i) wp[i] -= 0.01f * gp[i];
    }
    if (meta.pull) {
      auto it = store.find(key);
      CHECK(it != store.end()) << "pull of unknown key " << key;
      KVPairs<float> res;
      res.keys = req.keys;
      res.vals = it->second;  // zero-copy: shares the stored buffer
      srv->Response(meta, res);
    } else {
      srv->Response(meta);
    }
  }
};

// ---------------------------------------------------------------- worker
struct Workload {
  std::string op;  // push | pull | lat
  size_t bytes;
  int window;
};

size_t ParseSize(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  std::string suf(end);
  if (suf == "K" || suf == "k" || suf == "KiB") v *= 1024;
  else if (suf == "M" || suf == "m" || suf == "MiB") v *= 1024 * 1024;
  else if (!suf.empty() && suf != "B") {
    LOG(FATAL) << "bad size " << s;
  }
  return (size_t)v;
}

std::string SizeStr(size_t b) {
  char buf[32];
  if (b >= (1u << 20) && b % (1u << 20) == 0)
    snprintf(buf, sizeof(buf), "%zuMiB", b >> 20);
  else if (b >= 1024 && b % 1024 == 0)
    snprintf(buf, sizeof(buf), "%zuKiB", b >> 10);
  else
    snprintf(buf, sizeof(buf), "%zuB", b);
  return buf;
}

std::vector<std::string> Split(const std::string& s, char d) {
  std::vector<std::string> out;
  size_t p = 0;
  while (true) {
    size_t q = s.find(d, p);
    out.push_back(s.substr(p, q == std::string::npos ? q : q - p));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  return out;
}

const char* kDefaultWorkloads =
    "push:1M:1,push:1M:16,pull:1M:1,pull:1M:16,"
    "push:16M:1,push:16M:16,pull:16M:1,pull:16M:16,"
    "push:64M:4,pull:64M:4,"
    "push:64:1,push:64:16,push:1K:1,push:1K:16,"
    "lat:64,lat:4K";

class Bench {
 public:
  Bench(double seconds, double warmup, size_t min_samples)
      : kv_(0, 0), seconds_(seconds), warmup_(warmup),
        min_samples_(min_samples) {}

  int64_t ServerCpu() {
    SArray<Key> k(1, 0);
    SArray<float> v;
    kv_.Wait(kv_.ZPull(k, &v, nullptr, kCmdRusage));
    CHECK_EQ(v.size(), 2u);
    int64_t us;
    std::memcpy(&us, v.data(), sizeof(us));
    return us;
  }

  bool Run(const Workload& w) {
    const size_t n = w.bytes / sizeof(float);
    CHECK_GT(n, 0u);
    CHECK_EQ(n * sizeof(float), w.bytes) << "size must be a multiple of 4";
    const int win = w.op == "lat" ? 1 : std::max(1, w.window);
    const bool is_pull = w.op == "pull";

    SArray<Key> keys(1, (Key)w.bytes);  // one key per value, key = size
    SArray<float> grad(n, 1.0f);        // pushed gradient (shared by all)
    std::vector<SArray<float>> pulls;   // one result buffer per window slot
    if (is_pull) {
      pulls.resize(win);
      for (auto& p : pulls) p.resize(n, 0.0f);
    }
    // make sure the key exists on the server
    kv_.Wait(kv_.ZPush(keys, grad));

    std::deque<int> q;
    uint64_t issued = 0;
    auto issue = [&]() {
      int ts = is_pull ? kv_.ZPull(keys, &pulls[issued % win])
                       : kv_.ZPush(keys, grad);
      q.push_back(ts);
      ++issued;
    };
    auto drain = [&]() {
      while (!q.empty()) { kv_.Wait(q.front()); q.pop_front(); }
    };

    std::vector<double> lat;
    uint64_t ops = 0;
    double t0 = 0, t1 = 0;
    int64_t s0 = 0, s1 = 0, c0 = 0, c1 = 0;

    for (int phase = 0; phase < 2; ++phase) {
      bool measured = phase == 1;
      if (measured) {
        s0 = ServerCpu();
        c0 = CpuMicros();
        issued = 0;
      }
      double start = Now();
      double dur = measured ? seconds_ : warmup_;
      if (w.op == "lat") {
        if (measured) lat.reserve(std::max<size_t>(min_samples_, 1 << 16));
        while (true) {
          double a = Now();
          if (a - start >= dur && (!measured || lat.size() >= min_samples_))
            break;
          kv_.Wait(kv_.ZPush(keys, grad));
          double b = Now();
          if (measured) lat.push_back(b - a);
          ++issued;
        }
      } else {
        while (Now() - start < dur) {
          while ((int)q.size() < win) issue();
          kv_.Wait(q.front());
          q.pop_front();
        }
        drain();
      }
      if (measured) {
        t1 = Now();
        t0 = start;
        c1 = CpuMicros();
        s1 = ServerCpu();
        ops = issued;
      }
    }

    bool ok = true;
    if (is_pull) {
      // all pushes were uniform, so every element must be equal and < 0
      const SArray<float>& p = pulls[0];
      if (!(p.size() == n && p[0] == p[n - 1] && p[0] < 0)) {
        fprintf(stderr, "pull check failed: size %zu first %g last %g\n",
                p.size(), p.size() ? p[0] : 0.0, p.size() ? p[n - 1] : 0.0);
        ok = false;
      }
    }

    double el = t1 - t0;
    double mb = (double)ops * w.bytes / 1e6;
    double srv_cpu = (s1 - s0) / 1e6, wrk_cpu = (c1 - c0) / 1e6;
    double cpu = srv_cpu + wrk_cpu;
    char name[64];
    snprintf(name, sizeof(name), "%s %s w%d", w.op.c_str(),
             SizeStr(w.bytes).c_str(), win);
    printf("%-18s %8.3f %9llu %11.1f %9.1f %9.1f %9.2f %6.0f%% %6.0f%%",
           name, el, (unsigned long long)ops, ops / el, mb / el,
           mb > 0 ? cpu * 1e6 / mb : 0.0, ops ? cpu * 1e6 / ops : 0.0,
           srv_cpu / el * 100, wrk_cpu / el * 100);
    if (!lat.empty()) {
      std::sort(lat.begin(), lat.end());
      auto pct = [&](double p) {
        size_t i = std::min(lat.size() - 1, (size_t)(p * lat.size()));
        return lat[i] * 1e6;
      };
      printf(" %8.1f %8.1f", pct(0.50), pct(0.99));
    } else {
      printf(" %8s %8s", "-", "-");
    }
    printf("%s\n", ok ? "" : "  CHECK FAILED");
    fflush(stdout);
    return ok;
  }

 private:
  KVWorker<float> kv_;
  double seconds_, warmup_;
  size_t min_samples_;
};

}  // namespace

int main(int argc, char* argv[]) {
  double seconds = 1.0, warmup = 0.25;
  size_t min_samples = 20000;
  std::string wl = kDefaultWorkloads;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&](const char* f) -> const char* {
      size_t l = strlen(f);
      return a.compare(0, l, f) == 0 ? a.c_str() + l : nullptr;
    };
    if (const char* v = val("--seconds=")) seconds = atof(v);
    else if (const char* v = val("--warmup=")) warmup = atof(v);
    else if (const char* v = val("--min-samples=")) min_samples = atol(v);
    else if (const char* v = val("--workloads=")) wl = v;
    else {
      fprintf(stderr, "unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  std::vector<Workload> works;
  for (const auto& item : Split(wl, ',')) {
    if (item.empty()) continue;
    auto f = Split(item, ':');
    if (f.size() < 2 || f.size() > 3 ||
        (f[0] != "push" && f[0] != "pull" && f[0] != "lat")) {
      fprintf(stderr, "bad workload '%s' (want op:size[:window])\n",
              item.c_str());
      return 2;
    }
    works.push_back({f[0], ParseSize(f[1]), f.size() > 2 ? atoi(f[2].c_str()) : 1});
  }

  Start(0);
  int rc = 0;
  if (IsServer()) {
    auto* server = new KVServer<float>(0);
    auto* state = new Server();
    server->set_request_handle(
        [state](const KVMeta& m, const KVPairs<float>& d, KVServer<float>* s) {
          state->Handle(m, d, s);
        });
    RegisterExitCallback([server, state]() { delete server; delete state; });
  }
  if (IsWorker()) {
    Bench b(seconds, warmup, min_samples);
    printf("%-18s %8s %9s %11s %9s %9s %9s %7s %7s %8s %8s\n", "workload",
           "secs", "ops", "ops/s", "MB/s", "cpu_us/MB", "cpu_us/op",
           "srv_cpu", "wrk_cpu", "p50_us", "p99_us");
    fflush(stdout);
    for (const auto& w : works)
      if (!b.Run(w)) rc = 1;
  }
  Finalize(0, true);
  return rc;
}
