// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "bench/bench_report.h"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <numeric>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

#ifndef KAIROS_BENCH_BUILD_TYPE
#define KAIROS_BENCH_BUILD_TYPE ""
#endif
#ifndef KAIROS_BENCH_SANITIZE
#define KAIROS_BENCH_SANITIZE ""
#endif

namespace kairos::bench {
namespace {

// The value of the first line of `path` that starts with `key`, after the ':'.
std::string ProcField(const char* path, std::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  }
  return "";
}

bool SanitizedBuild() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

// A getrusage time in seconds.
double Seconds(const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; }

// A FormatSpec, not a const char*: clang checks StrFormat's format at compile time and
// refuses one that is not a constant there.
std::string Optional(const std::optional<double>& v, const absl::FormatSpec<double>& format) {
  return v.has_value() ? absl::StrFormat(format, *v) : "";
}

std::string CsvField(std::string text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

Throughput MakeThroughput(uint64_t ops, uint64_t value_bytes, double seconds,
                          const ProcessUsage& usage) {
  Throughput t;
  t.ops = ops;
  t.seconds = seconds;
  if (seconds > 0) {
    t.ops_per_s = ops / seconds;
    t.mb_per_s = static_cast<double>(ops) * value_bytes / seconds / kMegabyte;
  }
  if (ops > 0 && value_bytes > 0) {
    const double mb = static_cast<double>(ops) * value_bytes / kMegabyte;
    if (usage.cpu_seconds > 0) t.cpu_us_per_mb = 1e6 * usage.cpu_seconds / mb;
    t.faults_per_mb = static_cast<double>(usage.minor_faults) / mb;
  }
  return t;
}

ProcessUsage ReadProcessUsage() {
  struct rusage u;
  if (::getrusage(RUSAGE_SELF, &u) != 0) return {};
  return {Seconds(u.ru_utime) + Seconds(u.ru_stime), static_cast<uint64_t>(u.ru_minflt)};
}

ProcessUsage UsageSince(const ProcessUsage& begin) {
  const ProcessUsage now = ReadProcessUsage();
  return {now.cpu_seconds - begin.cpu_seconds, now.minor_faults - begin.minor_faults};
}

MachineInfo ReadMachineInfo() {
  MachineInfo m;
  m.cpu_model = ProcField("/proc/cpuinfo", "model name");
  m.cores = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  uint64_t kib = 0;
  if (absl::SimpleAtoi(absl::StripSuffix(ProcField("/proc/meminfo", "MemTotal"), " kB"), &kib)) {
    m.memory_bytes = kib * 1024;
  }
  struct utsname u;
  if (::uname(&u) == 0) m.kernel = absl::StrCat(u.sysname, " ", u.release);
  return m;
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string line;
  std::getline(in, line);
  return line;
}

namespace {

// Busy CPU seconds of the whole machine since boot (all cores): /proc/stat's first line
// without idle and iowait.
double MachineBusySeconds() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return (user + nice + system + irq + softirq + steal) / hz;
}

double OwnCpuSeconds() {
  struct rusage self, children;
  ::getrusage(RUSAGE_SELF, &self);
  ::getrusage(RUSAGE_CHILDREN, &children);
  return Seconds(self.ru_utime) + Seconds(self.ru_stime) + Seconds(children.ru_utime) +
         Seconds(children.ru_stime);
}

double WallSeconds() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

}  // namespace

OtherLoadMeter::OtherLoadMeter()
    : start_busy_s_(MachineBusySeconds()),
      start_own_s_(OwnCpuSeconds()),
      start_wall_s_(WallSeconds()) {}

double OtherLoadMeter::OtherCores() const {
  const double wall = WallSeconds() - start_wall_s_;
  const double other =
      std::max(0.0, (MachineBusySeconds() - start_busy_s_) - (OwnCpuSeconds() - start_own_s_));
  return wall > 0 ? other / wall : 0.0;
}

std::string OtherLoadMeter::Describe() const {
  const double wall = WallSeconds() - start_wall_s_;
  const double other_cores = OtherCores();
  const int cores = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  return absl::StrFormat("other processes used %.2f of %d cores (%.0f%%) over %.1f s",
                         other_cores, cores, 100 * other_cores / cores, wall);
}

std::string BuildType() { return KAIROS_BENCH_BUILD_TYPE; }

std::vector<std::string> BuildWarnings() {
  std::vector<std::string> warnings;
#ifndef NDEBUG
  warnings.push_back("built without NDEBUG: assertions are on; figures are not representative");
#endif
  if (BuildType() != "Release") {
    warnings.push_back(absl::StrFormat(
        "CMAKE_BUILD_TYPE is '%s', not Release: figures are not representative", BuildType()));
  }
  if (SanitizedBuild() || !std::string_view(KAIROS_BENCH_SANITIZE).empty()) {
    warnings.push_back(absl::StrFormat(
        "built with sanitizers (KAIROS_SANITIZE='%s'): figures are not representative",
        KAIROS_BENCH_SANITIZE));
  }
  return warnings;
}

void PrintHeader(std::string_view program, const std::vector<std::string>& settings) {
  const MachineInfo m = ReadMachineInfo();
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", std::localtime(&now));
  std::cout << program << "\n"
            << "Date:       " << date << "\n"
            << "CPU:        " << m.cores << " x " << m.cpu_model << "\n"
            << "Memory:     " << FormatSize(m.memory_bytes) << "\n"
            << "Kernel:     " << m.kernel << "\n"
            << "Load:       " << LoadAverage() << " (/proc/loadavg at start)\n"
            << "Build:      " << BuildType() << ", " << __VERSION__
#ifdef NDEBUG
            << ", NDEBUG"
#endif
            << "\n";
  for (const std::string& s : settings) std::cout << s << "\n";
  for (const std::string& w : BuildWarnings()) std::cout << "WARNING:    " << w << "\n";
  std::cout << std::string(100, '-') << std::endl;
}

void PrintFooter(const OtherLoadMeter& other_load) {
  std::cout << "Load:       " << LoadAverage() << " (/proc/loadavg at end, this run's threads "
            << "included)\n"
            << "Other load: " << other_load.Describe()
            << " while this ran; figures taken under load are low and noisy" << std::endl;
  for (const std::string& w : BuildWarnings()) std::cout << "WARNING:    " << w << "\n";
}

LatencySummary Summarize(std::vector<double>& samples_us) {
  LatencySummary s;
  s.samples = samples_us.size();
  auto at = [&](double q) {
    const std::size_t i =
        std::min(samples_us.size() - 1, static_cast<std::size_t>(q * samples_us.size()));
    std::nth_element(samples_us.begin(), samples_us.begin() + i, samples_us.end());
    return samples_us[i];
  };
  s.p50_us = at(0.50);
  s.p99_us = at(0.99);
  s.min_us = *std::min_element(samples_us.begin(), samples_us.end());
  s.mean_us = std::accumulate(samples_us.begin(), samples_us.end(), 0.0) / samples_us.size();
  return s;
}

absl::StatusOr<uint64_t> ParseSize(const std::string& text) {
  const std::string upper = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(text));
  absl::string_view t = upper;
  uint64_t unit = 1;
  for (auto [suffix, factor] : {std::pair{"KIB", uint64_t{1} << 10},
                                {"MIB", uint64_t{1} << 20},
                                {"GIB", uint64_t{1} << 30},
                                {"K", uint64_t{1} << 10},
                                {"M", uint64_t{1} << 20},
                                {"G", uint64_t{1} << 30},
                                {"B", uint64_t{1}}}) {
    if (absl::ConsumeSuffix(&t, suffix)) {
      unit = factor;
      break;
    }
  }
  uint64_t n = 0;
  if (!absl::SimpleAtoi(t, &n) || n == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a size (e.g. 4096, 4K, 64KiB, 1M)"));
  }
  return n * unit;
}

