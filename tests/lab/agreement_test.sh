#!/usr/bin/env bash
# scripts/lab/agreement.sh (and compare_lib.sh, which simulate.sh shares) on made-up
# summaries: the errors per cell, the counts against the acceptance at their edges (3.3 % of
# iterations per second is out, 2.5 % in; 4 points blocked out), winners that agree when one
# side names a winner beyond the noise and when both share the lead, winners that differ (the
# positive control) with the regret of the other's pick, --skip, and a missing directory
# refused with exit 2.
set -euo pipefail
agreement=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
header='scenario	policy	lr	runs	failed	reached	time_to_target_median	time_to_target_min	time_to_target_max	time_to_target_cv	final_accuracy_mean	iterations_per_s_mean	blocked_share_mean	overruns'

mkdir "$dir/lab" "$dir/repeat"
printf '%s\n' "$header" \
  "a	bsp	0.2	3	0	3	6.00	5.80	6.30	0.04	0.84	160	0.40	0" \
  "a	asp	0.05	3	0	3	3.00	2.90	3.20	0.04	0.84	300	0.02	0" \
  "b	bsp	0.2	3	0	3	4.00	3.90	4.10	0.04	0.84	300	0.10	0" \
  "b	asp	0.05	3	0	3	4.20	4.00	4.40	0.04	0.84	300	0.02	0" \
  "c	asp	0.05	3	0	3	3.00	2.90	3.10	0.04	0.84	200	0.05	0" \
  "c	bsp	0.2	3	0	3	5.00	4.80	5.20	0.04	0.84	100	0.50	0" >"$dir/lab/summary.tsv"
printf '%s\n' "$header" >"$dir/lab/runs.tsv"
printf '%s\n' "$header" \
  "a	bsp	0.2	3	0	3	6.30	6.20	6.40	0.04	0.84	164	0.41	0" \
  "a	asp	0.05	3	0	3	3.20	3.10	3.30	0.04	0.84	310	0.02	0" \
  "b	bsp	0.2	3	0	3	4.10	4.00	4.20	0.04	0.84	300	0.14	0" \
  "b	asp	0.05	3	0	3	3.90	3.80	4.00	0.04	0.84	300	0.02	0" \
  "c	asp	0.05	3	0	3	5.00	4.80	5.20	0.04	0.84	200	0.05	0" \
  "c	bsp	0.2	3	0	3	3.00	2.90	3.10	0.04	0.84	100	0.50	0" >"$dir/repeat/summary.tsv"

out=$("$agreement" --lab "$dir/lab" --with "$dir/repeat")
echo "$out"
rows=$(cat "$dir/repeat/agreement.tsv")
grep -q '^scenario	policy	lr	lab_time_s	repeat_time_s	time_error	' <<<"$rows"
grep -q '^a	bsp	0.2	6.00	6.30	+5.0%	160.0	164.0	+2.5%	40.0%	41.0%	+1.0$' <<<"$rows"
grep -q '^a	asp	0.05	3.00	3.20	+6.7%	300.0	310.0	+3.3%	2.0%	2.0%	+0.0$' <<<"$rows"
grep -q '^b	bsp	0.2	4.00	4.10	+2.5%	300.0	300.0	+0.0%	10.0%	14.0%	+4.0$' <<<"$rows"
grep -q '^c	bsp	0.2	5.00	3.00	-40.0%	' <<<"$rows"
grep -q '^a: lab lead asp; repeat lead asp; the winners agree' <<<"$out"
grep -q '^b: lab lead bsp | asp; repeat lead bsp | asp; the winners agree' <<<"$out"
grep -q '^c: lab lead asp; repeat lead bsp; the winners differ (the lab time of the repeat pick over the lab best: +66.7%)' <<<"$out"
grep -q '^against the acceptance (noise 10 %): iterations/s within 3 % in 5 of 6 cells, blocked within 3 points in 5 of 6, time to target within 10 % in 4 of 6, winners agree in 2 of 3 scenarios$' <<<"$out"

out=$("$agreement" --lab "$dir/lab" --with "$dir/repeat" --skip asp)
echo "$out"
grep -q '^against the acceptance (noise 10 %): iterations/s within 3 % in 3 of 3 cells, blocked within 3 points in 2 of 3, time to target within 10 % in 2 of 3, winners agree in 3 of 3 scenarios$' <<<"$out"

set +e
"$agreement" --lab "$dir/nowhere" --with "$dir/repeat" 2>"$dir/err"
rc=$?
set -e
cat "$dir/err"
[[ $rc -eq 2 ]] && grep -q 'a directory of scripts/lab/scenario.sh --out' "$dir/err"
echo "agreement_test: ok"
