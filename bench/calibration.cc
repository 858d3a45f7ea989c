// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The simulator's calibration: fitting, the file, and the comparison (calibration.h).

#include "bench/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"

namespace kairos::bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
// The smallest local time a profile holds (a clock's resolution): the simulator needs > 0.
constexpr double kMinProfileSeconds = 1e-7;
constexpr char kMagic[] = "kairos-calibration";
constexpr int kVersion = 1;

double Mean(const std::vector<double>& v) {
  if (v.empty()) return kNaN;
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

bool ValidName(absl::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' &&
        c != '-') {
      return false;
    }
  }
  return true;
}

// The parser's state: the file's name and the current line, for the messages.
class LineParser {
 public:
  LineParser(absl::string_view name, int line) : name_(name), line_(line) {}

  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(name_, ":", line_, ": ", what));
  }
  absl::Status Double(absl::string_view key, absl::string_view text, double lo, double hi,
                      bool lo_open, double* out) const {
    double v = 0;
    if (!absl::SimpleAtod(text, &v) || !std::isfinite(v) || v > hi || v < lo ||
        (lo_open && v == lo)) {
      return Error(absl::StrCat(key, ": '", text.substr(0, 40), "' is not a number in ",
                                lo_open ? "(" : "[", lo, ", ", hi, "]"));
    }
    *out = v;
    return absl::OkStatus();
  }
  absl::Status Int(absl::string_view key, absl::string_view text, int64_t lo, int64_t hi,
                   int64_t* out) const {
    int64_t v = 0;
    if (!absl::SimpleAtoi(text, &v) || v < lo || v > hi) {
      return Error(absl::StrCat(key, ": '", text.substr(0, 40), "' is not an integer in [",
                                lo, ", ", hi, "]"));
    }
    *out = v;
    return absl::OkStatus();
  }

 private:
  absl::string_view name_;
  int line_;
};

// The shortest of %.15g and %.17g that reads back as `v`.
std::string Exact(double v) {
  std::string text = absl::StrFormat("%.15g", v);
  double back = 0;
  if (!absl::SimpleAtod(text, &back) || back != v) text = absl::StrFormat("%.17g", v);
  return text;
}

}  // namespace

