// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "wire/credential.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kairos::internal {

absl::StatusOr<Credential> NewCredential() {
  for (int attempt = 0; attempt < 16; ++attempt) {
    uint64_t bits[2];
    std::size_t got = 0;
    while (got < sizeof(bits)) {
      const ssize_t n = ::getrandom(reinterpret_cast<char*>(bits) + got, sizeof(bits) - got, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        return absl::InternalError(
            absl::StrCat("getrandom failed: ", std::strerror(errno)));
      }
      got += static_cast<std::size_t>(n);
    }
    const Credential c{bits[0], bits[1]};
    if (!c.empty()) return c;
  }
  return absl::InternalError("getrandom returned zeros 16 times");
}

bool SameCredential(const Credential& a, const Credential& b) {
  // volatile: keep the compiler from turning this into an early-exit comparison.
  volatile uint64_t diff = (a.hi ^ b.hi) | (a.lo ^ b.lo);
  return diff == 0 && !a.empty();
}

}  // namespace kairos::internal
