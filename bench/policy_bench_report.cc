// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "bench/policy_bench_report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace kairos::bench::policy_bench {
namespace {

std::string Fixed(double v, int decimals) {
  return std::isnan(v) ? std::string("-") : absl::StrFormat("%.*f", decimals, v);
}

std::string Csv(double v) { return std::isnan(v) ? std::string() : absl::StrFormat("%.6g", v); }

}  // namespace

void PrintColumns() {
  std::cout << absl::StrFormat("%-12s %-22s %4s %9s %10s %8s %9s %8s %8s %6s %6s %8s\n", "scenario",
                               "policy", "seed", "target_s", "target_it", "acc_end", "iters/s",
                               "blocked", "stale", "p99", "max", "time_s");
}

void PrintRun(const Run& r) {
  if (!r.error.empty()) {
    std::cout << absl::StrFormat("%-12s %-22s %4d error: %s\n", r.scenario, r.policy, r.seed,
                                 r.error);
    return;
  }
  std::cout << absl::StrFormat(
      "%-12s %-22s %4d %9s %10s %8.4f %9.1f %7.1f%% %8.2f %6.0f %6.0f %8.2f\n", r.scenario,
      r.policy, r.seed, Fixed(r.to_target_s, 2),
      r.iterations_to_target >= 0 ? absl::StrCat(r.iterations_to_target) : "-", r.final_accuracy,
      r.iterations_per_s, 100 * r.blocked_share, r.staleness_mean, r.staleness_p99, r.staleness_max,
      r.end_s);
  std::cout.flush();
}

Summary Summarize(const std::vector<const Run*>& runs) {
  Summary s;
  s.scenario = runs.front()->scenario;
  s.policy = runs.front()->policy;
  s.runs = static_cast<int>(runs.size());
  std::vector<double> target, iters, acc, ips, blocked, stale, p99;
  for (const Run* r : runs) {
    if (!r->error.empty()) {
      ++s.failed;
      continue;
    }
    // A run that never reached the target counts as infinitely slow in the median.
    target.push_back(std::isnan(r->to_target_s) ? std::numeric_limits<double>::infinity()
                                                : r->to_target_s);
    iters.push_back(r->iterations_to_target < 0 ? std::numeric_limits<double>::infinity()
                                                : static_cast<double>(r->iterations_to_target));
    if (!std::isnan(r->to_target_s)) ++s.reached;
    acc.push_back(r->final_accuracy);
    ips.push_back(r->iterations_per_s);
    blocked.push_back(r->blocked_share);
    stale.push_back(r->staleness_mean);
    p99.push_back(r->staleness_p99);
  }
  if (acc.empty()) return s;
  const auto finite = [](double v) { return std::isfinite(v) ? v : kNaN; };
  s.target_median = finite(Median(target));
  s.iters_target_median = finite(Median(iters));
  std::vector<double> reached;
  for (double t : target) {
    if (std::isfinite(t)) reached.push_back(t);
  }
  if (!reached.empty()) {
    s.target_min = *std::min_element(reached.begin(), reached.end());
    s.target_max = *std::max_element(reached.begin(), reached.end());
  }
  s.acc_median = Median(acc);
  s.acc_min = *std::min_element(acc.begin(), acc.end());
  s.acc_max = *std::max_element(acc.begin(), acc.end());
  s.ips_median = Median(ips);
  s.blocked_median = Median(blocked);
  s.stale_median = Median(stale);
  s.p99_median = Median(p99);
  return s;
}

void PrintSummaryColumns() {
  std::cout << absl::StrFormat("%-12s %-22s %7s %24s %10s %24s %9s %8s %8s %6s\n", "scenario",
                               "policy", "reached", "target_s [min, max]", "target_it",
                               "acc_end [min, max]", "iters/s", "blocked", "stale", "p99");
}

void PrintSummary(const Summary& s) {
  const std::string target = std::isnan(s.target_min)
                                 ? std::string("-")
                                 : absl::StrFormat("%s [%.2f, %.2f]", Fixed(s.target_median, 2),
                                                   s.target_min, s.target_max);
  const std::string acc =
      std::isnan(s.acc_median)
          ? std::string("-")
          : absl::StrFormat("%.4f [%.4f, %.4f]", s.acc_median, s.acc_min, s.acc_max);
  std::cout << absl::StrFormat("%-12s %-22s %3d/%-3d %24s %10s %24s %9.1f %7.1f%% %8.2f %6.0f%s\n",
                               s.scenario, s.policy, s.reached, s.runs, target,
                               Fixed(s.iters_target_median, 0), acc, s.ips_median,
                               100 * s.blocked_median, s.stale_median, s.p99_median,
                               s.failed > 0 ? absl::StrCat("  (", s.failed, " failed)") : "");
}

std::string Quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

