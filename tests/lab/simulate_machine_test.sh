#!/usr/bin/env bash
# scripts/lab/simulate.sh --machine: a file of NAME=VALUE lines sets the calibration (the
# header names the values; a large latency slows the replay of bsp, the positive control; so
# do a small shared host, receipts on a transport thread and a worker's take-in of each
# reply; jobs run to completion change it; value weighting's pass reaches the simulator;
# the speed probe scales every time, the wake-up probe adds to the latency, --seeds sets the
# simulated seeds),
# every shipped machine file replays, an option after it overrides it, and a file with an
# unknown name, a value that is not a number, or no file at all is refused with exit 2 and
# the reason.
#
#   simulate_machine_test.sh SIMULATE_SH KAIROS_POLICY_SIM LAB_DIR
set -euo pipefail
simulate=$1 sim=$2 lab=$3
work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
fail() { echo "simulate_machine_test: $*" >&2; exit 1; }

cp -r "$lab" "$work/lab"
rm -rf "$work/lab/sim"
replay() {  # replay NAME ARGS...: simulate.sh on the copy, into $work/NAME
  local name=$1
  shift
  "$simulate" --lab "$work/lab" --sim "$sim" --target 0.5 --budget-s 3 --out "$work/$name" \
    "$@" >"$work/$name.out" 2>&1 || { cat "$work/$name.out"; fail "the replay '$name' failed"; }
}
bsp_it_s() { awk -F'\t' '$2 == "bsp" { print $8 }' "$work/$1/compare.tsv"; }

replay default
cat >"$work/slow.env" <<'CAL'
# a calibration with a slow network
latency-ms = 2

server-read-ms=0.5   # per read
noise=0.02
frame-overhead=0.1
CAL
replay slow --machine "$work/slow.env"
head -n 1 "$work/slow.out"
grep -q "machine $work/slow.env: latency 2 ms, server read 0.5 ms" "$work/slow.out" ||
  fail "the header does not name the file and show its values"
grep -q 'machine scripts/lab/machines/first.env: latency 0.03 ms' "$work/default.out" ||
  fail "the header does not name the default machine"
grep -q 'noise 0.02, .*(frames 0.1)' "$work/slow.out" || fail "the header does not show the file's noise and frames"
default=$(bsp_it_s default) slow=$(bsp_it_s slow)
[[ -n $default && -n $slow ]] || fail "no bsp row ($default, $slow)"
awk -v d="$default" -v s="$slow" 'BEGIN { exit !(s > 0 && s < 0.9 * d) }' ||
  fail "bsp with 2 ms latency ran $slow iterations/s, with the default $default"

printf 'host-cores=0.2\ngradient-cpu-ms=2\nhost-background=0.1\n' >"$work/host.env"
replay host --machine "$work/host.env"
grep -q 'host 0.2 cores (background 0.1, gradient 2 ms, transfers 0 ms per MB, 0 of it after the link)' "$work/host.out" ||
  fail "the header does not show the file's host"
grep -q 'no shared host' "$work/default.out" || fail "the default has a shared host"
! grep -q 'run to completion' "$work/host.out" || fail "the default host runs jobs to completion"
# One core loaded by 2 ms gradients: run to completion times the jobs otherwise than sharing.
printf 'host-cores=1\ngradient-cpu-ms=2\n' >"$work/ps.env"
printf 'host-cores=1\ngradient-cpu-ms=2\nhost-run-to-completion=1\n' >"$work/rtc.env"
replay ps --machine "$work/ps.env"
replay rtc --machine "$work/rtc.env"
grep -q 'after the link, jobs run to completion)' "$work/rtc.out" ||
  fail "the header does not show jobs run to completion"
ps=$(bsp_it_s ps) rtc=$(bsp_it_s rtc)
[[ -n $ps && -n $rtc && $ps != "$rtc" ]] ||
  fail "bsp ran $rtc iterations/s with jobs run to completion, $ps sharing the core"
host=$(bsp_it_s host)
awk -v d="$default" -v h="$host" 'BEGIN { exit !(h > 0 && h < 0.95 * d) }' ||
  fail "bsp on a host of 0.2 cores ran $host iterations/s, with the default $default"

