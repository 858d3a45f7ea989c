# kairos_policy_bench --quick (issue 13): every scenario and every policy ran and wrote its
# files. Runs the program into a fresh directory and checks its exit status, one line per
# run on stdout, the CSV files (a row per run, samples and staleness of every run), the
# gnuplot scripts of every scenario and, when gnuplot is installed, their PNG plots.
#
#   cmake -DPROGRAM=<path> -DOUT=<dir> -P policy_bench_quick.cmake
file(REMOVE_RECURSE "${OUT}")
execute_process(COMMAND "${PROGRAM}" --quick --out "${OUT}"
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
if(NOT rows EQUAL 73)  # the header and 6 scenarios x 12 policies x 1 seed
  message(FATAL_ERROR "runs.csv has ${rows} lines, expected 73")
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
