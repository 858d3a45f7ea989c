// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A shared object without the updater plugin entry point, for the loader's error.

extern "C" __attribute__((visibility("default"))) int kairos_not_a_plugin() { return 7; }