double Quantile(const std::vector<double>& sorted, double p) {
  const double position = std::clamp(p, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<size_t>(position);
  if (below + 1 >= sorted.size()) return sorted.back();
  const double frac = position - static_cast<double>(below);
  return sorted[below] + (sorted[below + 1] - sorted[below]) * frac;
}

absl::StatusOr<Calibration> Fit(const CalibrationSetting& setting,
                                const std::vector<RunMeasurement>& runs) {
  if (runs.empty()) return absl::InvalidArgumentError("calibration: no real run to fit");
  const int workers = runs.front().workers;
  if (workers < 1 || workers > kMaxCalibratedWorkers) {
    return absl::InvalidArgumentError(
        absl::StrCat("calibration: ", workers, " workers, need 1..", kMaxCalibratedWorkers));
  }
  Calibration c;
  c.setting = setting;
  c.runs = static_cast<int>(runs.size());
  std::vector<std::vector<double>> local(static_cast<size_t>(workers));
  std::vector<double> message_sum(static_cast<size_t>(workers), 0.0);
  std::vector<int64_t> count(static_cast<size_t>(workers), 0);
  std::vector<double> startups, gaps, all_local;
  for (const RunMeasurement& run : runs) {
    if (run.workers != workers) {
      return absl::InvalidArgumentError(absl::StrCat(
          "calibration: runs of ", workers, " and of ", run.workers, " workers"));
    }
    std::vector<double> first(static_cast<size_t>(workers), kInf);
    for (const IterationTimes& it : run.iterations) {
      if (it.rank < 0 || it.rank >= workers) {
        return absl::InvalidArgumentError(
            absl::StrCat("calibration: an iteration of rank ", it.rank, " of ", workers));
      }
      const auto r = static_cast<size_t>(it.rank);
      local[r].push_back(it.local_s);
      all_local.push_back(it.local_s);
      message_sum[r] += it.pull_s + it.push_s;
      ++count[r];
      first[r] = std::min(first[r], it.start_s);
    }
    for (size_t r = 0; r < run.gate_blocked_s.size() && r < message_sum.size(); ++r) {
      message_sum[r] -= run.gate_blocked_s[r];
    }
    std::vector<double> started;
    for (double f : first) {
      if (std::isfinite(f)) started.push_back(f);
    }
    if (!started.empty()) startups.push_back(Mean(started));
    for (size_t i = 1; i < run.evaluation_s.size(); ++i) {
      gaps.push_back(run.evaluation_s[i] - run.evaluation_s[i - 1]);
    }
  }
  std::vector<double> per_worker_message;
  for (int r = 0; r < workers; ++r) {
    std::vector<double>& v = local[static_cast<size_t>(r)];
    if (v.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("calibration: rank ", r, " ran no iteration in any run"));
    }
    std::sort(v.begin(), v.end());
    // k slices of (nearly) equal counts, each represented by its mean: the slices' mean is the
    // samples' mean, the rare slow iterations are in the last slices, and one extreme sample
    // weighs in its slice only.
    const size_t k = std::min<size_t>(kProfilePoints, v.size());
    std::vector<double> profile;
    for (size_t i = 0; i < k; ++i) {
      const size_t begin = v.size() * i / k, end = v.size() * (i + 1) / k;
      const double mean =
          std::accumulate(v.begin() + static_cast<std::ptrdiff_t>(begin),
                          v.begin() + static_cast<std::ptrdiff_t>(end), 0.0) /
          static_cast<double>(end - begin);
      profile.push_back(std::clamp(mean, kMinProfileSeconds, kMaxCalibratedSeconds));
    }
    c.profiles.push_back(std::move(profile));
    c.iterations += count[static_cast<size_t>(r)];
    per_worker_message.push_back(std::max(
        0.0, message_sum[static_cast<size_t>(r)] / static_cast<double>(count[static_cast<size_t>(r)])));
  }
  c.mean_local_s = Mean(all_local);
  c.mean_message_s = Mean(per_worker_message);
  c.latency_s = std::min(c.mean_message_s / 2, kMaxCalibratedSeconds);
  c.startup_s = startups.empty() ? 0.0 : std::clamp(Mean(startups), 0.0, kMaxCalibratedSeconds);
  if (!gaps.empty()) {
    std::sort(gaps.begin(), gaps.end());
    c.sample_interval_s = std::clamp(Quantile(gaps, 0.5), 1e-3, kMaxCalibratedSeconds);
  }
  return c;
}

sim::SimOptions ToSimOptions(const Calibration& c, int workers) {
  sim::SimOptions o;
  o.num_workers = workers;
  o.learning_rate = static_cast<float>(c.setting.learning_rate);
  o.batch_size = c.setting.batch;
  for (const std::vector<double>& profile : c.profiles) {
    std::vector<absl::Duration> q;
    for (double s : profile) q.push_back(absl::Seconds(s));
    o.compute.measured.push_back(std::move(q));
  }
  o.network.latency = absl::Seconds(c.latency_s);
  o.network.bandwidth_bytes_per_s = 0;  // infinite: the measured latency holds the transfer
  o.sample_interval = absl::Seconds(c.sample_interval_s);
  return o;
}

sim::FashionOptions ToModelOptions(const Calibration& c, const std::string& dir,
                                   uint64_t seed) {
  sim::FashionOptions o;
  o.dir = dir;
  o.max_train = c.setting.train_examples;
  o.max_test = c.setting.test_examples;
  o.mlp_hidden = c.setting.hidden;
  o.mlp.seed = seed;
  o.mlp.max_eval_examples = c.setting.test_examples;
  o.standardize = true;
  o.fallback.seed = seed;
  return o;
}

