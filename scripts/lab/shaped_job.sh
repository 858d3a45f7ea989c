#!/usr/bin/env bash
# Runs one kairos job whose nodes are separate processes, each in a network namespace of its
# own, talking over TCP through links of a chosen bandwidth and latency (docs/lab.md,
# "Shaped links"). Needs root (ip netns, tc).
#
#   shaped_job.sh -s S -w W [--server-link SPEC] [--worker-link SPEC[,SPEC...]]
#                 [--coordinator-link SPEC] [--timeout SECONDS] -- program [args...]
#
# SPEC is RATE[:DELAY]: RATE in Mbit/s (0: not shaped), DELAY in milliseconds (decimals
# allowed), the one-way latency the node adds to every message it sends. Every server gets
# --server-link; worker i gets the i-th SPEC of --worker-link, the last one repeated for
# the workers past the list. Default for every link: 0:0 (neither shaped nor delayed).
#
# The network: a switch namespace holding a bridge, and one namespace per node (the
# coordinator, each server, each worker) joined to it by a veth pair, with an address of
# 10.78.0.0/16 (which exists only inside these namespaces, so jobs never collide: the names
# carry this script's pid). A link's RATE is an htb class on both ends of the node's veth,
# so the node's traffic is shaped in both directions and each node's link is its own
# bottleneck (the servers' links are where the pulls of synchronized workers queue). The
# DELAY is the node's --send-delay-us / KAIROS_SEND_DELAY_US: the kernel has no netem.
#
# The programs: kairos-coordinator and kairos-server from $KAIROS_BIN_DIR, else from the
# directory of the kairos-launch found on PATH. Each worker is `program args...` with
# the variables of kairos-launch (KAIROS_COORDINATOR, KAIROS_RANK, KAIROS_NUM_WORKERS,
# KAIROS_NUM_SERVERS, KAIROS_ROLE=worker) and KAIROS_SEND_DELAY_US. Output is not redirected.
#
# Exit: 0 when every process exited 0; 1 when one failed (the others are stopped); 2 usage
# error; 77 when network namespaces cannot be made here (not root, no ip); 124 --timeout;
# 128+N on signal N. The namespaces are removed on every exit but SIGKILL (then
# `ip netns list | grep '^kl'` shows them; `ip netns del NAME` removes them).
set -uo pipefail

usage() {
  sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'
  exit "${1:-2}"
}
die() {
  echo "shaped_job: $*" >&2
  exit 2
}

servers="" workers="" timeout_s=0
server_link="0:0" coordinator_link="0:0" worker_links="0:0"
while (($#)); do
  case $1 in
    -s | --servers) servers=${2:-}; shift 2 ;;
    -w | --workers) workers=${2:-}; shift 2 ;;
    --server-link) server_link=${2:-}; shift 2 ;;
    --worker-link) worker_links=${2:-}; shift 2 ;;
    --coordinator-link) coordinator_link=${2:-}; shift 2 ;;
    --timeout) timeout_s=${2:-}; shift 2 ;;
    -h | --help) usage 0 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
