#!/usr/bin/env bash
# The lab's noise yardstick (docs/lab.md, "The noise yardstick"): what the lab can resolve,
# measured before any verdict is drawn from it.
#
#   scripts/lab/yardstick.sh [--out DIR] [--pace-ms "8 20 50 100"] [--repeats N] [--example PATH]
#                            [--no-build]
#
#   1. pacing: homogeneous asp, 4 workers, at each pace T0 of --pace-ms for 10 s: the
#      steady-state iterations/s against N / T0, and what an iteration takes beyond T0
#      (its pull and push, and the wake-up after its paced wait)
#   2. repeatability: one scenario (straggler), one seed, --repeats times (5), for bsp and asp
#      at the demo's rates, with the lab's defaults (snapshots every 0.25 s, each evaluation
#      of the mean of the last 2 s of them): the coefficient of variation of iterations/s and
#      of time to target. Five, not three: the spread of three runs is itself too uncertain
#      to compare with 5 % (at a true 4 %, three runs show anything from about 1 % to 8 %).
#
# Passes when (1) is within 2 % of N / T0 at some pace, (2) within 2 % (iterations/s) and 5 %
# (time to target). The shaped links' own check (a pull of M bytes in M / B within 10 %) is
# the test apps.shaped_links (root). Exit 0 when every check passed, 1 otherwise.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

out=lab-out/yardstick-$(date -u +%Y%m%d-%H%M%S)
paces=(8 20 50 100)
repeats=5
build=1
example=./build/examples/fashion_mnist
while (($#)); do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --pace-ms) read -r -a paces <<<"$2"; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    --example) example=$2; build=0; shift 2 ;;
    *) echo "yardstick.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if ((build)); then
  scripts/install-deps.sh
  scripts/build.sh --target fashion_mnist
fi
mkdir -p "$out"
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; }
ok=1

echo "1. pacing: homogeneous asp, MLP, 4 workers, 2 servers, 10 s per pace; iterations/s in"
echo "   the steady state (between the snapshots at 1 s and at the end of training)"
printf '  %8s %12s %12s %9s %24s %9s\n' "T0 (ms)" "iterations/s" "N / T0" ratio \
  "time per iteration - T0" overruns
best=1e9
for t0 in "${paces[@]}"; do
  log="$out/pace_${t0}.log"
  "$example" --model mlp --policy asp --lr 0.05 --schedule constant --workers 4 --servers 2 \
    --pace-ms "$t0" --epochs 100000 --snapshot-s 0.5 --budget-s 10 --csv "$out/pace_${t0}.csv" \
    >"$log" 2>&1
  s=$(grep '^summary:' "$log")
  # Iterations of every worker at a snapshot: its iterations/s (since the start) x its time.
  ips=$(awk -F, '$1 == "eval" && $4 >= 1.0 {
      n = $8 * $4
      if (!have) { t0 = $4; n0 = n; have = 1 } else { t1 = $4; n1 = n }
    } END { printf "%.1f", (n1 - n0) / (t1 - t0) }' "$out/pace_${t0}.csv")
  read -r ideal ratio extra < <(awk -v i="$ips" -v t="$t0" 'BEGIN {
      ideal = 4000 / t; r = i / ideal
      printf "%.1f %.4f %.2f\n", ideal, r, (4000 / i) - t }')
  printf '  %8s %12s %12s %9s %21s ms %9s\n' "$t0" "$ips" "$ideal" "$ratio" "$extra" \
    "$(field "$s" overruns)"
  best=$(awk -v a="$best" -v r="$ratio" 'BEGIN { d = r > 1 ? r - 1 : 1 - r; print (d < a ? d : a) }')
done
if awk -v b="$best" 'BEGIN { exit !(b <= 0.02) }'; then
  echo "  pass: within 2 % of N / T0 at one pace at least"
else
  echo "  FAIL: no pace within 2 % of N / T0 (an iteration is T0 plus its pull and push)"
  ok=0
fi

echo
echo "2. repeatability: scenario straggler, seed 1, $repeats times"
[[ $repeats =~ ^[0-9]+$ ]] && ((repeats >= 2)) || { echo "yardstick.sh: --repeats: 2 or more" >&2; exit 2; }
scripts/lab/scenario.sh --example "$example" --no-plots --scenario straggler --policies "bsp asp" \
  --seeds "$(printf '1 %.0s' $(seq "$repeats"))" --lr bsp=0.2 --lr asp=0.05 \
  --out "$out/repeat" | sed -n '/^scenario straggler/,$p'
# policy, runs, runs that reached the target, time to target's cv (1 when none reached)
while IFS='|' read -r policy runs reached cv; do
  ips_cv=$(awk -F'\t' -v p="$policy" '$2 == "run" && $3 == p { n++; s += $9; ss += $9 * $9 }
      END { m = s / n; v = (ss - n * m * m) / (n - 1); printf "%.4f", (v > 0 ? sqrt(v) : 0) / m }' \
      "$out/repeat/runs.tsv")
  verdict=pass
  if ! awk -v a="$ips_cv" -v b="$cv" -v r="$reached" -v n="$runs" \
      'BEGIN { exit !(a <= 0.02 && b <= 0.05 && r == n) }'; then
    verdict=FAIL
    ok=0
  fi
  printf '  %-6s iterations/s cv %5.2f %%  time to target cv %5.2f %%  (%s/%s reached)  %s\n' \
    "$policy" "$(awk -v x="$ips_cv" 'BEGIN { print 100 * x }')" \
    "$(awk -v x="$cv" 'BEGIN { print 100 * x }')" "$reached" "$runs" "$verdict"
done < <(awk -F'\t' 'NR > 1 { print $2 "|" $4 "|" $6 "|" ($10 == "" ? 1 : $10) }' \
  "$out/repeat/summary.tsv")
echo
((ok)) && echo "yardstick: every check passed" || echo "yardstick: a check failed"
((ok))