absl::Status WriteCsvs(const std::string& dir, const std::vector<Run>& runs,
                       const std::vector<Summary>& summaries) {
  std::ofstream r(dir + "/runs.csv"), s(dir + "/samples.csv"), h(dir + "/staleness.csv"),
      m(dir + "/summary.csv");
  if (!r || !s || !h || !m) return absl::UnavailableError(absl::StrCat("cannot write in ", dir));
  r << "scenario,policy,seed,simulated,workers,servers,error,time_to_target_s,"
       "iterations_to_target,final_accuracy,final_loss,end_s,iterations,iterations_per_s,"
       "blocked_share,staleness_mean,staleness_p99,staleness_max,compute_share,slowed_share,"
       "other_cores,run_wall_s,local_ms_mean,local_ms_median,message_ms_mean\n";
  s << "scenario,policy,seed,simulated,time_s,iterations,test_accuracy,loss,train_loss\n";
  h << "scenario,policy,seed,staleness,pushes\n";
  for (const Run& x : runs) {
    r << absl::StrJoin({Quoted(x.scenario),
                        Quoted(x.policy),
                        absl::StrCat(x.seed),
                        absl::StrCat(x.simulated ? 1 : 0),
                        absl::StrCat(x.workers),
                        absl::StrCat(x.servers),
                        Quoted(x.error),
                        Csv(x.to_target_s),
                        x.iterations_to_target >= 0 ? absl::StrCat(x.iterations_to_target) : "",
                        Csv(x.final_accuracy),
                        Csv(x.final_loss),
                        Csv(x.end_s),
                        absl::StrCat(x.iterations),
                        Csv(x.iterations_per_s),
                        Csv(x.blocked_share),
                        Csv(x.staleness_mean),
                        Csv(x.staleness_p99),
                        Csv(x.staleness_max),
                        Csv(x.compute_share),
                        Csv(x.slowed_share),
                        Csv(x.other_cores),
                        Csv(x.run_wall_s),
                        Csv(x.local_ms_mean),
                        Csv(x.local_ms_median),
                        Csv(x.message_ms_mean)},
                       ",")
      << "\n";
    for (const Sample& p : x.samples) {
      s << absl::StrJoin(
               {Quoted(x.scenario), Quoted(x.policy), absl::StrCat(x.seed),
                absl::StrCat(x.simulated ? 1 : 0), Csv(p.time_s), absl::StrCat(p.iterations),
                Csv(p.accuracy), Csv(p.loss), Csv(p.train_loss)},
               ",")
        << "\n";
    }
    for (const auto& [value, count] : x.staleness) {
      h << Quoted(x.scenario) << "," << Quoted(x.policy) << "," << x.seed << "," << value << ","
        << count << "\n";
    }
  }
  m << "scenario,policy,runs,failed,reached,time_to_target_median,time_to_target_min,"
       "time_to_target_max,iterations_to_target_median,final_accuracy_median,"
       "final_accuracy_min,final_accuracy_max,iterations_per_s_median,blocked_share_median,"
       "staleness_mean_median,staleness_p99_median\n";
  for (const Summary& x : summaries) {
    m << absl::StrJoin(
             {Quoted(x.scenario), Quoted(x.policy), absl::StrCat(x.runs), absl::StrCat(x.failed),
              absl::StrCat(x.reached), Csv(x.target_median), Csv(x.target_min), Csv(x.target_max),
              Csv(x.iters_target_median), Csv(x.acc_median), Csv(x.acc_min), Csv(x.acc_max),
              Csv(x.ips_median), Csv(x.blocked_median), Csv(x.stale_median), Csv(x.p99_median)},
             ",")
      << "\n";
  }
  r.close();
  s.close();
  h.close();
  m.close();
  if (!r || !s || !h || !m) return absl::DataLossError(absl::StrCat("writing the CSVs in ", dir));
  return absl::OkStatus();
}

