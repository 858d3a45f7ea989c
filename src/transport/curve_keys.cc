// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// CURVE key pairs: generation (zmq_curve_keypair), checks, and the key directory that
// kairos-keygen writes and every node reads (kairos/keys.h, docs/security.md).

#include "transport/curve_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "zmq.h"

namespace kairos {
namespace {

constexpr std::size_t kZ85KeyLength = 40;
constexpr std::size_t kBinaryKeyLength = 32;
constexpr std::string_view kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
// Key files are one line; anything longer is not a key file.
constexpr std::size_t kMaxKeyFileBytes = 4096;

absl::Status CheckKey(std::string_view what, const std::string& key) {
  if (key.size() != kZ85KeyLength) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the %s must be %d characters of Z85 text, got %d characters", what,
                        kZ85KeyLength, key.size()));
  }
  for (char c : key) {
    if (kZ85Alphabet.find(c) == std::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrFormat("the %s is not Z85 text (it has characters outside Z85)", what));
    }
  }
  return absl::OkStatus();
}

std::string Errno(int err) { return std::strerror(err); }

// Reads a key file: one line of Z85, surrounding white space ignored. The secret key file
// must not be accessible by group or others.
absl::StatusOr<std::string> ReadKeyFile(const std::string& path, bool secret) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(absl::StrCat("CURVE key file ", path, " does not exist"));
    }
    return absl::PermissionDeniedError(
        absl::StrCat("cannot read CURVE key file ", path, ": ", Errno(err)));
  }
  struct stat st = {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat("CURVE key file ", path, " is not a regular file"));
  }
  if (secret && (st.st_mode & 077) != 0) {
    ::close(fd);
    return absl::PermissionDeniedError(absl::StrFormat(
        "CURVE secret key file %s can be accessed by its group or by others (mode %04o); "
        "it must be private to its owner: chmod 600 %s",
        path, st.st_mode & 07777, path));
  }
  std::string text(kMaxKeyFileBytes + 1, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return absl::PermissionDeniedError(
          absl::StrCat("cannot read CURVE key file ", path, ": ", Errno(err)));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (got > kMaxKeyFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("CURVE key file ", path, " is too long to be a key file"));
  }
  text.resize(got);
  return std::string(absl::StripAsciiWhitespace(text));
}

// Writes `text` to `path` through a temporary file in the same directory, with `mode`; the
// final name appears complete or not at all. Without `overwrite` an existing `path` is an
// error (link() refuses to replace it, so the check and the write are one step).
absl::Status WriteKeyFile(const std::string& path, const std::string& text, mode_t mode,
                          bool overwrite) {
  std::string temp = path + ".XXXXXX";
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);  // mode 0600 from the start
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create a file next to ", path, ": ", Errno(errno)));
  }
  std::size_t done = 0;
  absl::Status status;
  while (done < text.size() && status.ok()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      status = absl::UnavailableError(absl::StrCat("cannot write ", temp, ": ", Errno(errno)));
    } else {
      done += static_cast<std::size_t>(n);
    }
  }
  if (status.ok() && ::fchmod(fd, mode) != 0) {
    status = absl::PermissionDeniedError(absl::StrCat("cannot chmod ", temp, ": ", Errno(errno)));
  }
  if (status.ok() && ::fsync(fd) != 0) {
    status = absl::UnavailableError(absl::StrCat("cannot write ", temp, ": ", Errno(errno)));
  }
  ::close(fd);
  if (status.ok()) {
    if (overwrite) {
      if (::rename(temp.c_str(), path.c_str()) != 0) {
        status =
            absl::PermissionDeniedError(absl::StrCat("cannot write ", path, ": ", Errno(errno)));
      }
    } else if (::link(temp.c_str(), path.c_str()) != 0) {
      const int err = errno;
      status =
          err == EEXIST
              ? absl::AlreadyExistsError(absl::StrCat(path, " already exists"))
              : absl::PermissionDeniedError(absl::StrCat("cannot write ", path, ": ", Errno(err)));
    }
  }
  ::unlink(temp.c_str());  // after rename() it no longer exists: harmless
  return status;
}

}  // namespace

bool CurveAvailable() { return zmq_has("curve") != 0; }

absl::StatusOr<CurveKeys> GenerateCurveKeys() {
  if (!CurveAvailable()) {
    return absl::FailedPreconditionError(
        "this ZeroMQ library was built without CURVE (libsodium); it cannot make keys");
  }
  char public_key[kZ85KeyLength + 1];
  char secret_key[kZ85KeyLength + 1];
  if (zmq_curve_keypair(public_key, secret_key) != 0) {
    return absl::InternalError(
        absl::StrCat("zmq_curve_keypair failed: ", zmq_strerror(zmq_errno())));
  }
  return CurveKeys{public_key, secret_key};
}

