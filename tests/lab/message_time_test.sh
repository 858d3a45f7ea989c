#!/usr/bin/env bash
# scripts/lab/message_time.sh: a 2 MB message through a 400 Mbit/s link takes about the
# link's time for its bytes (the link shapes it; the htb bucket's burst after an idle gap is
# small beside it) and not much more on an idle host; bad arguments are refused with exit 2.
# Needs root (exit 77, skipped, otherwise, as the script does).
#
#   message_time_test.sh MESSAGE_TIME_SH
set -euo pipefail
probe=$1
fail() { echo "message_time_test: $*" >&2; exit 1; }

status=0
"$probe" --rate fast >/dev/null 2>&1 || status=$?
[[ $status -eq 2 ]] || fail "--rate fast: exit $status, not 2"
status=0
"$probe" --repeat 20 >/dev/null 2>&1 || status=$?
[[ $status -eq 2 ]] || fail "--repeat 20 (all of them not counted): exit $status, not 2"

status=0
out=$("$probe" --rate 400 --bytes 2000000 --repeat 30 --gap-ms 1) || status=$?
((status == 77)) && exit 77
((status == 0)) || fail "the probe failed (exit $status): $out"
echo "$out"
[[ $out =~ ^rate\ 400\ Mbit/s,\ halves\ of\ 1000000\ B:\ first\ ([0-9.]+)\ ms,\ second\ ([0-9.]+)\ ms,\ link\ ([0-9.]+)\ ms,\ excess ]] ||
  fail "not the probe's line: $out"
second=${BASH_REMATCH[2]} link=${BASH_REMATCH[3]}
# 2 MB at 400 Mbit/s less 4.8 % of headers: 41.92 ms.
awk -v l="$link" 'BEGIN { exit !(l > 41.9 && l < 41.95) }' || fail "link time $link ms, not 41.92"
awk -v s="$second" -v l="$link" 'BEGIN { exit !(s >= 0.9 * l && s <= 1.5 * l + 5) }' ||
  fail "the message took $second ms through a link that takes $link ms"
echo "message_time_test passed"
