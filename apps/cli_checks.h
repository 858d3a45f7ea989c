// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// CLI11 checks shared by the kairos programs, with messages that name the bound (CLI11's
// own number checks print the largest double).

#ifndef KAIROS_APPS_CLI_CHECKS_H_
#define KAIROS_APPS_CLI_CHECKS_H_

#include <string>

#include "CLI/CLI.hpp"

namespace kairos::apps {

// The most processes of one kind (servers, workers) a command line may ask for.
inline constexpr int kMaxProcesses = 100000;

// A count of processes: an integer in [1, kMaxProcesses].
inline CLI::Range ProcessCount() { return CLI::Range(1, kMaxProcesses); }

// A duration in seconds: a number > 0, or >= 0 with `allow_zero`.
inline CLI::Validator Seconds(bool allow_zero) {
  return CLI::Validator(
      [allow_zero](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || value < 0 || (value == 0 && !allow_zero) ||
            value > 1e9) {
          return "'" + text + "' is not a number of seconds " + (allow_zero ? ">= 0" : "> 0") +
                 " (at most 1e9)";
        }
        return std::string();
      },
      allow_zero ? "SECONDS>=0" : "SECONDS>0");
}

}  // namespace kairos::apps

#endif  // KAIROS_APPS_CLI_CHECKS_H_
