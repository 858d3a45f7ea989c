#!/usr/bin/env bash
# Three hosts on one machine (docs/multi_host.md): network namespaces h1, h2, h3 joined by
# veth links to a bridge in a fourth ("switch"), 10.77.<n>.1-3/24. Needs root (CAP_NET_ADMIN
# and CAP_SYS_ADMIN for `ip netns`); exit 77 (skipped) with the reason where that is not
# allowed.
#
#   netns_test.sh KAIROS_COORDINATOR_BIN KAIROS_SERVER_BIN PACED_TRAINING
#
# 1. A job across the hosts, started by hand: the coordinator on h1 at a fixed address, a
#    server on h2 listening on every interface in a port range without --advertise-host
#    (the coordinator must advertise it at 10.77.n.2), worker 0 on h3, worker 1 on h1.
#    The same program started by rank variables (KAIROS_WORLD_RANK), finding the coordinator
#    at a fixed KAIROS_COORDINATOR, then through a rendezvous file.
# 2. The same job with worker 0's link cut in the middle: the coordinator declares it dead
#    after its heartbeat timeout, the other worker finishes, the job ends with an error
#    naming the dead worker, and the cut worker ends on its own with an error.
# 3. The server killed with SIGKILL on its host in the middle of a job whose coordinator
#    waits for server restarts, and started again there with the same flags: it replays
#    its update log and rejoins, and the job ends with exactly the final value of the same
#    job without the fault.
set -uo pipefail

coordinator_bin=$1
server_bin=$2
training=$3