std::string FormatSize(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30)) {
    return absl::StrFormat("%.4g GiB", bytes / double(uint64_t{1} << 30));
  }
  if (bytes >= (uint64_t{1} << 20)) {
    return absl::StrFormat("%.4g MiB", bytes / double(uint64_t{1} << 20));
  }
  if (bytes >= (uint64_t{1} << 10)) return absl::StrFormat("%.4g KiB", bytes / 1024.0);
  return absl::StrFormat("%d B", bytes);
}

absl::Status Report::Open(const std::string& csv_path) {
  if (csv_path.empty()) return absl::OkStatus();
  csv_.open(csv_path, std::ios::out | std::ios::trunc);
  if (!csv_) return absl::InvalidArgumentError(absl::StrCat("cannot write ", csv_path));
  csv_ << "workload,value_bytes,servers,workers,policy,ops_per_s,mb_per_s,raw_ratio,"
          "cpu_us_per_mb,faults_per_mb,p50_us,p99_us,mean_us,samples,raw_p50_us,rss_bytes,"
          "baseline_rss_bytes,bound_bytes,note\n";
  return absl::OkStatus();
}

void Report::PrintColumns() const {
  std::cout << absl::StrFormat("%-12s %9s %2s %2s %9s %10s %7s %9s %7s %8s %8s  %s\n",
                               "workload", "value", "S", "W", "MB/s", "ops/s", "vs raw",
                               "CPU us/MB", "flt/MB", "p50 us", "p99 us", "note");
}

