#!/usr/bin/env bash
# The simulator against the lab (docs/simulator_results.md#the-simulator-against-the-lab): runs
# every policy, learning rate and seed of a lab output directory (scripts/lab/scenario.sh
# --out) on kairos_policy_sim with the lab's settings, and compares per scenario and policy
# the iterations per second, the share of time blocked, the time to target and the winner.
#
#   scripts/lab/simulate.sh --lab DIR [--machine FILE] [--latency-ms 0.03]
#       [--server-read-ms 0.23] [--server-queued-read-ms 0.30] [--server-receive-ms 0.22]
#       [--server-apply-ms 0.15] [--server-drift-pass-ms 0] [--worker-local-ms 0.15]
#       [--eager-local-ms 0.57]
#       [--worker-receive-ms 0] [--noise 0.01] [--frame-overhead 0.04] [--bandwidth-mbps 0]
#       [--server-transport-thread 0] [--host-cores 0] [--host-background 0]
#       [--gradient-cpu-ms 0] [--transfer-cpu-ms-per-mb 0] [--transfer-cpu-after-link 0]
#       [--host-run-to-completion 0] [--probe-ms 0] [--probe-wake-ms 0]
#       [--target 0.84] [--average-s 2] [--snapshot-s 0.25] [--budget-s 30] [--jobs 2]
#       [--out DIR/sim] [--sim PATH] [--sampled-batches] [--seeds N] [--verdict-noise 0.1]
#       [--skip POLICY]...
#       [-- MORE FLAGS OF kairos_policy_sim]
#
# The simulated runs: the example's MLP (its hidden units, batch, pace and data sizes read
# from the lab runs' logs), each worker slowed as in the lab's scenario
# (scripts/lab/scenarios.sh) with the same pace model and seeds (--seeds N: N seeds from
# each cell's first instead of the lab's, a median over more than one small draw of the
# model's trajectories; in scenarios whose stragglers the seed draws, other stragglers than
# the lab's runs had), each worker walking its
# shard in the example's order from the example's initial parameters for the seed
# (kairos_policy_sim --example-streams; --sampled-batches: batches drawn with replacement
# from the whole set, the simulator's own weights; by-class shards are always sampled, with
# a warning), the mean of worker 0's
# reads of the last --average-s evaluated every --snapshot-s, the lab's time to target
# (kairos_policy_sim --smoothed-target), stopped there or at --budget-s; each worker waits
# for its push's acknowledgement before its next read (--push-waits), as the lab's trainer
# does, and the lab's servers are the simulator's shards (--server-shards). The network,
# the servers and the worker's own time are the calibration: a one-way --latency-ms per
# message, each shard's thread busy --server-read-ms per served read (--server-queued-read-ms
# for one served behind other work, as at a BSP release) and --server-apply-ms per push (for
# its part), which reaches it --server-receive-ms after it arrived (the transport taking it
# in beside the thread), plus under value weighting (VSGD) --server-drift-pass-ms per pass
# over its part that the weighting's bookkeeping makes (1 + workers per apply, 1 per read;
# docs/simulator.md, server_cost.drift_pass), --worker-local-ms per iteration
# (--eager-local-ms under eager pull, whose step also corrects the parameters and copies
# them in and out), --worker-receive-ms per reply (the worker taking it in, once it is
# back), workers' links of --bandwidth-mbps (0: infinite).
# --noise F gives each iteration a jitter of mean fraction F, shifted to keep the mean: the
# timing noise that keeps paced workers out of lockstep. --host-cores C > 0 puts the nodes on
# one host of C cores, as the lab's share one machine: the server's costs above are CPU work
# on it, stretched by its load, beside each worker's gradient (--gradient-cpu-ms of CPU) and
# a background job of weight --host-background (a thread at nice 10: 0.11), and through shaped
# links each message's transfer takes --transfer-cpu-ms-per-mb of CPU per megabyte (the
# kernel's work between the lab's namespaces), --transfer-cpu-after-link of it (a share)
# once the message has crossed the link; --host-cores 0: every node has a CPU of its own
# (docs/simulator.md, host.cores). --host-run-to-completion 1 runs each of the host's jobs
# alone on a core until it is done, the others waiting in order, instead of sharing the
# cores. --server-transport-thread 1 gives each shard a transport thread beside its apply
# thread, as a real server (docs/simulator.md, server_cost.transport_thread). --probe-ms P
# > 0 says the calibration was measured while a gradient alone took P ms (the example's
# speed probe): every time above (latency, the server's and the worker's costs, the
# gradient, the transfers' CPU) is scaled, per scenario, policy and rate, by the median
# probe of its runs over P, the machine's speed then against its speed in the calibration's
# period (to three digits; the factors in <out>/speed.tsv); runs without a probe are
# replayed unscaled, with a warning. --probe-wake-ms W > 0 says it was measured while a
# sleeping thread woke W ms late (the example's wake-up probe): each cell's runs add their
# median wake-up's difference from W to the latency of every message, which wakes a
# sleeping node as a sleep's end does (the latency not below 0; the added time in
# speed.tsv). The defaults
# are the calibration of the machine the lab was first run on
# (docs/simulator_results.md#the-simulator-against-the-lab);
# --machine FILE sets them from a file of NAME=VALUE lines, NAME one of these options
# without its dashes (latency-ms, server-read-ms, server-queued-read-ms, server-receive-ms,
# server-apply-ms, server-drift-pass-ms, server-transport-thread, worker-local-ms,
# eager-local-ms, worker-receive-ms, noise, frame-overhead, host-cores, host-background,
# gradient-cpu-ms, transfer-cpu-ms-per-mb, transfer-cpu-after-link, host-run-to-completion,
# probe-ms, probe-wake-ms),
# '#' comments; options after it override it. scripts/lab/machines/ holds the measured ones.
#
# Runs through shaped links (scenario.sh --shaped, whose options it kept in DIR/links) are
# replayed through the same links: the workers' and the servers' rates less
# --frame-overhead (the share of a shaped link the frames' headers take; serialized links)
# and their send delays on the sending side, and compared on rank 0's figures, the only
# ones such a run reports. Links that differ between workers are refused.
#
# Writes under --out: <scenario>_<policy>.csv (kairos_policy_sim --csv, one row per seed),
# summary.tsv (the simulated seeds in the lab's summary format) and compare.tsv, one row per
# scenario and policy: the lab's and the simulator's median time to target over the seeds
# ("-" when at most half reached it) and their relative error, mean iterations per second
# (the workers' together) and relative error, mean share of time blocked (the workers' time
# in pulls, as the lab counts it: the gate's wait, the server and both transfers) and the
# difference in points. Prints the table; per scenario both verdicts' leads (the lab's rule,
# with --verdict-noise), whether the winners agree and the lab's time of the simulator's
# pick over the lab's best; and the counts against the acceptance (scripts/lab/compare_lib.sh).
# Policies named by --skip are simulated and shown but not counted. Exit 1 if a simulation
# failed, 2 on bad arguments (and for runs through shaped links whose options are not known).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/lab/scenarios.sh
source scripts/lab/sim_lib.sh
source scripts/lab/compare_lib.sh

