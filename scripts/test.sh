#!/usr/bin/env bash
# The test command: installs the dependencies (libtorch, PyTorch and pybind11 included),
# builds kairos with its tests (Release, GCC, in build/), and runs every test with CTest.
# Extra arguments go to the configure step (e.g. -DKAIROS_WERROR=ON, as CI does).
# scripts/sanitized_checks.sh adds what CI checks besides (the suite under ASan and UBSan,
# the thread-safety analysis, the fuzzers; docs/testing.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh --torch
scripts/build.sh -DKAIROS_BUILD_TESTS=ON -DKAIROS_WITH_TORCH=ON -DKAIROS_WITH_PYTHON=ON "$@"
exec ctest --test-dir "${KAIROS_BUILD_DIR:-build}" --output-on-failure -j2 --timeout 600 \
  --no-tests=error