(($# > 0)) || die "no program: give it after --"
[[ $servers =~ ^[0-9]+$ ]] && ((servers >= 1 && servers <= 250)) || die "-s: 1 to 250 servers"
[[ $workers =~ ^[0-9]+$ ]] && ((workers >= 1 && workers <= 250)) || die "-w: 1 to 250 workers"
[[ $timeout_s =~ ^[0-9]+$ ]] || die "--timeout: whole seconds"

# check_spec SPEC: RATE[:DELAY] with a whole RATE and a DELAY in ms.
check_spec() {
  [[ $1 =~ ^[0-9]+(:[0-9]+(\.[0-9]+)?)?$ ]] || die "link '$1' is not RATE[:DELAY_MS]"
}
rate_of() { echo "${1%%:*}"; }
delay_us_of() {  # milliseconds (maybe with decimals) to whole microseconds
  local d=0
  [[ $1 == *:* ]] && d=${1#*:}
  awk -v ms="$d" 'BEGIN { printf "%d", ms * 1000 + 0.5 }'
}
check_spec "$server_link"
check_spec "$coordinator_link"
IFS=, read -r -a worker_spec <<<"$worker_links"
for s in "${worker_spec[@]}"; do check_spec "$s"; done

bin_dir=${KAIROS_BIN_DIR:-}
if [[ -z $bin_dir ]]; then
  launch=$(command -v kairos-launch) || die "set KAIROS_BIN_DIR (no kairos-launch on PATH)"
  bin_dir=$(dirname "$launch")
fi
coordinator_bin=$bin_dir/kairos-coordinator
server_bin=$bin_dir/kairos-server
[[ -x $coordinator_bin && -x $server_bin ]] || die "no kairos-coordinator and kairos-server in $bin_dir"

skip() {
  echo "shaped_job: $*" >&2
  exit 77
}
((EUID == 0)) || skip "needs root to make network namespaces (ip netns, tc)"
command -v ip >/dev/null && command -v tc >/dev/null || skip "ip and tc (iproute2) are missing"

tag="kl$$"
switch="${tag}sw"
namespaces=()
pids=()

# Stops what still runs (SIGTERM, SIGKILL after 10 s) and removes the namespaces.
cleanup() {
  local p t
  [[ -n ${timer:-} ]] && kill "$timer" 2>/dev/null
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for ((t = 0; t < 200; t++)); do
    local alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.05
  done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  wait 2>/dev/null
  for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null; done
}
trap cleanup EXIT
for sig in INT TERM HUP; do
  trap "trap - EXIT; cleanup; exit \$((128 + \$(kill -l $sig)))" "$sig"
done

ip netns add "$switch" 2>/dev/null || skip "ip netns add is not allowed here"
namespaces+=("$switch")
ip -n "$switch" link add br0 type bridge || die "cannot make a bridge"
ip -n "$switch" link set br0 up

# shape NS DEV RATE: an htb class of RATE Mbit/s on DEV's egress (nothing for 0).
shape() {
  (($3 > 0)) || return 0
  tc -n "$1" qdisc add dev "$2" root handle 1: htb default 1 &&
    tc -n "$1" class add dev "$2" parent 1: classid 1:1 htb rate "${3}mbit" 2>/dev/null
}

# add_node NAME ADDRESS RATE: a namespace ${tag}NAME joined to the switch at ADDRESS/16.
port=0
add_node() {
  local ns="${tag}$1" node="${tag}n$port" sw="${tag}p$port"
  port=$((port + 1))
  ip netns add "$ns" || die "ip netns add $ns"
  namespaces+=("$ns")
  ip link add "$node" type veth peer name "$sw" || die "cannot make veth $node"
  ip link set "$node" netns "$ns" && ip link set "$sw" netns "$switch" || die "moving $node"
  ip -n "$ns" link set "$node" name eth0
  ip -n "$ns" addr add "$2/16" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  ip -n "$switch" link set "$sw" master br0
  ip -n "$switch" link set "$sw" up
  # Both directions: the node's sends (eth0) and what the switch sends it (its port).
  shape "$ns" eth0 "$3" && shape "$switch" "$sw" "$3" || die "tc htb on $1's link failed"
}

worker_spec_of() {
  local i=$1
  ((i < ${#worker_spec[@]})) || i=$((${#worker_spec[@]} - 1))
  echo "${worker_spec[$i]}"
}

add_node c 10.78.0.1 "$(rate_of "$coordinator_link")"
for ((i = 0; i < servers; i++)); do add_node "s$i" "10.78.1.$((i + 1))" "$(rate_of "$server_link")"; done
for ((i = 0; i < workers; i++)); do
  add_node "w$i" "10.78.2.$((i + 1))" "$(rate_of "$(worker_spec_of "$i")")"
done

# Every namespace has its own ports, so fixed ones cannot collide with another job's.
coordinator="tcp://10.78.0.1:7000"
tmp=$(mktemp -d)
namespaces_rm_tmp() { rm -rf -- "$tmp"; }
ip netns exec "${tag}c" "$coordinator_bin" --listen "$coordinator" --servers "$servers" \
  --workers "$workers" --send-delay-us "$(delay_us_of "$coordinator_link")" \
  > >(tee "$tmp/coordinator.out") 2>&1 &
pids+=($!)
for ((t = 0; t < 200; t++)); do  # the coordinator's "listening on" line, up to 10 s
  grep -q "listening on" "$tmp/coordinator.out" 2>/dev/null && break
  kill -0 "${pids[0]}" 2>/dev/null || break
  sleep 0.05
done
grep -q "listening on" "$tmp/coordinator.out" || { namespaces_rm_tmp; echo "shaped_job: the coordinator did not start" >&2; exit 1; }
for ((i = 0; i < servers; i++)); do
  ip netns exec "${tag}s$i" "$server_bin" --coordinator "$coordinator" \
    --listen "tcp://10.78.1.$((i + 1)):7100" --send-delay-us "$(delay_us_of "$server_link")" &
  pids+=($!)
done
worker_pids=()
for ((i = 0; i < workers; i++)); do
  ip netns exec "${tag}w$i" env KAIROS_COORDINATOR="$coordinator" KAIROS_RANK="$i" \
    KAIROS_NUM_WORKERS="$workers" KAIROS_NUM_SERVERS="$servers" KAIROS_ROLE=worker \
    KAIROS_SEND_DELAY_US="$(delay_us_of "$(worker_spec_of "$i")")" "$@" &
  pids+=($!)
  worker_pids+=($!)
done
namespaces_rm_tmp

# Supervise: the first process to fail ends the job; the deadline ends it with 124 (a
# sleeping process stands for the deadline, so that `wait -n` needs no timeout of its own).
timer=""
if ((timeout_s > 0)); then
  sleep "$timeout_s" &
  timer=$!
fi
remaining=${#pids[@]}
while ((remaining > 0)); do
  done_pid=""
  wait -n -p done_pid "${pids[@]}" $timer
  rc=$?
  [[ -n $done_pid ]] || continue
  if [[ $done_pid == "$timer" ]]; then
    echo "shaped_job: --timeout ${timeout_s}s passed; stopping the job" >&2
    exit 124
  fi
  remaining=$((remaining - 1))
  for j in "${!pids[@]}"; do [[ ${pids[$j]} == "$done_pid" ]] && unset 'pids[j]'; done
  pids=("${pids[@]}")
  if ((rc != 0)); then
    echo "shaped_job: process $done_pid exited with status $rc; stopping the job" >&2
    exit 1
  fi
done
[[ -n $timer ]] && kill "$timer" 2>/dev/null
exit 0