lab=""
bandwidth_mbps=0
target=0.84
average_s=2
snapshot_s=0.25
budget_s=30
parallel=2
out=""
sim=build/bench/kairos_policy_sim
verdict_noise=0.1
example_streams=1
skip=()
extra=()

die() { echo "simulate.sh: $*" >&2; exit 2; }
# read_machine FILE: the calibration in a machine file (the --help above).
read_machine() {
  [[ -f $1 && -r $1 ]] || die "--machine: no readable file '$1'"
  local line name value n=0
  while IFS= read -r line || [[ -n $line ]]; do
    n=$((n + 1))
    line=${line%%#*}
    [[ $line =~ ^[[:space:]]*$ ]] && continue
    [[ $line =~ ^[[:space:]]*([a-z-]+)[[:space:]]*=[[:space:]]*([0-9]+(\.[0-9]+)?)[[:space:]]*$ ]] ||
      die "$1:$n: not NAME=NUMBER: '$line'"
    name=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
    case $name in
      latency-ms) latency_ms=$value ;;
      server-read-ms) read_ms=$value ;;
      server-queued-read-ms) queued_read_ms=$value ;;
      server-transport-thread) transport_thread=$value ;;
      server-receive-ms) receive_ms=$value ;;
      server-apply-ms) apply_ms=$value ;;
      server-drift-pass-ms) drift_pass_ms=$value ;;
      worker-local-ms) local_ms=$value ;;
      eager-local-ms) eager_local_ms=$value ;;
      worker-receive-ms) worker_receive_ms=$value ;;
      noise) noise=$value ;;
      frame-overhead) frame_overhead=$value ;;
      host-cores) host_cores=$value ;;
      host-background) host_background=$value ;;
      host-run-to-completion) run_to_completion=$value ;;
      gradient-cpu-ms) gradient_cpu_ms=$value ;;
      transfer-cpu-ms-per-mb) transfer_cpu_ms_per_mb=$value ;;
      transfer-cpu-after-link) transfer_cpu_after_link=$value ;;
      probe-ms) probe_ms=$value ;;
      probe-wake-ms) probe_wake_ms=$value ;;
      *) die "$1:$n: unknown setting '$name'" ;;
    esac
  done <"$1"
}
# The defaults: the calibration of the machine the lab was first run on.
machine=scripts/lab/machines/first.env
probe_wake_ms=0  # a file without the setting took no wake-up probe
read_machine "$machine"
while (($#)); do
  case "$1" in
    --lab) lab=$2; shift 2 ;;
    --machine) machine=$2; read_machine "$2"; shift 2 ;;
    --frame-overhead) frame_overhead=$2; shift 2 ;;
    --latency-ms) latency_ms=$2; shift 2 ;;
    --server-read-ms) read_ms=$2; shift 2 ;;
    --server-apply-ms) apply_ms=$2; shift 2 ;;
    --server-drift-pass-ms) drift_pass_ms=$2; shift 2 ;;
    --server-queued-read-ms) queued_read_ms=$2; shift 2 ;;
    --server-transport-thread) transport_thread=$2; shift 2 ;;
    --server-receive-ms) receive_ms=$2; shift 2 ;;
    --worker-local-ms) local_ms=$2; shift 2 ;;
    --noise) noise=$2; shift 2 ;;
    --bandwidth-mbps) bandwidth_mbps=$2; shift 2 ;;
    --eager-local-ms) eager_local_ms=$2; shift 2 ;;
    --worker-receive-ms) worker_receive_ms=$2; shift 2 ;;
    --host-cores) host_cores=$2; shift 2 ;;
    --host-background) host_background=$2; shift 2 ;;
    --host-run-to-completion) run_to_completion=$2; shift 2 ;;
    --gradient-cpu-ms) gradient_cpu_ms=$2; shift 2 ;;
    --transfer-cpu-ms-per-mb) transfer_cpu_ms_per_mb=$2; shift 2 ;;
    --transfer-cpu-after-link) transfer_cpu_after_link=$2; shift 2 ;;
    --probe-ms) probe_ms=$2; shift 2 ;;
    --probe-wake-ms) probe_wake_ms=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --average-s) average_s=$2; shift 2 ;;
    --snapshot-s) snapshot_s=$2; shift 2 ;;
    --budget-s) budget_s=$2; shift 2 ;;
    --jobs) parallel=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --sim) sim=$2; shift 2 ;;
    --verdict-noise) verdict_noise=$2; shift 2 ;;
    --sampled-batches) example_streams=0; shift ;;
    --seeds) model_seeds=$2; shift 2 ;;
    --skip) skip+=("$2"); shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ -n $lab && -f $lab/runs.tsv && -f $lab/summary.tsv ]] ||
  die "--lab: a directory of scripts/lab/scenario.sh --out (with runs.tsv and summary.tsv)"
