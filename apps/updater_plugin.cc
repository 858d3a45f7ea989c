// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "apps/updater_plugin.h"

#include <dlfcn.h>

#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kairos::apps {

absl::StatusOr<UpdaterFactory> LoadUpdaterPlugin(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return absl::NotFoundError(absl::StrCat("updater plugin '", path, "': no such file"));
  }
  // RTLD_NOW: an undefined symbol is an error here, not a crash at the first update.
  // RTLD_LOCAL: two plugins may define the same internal names.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return absl::InvalidArgumentError(absl::StrCat(
        "updater plugin '", path, "' cannot be loaded: ", why != nullptr ? why : "unknown error"));
  }
  ::dlerror();
  void* symbol = ::dlsym(handle, KAIROS_UPDATER_PLUGIN_SYMBOL);
  if (symbol == nullptr) {
    ::dlclose(handle);
    return absl::InvalidArgumentError(absl::StrCat(
        "updater plugin '", path, "' has no entry point '", KAIROS_UPDATER_PLUGIN_SYMBOL,
        "' (declare one with KAIROS_UPDATER_PLUGIN(factory); a plugin built for another "
        "version of the Updater interface exports another name)"));
  }
  using Entry = const UpdaterFactory* (*)();
  const UpdaterFactory* factory = reinterpret_cast<Entry>(symbol)();
  if (factory == nullptr || !*factory) {
    return absl::InvalidArgumentError(
        absl::StrCat("updater plugin '", path, "' returned no factory"));
  }
  return *factory;  // the handle stays open: the plugin's code backs its updaters
}

UpdaterFactory ChainUpdaterFactories(std::vector<UpdaterFactory> plugins, UpdaterFactory builtin) {
  return [plugins = std::move(plugins), builtin = std::move(builtin)](
             const UpdaterSpec& spec) -> absl::StatusOr<std::unique_ptr<Updater>> {
    for (const UpdaterFactory& plugin : plugins) {
      absl::StatusOr<std::unique_ptr<Updater>> made = plugin(spec);
      if (made.ok() && *made == nullptr) {
        return absl::InternalError(
            absl::StrCat("an updater plugin returned no updater for '", spec.name, "'"));
      }
      if (!absl::IsNotFound(made.status())) return made;
    }
    return builtin(spec);
  };
}

}  // namespace kairos::apps
