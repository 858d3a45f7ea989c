#!/usr/bin/env bash
# Configures and builds kairos (Release, Ninja) in ./build with every core.
#   scripts/build.sh [--target NAME]... [CONFIGURE_ARGS...]
# `--target NAME` (repeatable) builds only those targets and what they need (the demo builds
# only its example); without it, everything is built. Other arguments go to the configure
# step, e.g. scripts/build.sh -DKAIROS_BUILD_BENCH=OFF. KAIROS_BUILD_DIR overrides the build
# directory. Configuring again with the same arguments changes no compile line, so a later
# build (scripts/test.sh after scripts/demo.sh) compiles only what was not built yet.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${KAIROS_BUILD_DIR:-build}
targets=()
configure_args=()
while (($#)); do
  case "$1" in
    --target)
      if (($# < 2)); then
        echo "build.sh: --target needs a target name" >&2
        exit 2
      fi
      targets+=(--target "$2")
      shift 2
      ;;
    *)
      configure_args+=("$1")
      shift
      ;;
  esac
done

# A build directory configured by another generator cannot be reused by Ninja: start its
# configuration over (the cache only; sources are never touched).
cache="$build_dir/CMakeCache.txt"
if [[ -f "$cache" ]] && ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$cache"; then
  echo "build.sh: $build_dir was configured with another generator; reconfiguring with Ninja"
  rm -rf -- "$cache" "$build_dir/CMakeFiles"
fi

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${configure_args[@]}"
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
