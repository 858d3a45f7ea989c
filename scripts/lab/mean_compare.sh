#!/usr/bin/env bash
# Several comparisons of the same cells averaged (docs/simulator_results.md#when-the-machine-changes):
# each a compare.tsv of simulate.sh (or an agreement.tsv of agreement.sh) against another lab
# output directory of the same scenarios, policies and rates, made at another time. One grid's
# three seeds move by a few percent from one grid to the next; their mean over the grids tells
# the model's own error from the lab's noise.
#
#   scripts/lab/mean_compare.sh [--skip POLICY]... COMPARE.tsv COMPARE.tsv...
#
# Prints one row per cell (scenario, policy and rate) present in every file, in the first
# file's order and its columns: the mean of the lab's figures and of the other side's (a time
# to target over the files that have one on both sides, "-" if none), the errors between the
# means; then the counts against the acceptance: iterations per second within 3 %, blocked
# within 3 points, time to target within 10 % (the winners need the runs: simulate.sh per
# grid). Policies named by --skip are shown but not counted. Exit 2 on bad arguments.
set -euo pipefail

die() { echo "mean_compare.sh: $*" >&2; exit 2; }
skip=()
while (($#)); do
  case "$1" in
    --skip) (($# >= 2)) || die "--skip needs a policy"; skip+=("$2"); shift 2 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    --*) die "unknown option '$1' (see --help)" ;;
    *) break ;;
  esac
done
(($# >= 2)) || die "give two compare.tsv files or more"
for f in "$@"; do
  [[ -f $f && -r $f ]] || die "no readable file '$f'"
  head -n 1 "$f" | grep -q $'^scenario\tpolicy\tlr\tlab_time_s\t' ||
    die "'$f' is not a compare.tsv of simulate.sh or agreement.sh"
done

awk -F'\t' -v OFS='\t' -v files=$# -v skipped="$(printf '%s\n' ${skip[@]+"${skip[@]}"})" '
  BEGIN { n = split(skipped, s, "\n"); for (i = 1; i <= n; i++) if (s[i] != "") skip[s[i]] = 1 }
  FNR == 1 { if (NR == 1) print; next }
  {
    k = $1 "\t" $2 "\t" $3
    if (!(k in seen)) { seen[k] = 1; order[++cells] = k }
    in_files[k]++
    li[k] += $7; oi[k] += $8
    b = $10; sub(/%$/, "", b); lb[k] += b; b = $11; sub(/%$/, "", b); ob[k] += b
    if ($4 != "-" && $5 != "-") { lt[k] += $4; ot[k] += $5; timed[k]++ }
  }
  END {
    for (c = 1; c <= cells; c++) {
      k = order[c]
      if (in_files[k] != files) continue
      split(k, f, "\t")
      # Counted as printed (to 0.1), as simulate.sh counts its compare.tsv.
      its = sprintf("%.1f", 100 * (oi[k] - li[k]) / li[k]) + 0
      points = sprintf("%.1f", (ob[k] - lb[k]) / files) + 0
      if (timed[k]) {
        te = sprintf("%.1f", 100 * (ot[k] - lt[k]) / lt[k]) + 0
        t = sprintf("%.2f\t%.2f\t%+.1f%%", lt[k] / timed[k], ot[k] / timed[k], te)
      }
      else t = "-\t-\t-"
      print k, t, sprintf("%.1f", li[k] / files), sprintf("%.1f", oi[k] / files), sprintf("%+.1f%%", its),
        sprintf("%.1f%%", lb[k] / files), sprintf("%.1f%%", ob[k] / files), sprintf("%+.1f", points)
      if (f[2] in skip) continue
      counted++
      if (its <= 3 && its >= -3) ok++
      if (points <= 3 && points >= -3) bok++
      if (timed[k]) { times++; if (te <= 10 && te >= -10) tok++ }
    }
    printf "the mean of %d comparisons against the acceptance: iterations/s within 3 %% in %d of %d cells, blocked within 3 points in %d of %d, time to target within 10 %% in %d of %d\n",
      files, ok, counted, bok, counted, tok, times
  }' "$@"
