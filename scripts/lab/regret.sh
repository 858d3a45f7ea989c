#!/usr/bin/env bash
# The oracle regret of a lab output directory (docs/policy_results.md#one-policy-for-every-regime):
# how much time a user loses by running one fixed policy in every scenario instead of each
# scenario's best, against the lab's noise.
#
#   scripts/lab/regret.sh DIR [--noise 0.1]
#
# DIR is a directory of scripts/lab/scenario.sh --out with several scenarios and the same
# policies in each. Per scenario and policy, T is the median time to target over the seeds
# (never, when at most half of them reached it); the regret of a policy in a scenario is its
# T over the scenario's best T, minus 1. The best single fixed policy is the one whose
# largest regret over the scenarios is the smallest; its largest regret is the oracle
# regret, what a policy that picked the best for each scenario (an oracle) could at most
# save. Prints the regret table (policies that never reached the target in a scenario:
# "never"), each scenario's best with its seeds' spread ((max - min) / median), the best
# single policy, and the verdict: within the noise (--noise, the lab's 10 %: no adaptive
# policy is needed on these scenarios), or not. Exit 2 on bad arguments.
set -euo pipefail

dir=""
noise=0.1
while (($#)); do
  case "$1" in
    --noise) noise=$2; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "regret.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) dir=$1; shift ;;
  esac
done
[[ -n $dir && -f $dir/summary.tsv ]] || {
  echo "regret.sh: give a directory of scripts/lab/scenario.sh --out (with summary.tsv)" >&2
  exit 2
}

awk -F'\t' -v noise="$noise" '
NR == 1 { next }
{
  s = $1; p = $2
  if (!(s in seen_s)) { seen_s[s] = 1; scen[++ns] = s }
  if (!(p in seen_p)) { seen_p[p] = 1; pol[++np] = p }
  reached = (2 * $6 > $4)
  t[s, p] = reached ? $7 + 0 : -1
  spread[s, p] = reached && $7 > 0 ? ($9 - $8) / $7 : -1
}
END {
  for (i = 1; i <= ns; i++) {
    s = scen[i]; best[s] = -1
    for (j = 1; j <= np; j++) {
      p = pol[j]
      if (!((s, p) in t)) { t[s, p] = -1 }
      if (t[s, p] >= 0 && (best[s] < 0 || t[s, p] < best[s])) { best[s] = t[s, p]; bestp[s] = p }
    }
  }
  printf "%-40s", "regret over the best (median time to target)"
  for (i = 1; i <= ns; i++) printf " %14s", scen[i]
  printf " %14s\n", "largest"
  chosen = ""; chosen_worst = -1
  for (j = 1; j <= np; j++) {
    p = pol[j]; worst = 0; never = 0
    printf "%-40s", p
    for (i = 1; i <= ns; i++) {
      s = scen[i]
      if (t[s, p] < 0 || best[s] < 0) { printf " %14s", "never"; never = 1; continue }
      r = t[s, p] / best[s] - 1
      if (r > worst) worst = r
      printf " %13.1f%%", 100 * r
    }
    if (never) { printf " %14s\n", "never"; continue }
    printf " %13.1f%%\n", 100 * worst
    if (chosen_worst < 0 || worst < chosen_worst) { chosen_worst = worst; chosen = p }
  }
  for (i = 1; i <= ns; i++) {
    s = scen[i]
    printf "%s: best %s, %.2f s (its seeds spread %.0f %%)\n", s, bestp[s], best[s], 100 * spread[s, bestp[s]]
  }
  if (chosen == "") { print "no policy reached the target in every scenario"; exit }
  printf "best single fixed policy: %s, at most %.1f %% behind each scenario'"'"'s best\n", chosen, 100 * chosen_worst
  if (chosen_worst <= noise) {
    printf "verdict: within the noise (%.0f %%): one fixed policy does as well as choosing per scenario; no adaptive policy is needed on these scenarios\n", 100 * noise
  } else {
    printf "verdict: beyond the noise (%.0f %%): choosing the policy per scenario would save up to %.1f %%\n", 100 * noise, 100 * chosen_worst
  }
}' "$dir/summary.tsv"
