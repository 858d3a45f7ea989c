#!/usr/bin/env bash
# Installs the dependencies, builds kairos with its tests, and runs every test with CTest;
# then compiles everything with clang's thread-safety analysis in build/thread-safety (the
# `thread-safety` preset: compiled, not run); then builds the fuzz targets with clang in
# build/fuzz (the `fuzz` preset) and runs their CTest tests (label `fuzz`: the seeds and
# regression inputs once, then ~25 s of fuzzing per target; docs/testing.md).
# KAIROS_SKIP_THREAD_SAFETY=1 and KAIROS_SKIP_FUZZ=1 leave those parts out.
# Extra arguments go to the configure step of the main build (e.g. -DKAIROS_WERROR=ON, as
# CI does). Exits non-zero when any part failed; a failed part does not stop the next.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
scripts/build.sh -DKAIROS_BUILD_TESTS=ON "$@"
status=0
ctest --test-dir "${KAIROS_BUILD_DIR:-build}" --output-on-failure -j2 --timeout 600 \
  --no-tests=error || status=$?

if [[ "${KAIROS_SKIP_THREAD_SAFETY:-}" == "1" ]]; then
  echo "test.sh: thread-safety analysis skipped (KAIROS_SKIP_THREAD_SAFETY=1)"
else
  # Every target that compiles code of the project (library, programs, benchmarks, tests):
  # the analysis runs in the compiler, so a warning (an error here) fails the build.
  if ! { cmake --preset thread-safety >/dev/null &&
         cmake --build --preset thread-safety -j "$(nproc)"; }; then
    echo "test.sh: the thread-safety build failed (docs/testing.md)" >&2
    status=1
  fi
fi

if [[ "${KAIROS_SKIP_FUZZ:-}" == "1" ]]; then
  echo "test.sh: fuzz targets skipped (KAIROS_SKIP_FUZZ=1)"
  exit "$status"
fi
# Only the fuzz targets and the layers they link are built; every object is instrumented.
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"
ctest --preset fuzz -j2 || status=$?
exit "$status"