std::string Write(const Calibration& c) {
  std::string out = absl::StrCat(
      "# kairos simulator calibration (docs/simulator.md, \"Calibrating the simulator to "
      "your cluster\")\n",
      kMagic, " ", kVersion, "\n");
  const CalibrationSetting& s = c.setting;
  absl::StrAppend(&out, "scenario ", s.scenario, "\n", "model mlp ", s.hidden, "\n", "batch ",
                  s.batch, "\n");
  absl::StrAppend(&out, "learning_rate ", Exact(s.learning_rate), "\n");
  absl::StrAppend(&out, "train_examples ", s.train_examples, "\n", "test_examples ",
                  s.test_examples, "\n");
  absl::StrAppend(&out, "target_accuracy ", Exact(s.target_accuracy), "\n");
  absl::StrAppend(&out, "# fitted on ", c.runs, " real runs, ", c.iterations, " iterations\n",
                  "runs ", c.runs, "\n", "iterations ", c.iterations, "\n");
  absl::StrAppend(&out, "startup_s ", Exact(c.startup_s), "\nlatency_s ", Exact(c.latency_s),
                  "\nsample_interval_s ", Exact(c.sample_interval_s), "\nmean_local_s ",
                  Exact(c.mean_local_s), "\nmean_message_s ", Exact(c.mean_message_s), "\n");
  absl::StrAppend(&out, "workers ", c.profiles.size(), "\n",
                  "# profile <rank> <local times per iteration, s: equally likely slice means>\n");
  for (size_t r = 0; r < c.profiles.size(); ++r) {
    absl::StrAppend(&out, "profile ", r);
    for (double v : c.profiles[r]) absl::StrAppendFormat(&out, " %.6g", v);
    out += "\n";
  }
  return out;
}

