#!/bin/bash
# Runs the ps-lite benchmark: 1 scheduler + 1 server + 1 worker over tcp 127.0.0.1.
# Usage: bench/pslite/run.sh [bench flags...]   e.g. ./run.sh --seconds=1 --warmup=0.25
# Exits non-zero if any of the three processes fails or times out.
set -u
cd "$(dirname "$0")"
BIN=${BIN:-${BUILD_DIR:-${TMPDIR:-/tmp}/kairos-pslite-bench}/pslite_bench}
[ -x "$BIN" ] || { echo "no $BIN: run bench/pslite/build.sh first" >&2; exit 1; }
TIMEOUT=${TIMEOUT:-180}
export DMLC_PS_ROOT_URI=127.0.0.1
export DMLC_PS_ROOT_PORT=${DMLC_PS_ROOT_PORT:-$((20000 + RANDOM % 20000))}
export DMLC_NODE_HOST=127.0.0.1
export DMLC_NUM_SERVER=1
export DMLC_NUM_WORKER=1
LOG=$(mktemp -d /tmp/pslite-bench.XXXXXX)

DMLC_ROLE=scheduler timeout $TIMEOUT "$BIN" "$@" >"$LOG/scheduler.out" 2>&1 & P_SCHED=$!
DMLC_ROLE=server    timeout $TIMEOUT "$BIN" "$@" >"$LOG/server.out" 2>&1 & P_SERVER=$!
DMLC_ROLE=worker    timeout $TIMEOUT "$BIN" "$@" 2>"$LOG/worker.err" & P_WORKER=$!

# If any process dies early (crash), stop the others instead of letting them
# hang in ps-lite's barrier / Wait until the timeout.
rc=0
declare -A NAME=([$P_SCHED]=scheduler [$P_SERVER]=server [$P_WORKER]=worker)
live=($P_SCHED $P_SERVER $P_WORKER)
while [ ${#live[@]} -gt 0 ]; do
  wait -n -p done_pid "${live[@]}"; r=$?
  live=($(for p in "${live[@]}"; do [ "$p" != "$done_pid" ] && echo $p; done))
  if [ $r -ne 0 ]; then
    echo "${NAME[$done_pid]} failed (exit $r)" >&2
    rc=1
    for p in "${live[@]}"; do kill $p 2>/dev/null; done
  fi
done
wait 2>/dev/null
if [ $rc -ne 0 ]; then
  for f in worker.err server.out scheduler.out; do
    echo "--- $f (tail)" >&2; tail -20 "$LOG/$f" >&2
  done
else
  rm -rf "$LOG"
fi
exit $rc