absl::Status CheckCurveKeys(const CurveKeys& keys) {
  if (absl::Status s = CheckKey("public key", keys.public_key); !s.ok()) return s;
  if (absl::Status s = CheckKey("secret key", keys.secret_key); !s.ok()) return s;
  if (!CurveAvailable()) {
    return absl::FailedPreconditionError(
        "this ZeroMQ library was built without CURVE (libsodium); CURVE keys cannot be used");
  }
  char derived[kZ85KeyLength + 1];
  if (zmq_curve_public(derived, keys.secret_key.c_str()) != 0) {
    return absl::InvalidArgumentError("the secret key is not a CURVE key");
  }
  if (keys.public_key != derived) {
    return absl::InvalidArgumentError(
        "the public key is not the secret key's (the two do not belong to one key pair)");
  }
  return absl::OkStatus();
}

absl::StatusOr<CurveKeys> LoadCurveKeys(const std::string& dir) {
  std::error_code error;
  const std::filesystem::file_status st = std::filesystem::status(dir, error);
  if (!std::filesystem::exists(st)) {
    return absl::NotFoundError(
        absl::StrCat("CURVE key directory ", dir, " does not exist (kairos-keygen makes one)"));
  }
  if (!std::filesystem::is_directory(st)) {
    return absl::InvalidArgumentError(absl::StrCat(dir, " is not a CURVE key directory"));
  }
  const std::string secret_path = (std::filesystem::path(dir) / kCurveSecretKeyFile).string();
  const std::string public_path = (std::filesystem::path(dir) / kCurvePublicKeyFile).string();
  CurveKeys keys;
  absl::StatusOr<std::string> secret = ReadKeyFile(secret_path, /*secret=*/true);
  if (!secret.ok()) return secret.status();
  keys.secret_key = *std::move(secret);
  absl::StatusOr<std::string> public_key = ReadKeyFile(public_path, /*secret=*/false);
  if (!public_key.ok()) return public_key.status();
  keys.public_key = *std::move(public_key);
  if (absl::Status s = CheckKey("secret key", keys.secret_key); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(secret_path, ": ", s.message()));
  }
  if (absl::Status s = CheckKey("public key", keys.public_key); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(public_path, ": ", s.message()));
  }
  if (absl::Status s = CheckCurveKeys(keys); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(dir, ": ", s.message()));
  }
  return keys;
}

absl::Status WriteCurveKeys(const std::string& dir, const CurveKeys& keys, bool overwrite) {
  if (absl::Status s = CheckCurveKeys(keys); !s.ok()) return s;
  const std::filesystem::path path(dir);
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    if (path.has_parent_path() && !path.parent_path().empty()) {
      std::filesystem::create_directories(path.parent_path(), error);
    }
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create directory ", dir, ": ", Errno(errno)));
    }
    // The umask may have taken bits away; the owner needs all three.
    ::chmod(dir.c_str(), 0700);
  } else if (!std::filesystem::is_directory(path, error)) {
    return absl::InvalidArgumentError(absl::StrCat(dir, " exists and is not a directory"));
  }
  const std::string secret_path = (path / kCurveSecretKeyFile).string();
  const std::string public_path = (path / kCurvePublicKeyFile).string();
  if (!overwrite) {
    for (const std::string& p : {secret_path, public_path}) {
      if (std::filesystem::exists(std::filesystem::symlink_status(p, error))) {
        return absl::AlreadyExistsError(
            absl::StrCat(dir, " already holds CURVE keys (", p,
                         "); replacing them locks out every node that has the old ones"));
      }
    }
  }
  if (absl::Status s = WriteKeyFile(secret_path, keys.secret_key + "\n", 0600, overwrite);
      !s.ok()) {
    return s;
  }
  return WriteKeyFile(public_path, keys.public_key + "\n", 0644, overwrite);
}

}  // namespace kairos

namespace kairos::internal {

BinaryCurveKeys DecodeCurveKeys(const CurveKeys& keys) {
  BinaryCurveKeys binary;
  binary.public_key.resize(kBinaryKeyLength);
  binary.secret_key.resize(kBinaryKeyLength);
  zmq_z85_decode(reinterpret_cast<uint8_t*>(binary.public_key.data()), keys.public_key.c_str());
  zmq_z85_decode(reinterpret_cast<uint8_t*>(binary.secret_key.data()), keys.secret_key.c_str());
  return binary;
}

}  // namespace kairos::internal
