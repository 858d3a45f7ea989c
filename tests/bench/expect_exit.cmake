# Runs a program and checks its exit status and output: a test of a program's failure
# path, which CTest's WILL_FAIL cannot tell apart from a crash.
#
#   cmake -DPROGRAM=<path> "-DARGS=<arg>|<arg>|..." -DEXPECT_EXIT=<n>
#         [-DEXPECT_STDOUT=<regex>] [-DEXPECT_STDERR=<regex>] -P expect_exit.cmake
#
# An empty or absent regex checks nothing.
#
# Arguments are separated by '|' (a ';' would split them on the way here).
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${args}
                RESULT_VARIABLE status
                OUTPUT_VARIABLE out
                ERROR_VARIABLE err
                TIMEOUT 240)
message("exit status: ${status}\n--- stdout\n${out}--- stderr\n${err}---")
if(NOT "${status}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "expected exit status ${EXPECT_EXIT}, got '${status}'")
endif()
if(NOT "${EXPECT_STDOUT}" STREQUAL "" AND NOT out MATCHES "${EXPECT_STDOUT}")
  message(FATAL_ERROR "stdout does not match '${EXPECT_STDOUT}'")
endif()
if(NOT "${EXPECT_STDERR}" STREQUAL "" AND NOT err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "stderr does not match '${EXPECT_STDERR}'")
endif()
