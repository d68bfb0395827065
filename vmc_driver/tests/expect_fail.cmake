# Runs qmmm_vmc on a bad input: it must exit with status 2 (the driver's status for every error), say REGEX on
# stderr and leave no result file.
# cmake -DEXE=... -DINPUT=... -DOUT=... -DREGEX=... [-DPRLIMIT=prlimit -DLIMIT_AS=bytes] [-DMAX_SECONDS=s]
#   -P expect_fail.cmake   (run in the repository root)
# LIMIT_AS: the run under that address-space limit (prlimit --as), so that a memory refusal does not depend on
# the memory of the machine running the test (without the check the run would allocate and fail, or fill it).
# MAX_SECONDS: the refusal must come within that wall time (checked after the run; a run that goes on is
# stopped at 10 x MAX_SECONDS).
file(REMOVE ${OUT})
set(cmd ${EXE} ${INPUT} ${OUT})
if(LIMIT_AS)
  set(cmd ${PRLIMIT} --as=${LIMIT_AS} ${cmd})
endif()
set(timeout)
if(MAX_SECONDS)
  math(EXPR t "10 * ${MAX_SECONDS}")
  set(timeout TIMEOUT ${t})
endif()
string(TIMESTAMP t0 "%s.%f" UTC)
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err ${timeout})
string(TIMESTAMP t1 "%s.%f" UTC)
message("exit status ${rc}; stderr: ${err}")
if(NOT rc STREQUAL "2")
  message(FATAL_ERROR "expected exit status 2")
endif()
if(NOT err MATCHES "${REGEX}")
  message(FATAL_ERROR "stderr does not match '${REGEX}'")
endif()
if(EXISTS ${OUT})
  message(FATAL_ERROR "a result file was written despite the error")
endif()
if(MAX_SECONDS)
  # cmake's math is integer only: compare milliseconds
  string(REGEX REPLACE "^([0-9]+)\\.([0-9][0-9][0-9]).*" "\\1\\2" ms0 "${t0}")
  string(REGEX REPLACE "^([0-9]+)\\.([0-9][0-9][0-9]).*" "\\1\\2" ms1 "${t1}")
  math(EXPR ms "${ms1} - ${ms0}")
  message("refused after ${ms} ms")
  if(ms GREATER "${MAX_SECONDS}000")
    message(FATAL_ERROR "the refusal took ${ms} ms, more than ${MAX_SECONDS} s")
  endif()
endif()
