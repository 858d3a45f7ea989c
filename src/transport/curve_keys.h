// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Internals of the CURVE keys (kairos/keys.h) that the transport needs.

#ifndef KAIROS_TRANSPORT_CURVE_KEYS_H_
#define KAIROS_TRANSPORT_CURVE_KEYS_H_

#include <string>

#include "kairos/keys.h"

namespace kairos::internal {

// A CURVE key pair in the 32-byte binary form the ZeroMQ socket options take.
struct BinaryCurveKeys {
  std::string public_key;
  std::string secret_key;
};

// REQUIRES: CheckCurveKeys(keys).ok().
BinaryCurveKeys DecodeCurveKeys(const CurveKeys& keys);

}  // namespace kairos::internal

#endif  // KAIROS_TRANSPORT_CURVE_KEYS_H_
