#!/usr/bin/env bash
# How long one message takes through a shaped link on an idle host, against the link's
# time for its bytes (docs/simulator_results.md#on-a-second-machine): the message is sent
# as two halves on two TCP connections at once (as a worker's push to two servers), each
# answered by one byte once it is all in; REPEAT times, GAP_MS apart, the first 20 not
# counted. The link is an htb class of RATE Mbit/s on both ends of a veth pair between two
# network namespaces, as scripts/lab/shaped_job.sh shapes a node's link. Needs root (ip
# netns, tc) and python3.
#
#   scripts/lab/message_time.sh [--rate 400] [--bytes 407080] [--gap-ms 10] [--repeat 260]
#                               [--frame-overhead 0.048]
#
# Prints one line: the rate, the halves' size, the medians of when the first and the second
# half were answered, the link's time for both halves' bytes (2 x half / (RATE / (1 +
# frame overhead))) and the second's excess over it. Exit 2 on bad arguments, 77 when
# namespaces cannot be made here (not root, no ip or tc) or python3 is missing, 1 if the
# probe failed.
set -euo pipefail
rate=400 bytes=407080 gap_ms=10 repeat=260 overhead=0.048
die() { echo "message_time.sh: $*" >&2; exit 2; }
while (($#)); do
  case "$1" in
    --rate) rate=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    --gap-ms) gap_ms=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --frame-overhead) overhead=$2; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
for v in "$rate" "$bytes" "$gap_ms" "$repeat"; do
  [[ $v =~ ^[0-9]+$ && $v -gt 0 ]] || die "--rate, --bytes, --gap-ms and --repeat: whole numbers > 0"
done
((repeat > 20)) || die "--repeat: more than the 20 not counted"
[[ $overhead =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--frame-overhead: a number >= 0"
if ((EUID != 0)) || ! command -v ip >/dev/null || ! command -v tc >/dev/null ||
  ! command -v python3 >/dev/null; then
  echo "message_time.sh: needs root, ip and tc (network namespaces, htb) and python3" >&2
  exit 77
fi
a=mta$$ b=mtb$$
work=$(mktemp -d)
cleanup() { ip netns del "$a" 2>/dev/null || true; ip netns del "$b" 2>/dev/null || true; rm -rf -- "$work"; }
trap cleanup EXIT
ip netns add "$a" && ip netns add "$b" || exit 77
ip link add "${a}0" type veth peer name "${b}0"
ip link set "${a}0" netns "$a"
ip link set "${b}0" netns "$b"
ip -n "$a" addr add 10.79.0.1/24 dev "${a}0"
ip -n "$b" addr add 10.79.0.2/24 dev "${b}0"
for ns in "$a" "$b"; do
  ip -n "$ns" link set "${ns}0" up
  ip -n "$ns" link set lo up
  # (tc warns that a fast class's quantum is big: said only if tc fails)
  { tc -n "$ns" qdisc add dev "${ns}0" root handle 1: htb default 1 &&
    tc -n "$ns" class add dev "${ns}0" parent 1: classid 1:1 htb rate "${rate}mbit"; } \
    2>"$work/tc.err" || { cat "$work/tc.err" >&2; exit 1; }
done
half=$((bytes / 2))
cat >"$work/server.py" <<'PY'
import socket, sys, threading
half = int(sys.argv[1])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.79.0.2", 5557))
s.listen(2)
conns = [s.accept()[0] for _ in range(2)]
def serve(c):
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        got = 0
        while got < half:
            d = c.recv(1 << 20)
            if not d:
                return
            got += len(d)
        c.sendall(b"a")
threads = [threading.Thread(target=serve, args=(c,)) for c in conns]
for t in threads: t.start()
for t in threads: t.join()
PY
cat >"$work/client.py" <<'PY'
import select, socket, statistics, sys, time
half, rate, gap, repeat, overhead = (int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]) / 1e3,
                                     int(sys.argv[4]), float(sys.argv[5]))
for attempt in range(50):
    try:
        cs = [socket.create_connection(("10.79.0.2", 5557)) for _ in range(2)]
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("message_time.sh: no connection to the probe's server in 5 s")
for c in cs:
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c.setblocking(False)
buf = b"x" * half
res = []
for it in range(repeat):
    t0 = time.perf_counter(); off = [0, 0]; done = [None, None]
    while None in done:
        w = [c for i, c in enumerate(cs) if off[i] < half]
        r = [c for i, c in enumerate(cs) if done[i] is None]
        rr, ww, _ = select.select(r, w, [], 5.0)
        if not rr and not ww:
            sys.exit("message_time.sh: no progress in 5 s")
        for c in ww:
            i = cs.index(c)
            try:
                off[i] += c.send(buf[off[i]:off[i] + (1 << 20)])
            except BlockingIOError:
                pass
        for c in rr:
            i = cs.index(c)
            if c.recv(1):
                done[i] = time.perf_counter() - t0
    if it >= 20:
        res.append(sorted(done))
    time.sleep(gap)
first = statistics.median(r[0] for r in res) * 1e3
second = statistics.median(r[1] for r in res) * 1e3
link = 2 * half * 8 / (rate * 1e6 / (1 + overhead)) * 1e3
print(f"rate {rate:g} Mbit/s, halves of {half} B: first {first:.3f} ms, second {second:.3f} ms, "
      f"link {link:.3f} ms, excess {second - link:+.3f} ms")
PY
ip netns exec "$b" python3 "$work/server.py" "$half" &
server=$!
ip netns exec "$a" python3 "$work/client.py" "$half" "$rate" "$gap_ms" "$repeat" "$overhead" || {
  kill "$server" 2>/dev/null || true
  exit 1
}
wait "$server" || true
