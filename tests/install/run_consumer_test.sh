#!/usr/bin/env bash
# The install test (registered with CTest as install.consumer by tests/install/CMakeLists.txt):
#   1. cmake --install <build dir> into a fresh temporary prefix;
#   2. checks the layout: headers, package files, and that every installed program finds
#      libkairos inside the prefix through its RPATH;
#   3. configures, builds and runs tests/install/consumer against that prefix only, and
#      expects exit 0 and the line "consumer ok" (and from its test on kairos::testing,
#      "consumer testing ok").
# Everything happens under one `mktemp -d` directory, removed on exit.
#
# Usage: run_consumer_test.sh --build-dir=DIR --consumer=DIR [--generator=NAME]
#                             [--cxx=COMPILER] [--config=TYPE] [--cxx-flags=FLAGS]
set -euo pipefail

build_dir="" consumer="" generator="" cxx="" config="" cxx_flags=""
for arg in "$@"; do
  case "$arg" in
    --build-dir=*) build_dir=${arg#*=} ;;
    --consumer=*) consumer=${arg#*=} ;;
    --generator=*) generator=${arg#*=} ;;
    --cxx=*) cxx=${arg#*=} ;;
    --config=*) config=${arg#*=} ;;
    --cxx-flags=*) cxx_flags=${arg#*=} ;;
    *) echo "run_consumer_test.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done
if [[ -z "$build_dir" || -z "$consumer" ]]; then
  echo "usage: run_consumer_test.sh --build-dir=DIR --consumer=DIR [--generator=NAME]" \
       "[--cxx=COMPILER] [--config=TYPE] [--cxx-flags=FLAGS]" >&2
  exit 2
fi

work=$(mktemp -d -t kairos-install-test.XXXXXXXX)
trap 'rm -rf -- "$work"' EXIT
prefix="$work/prefix"

fail() {
  echo "install test FAILED: $*" >&2
  exit 1
}

# Runs a command quietly; on failure prints its output and fails the test.
step() {
  local name=$1
  shift
  echo "-- $name"
  if ! "$@" >"$work/$name.log" 2>&1; then
    cat "$work/$name.log" >&2
    fail "$name: '$*' exited non-zero"
  fi
}

# 1. Install.
install_args=(--install "$build_dir" --prefix "$prefix")
[[ -n "$config" ]] && install_args+=(--config "$config")
step install cmake "${install_args[@]}"

# 2. Layout.
[[ -f "$prefix/include/kairos/kairos.h" ]] || fail "include/kairos/kairos.h not installed"
[[ -f "$prefix/include/kairos/testing/manual_env.h" ]] ||
  fail "include/kairos/testing/manual_env.h not installed"
config_file=$(find "$prefix" -path '*/cmake/kairos/kairosConfig.cmake' -print -quit)
[[ -n "$config_file" ]] || fail "kairosConfig.cmake not installed"
config_dir=$(dirname "$config_file")
for f in kairosConfigVersion.cmake kairosTargets.cmake; do
  [[ -f "$config_dir/$f" ]] || fail "$f not installed beside kairosConfig.cmake"
done
if compgen -G "$prefix/include/kairos/*.pb.h" >/dev/null; then
  fail "generated Protobuf headers leaked into include/kairos"
fi
shopt -s nullglob
for program in "$prefix"/bin/*; do
  [[ -x "$program" && -f "$program" ]] || continue
  # Without LD_LIBRARY_PATH, every library must resolve, and libkairos from the prefix.
  deps=$(env -u LD_LIBRARY_PATH ldd "$program") || fail "ldd $program failed"
  if grep -q 'not found' <<<"$deps"; then
    echo "$deps" >&2
    fail "$(basename "$program"): a shared library is not found (RPATH?)"
  fi
  kairos_lib=$(awk '/libkairos\.so/ { print $3 }' <<<"$deps")
  if [[ -n "$kairos_lib" && "$(realpath "$kairos_lib")" != "$(realpath "$prefix")"/* ]]; then
    fail "$(basename "$program") loads $kairos_lib, not the one in the prefix"
  fi
done
shopt -u nullglob

# 3. The consumer, which sees kairos only through the prefix.
configure_args=(-S "$consumer" -B "$work/build" "-DCMAKE_PREFIX_PATH=$prefix"
                -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
[[ -n "$generator" ]] && configure_args+=(-G "$generator")
[[ -n "$cxx" ]] && configure_args+=("-DCMAKE_CXX_COMPILER=$cxx")
[[ -n "$config" ]] && configure_args+=("-DCMAKE_BUILD_TYPE=$config")
[[ -n "$cxx_flags" ]] && configure_args+=("-DCMAKE_CXX_FLAGS=$cxx_flags"
                                          "-DCMAKE_EXE_LINKER_FLAGS=$cxx_flags")
step configure cmake "${configure_args[@]}"
found_dir=$(sed -n 's/^kairos_DIR:PATH=//p' "$work/build/CMakeCache.txt")
[[ "$(realpath "$found_dir")" == "$(realpath "$config_dir")" ]] \
  || fail "the consumer found kairos in '$found_dir', not in the test prefix"
build_args=(--build "$work/build")
[[ -n "$config" ]] && build_args+=(--config "$config")
step build cmake "${build_args[@]}"

echo "-- run"
status=0
output=$(cd "$work" && env -u LD_LIBRARY_PATH "$work/build/consumer" 2>&1) || status=$?
echo "$output"
[[ $status -eq 0 ]] || fail "consumer exited with status $status"
grep -qx 'consumer ok' <<<"$output" || fail "consumer did not print 'consumer ok'"
status=0
output=$(cd "$work" && env -u LD_LIBRARY_PATH "$work/build/consumer_testing" 2>&1) || status=$?
echo "$output"
[[ $status -eq 0 ]] || fail "consumer_testing exited with status $status"
grep -qx 'consumer testing ok' <<<"$output" ||
  fail "consumer_testing did not print 'consumer testing ok'"
echo "install test passed"
