#!/usr/bin/env bash
# Shaped links between real processes (docs/lab.md, "Shaped links"): jobs run by
# scripts/lab/shaped_job.sh, each node in a network namespace of its own, measured by
# link_probe. Needs root (ip netns, tc); exit 77 (skipped) with the reason where that is not
# allowed, as apps.netns does.
#
#   shaped_links_test.sh SHAPED_JOB BIN_DIR LINK_PROBE
#
# 1. A server link of B Mbit/s: a pull of M bytes takes M/B, from 10 % less (the link shapes
#    it: never much faster) to 25 % more (the frames' headers take about 5 %; a loaded 2-core
#    VM's copies added up to 14 % in its slow periods; a link at half or twice the rate is
#    out either way).
# 2. A worker link of B Mbit/s (the server's unshaped): the same.
# 3. Two BSP workers pulling together through one server link: both pulls share it, so the
#    slower one takes 2M/B within the same band (the pulls queue at the server's link).
# 4. Links delayed by d one way at the worker and at the server: a round trip takes at
#    least 2d, and at most 2d + 5 ms.
set -uo pipefail

shaped_job=$1
export KAIROS_BIN_DIR=$2
probe=$3

tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
fail() {
  echo "FAILED: $*"
  [[ -f $tmp/out ]] && cat "$tmp/out"
  exit 1
}

# run NAME ARGS...: a job; its output in $tmp/out; exits 77 when the job was skipped.
run() {
  local name=$1
  shift
  "$shaped_job" --timeout 60 "$@" >"$tmp/out" 2>&1
  local rc=$?
  if ((rc == 77)); then
    echo "SKIPPED: $(tail -n 1 "$tmp/out")"
    exit 77
  fi
  ((rc == 0)) || fail "$name: the job exited $rc"
}

# check_pulls NAME EXPECTED_SECONDS: every "pull" line of the output within [0.9, 1.25] times
# it (the slowest pull of each rank, for the shared case).
check_pulls() {
  local name=$1 want=$2
  awk -v want="$want" -v name="$name" '
    $1 == "probe" && $4 == "pull" {
      n++; s = $6; ratio = s / want
      printf "%s: rank %s pulled %d bytes in %.3f s (M/B %.3f s, ratio %.3f)\n", name, $3, $5, s, want, ratio
      if (ratio < 0.9 || ratio > 1.25) bad++
    }
    END { if (n == 0) { print name ": no pull measured"; exit 1 } exit bad > 0 }' "$tmp/out" ||
    fail "$name: a pull is not within [0.9, 1.25] M/B = $want s"
}

seconds() {  # MIB MBIT [SHARERS]: the time of M MiB through B Mbit/s shared by N pulls
  awk -v m="$1" -v b="$2" -v n="${3:-1}" 'BEGIN { printf "%.4f", n * m * 1048576 * 8 / (b * 1e6) }'
}

# 1. The server's link.
run server-link -s 1 -w 1 --server-link 200 -- "$probe" --mib 24 --pulls 3 --pings 0
check_pulls server-link "$(seconds 24 200)"
echo "PASSED: a pull through a 200 Mbit/s server link takes M/B (0.9 to 1.25 times)"

# 2. The worker's link.
run worker-link -s 1 -w 1 --worker-link 100 -- "$probe" --mib 12 --pulls 3 --pings 0
check_pulls worker-link "$(seconds 12 100)"
echo "PASSED: a pull through a 100 Mbit/s worker link takes M/B (0.9 to 1.25 times)"

# 3. Two BSP workers through one server link. Their pulls start together (the same clock),
#    share the link, and end together: each takes about 2M/B.
#    A pull's own time also holds its wait for the other worker's clock, so the measure is
#    the rounds' total: K rounds of 2M/B.
run shared -s 1 -w 2 --server-link 200 -- "$probe" --mib 12 --pulls 3 --pings 0
awk -v want="$(seconds 12 200 2)" '$1 == "probe" && $4 == "pulls" {
       n++; per = $7 / $5; ratio = per / want
       printf "shared: rank %s pulled %d times in %.3f s, %.3f s a round (2M/B %.3f s, ratio %.3f)\n", $3, $5, $7, per, want, ratio
       if (ratio < 0.9 || ratio > 1.25) bad++ }
     END { exit n != 2 || bad > 0 }' "$tmp/out" ||
  fail "shared: a round of two pulls is not within [0.9, 1.25] 2M/B"
echo "PASSED: two BSP workers' pulls queue at the server's link (2M/B, 0.9 to 1.25 times)"

# 4. Latency: 15 ms one way at each end.
run delay -s 1 -w 1 --server-link 0:15 --worker-link 0:15 -- "$probe" --mib 1 --pulls 1 \
  --pings 20
awk '$1 == "probe" && $4 == "rtt_ms" {
       printf "delay: round trip min %.3f ms, median %.3f ms (2d = 30 ms)\n", $5, $6
       found = 1; if ($5 < 30 || $6 > 35) exit 1 }
     END { exit !found }' "$tmp/out" || fail "delay: the round trip is not within [30, 35] ms"
echo "PASSED: a round trip through links delayed by 15 ms each way takes 30 to 35 ms"
