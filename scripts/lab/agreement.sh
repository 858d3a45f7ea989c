#!/usr/bin/env bash
# The lab against itself (docs/simulator_results.md#the-simulator-against-the-lab): a second
# lab output directory of the same scenarios, policies, rates and seeds compared with the
# first as simulate.sh compares the simulator with it, on the same acceptance. It measures
# how closely the lab repeats its own figures, and so how closely any model of it can.
#
#   scripts/lab/agreement.sh --lab DIR --with DIR2 [--rerun] [--verdict-noise 0.1]
#       [--skip POLICY]... [-- MORE FLAGS OF scenario.sh]
#
# With --rerun, DIR2 is made first: scenario.sh with DIR's scenarios, workers, servers and
# pace (read from its runs' logs), its policies at the rates it chose (--lr), the seeds of its
# runs, and with the links it kept (DIR/links: --shaped, as root); flags after -- go to
# scenario.sh as they are (e.g. "--target 0.8 -- --log-pushes 2000": its own flags, then the
# example's). Writes DIR2/agreement.tsv (the columns of simulate.sh's compare.tsv, DIR2 as
# "repeat") and prints it, each scenario's leads and whether the winners agree, and the counts
# against the acceptance (scripts/lab/compare_lib.sh). Exit 1 if the rerun failed, 2 on bad
# arguments.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/lab/scenarios.sh
source scripts/lab/compare_lib.sh

lab=""
with=""
rerun=0
verdict_noise=0.1
skip=()
more=()
die() { echo "agreement.sh: $*" >&2; exit 2; }
while (($#)); do
  case "$1" in
    --lab) lab=$2; shift 2 ;;
    --with) with=$2; shift 2 ;;
    --rerun) rerun=1; shift ;;
    --verdict-noise) verdict_noise=$2; shift 2 ;;
    --skip) skip+=("$2"); shift 2 ;;
    --) shift; more=("$@"); break ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ -n $lab && -f $lab/summary.tsv && -f $lab/runs.tsv ]] ||
  die "--lab: a directory of scripts/lab/scenario.sh --out (with runs.tsv and summary.tsv)"
[[ -n $with ]] || die "--with: the directory to compare with (made first with --rerun)"

if ((rerun)); then
  log=$(ls "$lab"/evals/*.log 2>/dev/null | head -1)
  [[ -n $log ]] || die "$lab: no run logs in $lab/evals"
  lab_run_settings "$log"
  [[ -n $workers && -n $servers && -n $pace_ms ]] ||
    die "$log: not a log of the example with a pace (workers '$workers', servers '$servers', pace '$pace_ms')"
  args=(--workers "$workers" --servers "$servers" --pace-ms "$pace_ms" --no-plots --out "$with"
    --seeds "$(awk -F'\t' 'NR > 1 && $2 == "run" && !seen[$5]++ { printf "%s%s", n++ ? " " : "", $5 }' "$lab/runs.tsv")"
    --policies "$(awk -F'\t' 'NR > 1 && !seen[$2]++ { printf "%s%s", n++ ? " " : "", $2 }' "$lab/summary.tsv")")
  while read -r scenario; do args+=(--scenario "$scenario"); done < <(awk -F'\t' 'NR > 1 && !seen[$1]++ { print $1 }' "$lab/summary.tsv")
  awk -F'\t' 'NR > 1 { if ($2 in lr && lr[$2] != $3) exit 1; lr[$2] = $3 }' "$lab/summary.tsv" ||
    die "$lab: a policy ran at different rates in different scenarios; rerun them one scenario at a time"
  while IFS=$'\t' read -r policy lr; do
    args+=(--lr "$policy=$lr")
  done < <(awk -F'\t' 'NR > 1 && !seen[$2]++ { print $2 "\t" $3 }' "$lab/summary.tsv")
  [[ -f $lab/links ]] && args+=(--shaped "$(cat "$lab/links")")
  scripts/lab/scenario.sh "${args[@]}" ${more[@]+"${more[@]}"} || exit 1
fi
[[ -f $with/summary.tsv ]] || die "--with: no summary.tsv in $with (make it with --rerun)"

lab_compare "$lab/summary.tsv" "$with/summary.tsv" repeat >"$with/agreement.tsv"
echo "the lab against itself: $lab and $with"
lab_compare_report "$with/agreement.tsv" "$lab/summary.tsv" "$with/summary.tsv" repeat \
  "$verdict_noise" ${skip[@]+"${skip[@]}"}
