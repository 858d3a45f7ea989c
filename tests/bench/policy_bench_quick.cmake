# kairos_policy_bench --quick --calibrate: every scenario and every policy ran and
# wrote its files. Runs the program into a fresh directory and checks its exit status, one
# line per run on stdout, the CSV files (a row per run, samples and staleness of every run),
# the gnuplot scripts of every scenario and, when gnuplot is installed, their PNG plots; and
# the calibrated simulator (--calibrate): a run per real scenario and policy, the comparison
# table, calibration.csv, a calibration file per real scenario, which kairos_policy_sim
# --calibration (SIM) then reads to simulate 8 workers like the measured ones.
#
#   cmake -DPROGRAM=<path> -DSIM=<kairos_policy_sim> -DOUT=<dir> -P policy_bench_quick.cmake
file(REMOVE_RECURSE "${OUT}")
execute_process(COMMAND "${PROGRAM}" --quick --calibrate --out "${OUT}"
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 280)
message("exit status: ${status}\n--- stdout\n${out}--- stderr\n${err}---")
if(NOT "${status}" STREQUAL "0")
  message(FATAL_ERROR "expected exit status 0, got '${status}'")
endif()

set(scenarios homogeneous straggler two-speeds transient scale-16 scale-64)
set(policies bsp asp ssp:s=1 ssp:s=3 ssp:s=6 dssp:s=3,r=12 psp:beta=2,s=1 sa-asgd:n=4
             asp+weight=staleness vsgd eager saps)
foreach(file runs.csv samples.csv staleness.csv summary.csv)
  if(NOT EXISTS "${OUT}/${file}")
    message(FATAL_ERROR "${OUT}/${file} was not written")
  endif()
endforeach()
file(STRINGS "${OUT}/runs.csv" runs)
file(STRINGS "${OUT}/samples.csv" samples)
file(STRINGS "${OUT}/staleness.csv" staleness)
list(LENGTH runs rows)
# The header, 6 scenarios x 12 policies x 1 seed, and the calibrated simulator's 4 x 12
# twice (fitted on every policy's runs, and on each policy's own).
if(NOT rows EQUAL 169)
  message(FATAL_ERROR "runs.csv has ${rows} lines, expected 169")
endif()
find_program(GNUPLOT gnuplot)
foreach(scenario IN LISTS scenarios)
  foreach(policy IN LISTS policies)
    string(REPLACE "+" "\\+" policy_re "${policy}")
    # stdout: one line per run, with the figures (a failed run would say "error:").
    if(NOT out MATCHES "\n${scenario} +${policy_re} +1 +[-0-9.]+ +[-0-9]+ +0\\.[0-9]+ ")
      message(FATAL_ERROR "no line for ${scenario} ${policy} on stdout")
    endif()
    foreach(csv runs samples)
      if(NOT ${csv} MATCHES "\"${scenario}\",\"${policy_re}\",1,[01],")
        message(FATAL_ERROR "${csv}.csv has no row of ${scenario} ${policy}")
      endif()
    endforeach()
    if(NOT policy STREQUAL "bsp" AND NOT staleness MATCHES "\"${scenario}\",\"${policy_re}\",1,")
      message(FATAL_ERROR "staleness.csv has no row of ${scenario} ${policy}")
    endif()
  endforeach()
  set(files ${scenario}.gp ${scenario}_curves.dat ${scenario}_target.dat
            ${scenario}_staleness.dat)
  if(GNUPLOT)
    list(APPEND files ${scenario}_accuracy_time.png ${scenario}_loss_time.png
                      ${scenario}_accuracy_iterations.png ${scenario}_loss_iterations.png
                      ${scenario}_time_to_target.png ${scenario}_staleness.png)
  endif()
  foreach(file IN LISTS files)
    if(NOT EXISTS "${OUT}/plots/${file}")
      message(FATAL_ERROR "${OUT}/plots/${file} was not written")
    endif()
    file(SIZE "${OUT}/plots/${file}" size)
    if(size EQUAL 0)
      message(FATAL_ERROR "${OUT}/plots/${file} is empty")
    endif()
  endforeach()
endforeach()
if(NOT GNUPLOT AND NOT out MATCHES "gnuplot not found")
  message(FATAL_ERROR "gnuplot is not installed, and the program did not say so")
endif()

# --calibrate: the calibrated simulator's run of every real scenario and policy, each
# scenario's comparison, calibration.csv and the calibration files.
set(real_scenarios homogeneous straggler two-speeds transient)
file(STRINGS "${OUT}/calibration.csv" calibration)
list(LENGTH calibration rows)
if(NOT rows EQUAL 49)  # the header and 4 real scenarios x 12 policies
  message(FATAL_ERROR "calibration.csv has ${rows} lines, expected 49")
endif()
foreach(scenario IN LISTS real_scenarios)
  foreach(policy IN LISTS policies)
    string(REPLACE "+" "\\+" policy_re "${policy}")
    foreach(kind calibrated own)
      if(NOT out MATCHES "\n${scenario}-${kind} +${policy_re} +1 +[-0-9.]+ +[-0-9]+ +0\\.[0-9]+ ")
        message(FATAL_ERROR "no ${kind} line for ${scenario} ${policy} on stdout")
      endif()
    endforeach()
    if(NOT calibration MATCHES "\"${scenario}\",\"${policy_re}\",[0-9.inf]+,[0-9.inf]+,")
      message(FATAL_ERROR "calibration.csv has no row of ${scenario} ${policy}")
    endif()
  endforeach()
  if(NOT out MATCHES "calibrated simulator vs real: ${scenario} \\(fitted on 12 runs")
    message(FATAL_ERROR "no comparison of ${scenario} on stdout")
  endif()
  foreach(kind predicted own)
    if(NOT out MATCHES "\n${scenario}, ${kind}: Spearman [-0-9.]+ over 12 policies; winner real ")
      message(FATAL_ERROR "no Spearman line (${kind}) of ${scenario} on stdout")
    endif()
  endforeach()
  if(NOT EXISTS "${OUT}/calibration_${scenario}.txt")
    message(FATAL_ERROR "${OUT}/calibration_${scenario}.txt was not written")
  endif()
endforeach()

# kairos_policy_sim --calibration: 8 workers like the straggler scenario's.
execute_process(COMMAND "${SIM}" --calibration "${OUT}/calibration_straggler.txt" --workers=8
                        --max-time-s=0.3 --policies=bsp,asp,ssp:s=3
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
message("kairos_policy_sim exit status: ${status}\n--- stdout\n${out}--- stderr\n${err}---")
if(NOT "${status}" STREQUAL "0")
  message(FATAL_ERROR "kairos_policy_sim --calibration: expected exit status 0, got '${status}'")
endif()
if(NOT out MATCHES "model mlp\\(fashion-mnist\\+std,784x32x10\\), 8 workers" AND
   NOT out MATCHES "model mlp\\(gaussian-clusters\\+std,784x32x10\\), 8 workers")
  message(FATAL_ERROR "kairos_policy_sim --calibration did not simulate the calibrated MLP")
endif()
if(NOT out MATCHES "calibrated by [^\n]*calibration_straggler.txt \\(scenario straggler, 4 measured")
  message(FATAL_ERROR "kairos_policy_sim --calibration did not describe the calibration")
endif()
foreach(policy bsp asp ssp:s=3)
  if(NOT out MATCHES "\n${policy} +[-0-9.]+ +[0-9]")
    message(FATAL_ERROR "kairos_policy_sim --calibration: no line for ${policy}")
  endif()
endforeach()
