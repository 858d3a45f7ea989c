// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// kairos-keygen: writes the CURVE key pair of one job (kairos/keys.h, docs/security.md).
//
//   kairos-keygen DIR [--force]
//
// creates DIR (mode 0700) when missing and writes DIR/secret.key (mode 0600) and
// DIR/public.key (mode 0644), one line of Z85 each. It refuses to replace keys already in DIR
// unless --force is given: nodes holding the old keys would be locked out of the job. Every
// node of the job then takes DIR (--keys DIR, KAIROS_KEYS=DIR, or LoadCurveKeys(DIR)).
//
// Exit codes: 0 the keys were written; 1 they were not (DIR already holds keys, it cannot be
// written, or ZeroMQ was built without CURVE); 2 usage error.

#include <iostream>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kairos/keys.h"

namespace kairos::apps {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

int Main(int argc, char** argv) {
  CLI::App app(
      "Writes a new CURVE key pair for one kairos job into DIR: DIR/secret.key (mode 0600) "
      "and DIR/public.key. Give DIR to every node of the job (--keys DIR or KAIROS_KEYS=DIR); "
      "see docs/security.md.",
      "kairos-keygen");
  std::string dir;
  bool force = false;
  app.add_option("DIR", dir, "Directory of the keys; created with mode 0700 when missing")
      ->required();
  app.add_flag("--force", force,
               "Replace keys already in DIR (nodes holding the old keys can no longer join)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  absl::StatusOr<CurveKeys> keys = GenerateCurveKeys();
  if (!keys.ok()) {
    std::cerr << "kairos-keygen: " << keys.status().message() << std::endl;
    return kExitFailed;
  }
  if (absl::Status s = WriteCurveKeys(dir, *keys, force); !s.ok()) {
    std::cerr << "kairos-keygen: " << s.message()
              << (absl::IsAlreadyExists(s) ? "; pass --force to replace them" : "") << std::endl;
    return kExitFailed;
  }
  std::cout << "kairos-keygen: wrote " << dir << "/" << kCurveSecretKeyFile << " (mode 0600) and "
            << dir << "/" << kCurvePublicKeyFile << "\npublic key: " << keys->public_key
            << std::endl;
  return kExitOk;
}

}  // namespace
}  // namespace kairos::apps

int main(int argc, char** argv) { return kairos::apps::Main(argc, argv); }