# Receipts of 5 ms: beside the shard's thread the four pushes of a round are taken in
# together; on a transport thread one after the other, so bsp runs slower.
printf 'server-receive-ms=5\n' >"$work/beside.env"
printf 'server-receive-ms=5\nserver-transport-thread=1\n' >"$work/thread.env"
replay beside --machine "$work/beside.env"
replay thread --machine "$work/thread.env"
grep -q 'apply 0.15 ms (a transport thread beside the apply thread)' "$work/thread.out" ||
  fail "the header does not show the transport thread"
! grep -q 'transport thread' "$work/beside.out" || fail "the default has a transport thread"
beside=$(bsp_it_s beside) thread=$(bsp_it_s thread)
awk -v b="$beside" -v t="$thread" 'BEGIN { exit !(t > 0 && t < 0.95 * b) }' ||
  fail "bsp with receipts on a transport thread ran $thread iterations/s, beside it $beside"

# Value weighting's pass reaches the simulator (the runs here have none: the simulator's
# own tests show its effect; a wrapper records the simulator's arguments) and the header.
printf 'server-drift-pass-ms=0.7\n' >"$work/drift.env"
printf '#!/usr/bin/env bash\necho "$*" >>"%s"\nexec "%s" "$@"\n' "$work/sim.args" "$sim" \
  >"$work/sim_args.sh"
chmod +x "$work/sim_args.sh"
"$simulate" --lab "$work/lab" --sim "$work/sim_args.sh" --target 0.5 --budget-s 3 \
  --out "$work/drift" --machine "$work/drift.env" >"$work/drift.out" 2>&1 ||
  { cat "$work/drift.out"; fail "the replay 'drift' failed"; }
grep -q -- '--server-drift-pass-ms 0.7 ' "$work/sim.args" ||
  fail "the simulator was not given value weighting's pass: $(head -n 1 "$work/sim.args")"
grep -q "value weighting's pass 0.7 ms," "$work/drift.out" ||
  fail "the header does not show value weighting's pass"
grep -q "value weighting's pass 0 ms," "$work/default.out" ||
  fail "the default has a pass of value weighting"

# The speed probe: a calibration measured while a gradient took 0.4 ms, runs whose probes
# say 0.8 (the copy's column rewritten): every time doubles on its way to the simulator;
# without --probe-ms (the control) nothing is scaled; runs made before the probe are
# replayed unscaled with a warning.
set_column() {  # set_column NAME VALUE|drop [POLICY]: the copy's runs.tsv (POLICY's runs
  # alone) with that value in the column NAME, or without the column
  awk -F'\t' -v OFS='\t' -v name="$1" -v v="$2" -v p="${3:-}" '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i }
    !c { print; next }
    v == "drop" { for (i = c; i < NF; i++) $i = $(i + 1); NF--; print; next }
    { if (NR > 1 && (p == "" || $3 == p)) $c = v; print }' "$work/lab/runs.tsv" >"$work/runs.tsv"
  mv "$work/runs.tsv" "$work/lab/runs.tsv"
}
set_probe() { set_column probe_ms "$@"; }
grep -q $'\tprobe_ms' "$work/lab/runs.tsv" || fail "the lab's runs.tsv has no probe_ms column"
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "probe_ms") c = i; next }
  !($c > 0) { exit 1 }' "$work/lab/runs.tsv" || fail "a lab run has no speed probe"
cp "$work/lab/runs.tsv" "$work/runs.probed"
set_probe 0.8
printf 'latency-ms=0.5\nserver-apply-ms=0.25\nworker-local-ms=0.1\nhost-cores=2\ngradient-cpu-ms=1\n' \
  >"$work/speed.env"
probe_replay() {  # probe_replay NAME ARGS...: the replay through the argument-recording wrapper
  local name=$1
  shift
  : >"$work/sim.args"
  "$simulate" --lab "$work/lab" --sim "$work/sim_args.sh" --target 0.5 --budget-s 3 \
    --out "$work/$name" --machine "$work/speed.env" "$@" >"$work/$name.out" 2>&1 ||
    { cat "$work/$name.out"; fail "the replay '$name' failed"; }
  cp "$work/sim.args" "$work/$name.args"
}
probe_replay scaled --probe-ms 0.4
for flag in '--latency-ms 1 ' '--server-apply-ms 0.5 ' '--worker-local-ms 0.2 ' \
  '--gradient-cpu-ms 2 '; do
  grep -q -- "$flag" "$work/scaled.args" || fail "scaled by 2, the simulator was not given '$flag'"
