#!/bin/bash
# Builds ps-lite (a static library) and pslite_bench from a ps-lite checkout, with Debian's
# ZeroMQ (libzmq3-dev) and protobuf (libprotobuf-dev, protobuf-compiler), downloading
# nothing (ps-lite's own Makefile and CMake would download them).
#
#   PSLITE_DIR=/path/to/ps-lite bench/pslite/build.sh     # into $BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
PS="${PSLITE_DIR:?set PSLITE_DIR to a checkout of github.com/dmlc/ps-lite}"
OUT="${BUILD_DIR:-${TMPDIR:-/tmp}/kairos-pslite-bench}"
mkdir -p "$OUT"
CXXFLAGS="-O2 -std=c++14 -fPIC -DNDEBUG -I$PS/src -I$PS/include -I$OUT"
protoc --cpp_out="$OUT" --proto_path="$PS/src" "$PS/src/meta.proto"
objs=()
for f in "$OUT/meta.pb.cc" "$PS/src/customer.cc" "$PS/src/postoffice.cc" "$PS/src/van.cc"; do
  o="$OUT/$(basename "${f%.cc}").o"
  g++ $CXXFLAGS -c "$f" -o "$o"
  objs+=("$o")
done
rm -f "$OUT/libps.a"
ar rcs "$OUT/libps.a" "${objs[@]}"
g++ $CXXFLAGS "$here/pslite_bench.cc" -o "$OUT/pslite_bench" "$OUT/libps.a" -lzmq -lprotobuf \
  -lpthread
echo "built $OUT/pslite_bench"
