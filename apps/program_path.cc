// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "apps/program_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace kairos::launch {
namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string GetEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

absl::StatusOr<std::string> SearchPath(const std::string& name) {
  std::string path = GetEnv("PATH");
  for (absl::string_view dir : absl::StrSplit(path, ':')) {
    // An empty entry means the current directory, as for execvp.
    std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/", name);
    if (IsExecutableFile(candidate)) return candidate;
  }
  return absl::NotFoundError(absl::StrCat("no executable '", name, "' on PATH (", path, ")"));
}

}  // namespace

absl::StatusOr<std::string> FindProgram(std::string_view name_view) {
  std::string path(name_view);
  if (path.empty()) return absl::InvalidArgumentError("empty program name");
  if (path.find('/') == std::string::npos) return SearchPath(path);
  if (!IsExecutableFile(path)) {
    return absl::NotFoundError(absl::StrCat("'", path, "' is not an executable file"));
  }
  return path;
}

absl::StatusOr<std::string> FindKairosProgram(std::string_view name_view) {
  std::string name(name_view);
  if (std::string dir = GetEnv(kBinDirVariable); !dir.empty()) {
    std::string path = absl::StrCat(dir, "/", name);
    if (!IsExecutableFile(path)) {
      return absl::NotFoundError(
          absl::StrCat("no executable '", name, "' in ", kBinDirVariable, "=", dir));
    }
    return path;
  }
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    std::string sibling = (self.parent_path() / name).string();
    if (IsExecutableFile(sibling)) return sibling;
  }
  absl::StatusOr<std::string> on_path = SearchPath(name);
  if (!on_path.ok()) {
    return absl::NotFoundError(absl::StrCat("cannot find '", name, "': not next to ", self.string(),
                                            ", ", on_path.status().message(), "; set ",
                                            kBinDirVariable, " to its directory"));
  }
  return on_path;
}

}  // namespace kairos::launch
