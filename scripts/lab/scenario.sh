#!/usr/bin/env bash
# Runs lab scenarios (docs/lab.md): the Fashion-MNIST MLP trained by paced workers under each
# policy, each policy at its own learning rate, several seeds, and writes what was measured:
# the runs, a table per scenario with the verdict, and plots.
#
#   scripts/lab/scenario.sh [--scenario NAME]... [--policies "bsp ssp:s=3 ..."]
#       [--seeds "1 2 3"] [--grid "0.05 0.1 0.2 0.4"] [--tune-seed N] [--lr POLICY=LR]...
#       [--workers W] [--servers S] [--pace-ms MS] [--target ACC] [--budget-s S] [--epochs E]
#       [--snapshot-s S] [--average-s S] [--noise FRACTION]
#       [--shaped "SHAPED_JOB_LINK_OPTIONS"] [--out DIR]
#       [--example PATH] [--no-build] [--no-plots] [-- MORE FLAGS OF THE EXAMPLE]
#
# Scenarios (scripts/lab/scenarios.sh; W workers, the slow ones are the last ranks):
# homogeneous, straggler (the last worker 4x slower), transient (each iteration 4x slower
# with probability 0.1), two-speeds (the last half 2.7x slower).
#
# Learning rates: a policy named in --lr runs at that rate; every other policy first runs
# once per rate of --grid on --tune-seed (a seed of its own, so the chosen rate is not judged
# on the run that chose it) and takes the rate that reached the target soonest (or, when none
# did, the best final accuracy). Then every seed of --seeds runs at the chosen rate.
#
# Each run: the example with --pace-ms, --snapshot-s (the parameters copied at that interval
# and evaluated off the workers' path; the time to target interpolated between snapshots),
# --average-s (what is evaluated is the mean of the snapshots of the last S seconds: SGD's
# noise averaged out of the curve, so that a seed's time to target repeats; 0: each alone),
# --target-accuracy, --budget-s and --epochs (each worker's passes over its shard; stops at
# whichever comes first: with an unreachable target and --epochs, runs compare at equal
# epochs), a constant learning rate. With --shaped, the job runs as separate processes
# through shaped links (scripts/lab/shaped_job.sh, as root; its link options, e.g.
# "--server-link 200:2 --worker-link 100:2"; the servers and the coordinator from
# $KAIROS_BIN_DIR, by default the apps/ beside the example's build); rank 0 then reports
# its own counts only.
#
# The verdict names a winner only beyond the noise: when its slowest seed beat every other
# policy's fastest and its median time is more than --noise (a fraction, 0.1: the lab's
# measured repeatability, docs/lab.md) below theirs; otherwise it names the policies that
# share the lead.
#
# Writes under --out (default lab-out/<date>): runs.csv (every run, grid and seeds),
# summary.csv (per scenario and policy over the seeds), each also as .tsv (tab-separated:
# the policy specs' commas unquoted), evals/ (each run's snapshots),
# plots/<scenario>_{accuracy,time_to_target,throughput}.png (gnuplot), and with --shaped,
# links (its options). Prints the summary table and the verdict of each scenario. Exit 1 if
# a run failed, 2 on bad arguments.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

scenarios=()
policies=(bsp ssp:s=3 dssp:s=3,r=12 asp sa-asgd:n=4)
seeds=(1 2 3)
grid=(0.05 0.1 0.2 0.4)
tune_seed=100
declare -A fixed_lr=()
workers=4
servers=2
pace_ms=8
target=0.84
budget_s=30
epochs=100000
snapshot_s=0.25
average_s=2
noise=0.1
shaped=""
out=""
example=./build/examples/fashion_mnist
build=1
plots=1
extra=()
die() { echo "scenario.sh: $*" >&2; exit 2; }
while (($#)); do
  case "$1" in
    --scenario) scenarios+=("$2"); shift 2 ;;
    --policies) read -r -a policies <<<"$2"; shift 2 ;;
    --seeds) read -r -a seeds <<<"$2"; shift 2 ;;
    --grid) read -r -a grid <<<"$2"; shift 2 ;;
    --tune-seed) tune_seed=$2; shift 2 ;;
    --lr) [[ $2 == *=* ]] || die "--lr takes POLICY=LR, got '$2'"; fixed_lr["${2%=*}"]=${2##*=}; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --servers) servers=$2; shift 2 ;;
    --pace-ms) pace_ms=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --budget-s) budget_s=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --snapshot-s) snapshot_s=$2; shift 2 ;;
    --average-s) average_s=$2; shift 2 ;;
    --noise) noise=$2; shift 2 ;;
    --shaped) shaped=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --example) example=$2; build=0; shift 2 ;;
    --no-build) build=0; shift ;;
    --no-plots) plots=0; shift ;;
    -h|--help) sed -n "2,42p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
