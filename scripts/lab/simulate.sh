#!/usr/bin/env bash
# The simulator against the lab (docs/policy_results.md#the-simulator-against-the-lab): runs
# every policy, learning rate and seed of a lab output directory (scripts/lab/scenario.sh
# --out) on kairos_policy_sim with the lab's settings, and compares per scenario and policy
# the iterations per second, the share of time blocked, the time to target and the winner.
#
#   scripts/lab/simulate.sh --lab DIR [--latency-ms 0.15] [--server-read-ms 0.4]
#       [--server-apply-ms 0] [--bandwidth-mbps 0] [--target 0.84] [--average-s 2]
#       [--snapshot-s 0.25] [--budget-s 30] [--jobs 2] [--out DIR/sim] [--sim PATH]
#       [-- MORE FLAGS OF kairos_policy_sim]
#
# The simulated runs: the example's MLP (its hidden units, batch, pace and data sizes read
# from the lab runs' logs), each worker slowed as in the lab's scenario
# (scripts/lab/scenarios.sh) with the same pace model and seeds, the mean of worker 0's
# reads of the last --average-s evaluated every --snapshot-s, the lab's time to target
# (kairos_policy_sim --smoothed-target), stopped there or at --budget-s. The network and
# the server are the calibration: a one-way --latency-ms per message, the server's one
# thread busy --server-read-ms per served read and --server-apply-ms per push, workers'
# links of --bandwidth-mbps (0: infinite; with it, --serialize-links is a good addition
# after --).
#
# Writes under --out: <scenario>_<policy>.csv (kairos_policy_sim --csv, one row per seed)
# and compare.tsv, one row per scenario and policy: the lab's and the simulator's median
# time to target over the seeds ("-" when at most half reached it) and their relative
# error, mean iterations per second (the workers' together) and relative error, mean share
# of time blocked (the workers' time in pulls, as the lab counts it: the gate's wait, the
# server and both transfers) and the difference in points. Prints the table and per scenario the two
# winners (the soonest median) and the lab's time of the simulator's pick over the lab's
# best (the regret). Exit 1 if a simulation failed, 2 on bad arguments.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/lab/scenarios.sh

lab=""
latency_ms=0.15
read_ms=0.4
apply_ms=0
bandwidth_mbps=0
target=0.84
average_s=2
snapshot_s=0.25
budget_s=30
parallel=2
out=""
sim=build/bench/kairos_policy_sim
extra=()

die() { echo "simulate.sh: $*" >&2; exit 2; }
while (($#)); do
  case "$1" in
    --lab) lab=$2; shift 2 ;;
    --latency-ms) latency_ms=$2; shift 2 ;;
    --server-read-ms) read_ms=$2; shift 2 ;;
    --server-apply-ms) apply_ms=$2; shift 2 ;;
    --bandwidth-mbps) bandwidth_mbps=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --average-s) average_s=$2; shift 2 ;;
    --snapshot-s) snapshot_s=$2; shift 2 ;;
    --budget-s) budget_s=$2; shift 2 ;;
    --jobs) parallel=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --sim) sim=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h | --help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ -n $lab && -f $lab/runs.tsv && -f $lab/summary.tsv ]] ||
  die "--lab: a directory of scripts/lab/scenario.sh --out (with runs.tsv and summary.tsv)"
[[ -x $sim ]] || die "no simulator at $sim (build it: scripts/build.sh --target kairos_policy_sim)"
[[ $parallel =~ ^[0-9]+$ ]] && ((parallel >= 1)) || die "--jobs: a number >= 1"
out=${out:-$lab/sim}
mkdir -p "$out"

