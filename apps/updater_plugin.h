// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// Updater plugins for kairos-server (--updater-plugin PATH.so; docs/optimizers.md,
// "Plugins"): shared objects that export the entry point KAIROS_UPDATER_PLUGIN declares
// (include/kairos/updater.h), loaded with dlopen, and the factory a server uses with them.

#ifndef KAIROS_APPS_UPDATER_PLUGIN_H_
#define KAIROS_APPS_UPDATER_PLUGIN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kairos/updater.h"

namespace kairos::apps {

// Loads the plugin at `path` and returns its factory. The shared object stays loaded for
// the life of the process (its code backs the updaters it makes). NotFound for a missing
// file, InvalidArgument for a file dlopen refuses or one without the entry point (naming
// the symbol), each naming `path`.
absl::StatusOr<UpdaterFactory> LoadUpdaterPlugin(const std::string& path);

// A factory that asks each of `plugins` in turn and then `builtin`: a factory that answers
// NotFound does not know the name, and the next is asked; any other answer (an updater, or
// an error such as a bad parameter) is final. When no plugin knows the name the answer is
// `builtin`'s.
UpdaterFactory ChainUpdaterFactories(std::vector<UpdaterFactory> plugins, UpdaterFactory builtin);

}  // namespace kairos::apps

#endif  // KAIROS_APPS_UPDATER_PLUGIN_H_