void Report::Add(const Result& r) {
  results_.push_back(r);
  const std::string s = r.servers > 0 ? absl::StrCat(r.servers) : "";
  const std::string w = r.workers > 0 ? absl::StrCat(r.workers) : "";
  std::optional<double> ratio_pct;
  if (r.raw_ratio.has_value()) ratio_pct = 100 * *r.raw_ratio;
  std::optional<double> p50, p99;
  if (r.latency.has_value()) {
    p50 = r.latency->p50_us;
    p99 = r.latency->p99_us;
  }
  std::cout << absl::StrFormat("%-12s %9s %2s %2s %9s %10s %7s %9s %7s %8s %8s  %s\n",
                               r.workload, FormatSize(r.value_bytes), s, w,
                               Optional(r.mb_per_s, "%.1f"), Optional(r.ops_per_s, "%.1f"),
                               Optional(ratio_pct, "%.1f%%"), Optional(r.cpu_us_per_mb, "%.1f"),
                               Optional(r.faults_per_mb, "%.1f"), Optional(p50, "%.1f"),
                               Optional(p99, "%.1f"), r.note)
            << std::flush;
  if (!csv_.is_open()) return;
  auto num = [](const auto& v) { return v.has_value() ? absl::StrCat(*v) : std::string(); };
  std::optional<double> mean;
  std::optional<uint64_t> samples;
  if (r.latency.has_value()) {
    mean = r.latency->mean_us;
    samples = r.latency->samples;
  }
  csv_ << absl::StrJoin(
              std::vector<std::string>{
                  r.workload, absl::StrCat(r.value_bytes), s, w, r.policy, num(r.ops_per_s),
                  num(r.mb_per_s), num(r.raw_ratio), num(r.cpu_us_per_mb),
                  num(r.faults_per_mb), num(p50), num(p99),
                  num(mean), num(samples), num(r.raw_p50_us), num(r.rss_bytes),
                  num(r.baseline_rss_bytes), num(r.bound_bytes), CsvField(r.note)},
              ",")
       << "\n"
       << std::flush;
}

WindowVerdict JudgeWindows(const std::vector<int>& windows, const std::vector<double>& mb_per_s,
                           double floor) {
  WindowVerdict v;
  double best_before = 0;  // the best of the windows so far
  for (std::size_t i = 0; i < windows.size(); ++i) {
    if (mb_per_s[i] > v.best_mb) {
      v.best_mb = mb_per_s[i];
      v.best_window = windows[i];
    }
    if (best_before > 0) {
      const double ratio = mb_per_s[i] / best_before;
      if (ratio < v.worst_ratio) {
        v.worst_ratio = ratio;
        v.worst_window = windows[i];
      }
      if (ratio < floor) v.ok = false;
    }
    best_before = std::max(best_before, mb_per_s[i]);
  }
  return v;
}

std::string WindowVerdict::ToString() const {
  if (worst_window == 0) {
    return absl::StrFormat("%s: best %.0f MB/s at window %d", ok ? "OK" : "COLLAPSE", best_mb,
                           best_window);
  }
  return absl::StrFormat("%s: best %.0f MB/s at window %d; lowest window %d at %.0f%% of the "
                         "best smaller window",
                         ok ? "OK" : "COLLAPSE", best_mb, best_window, worst_window,
                         100 * worst_ratio);
}

}  // namespace kairos::bench
