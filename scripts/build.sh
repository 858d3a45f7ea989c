#!/usr/bin/env bash
# Configures and builds kairos (Release, Ninja) in ./build with every core.
# Extra arguments go to the configure step, e.g. scripts/build.sh -DKAIROS_BUILD_BENCH=OFF.
# KAIROS_BUILD_DIR overrides the build directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${KAIROS_BUILD_DIR:-build}

# A build directory configured by another generator cannot be reused by Ninja: start its
# configuration over (the cache only; sources are never touched).
cache="$build_dir/CMakeCache.txt"
if [[ -f "$cache" ]] && ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$cache"; then
  echo "build.sh: $build_dir was configured with another generator; reconfiguring with Ninja"
  rm -rf -- "$cache" "$build_dir/CMakeFiles"
fi

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build_dir" -j "$(nproc)"
