#!/usr/bin/env bash
# What CI checks besides scripts/test.sh, in one clang-14 tree (the `sanitize` preset,
# build/sanitize; docs/testing.md, "Sanitizers"): every object built with AddressSanitizer,
# UndefinedBehaviorSanitizer (fatal) and libFuzzer's coverage, clang's thread-safety
# analysis and warnings as errors (the build is that check); then the whole test suite runs
# there, the fuzz targets' tests included (their regression inputs and seeds once, then
# ~25 s of fuzzing each). Installs clang-14 and libFuzzer when missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
cmake --preset sanitize >/dev/null
cmake --build --preset sanitize -j "$(nproc)"
exec ctest --preset sanitize --timeout 900
