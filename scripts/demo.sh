#!/usr/bin/env bash
# Quick start: installs the missing packages, builds the Fashion-MNIST example (only what it
# needs), and trains its MLP with 4 workers and 2 servers, worker 3 about 4x slower than the
# others, under four synchronization policies, each until the test accuracy reaches a
# target. Closes with a table: the wall time each policy took to reach the target, its final
# accuracy, and how long each worker spent blocked in its pulls (docs/examples.md).
#   scripts/demo.sh [--target A] [--policies "bsp ssp:s=3 dssp:s=3,r=12 asp"]
#                   [--slowdown 1,1,1,12] [-- MORE FLAGS OF THE EXAMPLE]
# The example's --slowdown F makes a worker wait (F - 1) x its compute time after each
# iteration. This MLP computes a batch in about a sixth of an iteration (the rest is its pull
# and push), so F = 12 makes worker 3's iterations about 4x as long as the others'.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target=0.87
policies=(bsp ssp:s=3 dssp:s=3,r=12 asp)
slowdown=1,1,1,12
extra=()
while (($#)); do
  case "$1" in
    --target) target=$2; shift 2 ;;
    --policies) read -r -a policies <<<"$2"; shift 2 ;;
    --slowdown) slowdown=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "demo.sh: unknown argument '$1' (see the comment at the top)" >&2; exit 2 ;;
  esac
done

scripts/install-deps.sh
scripts/build.sh --target fashion_mnist
example=./build/examples/fashion_mnist

log_dir=$(mktemp -d)
trap 'rm -rf -- "$log_dir"' EXIT
summaries=()
status=0
for policy in "${policies[@]}"; do
  echo
  echo "=== policy $policy: MLP, 4 workers (slowdown $slowdown), 2 servers, until test accuracy $target"
  log="$log_dir/${#summaries[@]}.log"
  if ! "$example" --model mlp --policy "$policy" --workers 4 --servers 2 --slowdown "$slowdown" \
      --target-accuracy "$target" --eval-every 100 "${extra[@]}" | tee "$log"; then
    echo "demo.sh: the run under '$policy' failed" >&2
    status=1
  fi
  summaries+=("$(grep '^summary:' "$log" || echo "summary: policy=$policy failed")")
done

# One row per policy from the example's summary line (key=value pairs).
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; }
echo
echo "What the policies change when one worker of four is slow (slowdown $slowdown, target accuracy $target):"
printf '%-14s %16s %14s %14s %26s\n' policy "time to target" "wall time" "final accuracy" "blocked s (workers 0..3)"
for s in "${summaries[@]}"; do
  ttt=$(field "$s" time_to_target_s)
  [[ "$ttt" == none || -z "$ttt" ]] && ttt="not reached" || ttt="$ttt s"
  wall=$(field "$s" wall_s)
  printf '%-14s %16s %14s %14s %26s\n' "$(field "$s" policy)" "$ttt" "${wall:-?} s" \
    "$(field "$s" final_accuracy)" "$(field "$s" blocked_s)"
done
cat <<'TXT'

bsp waits for the slow worker at every iteration; ssp:s=3 lets the others run at most 3
iterations ahead of it and dssp:s=3,r=12 up to 15 (a persistent straggler still sets their
pace, and staler gradients can cost iterations); asp never waits, so the fast workers' updates
keep coming, at the price of the staleness it does not bound. Rank 0 evaluates every 100 of
its iterations. docs/policies.md describes every policy; docs/examples.md the example.
TXT
exit "$status"