absl::StatusOr<std::string> WritePlots(const std::string& dir, const Scenario& sc,
                                       const std::vector<std::string>& policies,
                                       const std::vector<Run>& runs,
                                       const std::vector<Summary>& summaries) {
  const std::string base = absl::StrCat(dir, "/plots/", sc.name);
  std::ofstream curves(base + "_curves.dat"), bars(base + "_target.dat"),
      hist(base + "_staleness.dat"), gp(base + ".gp");
  if (!curves || !bars || !hist || !gp) {
    return absl::UnavailableError(absl::StrCat("cannot write ", base, "*"));
  }
  std::vector<std::string> titles;
  int bar_index = 0;
  for (const std::string& policy : policies) {
    titles.push_back(policy);
    const Run* first = nullptr;
    std::map<uint64_t, uint64_t> staleness;
    uint64_t pushes = 0;
    for (const Run& r : runs) {
      if (r.scenario != sc.name || r.policy != policy || !r.error.empty()) continue;
      if (first == nullptr) first = &r;
      for (const auto& [value, count] : r.staleness) {
        staleness[value] += count;
        pushes += count;
      }
    }
    // gnuplot's index blocks are separated by two blank lines; an empty block keeps the
    // numbering of the policies.
    curves << "# " << policy << "\n# time_s iterations accuracy loss\n";
    if (first != nullptr) {
      for (const Sample& s : first->samples) {
        curves << absl::StrFormat(
            "%.6g %d %s %s\n", s.time_s, s.iterations,
            std::isnan(s.accuracy) ? "NaN" : absl::StrFormat("%.6g", s.accuracy),
            std::isfinite(s.loss) ? absl::StrFormat("%.6g", s.loss) : "NaN");
      }
    } else {
      curves << "NaN NaN NaN NaN\n";
    }
    curves << "\n\n";
    hist << "# " << policy << "\n# staleness share_of_pushes\n";
    if (pushes == 0) hist << "0 NaN\n";
    for (const auto& [value, count] : staleness) {
      hist << value << " " << absl::StrFormat("%.6g", static_cast<double>(count) / pushes) << "\n";
    }
    hist << "\n\n";
    for (const Summary& s : summaries) {
      if (s.scenario != sc.name || s.policy != policy) continue;
      bars << bar_index << " " << Quoted(policy) << " "
           << (std::isnan(s.target_min) ? "NaN" : absl::StrFormat("%.6g", s.target_median)) << " "
           << (std::isnan(s.target_min) ? "NaN" : absl::StrFormat("%.6g", s.target_min)) << " "
           << (std::isnan(s.target_max) ? "NaN" : absl::StrFormat("%.6g", s.target_max)) << "\n";
    }
    ++bar_index;
  }
  const std::string time_label = sc.simulated ? "virtual time (s)" : "wall time (s)";
  const std::string name = sc.name;
  const int n = static_cast<int>(policies.size());
  const int cols = n <= 4 ? n : (n <= 9 ? 3 : 4);
  const int rows = (n + cols - 1) / cols;
  gp << "# kairos_policy_bench: the plots of scenario " << name << " (" << sc.describe
     << "). Run in the --out directory: gnuplot plots/" << name << ".gp\n"
     << "set terminal pngcairo size 1000,650 noenhanced\n"
     << "set datafile missing 'NaN'\n"
     << "titles = '" << absl::StrJoin(titles, " ") << "'\n"
     << "n = " << n << "\n"
     << "set key outside right\nset grid\n"
     << "curves = 'plots/" << name << "_curves.dat'\n";
  const struct {
    const char* file;
    const char* x;
    int xcol;
    int ycol;
    const char* y;
  } kCurves[] = {{"accuracy_time", "", 1, 3, "test accuracy"},
                 {"loss_time", "", 1, 4, "loss"},
                 {"accuracy_iterations", "iterations (all workers)", 2, 3, "test accuracy"},
                 {"loss_iterations", "iterations (all workers)", 2, 4, "loss"}};
  for (const auto& c : kCurves) {
    gp << "set output 'plots/" << name << "_" << c.file << ".png'\n"
       << "set title '" << name << ": " << c.y << " (" << sc.describe << ", first seed)'\n"
       << "set xlabel '" << (c.xcol == 1 ? time_label : std::string(c.x)) << "'\n"
       << "set ylabel '" << c.y << "'\n"
       << "plot for [i=0:n-1] curves index i using " << c.xcol << ":" << c.ycol
       << " with linespoints pointsize 0.5 title word(titles, i+1)\n";
  }
  gp << "set output 'plots/" << name << "_time_to_target.png'\n"
     << "set title '" << name << ": " << time_label
     << " to the target accuracy (median, bars: min-max over the seeds that reached it)'\n"
     << "set xlabel ''\nset ylabel '" << time_label << "'\nset key off\n"
     << "set style fill solid 0.5\nset boxwidth 0.6\nset xtics rotate by -45\n"
     << "set xrange [-0.5:n-0.5]\nset yrange [0:*]\n"
     << "plot 'plots/" << name << "_target.dat' using 1:3:xtic(2) with boxes, "
     << "'' using 1:3:4:5 with yerrorbars pointtype 0\n"
     << "unset xrange\nunset yrange\nset xtics norotate\n"
     << "set terminal pngcairo size 1400," << 300 * rows << " noenhanced\n"
     << "set output 'plots/" << name << "_staleness.png'\n"
     << "set multiplot layout " << rows << "," << cols << " title '" << name
     << ": staleness of the pushes (share of pushes, every seed)'\n"
     << "set xlabel 'staleness (updates)'\nset ylabel 'share'\nunset title\n"
     << "do for [i=0:n-1] {\n  set title word(titles, i+1)\n"
     << "  plot 'plots/" << name << "_staleness.dat' index i using 1:2 with boxes notitle\n}\n"
     << "unset multiplot\n";
  curves.close();
  bars.close();
  hist.close();
  gp.close();
  if (!curves || !bars || !hist || !gp) return absl::DataLossError(absl::StrCat("writing ", base));
  return absl::StrCat("plots/", name, ".gp");
}

bool HaveGnuplot() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

}  // namespace kairos::bench::policy_bench
