// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "common/thread_checker.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace kairos::internal {

void ThreadChecker::Fail(const char* file, int line) const {
  // Plain stderr, not a logger: this runs on a thread that broke an invariant, and the
  // message must come out before the abort whatever the logging set-up.
  std::ostringstream threads;
  threads << "called on thread " << std::this_thread::get_id();
#ifndef NDEBUG
  threads << ", bound to thread " << bound_.load(std::memory_order_acquire);
#endif
  const std::string text = threads.str();
  std::fprintf(stderr, "%s:%d: KAIROS_DCHECK_ON_THREAD failed: %s only (%s)\n", file, line,
               name_, text.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace kairos::internal
