#!/usr/bin/env bash
# scripts/lab/simulate.sh on runs through shaped links: a copy of lab.scenario_smoke's
# output with a `links` file (as scenario.sh --shaped writes it) is replayed through those
# links on rank 0's figures (the header names them; rank 0's iterations per second through
# 40 Mbit/s links are far below all workers' unshaped), and links that differ between
# workers are refused with exit 2.
#
#   simulate_links_test.sh SIMULATE_SH KAIROS_POLICY_SIM LAB_DIR
set -euo pipefail
simulate=$1 sim=$2 lab=$3
work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
fail() { echo "simulate_links_test: $*" >&2; exit 1; }

cp -r "$lab" "$work/plain"
rm -rf "$work/plain/sim"
"$simulate" --lab "$work/plain" --sim "$sim" --target 0.5 --budget-s 3 >"$work/plain.out" 2>&1 ||
  { cat "$work/plain.out"; fail "the unshaped replay failed"; }
cp -r "$work/plain" "$work/shaped"
rm -rf "$work/shaped/sim"
echo "--worker-link 40:1 --server-link 0:0" >"$work/shaped/links"
"$simulate" --lab "$work/shaped" --sim "$sim" --target 0.5 --budget-s 3 >"$work/shaped.out" 2>&1 ||
  { cat "$work/shaped.out"; fail "the shaped replay failed"; }
cat "$work/shaped.out"
grep -q 'links: workers 40:1, servers 0:0 (rank 0' "$work/shaped.out" ||
  fail "the header does not name the links"
# sim_it_s (column 8) of bsp: rank 0's through thin links against all workers' without.
plain=$(awk -F'\t' '$2 == "bsp" { print $8 }' "$work/plain/sim/compare.tsv")
shaped=$(awk -F'\t' '$2 == "bsp" { print $8 }' "$work/shaped/sim/compare.tsv")
[[ -n $plain && -n $shaped ]] || fail "no bsp row ($plain, $shaped)"
awk -v p="$plain" -v s="$shaped" 'BEGIN { exit !(s > 0 && s * 4 < p) }' ||
  fail "rank 0 through 40 Mbit/s links ran $shaped iterations/s, all workers unshaped $plain"

cp -r "$work/plain" "$work/mixed"
echo "--worker-link 40:1,80:1" >"$work/mixed/links"
status=0
"$simulate" --lab "$work/mixed" --sim "$sim" >"$work/mixed.out" 2>&1 || status=$?
cat "$work/mixed.out"
[[ $status -eq 2 ]] || fail "links that differ: exit $status, not 2"
grep -q "the workers' links differ" "$work/mixed.out" || fail "no reason given for the refusal"
echo "simulate_links_test passed"
