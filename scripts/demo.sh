#!/usr/bin/env bash
# Quick start: installs the dependencies, builds kairos, and runs the demo (linear
# regression trained by an in-process cluster).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
scripts/build.sh -DKAIROS_BUILD_EXAMPLES=ON
exec ./build/examples/linear_regression "$@"
