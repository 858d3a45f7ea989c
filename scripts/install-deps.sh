#!/usr/bin/env bash
# Installs the Debian 12 packages that kairos needs to build, test and run its examples.
# Idempotent: installs only what dpkg says is missing, and does nothing (not even
# `apt-get update`) when everything is there. Runs as root, or through sudo when not root.
#
#   scripts/install-deps.sh           # what the build, the demo and the C++ suite need
#   scripts/install-deps.sh --torch   # and libtorch, PyTorch, pybind11, NumPy and pytest
#                                     # (the optional PyTorch adapter, docs/pytorch.md)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config  # toolchain
  libzmq3-dev cppzmq-dev                        # transport
  libprotobuf-dev protobuf-compiler             # wire format
  libeigen3-dev libspdlog-dev libabsl-dev       # math, logging, Status and synchronization
  zlib1g-dev                                    # the simulator reads gzip'd Fashion-MNIST
  libcli11-dev                                  # command lines of the programs
  libcpp-httplib-dev                            # the /metrics endpoint (docs/operations.md)
  libgtest-dev libgmock-dev libbenchmark-dev    # tests and benchmarks
  clang-14 libclang-rt-14-dev                   # fuzz targets: clang, libFuzzer, ASan, UBSan
  dataset-fashion-mnist                         # data of the examples and benchmarks
  gnuplot-nox                                   # kairos_policy_bench draws its plots
  openmpi-bin                                   # mpirun, for jobs started by ranks (docs/multi_host.md)
  iproute2                                      # ip netns: the three-host test (docs/multi_host.md)
)
case "${1:-}" in
  "") ;;
  --torch)
    packages+=(libtorch-dev python3-torch pybind11-dev python3-pybind11 python3-numpy
               python3-pytest python3-dev) ;;
  *) echo "install-deps: unknown option '$1' (--torch or nothing)" >&2; exit 2 ;;
esac

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages are installed"
  exit 0
fi

as_root=()
if ((EUID != 0)); then
  if command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  else
    echo "install-deps: not root and no sudo; as root, run:" >&2
    echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}"
# Quiet unless something fails: apt's output goes to a log, shown on failure.
log=$(mktemp)
trap 'rm -f -- "$log"' EXIT
apt_get() {
  # sudo resets the environment, so DEBIAN_FRONTEND is passed through env.
  if ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "$@" >"$log" 2>&1; then
    cat "$log" >&2
    echo "install-deps: 'apt-get $*' failed" >&2
    exit 1
  fi
}
apt_get update -q
apt_get install -y -q --no-install-recommends "${missing[@]}"
echo "install-deps: done"