[[ -x $sim ]] || die "no simulator at $sim (build it: scripts/build.sh --target kairos_policy_sim)"
[[ $parallel =~ ^[0-9]+$ ]] && ((parallel >= 1)) || die "--jobs: a number >= 1"
[[ -z ${model_seeds:-} || ($model_seeds =~ ^[0-9]+$ && model_seeds -ge 1) ]] ||
  die "--seeds: a number >= 1, not '$model_seeds'"
[[ $transport_thread == [01] ]] || die "--server-transport-thread: 0 or 1, not '$transport_thread'"
[[ $run_to_completion == [01] ]] || die "--host-run-to-completion: 0 or 1, not '$run_to_completion'"
[[ $probe_ms =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--probe-ms: a number >= 0, not '$probe_ms'"
[[ $probe_wake_ms =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--probe-wake-ms: a number >= 0, not '$probe_wake_ms'"
out=${out:-$lab/sim}
mkdir -p "$out"

# The machine's speed (docs/lab.md#the-machines-own-speed): the calibration's times were
# measured while a gradient alone took --probe-ms; each cell's runs (a scenario, policy and
# rate: its seeds, made a minute apart) scale every one of them by their median probe over
# it, the network's and the server's as the workers' (the directory's median for a cell
# whose runs have none). The factor per cell goes to <out>/speed.tsv. The host's wake-up
# (--probe-wake-ms) moves independently of the gradient's speed: each cell's latency gains
# its runs' median wake-up's difference from the calibration's, after the scaling.
scaling=0
awk -v p="$probe_ms" 'BEGIN { exit !(p > 0) }' && scaling=1
waking=0
awk -v p="$probe_wake_ms" 'BEGIN { exit !(p > 0) }' && waking=1
# scale_times F: the calibration's times times F (to three digits; F = 1: as given), in the
# variables lab_sim reads and in sim_worker_flags.
scale_times() {
  local f=$1
  scaled_time() { if [[ $f == 1 ]]; then echo "$1"; else awk -v v="$1" -v f="$f" 'BEGIN { printf "%.3g", v * f }'; fi; }
  latency_ms=$(scaled_time "$latency_ms") read_ms=$(scaled_time "$read_ms") apply_ms=$(scaled_time "$apply_ms")
  sim_worker_flags+=(--worker-local-ms "$(scaled_time "$local_ms")"
    --eager-local-ms "$(scaled_time "$eager_local_ms")"
    --worker-receive-ms "$(scaled_time "$worker_receive_ms")"
    --server-queued-read-ms "$(scaled_time "$queued_read_ms")"
    --server-receive-ms "$(scaled_time "$receive_ms")"
    --server-drift-pass-ms "$(scaled_time "$drift_pass_ms")")
  if host_on; then
    sim_worker_flags+=(--gradient-cpu-ms "$(scaled_time "$gradient_cpu_ms")")
    [[ -n $links ]] && sim_worker_flags+=(--transfer-cpu-ms-per-mb "$(scaled_time "$transfer_cpu_ms_per_mb")")
  fi
  return 0
}

sim_worker_flags=(--push-waits)
[[ $transport_thread == 1 ]] && sim_worker_flags+=(--server-transport-thread)
# The host's other settings only with a host (--host-cores 0 turns it off).
host_on() { awk -v c="$host_cores" 'BEGIN { exit !(c > 0) }'; }
if host_on; then
  sim_worker_flags+=(--host-cores "$host_cores" --host-background "$host_background")
  [[ $run_to_completion == 1 ]] && sim_worker_flags+=(--host-run-to-completion)
fi
rank0=0
links=""
# The lab's model, workers, pace and data, from the first lines of a run's log.
log=$(ls "$lab"/evals/*.log | head -1)
if [[ -f $lab/links ]]; then
  # RATE[:DELAY] of shaped_job.sh: the rate in Mbit/s (0: not shaped), the delay in ms.
  link_rate() { echo "${1%%:*}"; }
  link_delay() { [[ $1 == *:* ]] && echo "${1#*:}" || echo 0; }
  worker_link=0:0 server_link=0:0
  read -r -a link_options <"$lab/links"
  for ((i = 0; i < ${#link_options[@]}; i += 2)); do
    value=${link_options[i + 1]:-}
    case ${link_options[i]} in
      --worker-link)
        IFS=, read -r -a specs <<<"$value"
        for spec in "${specs[@]}"; do
          [[ $spec == "${specs[0]}" ]] || die "$lab/links: the workers' links differ ($value); the simulator gives every worker one link"
        done
        worker_link=${specs[0]} ;;
      --server-link) server_link=$value ;;
      --coordinator-link) ;;
      *) die "$lab/links: unknown option '${link_options[i]}'" ;;
    esac
  done
  [[ $worker_link =~ ^[0-9]+(:[0-9.]+)?$ && $server_link =~ ^[0-9]+(:[0-9.]+)?$ ]] ||
    die "$lab/links: not RATE[:DELAY_MS] links ('$worker_link', '$server_link')"
  # The frames' headers take a share of a shaped link (docs/lab.md#validated).
  payload() { awk -v m="$1" -v o="$frame_overhead" 'BEGIN { print m / (1 + o) }'; }
  bandwidth_mbps=$(payload "$(link_rate "$worker_link")")
  sim_worker_flags+=(--serialize-links
    --server-bandwidth-gbps "$(awk -v m="$(payload "$(link_rate "$server_link")")" 'BEGIN { print m / 1000 }')"
    --worker-send-delay-ms "$(link_delay "$worker_link")"
    --server-send-delay-ms "$(link_delay "$server_link")")
  # On a shared host, the kernel's work on the links between the lab's namespaces.
  if host_on; then
    sim_worker_flags+=(--transfer-cpu-after-link "$transfer_cpu_after_link")
  fi
  rank0=1
  links="; links: workers $worker_link, servers $server_link (rank 0's figures)"
elif grep -q '^kairos-coordinator listening' "$log"; then
  die "$lab: its runs went through shaped links, but $lab/links (the options scenario.sh --shaped keeps) is missing"
fi
lab_run_settings "$log"
[[ -n $workers && -n $servers && -n $hidden && -n $batch && -n $pace_ms && -n $train && -n $test ]] ||
  die "$log: not a log of the example's MLP with a pace (workers '$workers', servers '$servers', hidden '$hidden', batch '$batch', pace '$pace_ms', data '$train'/'$test')"
# The lab's servers are the simulator's shards: each with its own link and thread.
sim_worker_flags+=(--server-shards "$servers")
if [[ $shards == by-class ]]; then
  echo "simulate.sh: the lab's shards are by class; the simulator samples every batch from the whole training set" >&2
elif ((example_streams)); then
  sim_worker_flags+=(--example-streams)
fi

failed=0

# Per scenario, policy and learning rate of the seeds' runs: the first seed and how many
# (kairos_policy_sim runs consecutive seeds), and the median speed and wake-up probes of those
# runs (of the directory's where they have none; "-": no run has one, so none of them will).
printf 'scenario\tpolicy\tlr\tprobe_ms\tfactor\twake_ms\tadded_latency_ms\n' >"$out/speed.tsv"
while IFS=$'\t' read -r scenario policy lr first count probe wake; do
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n || failed=1; done
  if ((scaling)) && [[ $probe == - ]]; then
    echo "simulate.sh: $lab/runs.tsv has no speed probe (runs made before the example had one): the calibration is not scaled" >&2
    scaling=0
  fi
  if ((waking)) && [[ $wake == - ]]; then
    echo "simulate.sh: $lab/runs.tsv has no wake-up probe (runs made before the example had one): the latency is not adjusted" >&2
    waking=0
  fi
  factor=1 added=0
  ((scaling)) && factor=$(awk -v r="$probe" -v p="$probe_ms" 'BEGIN { printf "%.4f", r / p }')
  ((waking)) && added=$(awk -v w="$wake" -v p="$probe_wake_ms" 'BEGIN { printf "%.4f", w - p }')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$scenario" "$policy" "$lr" "$probe" "$factor" \
    "$wake" "$added" >>"$out/speed.tsv"
  (
    scale_times "$factor"
    [[ $added == 0 ]] ||
      latency_ms=$(awk -v l="$latency_ms" -v a="$added" 'BEGIN { l += a; printf "%.4g", (l > 0 ? l : 0) }')
    lab_sim "$scenario" "$policy" "$lr" "$first" "${model_seeds:-$count}" \
      "$out/$(lab_safe_name "$scenario")_$(lab_safe_name "$policy").csv"
  ) &
done < <(awk -F'\t' '
  function median(a, n,   i, j, t) {
    if (!n) return "-"
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "probe_ms") c = i; if ($i == "wake_ms") w = i }; next }
  c && $c > 0 { all[++m] = $c }
  w && $w ~ /^[0-9.]+$/ { woke[++mw] = $w }
  $2 == "run" {
    k = $1 "\t" $3 "\t" $4
    if (!(k in first)) { order[++n] = k; first[k] = $5 }
    if ($5 < first[k]) first[k] = $5
    count[k]++
    if (c && $c > 0) probe[k, ++probes[k]] = $c
    if (w && $w ~ /^[0-9.]+$/) wake[k, ++wakes[k]] = $w
  }
  END {
    d = median(all, m); dw = median(woke, mw)
    for (i = 1; i <= n; i++) {
      k = order[i]; delete v; delete u
      for (j = 1; j <= probes[k]; j++) v[j] = probe[k, j]
      for (j = 1; j <= wakes[k]; j++) u[j] = wake[k, j]
      p = median(v, probes[k]); q = median(u, wakes[k])
      print k "\t" first[k] "\t" count[k] "\t" (p == "-" ? d : p) "\t" (q == "-" ? dw : q)
    }
  }' "$lab/runs.tsv")
while (($(jobs -rp | wc -l) > 0)); do wait -n || failed=1; done
speed="not scaled (no --probe-ms)"
if ((scaling)); then
  speed="scaled per cell by the runs' speed probe over the calibration's $probe_ms ms ($(awk -F'\t' 'NR > 1 { if (lo == "" || $5 < lo) lo = $5; if ($5 > hi) hi = $5 } END { print "factors " lo "-" hi }' "$out/speed.tsv"); $out/speed.tsv)"
elif awk -v p="$probe_ms" 'BEGIN { exit !(p > 0) }'; then
  speed="not scaled (the runs have no speed probe)"
fi
if ((waking)); then
  speed+=", each message's latency plus the runs' wake-up over the calibration's $probe_wake_ms ms ($(awk -F'\t' 'NR > 1 { if (lo == "" || $7 < lo) lo = $7; if (hi == "" || $7 > hi) hi = $7 } END { print "added " lo " to " hi " ms" }' "$out/speed.tsv"))"
elif awk -v p="$probe_wake_ms" 'BEGIN { exit !(p > 0) }'; then
  speed+=", the latency not adjusted (the runs have no wake-up probe)"
fi

# The simulated seeds as a summary of the lab's format (lab_sim_summary), and compare.tsv:
# the two joined (lab_compare).
{
  echo "$lab_summary_header"
  awk -F'\t' 'NR > 1 { print $1 "\t" $2 "\t" $3 }' "$lab/summary.tsv" |
  while IFS=$'\t' read -r scenario policy lr; do
    csv="$out/$(lab_safe_name "$scenario")_$(lab_safe_name "$policy").csv"
    if [[ -f $csv ]]; then lab_sim_summary "$scenario" "$policy" "$lr" "$csv"; fi
  done
} >"$out/summary.tsv"
compare="$out/compare.tsv"
lab_compare "$lab/summary.tsv" "$out/summary.tsv" sim >"$compare"

host="no shared host"
scheduling=""
[[ $run_to_completion == 1 ]] && scheduling=", jobs run to completion"
host_on && host="host $host_cores cores (background $host_background, gradient $gradient_cpu_ms ms, transfers $transfer_cpu_ms_per_mb ms per MB, $transfer_cpu_after_link of it after the link$scheduling)"
threads=""
[[ $transport_thread == 1 ]] && threads=" (a transport thread beside the apply thread)"
echo "the simulator against the lab: $lab ($workers workers, $servers servers, MLP $hidden, batch $batch, pace $pace_ms ms); machine $machine: latency $latency_ms ms, server read $read_ms ms ($queued_read_ms queued), receive $receive_ms ms, apply $apply_ms ms$threads, value weighting's pass $drift_pass_ms ms, worker $local_ms ms per iteration ($eager_local_ms under eager pull) and $worker_receive_ms per reply, noise $noise, $host, bandwidth ${bandwidth_mbps} Mbit/s (frames $frame_overhead)$links; times $speed ${extra[*]}"
lab_compare_report "$compare" "$lab/summary.tsv" "$out/summary.tsv" simulator "$verdict_noise" \
  ${skip[@]+"${skip[@]}"}
exit "$failed"