((${#scenarios[@]})) || scenarios=(straggler)
[[ $workers =~ ^[0-9]+$ ]] && ((workers >= 1)) || die "--workers: a number >= 1"
((${#seeds[@]})) || die "--seeds: at least one seed"

# The example's flags of a scenario, for `workers` workers (scripts/lab/scenarios.sh).
source scripts/lab/scenarios.sh
source scripts/lab/compare_lib.sh
scenario_flags() { lab_scenario_flags "$1" "$workers"; }
for s in "${scenarios[@]}"; do
  scenario_flags "$s" >/dev/null || die "unknown scenario '$s' ($lab_scenario_names)"
done

if ((build)); then
  scripts/install-deps.sh
  scripts/build.sh --target fashion_mnist
fi
[[ -x $example ]] || die "no example program at $example (build it, or give --example)"
out=${out:-lab-out/$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$out/evals" "$out/plots"
# The link options, for scripts/lab/simulate.sh to replay the runs through the same links.
if [[ -n $shaped ]]; then echo "$shaped" >"$out/links"; else rm -f "$out/links"; fi
# The tables are kept tab-separated (a policy spec may hold commas: dssp:s=3,r=12) and
# written again as CSV, with such fields quoted, after each change.
runs="$out/runs.tsv"
printf 'scenario\tphase\tpolicy\tlr\tseed\ttime_to_target_s\tfinal_accuracy\titerations\titerations_per_s\tblocked_share\toverruns\twall_s\tstatus\tpull\teager_waits\teager_wait_s\tdssp_grants\tdssp_zero_answers\tsaps_dropped\tsaps_downweighted\tprobe_ms\twake_ms\n' >"$runs"
tsv_to_csv() {
  awk -F'\t' -v OFS=, '{
      for (i = 1; i <= NF; i++) if ($i ~ /[,"]/) { gsub(/"/, "\"\"", $i); $i = "\"" $i "\"" }
      $1 = $1; print }' "$1" >"${1%.tsv}.csv"
}

field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; }
safe() { tr -c 'A-Za-z0-9._-' '_' <<<"$1" | sed 's/_$//'; }
failed=0

# run SCENARIO PHASE POLICY LR SEED: one run, one row of runs.csv.
run() {
  local scenario=$1 phase=$2 policy=$3 lr=$4 seed=$5 flags csv log cmd s status=ok
  read -r -a flags <<<"$(scenario_flags "$scenario")"
  csv="$out/evals/${scenario}_$(safe "$policy")_lr${lr}_s${seed}.csv"
  local again=2
  while [[ -e $csv ]]; do  # the same seed again (a repeatability run): a file of its own
    csv="$out/evals/${scenario}_$(safe "$policy")_lr${lr}_s${seed}-$again.csv"
    again=$((again + 1))
  done
  log="${csv%.csv}.log"
  cmd=("$example" --model mlp --policy "$policy" --lr "$lr" --schedule constant
       --workers "$workers" --servers "$servers" --pace-ms "$pace_ms" "${flags[@]}"
       --seed "$seed" --epochs "$epochs" --snapshot-s "$snapshot_s" --average-s "$average_s" --target-accuracy "$target"
       --budget-s "$budget_s" --csv "$csv" "${extra[@]}")
  if [[ -n $shaped ]]; then
    # The coordinator and the servers: those built next to the example, unless given.
    export KAIROS_BIN_DIR=${KAIROS_BIN_DIR:-$(dirname "$example")/../apps}
    local link_options
    read -r -a link_options <<<"$shaped"
    cmd=(scripts/lab/shaped_job.sh -s "$servers" -w "$workers" "${link_options[@]}"
         --timeout "$(awk -v b="$budget_s" 'BEGIN { printf "%d", 3 * b + 120 }')" -- "${cmd[@]}")
  fi
  if ! "${cmd[@]}" >"$log" 2>&1; then
    status=failed
    failed=1
    echo "scenario.sh: $scenario $policy lr $lr seed $seed failed; its output:" >&2
    tail -n 20 "$log" >&2
  fi
  s=$(grep '^summary:' "$log" | tail -n 1 || true)
  printf '%s\t' "$scenario" "$phase" "$policy" "$lr" "$seed" "$(field "$s" time_to_target_s)" \
    "$(field "$s" final_accuracy)" "$(field "$s" iterations)" "$(field "$s" iterations_per_s)" \
    "$(field "$s" blocked_share)" "$(field "$s" overruns)" "$(field "$s" wall_s)" "$status" \
    "$(field "$s" pull)" "$(field "$s" eager_waits)" "$(field "$s" eager_wait_s)" \
    "$(field "$s" dssp_grants)" "$(field "$s" dssp_zero_answers)" \
    "$(field "$s" saps_dropped)" "$(field "$s" saps_downweighted)" >>"$runs"
  printf '%s\t%s\n' "$(field "$s" probe_ms)" "$(field "$s" wake_ms)" >>"$runs"
  tsv_to_csv "$runs"
  printf '  %-12s %-6s %-22s lr %-5s seed %-4s time to target %-6s accuracy %-6s it/s %-6s blocked %s\n' \
    "$scenario" "$phase" "$policy" "$lr" "$seed" "$(field "$s" time_to_target_s)" \
    "$(field "$s" final_accuracy)" "$(field "$s" iterations_per_s)" "$(field "$s" blocked_share)"
  if grep -q '^warning:' "$log"; then grep '^warning:' "$log" | sed 's/^/    /'; fi
}

# The grid's choice for SCENARIO POLICY, from runs.csv: the soonest to target, else the best
# final accuracy.
chosen_lr() {
  awk -F'\t' -v sc="$1" -v p="$2" '$1 == sc && $2 == "grid" && $3 == p && $13 == "ok" {
      reached = ($6 != "none" && $6 != "")
      key = reached ? -1e9 + $6 : -$7
      if (best == "" || key < bk) { best = $4; bk = key }
    } END { print best }' "$runs"
}

echo "lab: ${scenarios[*]}; policies ${policies[*]}; seeds ${seeds[*]}; $workers workers paced at $pace_ms ms, $servers servers; target $target, budget $budget_s s; output in $out"
for scenario in "${scenarios[@]}"; do
  for policy in "${policies[@]}"; do
    lr=${fixed_lr[$policy]:-}
    if [[ -z $lr ]]; then
      for g in "${grid[@]}"; do run "$scenario" grid "$policy" "$g" "$tune_seed"; done
      lr=$(chosen_lr "$scenario" "$policy")
      if [[ -z $lr ]]; then
        echo "  $scenario $policy: every run of the grid failed; its seeds are not run" >&2
        continue
      fi
      echo "  $scenario $policy: learning rate $lr (of ${grid[*]}, on seed $tune_seed)"
    fi
    for seed in "${seeds[@]}"; do run "$scenario" run "$policy" "$lr" "$seed"; done
  done
done

# summary.csv and the table: per scenario and policy, over the seeds' runs.
summary="$out/summary.tsv"
awk -F'\t' -v OFS='\t' -v target="$target" '
  NR > 1 && $2 == "run" {
    k = $1 SUBSEP $3
    if (!(k in n)) { order[++keys] = k; lr[k] = $4 }
    n[k]++
    if ($13 != "ok") bad[k]++
    if ($6 != "none" && $6 != "") { t[k, ++hit[k]] = $6 }
    acc[k] += $7; ips[k] += $9; blk[k] += $10; over[k] += $11
  }
  function sorted_median(k, m,   i, j, x, a) {
    for (i = 1; i <= m; i++) a[i] = t[k, i]
    for (i = 2; i <= m; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    lo = a[1]; hi = a[m]
    return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    print "scenario", "policy", "lr", "runs", "failed", "reached", "time_to_target_median", "time_to_target_min", "time_to_target_max", "time_to_target_cv", "final_accuracy_mean", "iterations_per_s_mean", "blocked_share_mean", "overruns"
    for (o = 1; o <= keys; o++) {
      k = order[o]; split(k, f, SUBSEP); m = hit[k] + 0
      med = lo = hi = cv = ""
      if (m > 0) {
        med = sorted_median(k, m); s = 0; ss = 0
        for (i = 1; i <= m; i++) { s += t[k, i]; ss += t[k, i] * t[k, i] }
        mean = s / m; var = m > 1 ? (ss - m * mean * mean) / (m - 1) : 0
        cv = mean > 0 ? sqrt(var > 0 ? var : 0) / mean : 0
      }
      printf "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%.4f\t%.1f\t%.3f\t%d\n", f[1], f[2], lr[k], n[k], bad[k], m, med, lo, hi, cv, acc[k] / n[k], ips[k] / n[k], blk[k] / n[k], over[k]
    }
  }' "$runs" >"$summary"
tsv_to_csv "$summary"

for scenario in "${scenarios[@]}"; do
  echo
  echo "scenario $scenario ($(scenario_flags "$scenario" | sed 's/^$/no heterogeneity/')), ${#seeds[@]} seed(s), target $target:"
  printf '  %-22s %5s %8s %22s %6s %10s %9s %9s %9s\n' policy lr reached "time to target (min-max)" cv accuracy "it/s" blocked overruns
  awk -F'\t' -v sc="$scenario" 'NR > 1 && $1 == sc {
      ttt = $7 == "" ? "not reached" : sprintf("%.2f s (%.2f-%.2f)", $7, $8, $9)
      printf "  %-22s %5s %5d/%-2d %22s %5.1f%% %10.4f %9.1f %8.0f%% %9d\n", $2, $3, $6, $4, ttt, 100 * $10, $11, $12, 100 * $13, $14
    }' "$summary"
  # The verdict, drawn only beyond the noise (lab_leads): among the policies that reached the
  # target in every seed, the one with the soonest median wins alone if no other is within
  # the noise of it; otherwise the policies within it share the lead. BSP, the usual
  # baseline, is compared with the leader when it is not in the lead.
  { lab_leads "$summary" "$noise"; awk -F'\t' 'NR > 1 { print $1 "\t" $2 "\t\trun" }' "$summary"; } |
  awk -F'\t' -v sc="$scenario" '$1 == sc {
      if ($4 == "run") { all[$2] = 1; next }
      med[$2] = $3 + 0
      if ($4 == "best") best = $2
      else if ($4 == "lead") { lead = lead ", " $2; tied++; in_lead[$2] = 1 }
      if ($4 != "best" && (second == "" || med[$2] < med[second])) second = $2
    } END {
      if (best == "") { print "  verdict: no policy reached the target in every seed"; exit }
      if (tied == 0 && second != "") {
        line = sprintf("  verdict: %s wins (median %.2f s), %.2fx sooner than the next, %s (%.2f s), beyond the noise", best, med[best], med[second] / med[best], second, med[second])
      } else if (tied == 0) {
        line = sprintf("  verdict: %s (median %.2f s), the only policy run", best, med[best])
      } else {
        line = sprintf("  verdict: no single winner: %s%s are within the noise of each other (best median %.2f s, %s)", best, lead, med[best], best)
      }
      if (("bsp" in med) && best != "bsp" && !("bsp" in in_lead)) line = line sprintf("; %s is %.2fx sooner than bsp", best, med["bsp"] / med[best])
      print line
      for (p in all) if (!(p in med)) printf "  %s did not reach the target in every seed\n", p
    }'
done

if ((plots)) && command -v gnuplot >/dev/null; then
  for scenario in "${scenarios[@]}"; do
    # Accuracy against wall time: one line per run, one colour per policy.
    {
      echo "set terminal pngcairo size 1000,600 noenhanced"
      echo "set output '$out/plots/${scenario}_accuracy.png'"
      echo "set title 'Fashion-MNIST MLP, scenario $scenario: test accuracy against wall time (every seed)'"
      echo "set xlabel 'wall time (s)'; set ylabel 'test accuracy'; set key bottom right; set grid"
      echo "set datafile separator ','"
      echo "set yrange [0.5:*]"
      echo "set arrow from graph 0, first $target to graph 1, first $target nohead dt 2"
      plot="plot"
      c=1
      for policy in "${policies[@]}"; do
        first=1
        for f in "$out"/evals/"${scenario}_$(safe "$policy")"_lr*_s*.csv; do
          [[ -f $f ]] || continue
          seed=${f##*_s}; seed=${seed%.csv}; seed=${seed%-*}
          [[ " ${seeds[*]} " == *" $seed "* ]] || continue  # the grid's runs are not plotted
          title="notitle"; ((first)) && title="title '$policy'"
          plot="$plot '$f' every ::1 using 4:7 with lines lc $c $title,"
          first=0
        done
        c=$((c + 1))
      done
      [[ $plot == plot ]] && echo "print 'no run to plot'" || echo "${plot%,}"
    } >"$out/plots/${scenario}_accuracy.gp"
    # Time to target and iterations/s per policy: median with the seeds' range.
    awk -F'\t' -v sc="$scenario" 'NR > 1 && $1 == sc { print NR - 1, "\"" $2 "\"", ($7 == "" ? "NaN" : $7), ($8 == "" ? "NaN" : $8), ($9 == "" ? "NaN" : $9), $12, 100 * $13 }' "$summary" >"$out/plots/${scenario}_summary.dat"
    # No time-to-target plot when no policy reached the target (runs at equal epochs).
    reached=$(awk '$3 != "NaN"' "$out/plots/${scenario}_summary.dat" | wc -l)
    {
      echo "set terminal pngcairo size 900,500 noenhanced"
      echo "set ylabel 'seconds'; set style fill solid 0.5; set boxwidth 0.6; set grid ytics; set yrange [0:*]"
      if ((reached)); then
        echo "set output '$out/plots/${scenario}_time_to_target.png'"
        echo "set title 'scenario $scenario: time to test accuracy $target (median, min-max over seeds)'"
        echo "plot '$out/plots/${scenario}_summary.dat' using 1:3:xtic(2) with boxes notitle, '' using 1:3:4:5 with yerrorbars lc rgb 'black' notitle"
      fi
      echo "set output '$out/plots/${scenario}_throughput.png'"
      echo "set title 'scenario $scenario: iterations/s (all workers) and share of time blocked'"
      echo "set ylabel 'iterations/s'; set y2label 'blocked (%)'; set y2tics; set y2range [0:100]"
      echo "plot '$out/plots/${scenario}_summary.dat' using 1:6:xtic(2) with boxes title 'iterations/s', '' using 1:7 axes x1y2 with points pt 7 ps 2 title 'blocked %'"
    } >"$out/plots/${scenario}_bars.gp"
    for gp in "$out/plots/${scenario}_accuracy.gp" "$out/plots/${scenario}_bars.gp"; do
      gnuplot "$gp" 2>>"$out/plots/gnuplot.log" ||
        echo "scenario.sh: gnuplot failed on $gp (see $out/plots/gnuplot.log)" >&2
    done
  done
  echo
  echo "plots: $out/plots/"
fi
echo "runs: ${runs%.tsv}.csv; summary: ${summary%.tsv}.csv (and .tsv)"
exit "$failed"
