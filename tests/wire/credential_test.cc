// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Tests of worker credentials: fresh ones differ and are never zero, comparison needs every
// bit, and they travel in a header.

#include "wire/credential.h"

#include <set>
#include <utility>

#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

TEST(CredentialTest, NewCredentialsAreDistinctAndNeverEmpty) {
  std::set<std::pair<uint64_t, uint64_t>> seen;
  for (int i = 0; i < 1000; ++i) {
    absl::StatusOr<Credential> c = NewCredential();
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_FALSE(c->empty());
    EXPECT_TRUE(seen.insert({c->hi, c->lo}).second);
  }
}

TEST(CredentialTest, SameCredentialNeedsEveryBitAndNeverMatchesNone) {
  const Credential a{0x0123456789abcdefull, 0xfedcba9876543210ull};
  EXPECT_TRUE(SameCredential(a, a));
  for (int bit = 0; bit < 64; ++bit) {
    EXPECT_FALSE(SameCredential(a, Credential{a.hi ^ (uint64_t{1} << bit), a.lo}));
    EXPECT_FALSE(SameCredential(a, Credential{a.hi, a.lo ^ (uint64_t{1} << bit)}));
  }
  EXPECT_FALSE(SameCredential(Credential{}, Credential{}));
}

TEST(CredentialTest, TravelsInTheHeader) {
  const Credential a{1, 2};
  wire::Header h;
  EXPECT_TRUE(CredentialOf(h).empty());
  SetCredential(a, &h);
  wire::Header parsed;
  ASSERT_TRUE(parsed.ParseFromString(h.SerializeAsString()));
  EXPECT_TRUE(SameCredential(CredentialOf(parsed), a));
}

}  // namespace
}  // namespace kairos::internal
