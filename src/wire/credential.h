// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A worker's credential: 128 random bits that the coordinator gives a worker when it joins
// (JOIN_REPLY) and every server when the job starts (START). A worker's PUSH, PULL, CLOCK
// and FINISH to a server carry it in the header; a server accepts such a message only when
// the credential is the one the coordinator gave for the header's sender. A node that never
// joined cannot guess it (docs/security.md).

#ifndef KAIROS_WIRE_CREDENTIAL_H_
#define KAIROS_WIRE_CREDENTIAL_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "wire/kairos.pb.h"

namespace kairos::internal {

struct Credential {
  uint64_t hi = 0;
  uint64_t lo = 0;
  // A zero credential is never issued, so "none" cannot match.
  bool empty() const { return hi == 0 && lo == 0; }
};

// 128 bits from the operating system's random source (getrandom); never the zero credential.
absl::StatusOr<Credential> NewCredential();

// Compares in time independent of where the two differ.
bool SameCredential(const Credential& a, const Credential& b);

inline Credential CredentialOf(const wire::Header& h) { return {h.token_hi(), h.token_lo()}; }
inline void SetCredential(const Credential& c, wire::Header* h) {
  h->set_token_hi(c.hi);
  h->set_token_lo(c.lo);
}

}  // namespace kairos::internal

#endif  // KAIROS_WIRE_CREDENTIAL_H_