done
grep -q "times scaled per cell by the runs' speed probe over the calibration's 0.4 ms (factors 2.0000-2.0000; " \
  "$work/scaled.out" || fail "the header does not show the scale: $(head -n 1 "$work/scaled.out")"
# Each cell by its own runs: bsp's at 1.2 ms (3 times), the others' at 0.8 (twice).
set_probe 1.2 bsp
probe_replay cells --probe-ms 0.4
grep -q -- '--latency-ms 1.5 .*--policies bsp ' "$work/cells.args" ||
  fail "bsp's runs at 1.2 ms were not scaled by 3: $(grep -- '--policies bsp ' "$work/cells.args")"
grep -v -- '--policies bsp ' "$work/cells.args" | grep -q -- '--latency-ms 1 ' ||
  fail "the other cells were not scaled by 2"
awk -F'\t' '$2 == "bsp" && $5 != "3.0000" { exit 1 }' "$work/cells/speed.tsv" ||
  fail "speed.tsv does not give bsp's factor 3: $(cat "$work/cells/speed.tsv")"
probe_replay unscaled
grep -q -- '--latency-ms 0.5 .*--gradient-cpu-ms 1 ' "$work/unscaled.args" ||
  fail "without --probe-ms the times were scaled"
grep -q 'times not scaled (no --probe-ms)' "$work/unscaled.out" || fail "the header hides the unscaled times"
set_probe drop
probe_replay old --probe-ms 0.4
grep -q -- '--latency-ms 0.5 .*--gradient-cpu-ms 1 ' "$work/old.args" ||
  fail "runs without a probe were scaled"
grep -q 'has no speed probe' "$work/old.out" || fail "runs without a probe gave no warning"
cp "$work/runs.probed" "$work/lab/runs.tsv"

# The wake-up probe: a calibration measured while a sleep woke 0.1 ms late, runs whose
# wake-ups say 0.35: each message's latency gains 0.25 ms after the speed's scaling (by 2:
# 1.25); without --probe-wake-ms (the control) nothing is added; a wake-up earlier than the
# calibration's takes latency off, not below 0; runs made before the probe keep the latency,
# with a warning.
grep -q $'\twake_ms' "$work/lab/runs.tsv" || fail "the lab's runs.tsv has no wake_ms column"
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "wake_ms") c = i; next }
  $c !~ /^[0-9.]+$/ { exit 1 }' "$work/lab/runs.tsv" || fail "a lab run has no wake-up probe"
set_probe 0.8
set_column wake_ms 0.35
probe_replay woken --probe-ms 0.4 --probe-wake-ms 0.1
grep -q -- '--latency-ms 1.25 ' "$work/woken.args" && ! grep -q -- '--latency-ms 1 ' "$work/woken.args" ||
  fail "a wake-up 0.25 ms later did not add 0.25 ms to every cell's latency of 1"
grep -q -- '--server-apply-ms 0.5 ' "$work/woken.args" || fail "the wake-up changed the other times"
grep -q "latency plus the runs' wake-up over the calibration's 0.1 ms (added 0.2500 to 0.2500 ms)" \
  "$work/woken.out" || fail "the header does not show the wake-up: $(head -n 1 "$work/woken.out")"
probe_replay asleep --probe-ms 0.4
grep -q -- '--latency-ms 1 ' "$work/asleep.args" && ! grep -q -- '--latency-ms 1.25 ' "$work/asleep.args" ||
  fail "without --probe-wake-ms the latency changed"
set_column wake_ms 0.15 bsp
probe_replay early --probe-wake-ms 0.4
grep -q -- '--latency-ms 0.25 .*--policies bsp ' "$work/early.args" ||
  fail "bsp's wake-up 0.25 ms early did not take 0.25 ms off: $(grep -- '--policies bsp ' "$work/early.args")"
grep -v -- '--policies bsp ' "$work/early.args" | grep -q -- '--latency-ms 0.45 ' ||
  fail "the other cells' wake-up 0.05 ms early did not take 0.05 ms off"
