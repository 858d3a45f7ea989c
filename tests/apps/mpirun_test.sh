#!/usr/bin/env bash
# Jobs started by mpirun (Open MPI) on this host: the rank variables make rank 0 the
# coordinator, ranks 1..KAIROS_NUM_SERVERS the servers and the rest the workers, and rank 0
# publishes the coordinator's endpoint in a rendezvous file in $TMPDIR (docs/multi_host.md).
#
#   mpirun_test.sh TRAINING [LINEAR_REGRESSION [FASHION_MNIST [TORCH_FASHION_MNIST]]]
#
# TRAINING is tests/apps/launched_training (BSP, every read checked exactly, "rank R ok");
# LINEAR_REGRESSION, FASHION_MNIST and TORCH_FASHION_MNIST are the bundled examples, when
# built (the last two only when Fashion-MNIST is installed, the last only with libtorch).
# Exit 77 (skipped) without mpirun.
set -uo pipefail

training=$1
linear_regression=${2:-}
fashion_mnist=${3:-}
torch_fashion_mnist=${4:-}

if ! command -v mpirun >/dev/null 2>&1; then
  echo "SKIPPED: mpirun is not installed (scripts/install-deps.sh installs openmpi-bin)"
  exit 77
fi
# Open MPI refuses to run as root unless told; a test container often is root.
if ((EUID == 0)); then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# This machine may have fewer cores than ranks; ranks wait on sockets, not on cores.
mpi=(mpirun --oversubscribe)
# A fresh TMPDIR: the rendezvous file must be gone when the job ends.
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
export TMPDIR=$tmp
export KAIROS_LOG_LEVEL=error

fail() {
  echo "FAILED: $*"
  exit 1
}

# run NAME TIMEOUT COMMAND...: runs it with its output in $tmp/NAME.out, shown.
run() {
  local name=$1 limit=$2
  shift 2
  echo "--- $name: $*"
  timeout "$limit" "$@" >"$tmp/$name.out" 2>&1
  local rc=$?
  cat "$tmp/$name.out"
  return $rc
}

# 1. 5 ranks, 2 servers: 2 workers that check every BSP read exactly.
run training 60 "${mpi[@]}" -np 5 -x KAIROS_NUM_SERVERS=2 "$training" --iterations 6 ||
  fail "mpirun of launched_training exited $?"
for rank in 0 1; do
  grep -qx "rank $rank ok" "$tmp/training.out" || fail "worker $rank did not report 'rank $rank ok'"
done
[[ $(grep -c '^rank [0-9]* ok$' "$tmp/training.out") == 2 ]] || fail "not exactly 2 workers"
leftover=$(find "$tmp" -name 'kairos-rendezvous-*')
[[ -z "$leftover" ]] || fail "the rendezvous file was left behind: $leftover"

# 2. The bundled linear_regression example, 5 ranks with the default of one server.
if [[ -n "$linear_regression" ]]; then
  run linear 60 "${mpi[@]}" -np 5 "$linear_regression" --policy bsp --iterations 40 \
    --print-every 20 || fail "mpirun of linear_regression exited $?"
  grep -q '^kairos linear regression: 1 servers, 3 workers' "$tmp/linear.out" ||
    fail "linear_regression did not report 1 server and 3 workers"
  grep -Eq '^bsp +[0-9.]+ ' "$tmp/linear.out" || fail "linear_regression printed no result"
fi

# 3. Too few ranks for the servers asked: every rank says why, the job fails.
run toofew 60 "${mpi[@]}" -np 3 -x KAIROS_NUM_SERVERS=2 "$training" &&
  fail "3 ranks with 2 servers succeeded"
grep -q '3 processes cannot hold a coordinator, 2 servers (KAIROS_NUM_SERVERS) and at least one worker' \
  "$tmp/toofew.out" || fail "no clear error for too few ranks"

# 4. Fashion-MNIST, as in docs/multi_host.md: 7 ranks, 2 servers, 4 workers.
if [[ -n "$fashion_mnist" ]]; then
  run fmnist 90 "${mpi[@]}" -np 7 -x KAIROS_NUM_SERVERS=2 "$fashion_mnist" --epochs 1 \
    --max-train 2000 --max-test 500 || fail "mpirun of fashion_mnist exited $?"
  grep -q '2 servers, 4 workers (launched)' "$tmp/fmnist.out" || fail "fashion_mnist's shape"
  tail -n 1 "$tmp/fmnist.out" | grep -Eq '^final test accuracy 0\.[0-9]{4}$' ||
    fail "fashion_mnist printed no final accuracy"
fi

if [[ -n "$torch_fashion_mnist" ]]; then
  # 1 coordinator, 1 server, 2 workers: the libtorch CNN through kairos (docs/pytorch.md).
  run torch 120 "${mpi[@]}" -np 4 -x KAIROS_NUM_SERVERS=1 "$torch_fashion_mnist" --epochs 1 \
    --max-train 2000 --max-test 500 --optimizer adam --lr 0.002 ||
    fail "mpirun of torch_fashion_mnist exited $?"
  grep -Eq '^final test accuracy 0\.[0-9]{4}$' "$tmp/torch.out" ||
    fail "torch_fashion_mnist printed no final accuracy"
fi
echo "PASSED"
