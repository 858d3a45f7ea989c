#!/usr/bin/env bash
# Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
#
# The export test (registered with CTest as install.exports by tests/install/CMakeLists.txt):
# libkairos.so is compiled with -fvisibility=hidden, and only what include/kairos/ marks
# KAIROS_EXPORT may leave it. Reads the dynamic symbol table (nm -DC --defined-only) and
#   1. fails on any symbol that is not
#        - a public name of namespace kairos (kairos::Name..., Name capitalised: the internal
#          namespaces kairos::internal, kairos::policy, kairos::wire, ... and the generated
#          Protobuf code are lower case), or its typeinfo or vtable;
#        - a weak or unique instance of a standard library template or class (W, V, u): the
#          C++ runtime merges these across libraries (std::make_shared's type tag, say);
#      so nothing of Protobuf, Abseil, spdlog, fmt, ZeroMQ or Eigen either; and on any whose
#      name (up to its parameter list) mentions an internal or a third-party namespace, such
#      as a standard template instantiated on an internal type;
#   2. fails when one of a few symbols that users need is missing (the export macro works).
#
# The same holds for libkairos_process.so (--process: the symbols it must have are its own).
#
# Usage: check_exports.sh --nm=NM --library=PATH/libkairos.so [--process]
set -euo pipefail

nm="" library="" process=0
for arg in "$@"; do
  case "$arg" in
    --nm=*) nm=${arg#*=} ;;
    --library=*) library=${arg#*=} ;;
    --process) process=1 ;;
    *) echo "check_exports.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done
if [[ -z "$nm" || -z "$library" ]]; then
  echo "usage: check_exports.sh --nm=NM --library=PATH/libkairos.so" >&2
  exit 2
fi

# "<kind> <demangled name>" per exported definition.
symbols=$("$nm" -DC --defined-only "$library" | sed -E 's/^[0-9a-f]+ //')
count=$(wc -l <<<"$symbols")
echo "-- $library exports $count symbols"

# kairos::testing::FaultyNetwork (kairos/testing/) is public API compiled into libkairos.
public='^[TWVDBRu] ((typeinfo for |typeinfo name for |vtable for )?kairos::(testing::)?[A-Z])'
runtime='^[WVu] ([^(]* )?(typeinfo for |typeinfo name for |vtable for )?std::'
foreign='kairos::[a-z_]+::|google::|absl::|spdlog::|fmt::|Eigen::|zmq'

unexpected=$(grep -Ev "$public|$runtime" <<<"$symbols" || true)
# The name of each symbol, without its parameter list.
leaked=$(sed 's/(.*//' <<<"$symbols" | grep -E "$foreign" |
           grep -Ev '^[TWVDBRu] ((typeinfo for |typeinfo name for |vtable for )?kairos::testing::[A-Z])' ||
         true)
status=0
if [[ -n "$unexpected" ]]; then
  echo "exports outside the public API:" >&2
  echo "$unexpected" >&2
  status=1
fi
if [[ -n "$leaked" ]]; then
  echo "exports that name internal or third-party code (names shown without parameters):" >&2
  echo "$leaked" >&2
  status=1
fi

# What a program using the API needs (a handful, one per kind of export).
wants=(
    'T kairos::Buffer::Allocate(unsigned long)'
    'T kairos::Worker::Create(kairos::WorkerOptions const&)'
    'T kairos::LocalCluster::Create(kairos::ClusterOptions const&)'
    'T kairos::ValidateJobConfig(kairos::JobConfig const&)'
    'T kairos::ParseLogLevel('
    'T kairos::Updater::ApplyMany('
    'T kairos::ParameterLayout::Add('
    'V typeinfo for kairos::Updater'
    'V vtable for kairos::Updater'
    'T kairos::Env::Default()'
    'T kairos::testing::FaultyNetwork::Create(')
if [[ $process -eq 1 ]]; then
  wants=(
      'T kairos::RunWorkers('
      'T kairos::ReadNodeEnvironment(kairos::NodeOptions&)'
      'T kairos::TuneProcessAllocator(')
fi
for want in "${wants[@]}"; do
  if ! grep -qF "$want" <<<"$symbols"; then
    echo "missing export: $want" >&2
    status=1
  fi
done

if [[ $status -ne 0 ]]; then
  echo "export test FAILED (KAIROS_EXPORT in include/kairos/, see kairos/export.h)" >&2
  exit 1
fi
echo "export test passed"
