# The lab's scenarios (docs/lab.md#scenarios), sourced by scenario.sh and simulate.sh so that
# the real and the simulated runs slow the same workers the same way. The flags are those of
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
