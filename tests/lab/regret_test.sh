#!/usr/bin/env bash
# scripts/lab/regret.sh on made-up summaries: a fixed policy within the noise of every
# scenario's best (verdict: no adaptive policy needed), one beyond it (the positive control:
# the verdict names the saving), a policy that never reached the target ("never", not
# chosen), and a directory without a summary refused with exit 2.
set -euo pipefail
regret=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
header='scenario	policy	lr	runs	failed	reached	time_to_target_median	time_to_target_min	time_to_target_max	time_to_target_cv	final_accuracy_mean	iterations_per_s_mean	blocked_share_mean	overruns'

mkdir "$dir/near"
printf '%s\n' "$header" \
  "a	bsp	0.2	3	0	3	6.00	5.80	6.30	0.04	0.84	160	0.4	0" \
  "a	asp	0.05	3	0	3	3.00	2.90	3.20	0.04	0.84	300	0.02	0" \
  "b	bsp	0.2	3	0	3	4.00	3.90	4.10	0.04	0.84	300	0.1	0" \
  "b	asp	0.05	3	0	3	4.20	4.00	4.40	0.04	0.84	300	0.02	0" \
  "a	eager	0.05	3	0	1	9.00	9.00	9.00	0.00	0.80	300	0.02	0" \
  "b	eager	0.05	3	0	3	4.50	4.40	4.60	0.04	0.84	300	0.02	0" >"$dir/near/summary.tsv"
out=$("$regret" "$dir/near")
echo "$out"
grep -Eq '^asp +0\.0% +5\.0% +5\.0%$' <<<"$out"
grep -Eq '^eager +never +12\.5% +never$' <<<"$out"
grep -q '^best single fixed policy: asp, at most 5.0 % behind' <<<"$out"
grep -q '^verdict: within the noise (10 %)' <<<"$out"

mkdir "$dir/far"
sed 's/^b\tasp\t0.05\t3\t0\t3\t4.20/b\tasp\t0.05\t3\t0\t3\t5.00/' "$dir/near/summary.tsv" >"$dir/far/summary.tsv"
out=$("$regret" "$dir/far")
echo "$out"
grep -q '^best single fixed policy: asp, at most 25.0 % behind' <<<"$out"
grep -q '^verdict: beyond the noise (10 %): choosing the policy per scenario would save up to 25.0 %' <<<"$out"

set +e
"$regret" "$dir/nowhere" 2>"$dir/err"
rc=$?
set -e
cat "$dir/err"
[[ $rc -eq 2 ]] && grep -q 'give a directory of scripts/lab/scenario.sh --out' "$dir/err"
echo "regret_test: ok"
