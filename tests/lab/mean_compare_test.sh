#!/usr/bin/env bash
# scripts/lab/mean_compare.sh on made-up compare.tsv files: the means per cell and their
# errors exact, the counts against the acceptance at their edges (blocked 3.5 points out, a
# time from one file alone 20 % out), a cell missing from a file left out, --skip shown but
# not counted, a single file and a file that is not a comparison refused with exit 2.
set -euo pipefail
mean_compare=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "mean_compare_test: $*" >&2; exit 1; }
header='scenario	policy	lr	lab_time_s	sim_time_s	time_error	lab_it_s	sim_it_s	it_s_error	lab_blocked	sim_blocked	blocked_points'
printf '%s\n' "$header" \
  "a	bsp	0.2	10.00	11.00	+10.0%	100.0	103.0	+3.0%	50.0%	52.0%	+2.0" \
  "a	asp	0.05	5.00	6.00	+20.0%	200.0	206.0	+3.0%	10.0%	10.0%	+0.0" \
  "a	odd	0.1	5.00	9.00	+80.0%	100.0	150.0	+50.0%	10.0%	30.0%	+20.0" \
  "a	once	0.1	5.00	5.00	+0.0%	100.0	100.0	+0.0%	10.0%	10.0%	+0.0" >"$dir/one.tsv"
printf '%s\n' "$header" \
  "a	asp	0.05	-	-	-	200.0	200.0	+0.0%	10.0%	10.0%	+0.0" \
  "a	bsp	0.2	12.00	12.10	+0.8%	110.0	104.0	-5.5%	40.0%	45.0%	+5.0" \
  "a	odd	0.1	5.00	9.00	+80.0%	100.0	150.0	+50.0%	10.0%	30.0%	+20.0" >"$dir/two.tsv"
"$mean_compare" --skip odd "$dir/one.tsv" "$dir/two.tsv" >"$dir/out" || fail "exit $?"
cat "$dir/out"
expected="$header
a	bsp	0.2	11.00	11.55	+5.0%	105.0	103.5	-1.4%	45.0%	48.5%	+3.5
a	asp	0.05	5.00	6.00	+20.0%	200.0	203.0	+1.5%	10.0%	10.0%	+0.0
a	odd	0.1	5.00	9.00	+80.0%	100.0	150.0	+50.0%	10.0%	30.0%	+20.0
the mean of 2 comparisons against the acceptance: iterations/s within 3 % in 2 of 2 cells, blocked within 3 points in 1 of 2, time to target within 10 % in 1 of 2"
[[ $(cat "$dir/out") == "$expected" ]] || fail "not the expected means: $(diff <(echo "$expected") "$dir/out")"
# Without --skip the odd cell counts (the positive control of the counts).
"$mean_compare" "$dir/one.tsv" "$dir/two.tsv" | tail -n 1 | grep -q 'within 3 % in 2 of 3 cells, blocked within 3 points in 1 of 3, time to target within 10 % in 1 of 3' ||
  fail "the skipped policy is not counted without --skip"
refused() {  # refused REASON ARGS...: exit 2, naming REASON
  local reason=$1 status=0
  shift
  "$mean_compare" "$@" >"$dir/bad" 2>&1 || status=$?
  [[ $status -eq 2 ]] && grep -q -- "$reason" "$dir/bad" || fail "$*: exit $status, $(cat "$dir/bad")"
}
refused "give two compare.tsv files or more" "$dir/one.tsv"
printf 'scenario\tphase\n' >"$dir/runs.tsv"
refused "is not a compare.tsv" "$dir/one.tsv" "$dir/runs.tsv"
refused "no readable file" "$dir/one.tsv" "$dir/none.tsv"
echo "mean_compare_test passed"
