#!/usr/bin/env bash
# Quick start: installs the missing packages, builds the Fashion-MNIST example (only what it
# needs), and races five synchronization policies on a heterogeneous cluster of paced
# workers (docs/lab.md): the MLP, 4 workers, 2 servers, each iteration of a worker computing
# for a set time (8 ms at speed 1) whatever its gradient took, in two regimes:
#
#   straggler  the last worker is persistently 4x slower
#   transient  each iteration of each worker is 4x slower with probability 0.1 (drawn per
#              seed, rank and iteration, so every policy meets the same stragglers)
#
# Each policy runs at its own learning rate (the lab's choice from a grid, docs/lab.md,
# "The demo"), on two seeds, until the test accuracy reaches 0.82 or 30 s pass; every 0.25 s
# the mean of the parameters rank 0 read in the last 2 s is evaluated off the workers' path,
# and the time to target is interpolated between those evaluations. It closes with a table per regime and the
# verdict: which policies reached the target first, and by how much, from what was measured
# (a single winner only beyond the seeds' spread and the lab's noise). The runs, the summary
# and plots (accuracy against time) are kept in lab-out/demo. About 1 min 40 s on 2 cores.
#
#   scripts/demo.sh [--seeds "1 2"] [--regimes "straggler transient"] [-- MORE SCENARIO FLAGS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seeds="1 2"
regimes=(straggler transient)
extra=()
while (($#)); do
  case "$1" in
    --seeds) seeds=$2; shift 2 ;;
    --regimes) read -r -a regimes <<<"$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "demo.sh: unknown argument '$1' (see the comment at the top)" >&2; exit 2 ;;
  esac
done

scripts/install-deps.sh
scripts/build.sh --target fashion_mnist

scenario_args=()
for r in "${regimes[@]}"; do scenario_args+=(--scenario "$r"); done
# The learning rates the lab chose for these regimes (docs/lab.md, "The demo").
scripts/lab/scenario.sh --no-build "${scenario_args[@]}" --seeds "$seeds" \
  --policies "bsp ssp:s=3 dssp:s=3,r=12 asp sa-asgd:n=4" \
  --lr bsp=0.2 --lr ssp:s=3=0.05 --lr dssp:s=3,r=12=0.05 --lr asp=0.05 --lr sa-asgd:n=4=0.1 \
  --pace-ms 8 --target 0.82 --budget-s 30 --out lab-out/demo "${extra[@]}"
cat <<'TXT'

bsp waits for the slowest worker at every iteration: a persistent straggler sets everyone's
pace, and transient ones cost it whenever any worker straggles. ssp:s=3 and dssp:s=3,r=12
let the fast workers run ahead within a bound, which absorbs transient stragglers but not a
persistent one. asp never waits; sa-asgd:n=4 is asp with each push's learning rate divided by
its staleness. docs/lab.md says how the lab works and how noisy it is; docs/policies.md
describes every policy.
TXT