probe_replay earlier --probe-wake-ms 1
grep -q -- '--latency-ms 0 ' "$work/earlier.args" || fail "a latency below 0"
set_column wake_ms drop
probe_replay unprobed --probe-wake-ms 0.1
grep -q -- '--latency-ms 0.5 ' "$work/unprobed.args" || fail "runs without a wake-up probe were adjusted"
grep -q 'has no wake-up probe' "$work/unprobed.out" || fail "runs without a wake-up probe gave no warning"
cp "$work/runs.probed" "$work/lab/runs.tsv"

# --seeds: every cell simulated with that many seeds from its first, not the lab's count (2).
probe_replay seeds --seeds 5
[[ $(grep -c -- '--seed 1 --seeds 5 ' "$work/seeds.args") -eq $(grep -c . "$work/seeds.args") ]] ||
  fail "--seeds 5 did not give every cell seeds 1..5: $(cat "$work/seeds.args")"
probe_replay lab_seeds
[[ $(grep -c -- '--seed 1 --seeds 2 ' "$work/lab_seeds.args") -eq $(grep -c . "$work/lab_seeds.args") ]] ||
  fail "without --seeds a cell did not get the lab's two seeds: $(cat "$work/lab_seeds.args")"

# A worker taking 5 ms to take in each reply: every iteration is that much longer.
printf 'worker-receive-ms=5\n' >"$work/takein.env"
replay takein --machine "$work/takein.env"
grep -q 'under eager pull) and 5 per reply' "$work/takein.out" ||
  fail "the header does not show the take-in of a reply"
grep -q 'under eager pull) and 0 per reply' "$work/default.out" ||
  fail "the default takes in a reply"
takein=$(bsp_it_s takein)
awk -v d="$default" -v t="$takein" 'BEGIN { exit !(t > 0 && t < 0.95 * d) }' ||
  fail "bsp taking 5 ms per reply ran $takein iterations/s, with the default $default"

# Every machine file shipped in scripts/lab/machines/ is read whole (a bad one is refused:
# below) and replays.
for file in "$(dirname "$simulate")"/machines/*.env; do
  name=$(basename "$file" .env)
  replay "shipped-$name" --machine "$file"
  grep -q "machine $file: latency" "$work/shipped-$name.out" ||
    fail "the shipped machine file $file was not applied"
done

replay override --machine "$work/slow.env" --latency-ms 0.03
grep -q 'latency 0.03 ms, server read 0.5 ms' "$work/override.out" ||
  fail "an option after --machine did not override the file"

refused() {  # refused REASON FILE_CONTENT: the file is refused with exit 2, naming REASON
  local reason=$1 status=0
  printf '%s\n' "$2" >"$work/bad.env"
  "$simulate" --lab "$work/lab" --sim "$sim" --machine "$work/bad.env" \
    >"$work/bad.out" 2>&1 || status=$?
  cat "$work/bad.out"
  [[ $status -eq 2 ]] || fail "'$2': exit $status, not 2"
  grep -q -- "$reason" "$work/bad.out" || fail "'$2': the refusal does not say '$reason'"
}
refused "unknown setting 'latency'" "latency=0.1"
refused "bad.env:2: not NAME=NUMBER" $'noise=0.01\nserver-apply-ms=fast'
refused "bad.env:1: not NAME=NUMBER" "server-apply-ms=-1"
refused "server-transport-thread: 0 or 1, not '2'" "server-transport-thread=2"
refused "host-run-to-completion: 0 or 1, not '2'" "host-run-to-completion=2"
refused "bad.env:1: not NAME=NUMBER" "probe-ms=fast"
refused "bad.env:1: not NAME=NUMBER" "probe-wake-ms=-0.1"
status=0
"$simulate" --lab "$work/lab" --sim "$sim" --seeds 0 >"$work/seeds0.out" 2>&1 || status=$?
[[ $status -eq 2 ]] && grep -q -- "--seeds: a number >= 1, not '0'" "$work/seeds0.out" ||
  fail "--seeds 0: exit $status, $(cat "$work/seeds0.out")"
status=0
"$simulate" --lab "$work/lab" --sim "$sim" --machine "$work/none.env" >"$work/none.out" 2>&1 ||
  status=$?
[[ $status -eq 2 ]] && grep -q "no readable file" "$work/none.out" ||
  fail "a missing machine file: exit $status, $(cat "$work/none.out")"
echo "simulate_machine_test passed"
