# Runs qmmm_vmc on an input that must run: exit status 0 and a result file, and checks what it printed.
# cmake -DEXE=... -DINPUT=... -DOUT=... [-DSTDERR=regex | -DSTDERR_EMPTY=1] [-DSTDOUT_NOT=regex]
#   -P expect_run.cmake   (run in the repository root)
# STDERR: stderr must match it (a warning); STDERR_EMPTY: stderr must be empty (no warning); STDOUT_NOT: stdout
# must not match it (e.g. the asterisks of a number too wide for its format).
file(REMOVE ${OUT})
execute_process(COMMAND ${EXE} ${INPUT} ${OUT} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
  TIMEOUT 120)
message("exit status ${rc}\nstdout:\n${out}\nstderr:\n${err}")
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "expected exit status 0")
endif()
if(NOT EXISTS ${OUT})
  message(FATAL_ERROR "no result file")
endif()
if(DEFINED STDERR AND NOT err MATCHES "${STDERR}")
  message(FATAL_ERROR "stderr does not match '${STDERR}'")
endif()
if(STDERR_EMPTY AND NOT err STREQUAL "")
  message(FATAL_ERROR "stderr is not empty")
endif()
if(DEFINED STDOUT_NOT AND out MATCHES "${STDOUT_NOT}")
  message(FATAL_ERROR "stdout matches '${STDOUT_NOT}'")
endif()
