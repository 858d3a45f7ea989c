#!/usr/bin/env bash
# Installs the dependencies, builds kairos with its tests, and runs every test with CTest.
# Extra arguments go to the configure step (e.g. -DKAIROS_WERROR=ON, as CI does).
# Exits with CTest's status.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
scripts/build.sh -DKAIROS_BUILD_TESTS=ON "$@"
exec ctest --test-dir "${KAIROS_BUILD_DIR:-build}" --output-on-failure -j2 --timeout 600 \
  --no-tests=error
