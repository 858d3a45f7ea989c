#!/usr/bin/env bash
# Installs the dependencies, builds kairos with its tests, and runs every test with CTest;
# then builds the fuzz targets with clang in build/fuzz (the `fuzz` preset) and runs their
# CTest tests (label `fuzz`: the seeds and regression inputs once, then ~25 s of fuzzing
# per target; docs/testing.md). KAIROS_SKIP_FUZZ=1 leaves that second part out.
# Extra arguments go to the configure step of the main build (e.g. -DKAIROS_WERROR=ON, as
# CI does). Exits non-zero when either part failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
scripts/build.sh -DKAIROS_BUILD_TESTS=ON "$@"
status=0
ctest --test-dir "${KAIROS_BUILD_DIR:-build}" --output-on-failure -j2 --timeout 600 \
  --no-tests=error || status=$?

if [[ "${KAIROS_SKIP_FUZZ:-}" == "1" ]]; then
  echo "test.sh: fuzz targets skipped (KAIROS_SKIP_FUZZ=1)"
  exit "$status"
fi
# Only the fuzz targets and the layers they link are built; every object is instrumented.
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"
ctest --preset fuzz -j2 || status=$?
exit "$status"
