#!/usr/bin/env bash
# The lab's scenarios on the simulator (docs/simulator_results.md#the-simulator-at-scale):
# what scripts/lab/scenario.sh runs on real nodes, run by kairos_policy_sim at any number of
# workers, with the lab's model, pace, slow workers (scripts/lab/scenarios.sh), averaged
# evaluation and smoothed time to target. Each policy at its own learning rate: tuned on
# --tune-seed from its grid (the soonest to the target, else the best final accuracy), then
# every seed of --seeds.
#
#   scripts/lab/sim_scenario.sh [--scenario NAME]... [--policies "bsp asp ..."] [--workers 16]
#       [--seeds "1 2 3"] [--grid "0.0125 0.025 0.05 0.1"] [--grid-for POLICY="0.1 0.2"]...
#       [--lr POLICY=LR]... [--tune-seed 100] [--pace-ms 8] [--target 0.84] [--budget-s 12]
#       [--average-s 2] [--snapshot-s 0.25] [--latency-ms 0.35] [--server-read-ms 0]
#       [--hidden 128] [--max-train 60000] [--max-test 10000] [--jobs 2] [--out DIR]
#       [--sim PATH]
#
# The network: a one-way --latency-ms per message (0.35: the lab's 0.7 ms of communication
# per iteration) and a server whose one thread is busy --server-read-ms per read (0: servers
# that keep up with any number of workers). A policy spec may hold "{N}", replaced by the
# number of workers (sa-asgd:n={N}).
#
# Writes under --out (default lab-out/sim-<workers>): summary.tsv in scenario.sh's format
# (so scripts/lab/regret.sh reads it), and per scenario and policy the grid's and the seeds'
# kairos_policy_sim CSV files and outputs. Prints the summary. Exit 1 if a simulation
# failed, 2 on bad arguments.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/lab/scenarios.sh
source scripts/lab/sim_lib.sh

scenarios=()
policies=(bsp asp ssp:s=3 ssp:s=15 dssp:s=3,r=12 "sa-asgd:n={N}" saps)
workers=16
seeds=(1 2 3)
grid=(0.0125 0.025 0.05 0.1)
declare -A grid_for=() fixed_lr=()
tune_seed=100
pace_ms=8
target=0.84
budget_s=12
average_s=2
snapshot_s=0.25
latency_ms=0.35
read_ms=0
hidden=128
train=60000
test=10000
batch=32
apply_ms=0
bandwidth_mbps=0
extra=()
parallel=2
out=""
sim=build/bench/kairos_policy_sim

die() { echo "sim_scenario.sh: $*" >&2; exit 2; }
while (($#)); do
  case "$1" in
    --scenario) scenarios+=("$2"); shift 2 ;;
    --policies) read -r -a policies <<<"$2"; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --seeds) read -r -a seeds <<<"$2"; shift 2 ;;
    --grid) read -r -a grid <<<"$2"; shift 2 ;;
    --grid-for) [[ $2 == *=* ]] || die "--grid-for: POLICY=\"LR LR ...\""; grid_for[${2%=*}]=${2##*=}; shift 2 ;;
    --lr) [[ $2 == *=* ]] || die "--lr: POLICY=LR"; fixed_lr[${2%=*}]=${2##*=}; shift 2 ;;
    --tune-seed) tune_seed=$2; shift 2 ;;
    --pace-ms) pace_ms=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --budget-s) budget_s=$2; shift 2 ;;
    --average-s) average_s=$2; shift 2 ;;
    --snapshot-s) snapshot_s=$2; shift 2 ;;
    --latency-ms) latency_ms=$2; shift 2 ;;
    --server-read-ms) read_ms=$2; shift 2 ;;
    --hidden) hidden=$2; shift 2 ;;
    --max-train) train=$2; shift 2 ;;
    --max-test) test=$2; shift 2 ;;
    --jobs) parallel=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --sim) sim=$2; shift 2 ;;
    -h | --help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
((${#scenarios[@]})) || scenarios=(straggler)
for s in "${scenarios[@]}"; do
  lab_scenario_flags "$s" 1 >/dev/null || die "unknown scenario '$s' ($lab_scenario_names)"
done
[[ $workers =~ ^[0-9]+$ ]] && ((workers >= 1)) || die "--workers: a number >= 1"
[[ $parallel =~ ^[0-9]+$ ]] && ((parallel >= 1)) || die "--jobs: a number >= 1"
((${#seeds[@]})) || die "--seeds: at least one seed"
[[ -x $sim ]] || die "no simulator at $sim (build it: scripts/build.sh --target kairos_policy_sim)"
out=${out:-lab-out/sim-$workers}
mkdir -p "$out"

# one SCENARIO POLICY: the policy's rate (fixed, or tuned on its grid), then its seeds.
one() {
  local scenario=$1 policy=$2 spec=${2//\{N\}/$workers} lr best="" best_t=1e300 best_a=-1 t a csv
  local dir="$out/$(lab_safe_name "$scenario")_$(lab_safe_name "$policy")"
  mkdir -p "$dir"
  if [[ -n ${fixed_lr[$policy]:-} ]]; then
    best=${fixed_lr[$policy]}
  else
    for lr in ${grid_for[$policy]:-${grid[*]}}; do
      csv="$dir/grid_lr$lr.csv"
      lab_sim "$scenario" "$spec" "$lr" "$tune_seed" 1 "$csv" || return 1
      # The seed's time to target (1e300: not reached) and final accuracy.
      read -r t a < <(awk -F, 'NR == 2 { o = NF - 20
        print ($(3 + o) == "" ? 1e300 : $(3 + o)), $(5 + o) }' "$csv")
      if awk -v t="$t" -v bt="$best_t" -v a="$a" -v ba="$best_a" \
          'BEGIN { exit !(t < bt || (t == bt && a > ba)) }'; then
        best=$lr best_t=$t best_a=$a
      fi
    done
  fi
  csv="$dir/seeds.csv"
  lab_sim "$scenario" "$spec" "$best" "${seeds[0]}" "${#seeds[@]}" "$csv" || return 1
  lab_sim_summary "$scenario" "$policy" "$best" "$csv" >"$dir/summary_row.tsv"
}

for ((i = 1; i < ${#seeds[@]}; i++)); do
  ((seeds[i] == seeds[0] + i)) ||
    die "--seeds: consecutive seeds (kairos_policy_sim runs --seed, --seed + 1, ...)"
done
failed=0
echo "the lab on the simulator: ${scenarios[*]}; policies ${policies[*]}; $workers workers; output in $out"
for scenario in "${scenarios[@]}"; do
  for policy in "${policies[@]}"; do
    while (($(jobs -rp | wc -l) >= parallel)); do wait -n || failed=1; done
    one "$scenario" "$policy" &
  done
done
while (($(jobs -rp | wc -l) > 0)); do wait -n || failed=1; done

{
  echo "$lab_summary_header"
  for scenario in "${scenarios[@]}"; do
    for policy in "${policies[@]}"; do
      row="$out/$(lab_safe_name "$scenario")_$(lab_safe_name "$policy")/summary_row.tsv"
      [[ -f $row ]] && cat "$row"
    done
  done
} >"$out/summary.tsv"
awk -F'\t' '{ printf "%-12s %-26s %8s %5s %8s %8s %8s %9s %10s %8s\n", $1, $2, $3, $6, $7, $8, $9, $11, $12, $13 }' \
  "$out/summary.tsv"
exit "$failed"
