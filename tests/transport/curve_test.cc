// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// CURVE: key pairs and key directories (kairos/keys.h).

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/keys.h"
#include "transport/transport.h"
#include "zmq.h"

namespace kairos::internal {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// How long a test waits for something that should happen within milliseconds.
constexpr absl::Duration kWait = absl::Seconds(10);
// A refusal is reported within a few reconnection intervals (100-200 ms each).
constexpr absl::Duration kPromptly = absl::Seconds(3);

CurveKeys NewKeys() {
  absl::StatusOr<CurveKeys> keys = GenerateCurveKeys();
  EXPECT_TRUE(keys.ok()) << keys.status();
  return keys.value_or(CurveKeys());
}

// A fresh directory under the test's temporary directory, removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string path = ::testing::TempDir() + "kairos-curve-test-XXXXXX";
    EXPECT_NE(::mkdtemp(path.data()), nullptr);
    path_ = path;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

int ModeOf(const std::string& path) {
  struct stat st = {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return static_cast<int>(st.st_mode & 07777);
}

void WriteText(const std::string& path, const std::string& text, int mode) {
  std::ofstream(path) << text;
  ASSERT_EQ(::chmod(path.c_str(), mode), 0);
}

// ------------------------------------------------------------------------- keys
TEST(CurveKeysTest, GeneratedKeysAreValidAndFresh) {
  ASSERT_TRUE(CurveAvailable());
  const CurveKeys a = NewKeys();
  const CurveKeys b = NewKeys();
  EXPECT_EQ(a.public_key.size(), 40u);
  EXPECT_EQ(a.secret_key.size(), 40u);
  EXPECT_TRUE(CheckCurveKeys(a).ok()) << CheckCurveKeys(a);
  EXPECT_NE(a, b);
}

TEST(CurveKeysTest, CheckRefusesMalformedAndMismatchedKeysWithoutQuotingThem) {
  const CurveKeys a = NewKeys();
  const CurveKeys b = NewKeys();
  CurveKeys short_key = a;
  short_key.secret_key.pop_back();
  absl::Status s = CheckCurveKeys(short_key);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("secret key must be 40 characters"));
  EXPECT_THAT(s.message(), Not(HasSubstr(short_key.secret_key)));

  CurveKeys not_z85 = a;
  not_z85.public_key[3] = '"';
  s = CheckCurveKeys(not_z85);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("public key is not Z85"));

  CurveKeys mixed{b.public_key, a.secret_key};
  s = CheckCurveKeys(mixed);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("not the secret key's"));
  EXPECT_THAT(s.message(), Not(HasSubstr(a.secret_key)));
}

TEST(CurveKeysTest, WrittenKeysLoadBackWithPrivateModes) {
  TempDir tmp;
  const std::string dir = tmp / "job/keys";  // parents are created too
  const CurveKeys keys = NewKeys();
  ASSERT_TRUE(WriteCurveKeys(dir, keys, /*overwrite=*/false).ok());
  EXPECT_EQ(ModeOf(dir), 0700);
  EXPECT_EQ(ModeOf(dir + "/secret.key"), 0600);
  EXPECT_EQ(ModeOf(dir + "/public.key"), 0644);
  absl::StatusOr<CurveKeys> loaded = LoadCurveKeys(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, keys);
  // Nothing but the two files (no temporary file left behind).
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 2);
}

TEST(CurveKeysTest, WriteRefusesToReplaceKeysUnlessAskedTo) {
  TempDir tmp;
  const CurveKeys first = NewKeys();
  const CurveKeys second = NewKeys();
  ASSERT_TRUE(WriteCurveKeys(tmp.path(), first, false).ok());
  absl::Status again = WriteCurveKeys(tmp.path(), second, false);
  EXPECT_TRUE(absl::IsAlreadyExists(again)) << again;
  EXPECT_THAT(again.message(), HasSubstr("already holds CURVE keys"));
  EXPECT_EQ(LoadCurveKeys(tmp.path()).value_or(CurveKeys()), first);
  ASSERT_TRUE(WriteCurveKeys(tmp.path(), second, /*overwrite=*/true).ok());
  EXPECT_EQ(LoadCurveKeys(tmp.path()).value_or(CurveKeys()), second);
  EXPECT_EQ(ModeOf(tmp / "secret.key"), 0600);
}

TEST(CurveKeysTest, LoadAcceptsSurroundingWhiteSpaceAndAReadOnlySecret) {
  TempDir tmp;
  const CurveKeys keys = NewKeys();
  WriteText(tmp / "secret.key", "  " + keys.secret_key + "\r\n\n", 0400);
  WriteText(tmp / "public.key", keys.public_key, 0444);
  absl::StatusOr<CurveKeys> loaded = LoadCurveKeys(tmp.path());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, keys);
}

TEST(CurveKeysTest, LoadErrorsNameTheFileAndTheProblem) {
  TempDir tmp;
  const CurveKeys keys = NewKeys();
  absl::StatusOr<CurveKeys> r = LoadCurveKeys(tmp / "missing");
  EXPECT_TRUE(absl::IsNotFound(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("missing does not exist"));

  r = LoadCurveKeys(tmp.path());  // empty directory
  EXPECT_TRUE(absl::IsNotFound(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("secret.key does not exist"));

  WriteText(tmp / "secret.key", keys.secret_key + "\n", 0644);
  WriteText(tmp / "public.key", keys.public_key + "\n", 0644);
  r = LoadCurveKeys(tmp.path());
  EXPECT_TRUE(absl::IsPermissionDenied(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("mode 0644"));
  EXPECT_THAT(r.status().message(), HasSubstr("chmod 600 " + (tmp / "secret.key")));

  ASSERT_EQ(::chmod((tmp / "secret.key").c_str(), 0600), 0);
  ASSERT_TRUE(LoadCurveKeys(tmp.path()).ok());

  WriteText(tmp / "public.key", keys.public_key.substr(0, 39) + "\n", 0644);
  r = LoadCurveKeys(tmp.path());
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("public.key: the public key must be 40"));

  WriteText(tmp / "public.key", std::string(40, ' ') + "x", 0644);
  r = LoadCurveKeys(tmp.path());
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();

  WriteText(tmp / "public.key", std::string(39, 'a') + "~", 0644);
  r = LoadCurveKeys(tmp.path());
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("not Z85"));

  WriteText(tmp / "public.key", NewKeys().public_key, 0644);
  r = LoadCurveKeys(tmp.path());
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("not the secret key's"));

  WriteText(tmp / "file", "x", 0644);
  r = LoadCurveKeys(tmp / "file");
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
}

}  // namespace
}  // namespace kairos::internal
