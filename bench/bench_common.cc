// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "bench/bench_common.h"

#include <fstream>
#include <iostream>
#include <set>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace kairos::bench {

uint64_t StatusBytes(int pid, const char* field) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, field) || !absl::ConsumePrefix(&rest, ":")) continue;
    uint64_t kib = 0;
    if (absl::SimpleAtoi(absl::StripSuffix(absl::StripAsciiWhitespace(rest), " kB"), &kib)) {
      return kib * 1024;
    }
  }
  return 0;
}

void AddBenchmarksOption(CLI::App& app, std::string& benchmarks, absl::string_view all) {
  app.add_option("--benchmarks", benchmarks,
                 absl::StrCat("Comma-separated workloads to run, in this order: ", all))
      ->capture_default_str();
}

absl::StatusOr<std::vector<std::string>> ParseBenchmarks(absl::string_view benchmarks,
                                                         absl::string_view all) {
  const std::set<std::string> known = absl::StrSplit(all, ',');
  std::vector<std::string> names;
  for (absl::string_view b : absl::StrSplit(benchmarks, ',', absl::SkipEmpty())) {
    if (!known.contains(std::string(b))) {
      return absl::InvalidArgumentError(absl::StrCat("unknown benchmark '", b, "'; known: ", all));
    }
    names.emplace_back(b);
  }
  return names;
}

void AddBudgetOptions(CLI::App& app, double& seconds, double& warmup) {
  app.add_option("--seconds", seconds, "Measured seconds per workload")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--warmup", warmup, "Unmeasured seconds before each measurement")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

void ApplyQuickBudget(const CLI::App& app, double& seconds, double& warmup) {
  if (app.count("--seconds") == 0) seconds = 0.1;
  if (app.count("--warmup") == 0) warmup = 0.05;
}

void AddServerBinaryOption(CLI::App& app, std::string& server_binary) {
  app.add_option("--server-binary", server_binary, "kairos-server for the memory workload")
      ->capture_default_str();
}

void AddCsvOption(CLI::App& app, std::string& csv) {
  app.add_option("--csv", csv, "Also write every result to this CSV file");
}

int BadFlags(absl::string_view program, absl::string_view message) {
  std::cerr << program << ": " << message << std::endl;
  return kExitBadFlags;
}

bool PrintFailures(absl::string_view program, absl::string_view noun, absl::string_view what,
                   const std::vector<std::string>& failures) {
  if (failures.empty()) return false;
  std::cerr << program << ": " << failures.size() << " " << noun
            << (failures.size() == 1 ? "" : "s") << " " << what << ":\n";
  for (const std::string& failure : failures) std::cerr << "  " << failure << "\n";
  return true;
}

}  // namespace kairos::bench