absl::StatusOr<Calibration> Parse(absl::string_view text, absl::string_view name) {
  if (static_cast<int64_t>(text.size()) > kMaxCalibrationBytes) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", text.size(),
                                                   " bytes, more than the limit of ",
                                                   kMaxCalibrationBytes));
  }
  Calibration c;
  std::set<std::string> seen;
  std::map<int64_t, std::vector<double>> profiles;
  bool magic = false;
  int64_t workers = -1;
  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_number;
    const LineParser p(name, line_number);
    if (raw.size() > kMaxCalibrationLine) {
      return p.Error(absl::StrCat("line of ", raw.size(), " bytes, more than the limit of ",
                                  kMaxCalibrationLine));
    }
    const absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line.front() == '#') continue;
    std::vector<absl::string_view> f = absl::StrSplit(line, absl::ByAnyChar(" \t"),
                                                      absl::SkipEmpty());
    const std::string key(f[0]);
    if (!magic) {
      if (key != kMagic || f.size() != 2 || f[1] != absl::StrCat(kVersion)) {
        return p.Error(absl::StrCat("not a calibration file: the first line must be '",
                                    kMagic, " ", kVersion, "'"));
      }
      magic = true;
      continue;
    }
    if (key == "profile") {
      if (f.size() < 3) return p.Error("profile: need a rank and at least one time");
      int64_t rank = 0;
      if (absl::Status s = p.Int("profile rank", f[1], 0, kMaxCalibratedWorkers - 1, &rank);
          !s.ok()) {
        return s;
      }
      if (profiles.contains(rank)) return p.Error(absl::StrCat("profile ", rank, " repeated"));
      if (f.size() - 2 > static_cast<size_t>(kMaxFileProfilePoints)) {
        return p.Error(absl::StrCat("profile ", rank, ": ", f.size() - 2,
                                    " points, more than ", kMaxFileProfilePoints));
      }
      std::vector<double> q;
      for (size_t i = 2; i < f.size(); ++i) {
        double v = 0;
        if (absl::Status s = p.Double(absl::StrCat("profile ", rank, " point ", i - 2), f[i],
                                      0.0, kMaxCalibratedSeconds, true, &v);
            !s.ok()) {
          return s;
        }
        if (!q.empty() && v < q.back()) {
          return p.Error(absl::StrCat("profile ", rank, ": point ", i - 2, " (", v,
                                      ") is below the one before (", q.back(),
                                      "): the values are nondecreasing"));
        }
        q.push_back(v);
      }
      profiles[rank] = std::move(q);
      continue;
    }
    if (!seen.insert(key).second) return p.Error(absl::StrCat(key, " repeated"));
    const size_t want = key == "model" ? 3 : 2;
    if (f.size() != want) {
      return p.Error(absl::StrCat(key, ": expected ", want - 1, " value", want == 3 ? "s" : "",
                                  ", got ", f.size() - 1));
    }
    int64_t i = 0;
    absl::Status s;
    CalibrationSetting& st = c.setting;
    if (key == "scenario") {
      if (!ValidName(f[1])) return p.Error("scenario: need 1..64 of [A-Za-z0-9._-]");
      st.scenario = std::string(f[1]);
    } else if (key == "model") {
      if (f[1] != "mlp") return p.Error(absl::StrCat("model: only 'mlp' is known, got '",
                                                     f[1].substr(0, 40), "'"));
      s = p.Int("model mlp hidden units", f[2], 1, sim::kMaxMlpHidden, &i);
      st.hidden = static_cast<int>(i);
    } else if (key == "batch") {
      s = p.Int(key, f[1], 1, 4096, &i);
      st.batch = static_cast<int>(i);
    } else if (key == "learning_rate") {
      s = p.Double(key, f[1], 0.0, 100.0, true, &st.learning_rate);
    } else if (key == "train_examples") {
      s = p.Int(key, f[1], 1, 60000, &i);
      st.train_examples = static_cast<int>(i);
    } else if (key == "test_examples") {
      s = p.Int(key, f[1], 1, 10000, &i);
      st.test_examples = static_cast<int>(i);
    } else if (key == "target_accuracy") {
      s = p.Double(key, f[1], 0.0, 1.0, false, &st.target_accuracy);
    } else if (key == "runs") {
      s = p.Int(key, f[1], 0, 1000000, &i);
      c.runs = static_cast<int>(i);
    } else if (key == "iterations") {
      s = p.Int(key, f[1], 0, int64_t{1} << 50, &c.iterations);
    } else if (key == "startup_s") {
      s = p.Double(key, f[1], 0.0, kMaxCalibratedSeconds, false, &c.startup_s);
    } else if (key == "latency_s") {
      s = p.Double(key, f[1], 0.0, kMaxCalibratedSeconds, false, &c.latency_s);
    } else if (key == "sample_interval_s") {
      s = p.Double(key, f[1], 0.0, kMaxCalibratedSeconds, true, &c.sample_interval_s);
    } else if (key == "mean_local_s") {
      s = p.Double(key, f[1], 0.0, kMaxCalibratedSeconds, false, &c.mean_local_s);
    } else if (key == "mean_message_s") {
      s = p.Double(key, f[1], 0.0, kMaxCalibratedSeconds, false, &c.mean_message_s);
    } else if (key == "workers") {
      s = p.Int(key, f[1], 1, kMaxCalibratedWorkers, &workers);
    } else {
      return p.Error(absl::StrCat("unknown key '", key.substr(0, 40), "'"));
    }
    if (!s.ok()) return s;
  }
  const LineParser end(name, line_number);
  if (!magic) return end.Error(absl::StrCat("not a calibration file: no '", kMagic, "' line"));
  for (const char* required :
       {"scenario", "model", "batch", "learning_rate", "train_examples", "test_examples",
        "target_accuracy", "startup_s", "latency_s", "sample_interval_s", "workers"}) {
    if (!seen.contains(required)) return end.Error(absl::StrCat("missing '", required, "'"));
  }
  for (int64_t r = 0; r < workers; ++r) {
    auto it = profiles.find(r);
    if (it == profiles.end()) {
      return end.Error(absl::StrCat("missing 'profile ", r, "' (workers ", workers, ")"));
    }
    c.profiles.push_back(std::move(it->second));
  }
  if (!profiles.empty() && profiles.rbegin()->first >= workers) {
    return end.Error(absl::StrCat("profile ", profiles.rbegin()->first, " beyond workers ",
                                  workers));
  }
  return c;
}

