# The lab's scenarios (docs/lab.md#scenarios), sourced by scenario.sh, simulate.sh and
# agreement.sh, so that the real and the simulated runs slow the same workers the same way,
# and what a run was (lab_run_settings). The flags are those of
# the Fashion-MNIST example, which kairos_policy_sim takes under the same names.
#
# Scenarios (W workers; the slow ones are the last ranks):
#   homogeneous  every worker at the pace
#   straggler    the last worker 4x slower, persistently
#   transient    each iteration of each worker 4x slower with probability 0.1
#   two-speeds   the last half of the workers 2.7x slower

# lab_scenario_flags NAME W: the flags of scenario NAME for W workers; status 1 for an
# unknown name.
lab_scenario_flags() {
  local i list=() workers=$2
  case "$1" in
    homogeneous) echo "" ;;
    straggler)
      for ((i = 0; i < workers; i++)); do list+=($((i == workers - 1 ? 4 : 1))); done
      echo "--slowdown $(IFS=,; echo "${list[*]}")" ;;
    transient) echo "--straggler-prob 0.1 --straggler-factor 4" ;;
    two-speeds)
      for ((i = 0; i < workers; i++)); do
        if ((i >= workers - workers / 2)); then list+=(2.7); else list+=(1); fi
      done
      echo "--slowdown $(IFS=,; echo "${list[*]}")" ;;
    *) return 1 ;;
  esac
}

lab_scenario_names="homogeneous, straggler, transient, two-speeds"

# lab_run_settings LOG: what a run of the example was, from its log's first lines (after the
# nodes' own when it went through shaped links): sets workers, servers, hidden (empty unless
# the model is the MLP), batch, pace_ms, train, test and shards (random or by-class); a
# setting the log does not show is left empty.
lab_run_settings() {
  local head
  head=$(grep -m1 -A2 '^kairos Fashion-MNIST:' "$1" || true)
  workers=$(sed -n 's/.* \([0-9][0-9]*\) workers\( (launched)\)\{0,1\}$/\1/p' <<<"$head" | head -1)
  servers=$(sed -n 's/.*, \([0-9][0-9]*\) servers, .*/\1/p' <<<"$head" | head -1)
  hidden=$(sed -n 's/.*model mlp (\([0-9]*\) hidden).*/\1/p' <<<"$head")
  batch=$(sed -n 's/.*(batch \([0-9]*\),.*/\1/p' <<<"$head")
  pace_ms=$(sed -n 's/.*, pace \([0-9.]*\) ms.*/\1/p' <<<"$head")
  train=$(sed -n 's/.*data: \([0-9]*\) training and \([0-9]*\) test examples.*/\1/p' <<<"$head")
  test=$(sed -n 's/.*data: \([0-9]*\) training and \([0-9]*\) test examples.*/\2/p' <<<"$head")
  shards=$(sed -n 's/.*, shards \([a-z-]*\),.*/\1/p' <<<"$head")
}