# The lab's model, workers, pace and data, from the first lines of a run's log.
log=$(ls "$lab"/evals/*.log | head -1)
head2=$(head -3 "$log")
workers=$(sed -n 's/.* \([0-9][0-9]*\) workers$/\1/p' <<<"$head2" | head -1)
hidden=$(sed -n 's/.*model mlp (\([0-9]*\) hidden).*/\1/p' <<<"$head2")
batch=$(sed -n 's/.*(batch \([0-9]*\),.*/\1/p' <<<"$head2")
pace_ms=$(sed -n 's/.*, pace \([0-9.]*\) ms.*/\1/p' <<<"$head2")
train=$(sed -n 's/.*data: \([0-9]*\) training and \([0-9]*\) test examples.*/\1/p' <<<"$head2")
test=$(sed -n 's/.*data: \([0-9]*\) training and \([0-9]*\) test examples.*/\2/p' <<<"$head2")
[[ -n $workers && -n $hidden && -n $batch && -n $pace_ms && -n $train && -n $test ]] ||
  die "$log: not a log of the example's MLP with a pace (workers '$workers', hidden '$hidden', batch '$batch', pace '$pace_ms', data '$train'/'$test')"
if grep -q "shards by-class" <<<"$head2"; then
  echo "simulate.sh: the lab's shards are by class; the simulator samples every batch from the whole training set" >&2
fi

safe() { tr -c 'A-Za-z0-9._-' '_' <<<"$1" | sed 's/_$//'; }
failed=0
# simulate SCENARIO POLICY LR FIRST_SEED SEEDS
simulate() {
  local scenario=$1 policy=$2 lr=$3 first=$4 count=$5 flags csv
  read -r -a flags <<<"$(lab_scenario_flags "$scenario" "$workers")"
  csv="$out/${scenario}_$(safe "$policy").csv"
  if ! "$sim" --model mlp --hidden "$hidden" --fashion-train "$train" --fashion-test "$test" \
      --batch "$batch" --workers "$workers" --compute-ms "$pace_ms" --slow-factor 1 --jitter 0 \
      "${flags[@]}" --latency-ms "$latency_ms" --server-read-ms "$read_ms" \
      --server-apply-ms "$apply_ms" --bandwidth-gbps "$(awk -v m="$bandwidth_mbps" 'BEGIN { print m / 1000 }')" \
      --average-s "$average_s" --sample-ms "$(awk -v s="$snapshot_s" 'BEGIN { print 1000 * s }')" \
      --target-accuracy "$target" --smoothed-target --stop-at-target --max-time-s "$budget_s" \
      --policies "$policy" --lr "$lr" --seed "$first" --seeds "$count" --csv "$csv" "${extra[@]}" \
      >"${csv%.csv}.log" 2>&1; then
    echo "simulate.sh: $scenario $policy lr $lr failed; see ${csv%.csv}.log" >&2
    return 1
  fi
}

# Per scenario, policy and learning rate of the seeds' runs: the first seed and how many
# (kairos_policy_sim runs consecutive seeds).
while IFS=$'\t' read -r scenario policy lr first count; do
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n || failed=1; done
  simulate "$scenario" "$policy" "$lr" "$first" "$count" &
done < <(awk -F'\t' 'NR > 1 && $2 == "run" {
  k = $1 "\t" $3 "\t" $4
  if (!(k in first)) { order[++n] = k; first[k] = $5 }
  if ($5 < first[k]) first[k] = $5
  count[k]++
} END { for (i = 1; i <= n; i++) print order[i] "\t" first[order[i]] "\t" count[order[i]] }' "$lab/runs.tsv")
while (($(jobs -rp | wc -l) > 0)); do wait -n || failed=1; done

# compare.tsv: the lab's summary joined with the simulated seeds.
compare="$out/compare.tsv"
{
  printf 'scenario\tpolicy\tlr\tlab_time_s\tsim_time_s\ttime_error\tlab_it_s\tsim_it_s\tit_s_error\tlab_blocked\tsim_blocked\tblocked_points\n'
  # The lab's median time to target counts when more than half of the seeds reached it.
  awk -F'\t' 'NR > 1 { print $1 "\t" $2 "\t" $3 "\t" (2 * $6 > $4 ? $7 : "-") "\t" $12 "\t" $13 }' \
      "$lab/summary.tsv" |
  while IFS=$'\t' read -r scenario policy lr lab_time ips blocked; do
    csv="$out/${scenario}_$(safe "$policy").csv"
    if [[ ! -f $csv ]]; then
      printf '%s\t%s\t%s\t%s\t?\t?\t%s\t?\t?\t%s\t?\t?\n' "$scenario" "$policy" "$lr" \
        "$lab_time" "$ips" "$blocked"
      continue
    fi
    awk -F, -v s="$scenario" -v p="$policy" -v lr="$lr" -v lt="$lab_time" -v lips="$ips" \
        -v lb="$blocked" -v w="$workers" '
      function median(a, n,   i, j, t) {
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
      }
      NR > 1 {
        # The policy (and an error) may hold commas: the 14 numeric columns are the last.
        # Blocked as the lab counts it: the workers time in pulls (pull_s).
        o = NF - 16; n++
        t[n] = ($(3 + o) == "" ? 1e300 : $(3 + o)); if ($(3 + o) != "") reached++
        ips += $(8 + o); blocked += ($(6 + o) > 0 ? $(16 + o) / (w * $(6 + o)) : 0)
      }
      END {
        st = (2 * reached > n) ? sprintf("%.2f", median(t, n)) : "-"
        te = (st != "-" && lt != "-") ? sprintf("%+.1f%%", 100 * (st - lt) / lt) : "-"
        printf "%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%.1f\t%+.1f%%\t%.1f%%\t%.1f%%\t%+.1f\n", s, p, lr, lt, st, te,
          lips, ips / n, 100 * (ips / n - lips) / lips, 100 * lb, 100 * blocked / n, 100 * (blocked / n - lb)
      }' "$csv"
  done
} >"$compare"

echo "the simulator against the lab: $lab ($workers workers, MLP $hidden, batch $batch, pace $pace_ms ms); latency $latency_ms ms, server read $read_ms ms, apply $apply_ms ms, bandwidth ${bandwidth_mbps} Mbit/s ${extra[*]}"
awk -F'\t' '{ printf "%-12s %-42s %8s %10s %10s %10s %9s %9s %10s %11s %11s %14s\n",
  $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }' "$compare"
# Per scenario: the winners (the soonest median; "-" sorts last) and the regret.
awk -F'\t' 'NR > 1 {
  s = $1; if (!(s in seen)) { seen[s] = 1; order[++n] = s }
  lt = ($4 == "-" ? 1e300 : $4); st = ($5 == "-" || $5 == "?" ? 1e300 : $5)
  if (!(s in lbest) || lt < lbest[s]) { lbest[s] = lt; lwin[s] = $2 }
  if (!(s in sbest) || st < sbest[s]) { sbest[s] = st; swin[s] = $2; spick_lab[s] = lt }
} END {
  for (i = 1; i <= n; i++) {
    s = order[i]
    regret = (lbest[s] < 1e300 && spick_lab[s] < 1e300) ? sprintf("%+.1f%%", 100 * (spick_lab[s] / lbest[s] - 1)) : "-"
    printf "%s: lab winner %s, simulator winner %s (%s); the lab time of the simulator pick over the lab best: %s\n",
      s, lwin[s], swin[s], (lwin[s] == swin[s] ? "the same" : "different"), regret
  }
}' "$compare"
exit "$failed"