skip() {
  echo "SKIPPED: $*"
  exit 77
}
fail() {
  echo "FAILED: $*"
  for f in "$tmp"/*.out; do
    [[ -f "$f" ]] && { echo "--- $f"; cat "$f"; }
  done
  exit 1
}

((EUID == 0)) || skip "needs root to make network namespaces (ip netns); run as root"
command -v ip >/dev/null 2>&1 || skip "the ip command (iproute2) is missing"

# Names unique to this run; a /24 picked from the pid so parallel runs do not collide.
tag="kt$$"
net="10.77.$(($$ % 250 + 1))"
sw="${tag}sw"
hosts=("${tag}h1" "${tag}h2" "${tag}h3")
tmp=$(mktemp -d)

cleanup() {
  local pids
  pids=$(jobs -p)
  [[ -n "$pids" ]] && kill $pids 2>/dev/null
  wait 2>/dev/null
  for ns in "${hosts[@]}" "$sw"; do ip netns del "$ns" 2>/dev/null; done
  rm -rf -- "$tmp"
}
trap cleanup EXIT

ip netns add "$sw" 2>"$tmp/netns.err" || skip "ip netns add is not allowed here: $(cat "$tmp/netns.err")"
ip -n "$sw" link add br0 type bridge 2>"$tmp/netns.err" ||
  skip "cannot make a bridge: $(cat "$tmp/netns.err")"
ip -n "$sw" link set br0 up
for i in 1 2 3; do
  ns=${hosts[$((i - 1))]}
  ip netns add "$ns" || fail "ip netns add $ns"
  ip link add "${tag}v$i" type veth peer name "${tag}p$i" 2>"$tmp/netns.err" ||
    skip "cannot make veth links: $(cat "$tmp/netns.err")"
  ip link set "${tag}v$i" netns "$ns" || fail "moving ${tag}v$i"
  ip link set "${tag}p$i" netns "$sw" || fail "moving ${tag}p$i"
  ip -n "$ns" link set "${tag}v$i" name eth0
  ip -n "$ns" addr add "$net.$i/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  ip -n "$sw" link set "${tag}p$i" master br0
  ip -n "$sw" link set "${tag}p$i" up
done
on() {  # on HOST(1-3) COMMAND...: runs it in that host's namespace
  local ns=${hosts[$(($1 - 1))]}
  shift
  ip netns exec "$ns" "$@"
}
# Every wait below is bounded: a process is killed by `timeout` after its deadline.
wait_for_line() {  # FILE REGEX SECONDS
  local deadline=$((SECONDS + $3))
  until grep -Eq "$2" "$1" 2>/dev/null; do
    ((SECONDS < deadline)) || return 1
    sleep 0.05
  done
}

export KAIROS_NUM_WORKERS=2 KAIROS_NUM_SERVERS=1
unset KAIROS_COORDINATOR KAIROS_RANK KAIROS_ROLE KAIROS_LOG_LEVEL
coordinator_endpoint="tcp://$net.1:7000"

coordinator_extra=()
server_extra=()
# start_server NAME OUT: the server on h2 (with server_extra), its output in NAME-OUT.out.
start_server() {
  on 2 timeout 40 "$server_bin" --coordinator "$coordinator_endpoint" \
    --listen 'tcp://0.0.0.0:7100-7199' --log-level info "${server_extra[@]}" \
    >"$tmp/$1-$2.out" 2>&1 &
}
# start_job NAME ITERATIONS: the four processes; their pids in c_pid s_pid w0_pid w1_pid.
start_job() {
  local name=$1 iterations=$2
  on 1 timeout 40 "$coordinator_bin" --listen "$coordinator_endpoint" --servers 1 --workers 2 \
    --heartbeat-timeout-ms 2000 --join-timeout 20 --log-level info "${coordinator_extra[@]}" \
    >"$tmp/$name-coordinator.out" 2>&1 &
  c_pid=$!
  wait_for_line "$tmp/$name-coordinator.out" 'listening on' 10 || fail "$name: coordinator did not start"
  start_server "$name" server
  s_pid=$!
  on 3 timeout 40 env KAIROS_COORDINATOR="$coordinator_endpoint" KAIROS_RANK=0 \
    "$training" --iterations "$iterations" --pace-ms 10 >"$tmp/$name-worker0.out" 2>&1 &
  w0_pid=$!
  on 1 timeout 40 env KAIROS_COORDINATOR="$coordinator_endpoint" KAIROS_RANK=1 \
    "$training" --iterations "$iterations" --pace-ms 10 >"$tmp/$name-worker1.out" 2>&1 &
  w1_pid=$!
}

# ------------------------------------------------------------------ 1. a job across hosts
start_job whole 30
wait $w0_pid || fail "whole job: worker 0 (h3) exited $?"
wait $w1_pid || fail "whole job: worker 1 (h1) exited $?"
wait $c_pid || fail "whole job: the coordinator exited $?"
wait $s_pid || fail "whole job: the server exited $?"
grep -q "rank 0 done" "$tmp/whole-worker0.out" || fail "whole job: worker 0 did not finish"
grep -q "rank 1 done" "$tmp/whole-worker1.out" || fail "whole job: worker 1 did not finish"
grep -Eq "listening on tcp://0\.0\.0\.0:71[0-9][0-9]$" "$tmp/whole-server.out" ||
  fail "whole job: the server did not listen in 7100-7199 on every interface"
grep -Eq "advertised to the workers as tcp://$net\.2:71[0-9][0-9] \(the address it joined from\)" \
  "$tmp/whole-coordinator.out" || fail "whole job: the server was not advertised at $net.2"
echo "PASSED: a job across three hosts; the server advertised at its address on h2"

# -------------------------------------- 1b and 1c. the same program started by ranks
# KAIROS_WORLD_RANK/SIZE as a StatefulSet gives them; rank 0 on h1 (coordinator), rank 1 on
# h2 (server), ranks 2 and 3 on h3 and h1 (workers 0 and 1). 1b: a fixed KAIROS_COORDINATOR.
# 1c: a rendezvous file (the namespaces share this file system), each host's own address in
# KAIROS_ADVERTISE_HOST.
run_ranks() {  # NAME EXTRA-ENV...
  local name=$1
  shift
  local pids=() rank host own
  local place=(1 2 3 1)
  for rank in 0 1 2 3; do
    host=${place[$rank]}
    own=()
    [[ -n "${host_env[$host]:-}" ]] && own=("${host_env[$host]}")
    on "$host" timeout 40 env -u KAIROS_NUM_WORKERS KAIROS_WORLD_RANK=$rank KAIROS_WORLD_SIZE=4 \
      KAIROS_JOB_ID="$name" KAIROS_PORT_RANGE=7200-7299 "$@" "${own[@]}" \
      "$training" --iterations 30 --pace-ms 10 >"$tmp/$name-rank$rank.out" 2>&1 &
    pids+=($!)
  done
  for rank in 0 1 2 3; do
    wait "${pids[$rank]}" || fail "$name: rank $rank exited $?"
  done
  grep -q "rank 0 done" "$tmp/$name-rank2.out" || fail "$name: worker 0 did not finish"
  grep -q "rank 1 done" "$tmp/$name-rank3.out" || fail "$name: worker 1 did not finish"
}
declare -A host_env=()
run_ranks fixed KAIROS_COORDINATOR="tcp://$net.1:7001"
echo "PASSED: ranks across three hosts with a fixed KAIROS_COORDINATOR"
host_env=([1]="KAIROS_ADVERTISE_HOST=$net.1" [2]="KAIROS_ADVERTISE_HOST=$net.2"
  [3]="KAIROS_ADVERTISE_HOST=$net.3")
run_ranks file KAIROS_RENDEZVOUS="$tmp/job.rdv"
[[ ! -e "$tmp/job.rdv" ]] || fail "file: the rendezvous file was left behind"
echo "PASSED: ranks across three hosts through a shared rendezvous file"

# --------------------------------------------------- 2. worker 0's link cut in the middle
start_job cut 300
wait_for_line "$tmp/cut-worker0.out" '^rank 0 iteration 20$' 20 || fail "cut: worker 0 made no progress"
ip -n "$sw" link set "${tag}p3" down  # h3's cable, at the switch
cut_at=$SECONDS
wait $w1_pid || fail "cut: worker 1 (h1) exited $? instead of finishing"
grep -q "rank 1 done" "$tmp/cut-worker1.out" || fail "cut: worker 1 did not finish"
wait $c_pid
rc=$?
((rc == 1)) || fail "cut: the coordinator exited $rc, not 1"
grep -q "worker 0" "$tmp/cut-coordinator.out" || fail "cut: the coordinator's error does not name worker 0"
wait $w0_pid
rc=$?
((rc == 1)) || fail "cut: the cut worker exited $rc, not 1 (124: it never ended on its own)"
echo "cut worker ended $((SECONDS - cut_at)) s after the cut"
wait $s_pid
rc=$?
((rc == 1)) || fail "cut: the server exited $rc, not 1 (the job failed)"
echo "--- coordinator"; grep -v "not encrypted" "$tmp/cut-coordinator.out" | tail -n 5
echo "--- cut worker"; grep -v "not encrypted" "$tmp/cut-worker0.out" | tail -n 3
echo "PASSED: a cut worker link gives the documented failure"

# ----------------------------------- 3. the server killed on its host and started again
ip -n "$sw" link set "${tag}p3" up  # h3's cable back
coordinator_extra=(--server-restart-timeout 30)
finish_job() {  # NAME SERVER-PID: every process of the job exits 0
  local name=$1
  wait $w0_pid || fail "$name: worker 0 (h3) exited $?"
  wait $w1_pid || fail "$name: worker 1 (h1) exited $?"
  wait $c_pid || fail "$name: the coordinator exited $?"
  wait "$2" || fail "$name: the server exited $?"
}
final_of() { grep -E '^rank 0 final ' "$tmp/$1-worker0.out" | cut -d' ' -f4; }
server_extra=(--state-dir "$tmp/clean-state" --shard 0)
start_job clean 150
finish_job clean $s_pid
clean_final=$(final_of clean)
[[ -n "$clean_final" ]] || fail "clean: worker 0 printed no final value"
server_extra=(--state-dir "$tmp/restart-state" --shard 0)
start_job restart 150
wait_for_line "$tmp/restart-worker0.out" '^rank 0 iteration 50$' 20 || fail "restart: no progress"
# The server itself (below `ip netns exec` and `timeout`), mid-run.
pkill -KILL -f -- "--state-dir $tmp/restart-state" || fail "restart: no server to kill"
wait $s_pid
start_server restart server-again
s2_pid=$!
finish_job restart $s2_pid
restart_final=$(final_of restart)
grep -q "replayed" "$tmp/restart-server-again.out" || fail "restart: the server did not replay its log"
grep -q "server 0 restarted into the job" "$tmp/restart-coordinator.out" ||
  fail "restart: the coordinator did not take the server back"
[[ "$restart_final" == "$clean_final" ]] ||
  fail "restart: final value $restart_final, not $clean_final as without the fault"
echo "--- restarted server"; grep -E "replayed|restarted" "$tmp/restart-server-again.out" | tail -n 2
echo "PASSED: a server killed on its host and started again loses nothing (final $restart_final)"