absl::StatusOr<Calibration> ReadCalibration(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::string text(static_cast<size_t>(kMaxCalibrationBytes) + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error"));
  text.resize(static_cast<size_t>(in.gcount()));
  return Parse(text, path);
}

std::vector<double> Ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

double Spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return kNaN;
  const std::vector<double> ra = Ranks(a), rb = Ranks(b);
  const double ma = Mean(ra), mb = Mean(rb);
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (saa == 0 || sbb == 0) return kNaN;
  return sab / std::sqrt(saa * sbb);
}

double MeanPairwiseSpearman(const std::vector<std::vector<double>>& by_seed) {
  double sum = 0;
  int pairs = 0;
  for (size_t i = 0; i < by_seed.size(); ++i) {
    for (size_t j = i + 1; j < by_seed.size(); ++j) {
      const double r = Spearman(by_seed[i], by_seed[j]);
      if (std::isnan(r)) continue;
      sum += r;
      ++pairs;
    }
  }
  return pairs > 0 ? sum / pairs : kNaN;
}

double MeanPairwiseRelativeDifference(const std::vector<std::vector<double>>& by_seed) {
  double sum = 0;
  int64_t n = 0;
  for (size_t i = 0; i < by_seed.size(); ++i) {
    for (size_t j = i + 1; j < by_seed.size(); ++j) {
      for (size_t p = 0; p < std::min(by_seed[i].size(), by_seed[j].size()); ++p) {
        const double a = by_seed[i][p], b = by_seed[j][p];
        if (!std::isfinite(a) || !std::isfinite(b) || std::min(a, b) <= 0) continue;
        sum += std::abs(a - b) / std::min(a, b);
        ++n;
      }
    }
  }
  return n > 0 ? sum / static_cast<double>(n) : kNaN;
}

ComparisonSummary Compare(std::vector<PolicyComparison>& policies) {
  ComparisonSummary s;
  std::vector<double> real, predicted;
  double error_sum = 0;
  size_t best_real = 0, best_predicted = 0;
  for (size_t i = 0; i < policies.size(); ++i) {
    PolicyComparison& p = policies[i];
    p.relative_error = std::isfinite(p.real_s) && std::isfinite(p.predicted_s) && p.real_s > 0
                           ? (p.predicted_s - p.real_s) / p.real_s
                           : kNaN;
    if (!std::isnan(p.relative_error)) {
      error_sum += std::abs(p.relative_error);
      ++s.compared;
    }
    real.push_back(p.real_s);
    predicted.push_back(p.predicted_s);
    if (p.real_s < policies[best_real].real_s) best_real = i;
    if (p.predicted_s < policies[best_predicted].predicted_s) best_predicted = i;
  }
  s.mean_abs_error = s.compared > 0 ? error_sum / s.compared : kNaN;
  s.spearman = Spearman(real, predicted);
  const double real_best = policies[best_real].real_s;
  s.real_winner = std::isfinite(real_best) ? policies[best_real].policy : "";
  s.predicted_winner = std::isfinite(policies[best_predicted].predicted_s)
                           ? policies[best_predicted].policy
                           : "";
  const double picked = policies[best_predicted].real_s;
  s.winner_agrees = !s.real_winner.empty() && !s.predicted_winner.empty() && picked == real_best;
  s.regret = std::isfinite(real_best) && !s.predicted_winner.empty() ? picked / real_best - 1.0
                                                                     : kNaN;
  return s;
}

}  // namespace kairos::bench
