// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A job's CURVE keys: one key pair shared by every node of the job (docs/security.md).
// With keys (NodeOptions::keys, CoordinatorOptions::keys, ClusterOptions::keys) every tcp://
// and ipc:// connection of a node is encrypted and authenticated with ZeroMQ's CURVE, and
// only a peer that holds the same secret key can join, send or read. `kairos-keygen DIR`
// writes a key directory; LoadCurveKeys reads it back.
//
//   kairos::WorkerOptions options = ...;
//   KAIROS_ASSIGN_OR_RETURN(options.keys, kairos::LoadCurveKeys("/etc/kairos/job-7"));
//
// Thread-safety: the functions are thread-safe; CurveKeys is a value.

#ifndef KAIROS_KEYS_H_
#define KAIROS_KEYS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kairos/export.h"

namespace kairos {

// A CURVE key pair in Z85 text (40 characters each). The public key is derived from the
// secret key; CheckCurveKeys verifies that they belong together.
struct CurveKeys {
  std::string public_key;
  std::string secret_key;

  friend bool operator==(const CurveKeys&, const CurveKeys&) = default;
};

// The files of a key directory: the public key (mode 0644) and the secret key (mode 0600),
// each one line of Z85 text.
inline constexpr char kCurvePublicKeyFile[] = "public.key";
inline constexpr char kCurveSecretKeyFile[] = "secret.key";

// True when the ZeroMQ library kairos runs on was built with CURVE (libsodium).
KAIROS_EXPORT bool CurveAvailable();

// A fresh random key pair. FailedPrecondition when CURVE is not available.
KAIROS_EXPORT absl::StatusOr<CurveKeys> GenerateCurveKeys();

// OK when both keys are 40 characters of Z85 and the public key is the one of the secret
// key; InvalidArgument saying which check failed otherwise (never quoting the secret key).
KAIROS_EXPORT absl::Status CheckCurveKeys(const CurveKeys& keys);

// Reads the key pair of directory `dir` and checks it (CheckCurveKeys). Errors name the file:
// NotFound (no such directory or file), PermissionDenied (the secret key file can be read or
// written by its group or by others: chmod 600 it; or it cannot be read), InvalidArgument
// (not a key: wrong length, not Z85, a public key that is not the secret key's).
KAIROS_EXPORT absl::StatusOr<CurveKeys> LoadCurveKeys(const std::string& dir);

// Writes `keys` to directory `dir` (created with mode 0700 when missing, including its
// parents): the secret key file with mode 0600, the public key file with mode 0644, each
// written to a temporary file and renamed into place. AlreadyExists when `dir` already holds
// either file and `overwrite` is false; InvalidArgument when the keys fail CheckCurveKeys.
KAIROS_EXPORT absl::Status WriteCurveKeys(const std::string& dir, const CurveKeys& keys,
                                          bool overwrite);

}  // namespace kairos

#endif  // KAIROS_KEYS_H_
