# Runs qmmm_vmc on one or two inputs, then vmc_check on the results.
# -DEXE -DCHECK -DIN1 -DOUT1 [-DIN2 -DOUT2] -DARGS="mode|args..." (OUT1/OUT2 stand for the results);
# -DLAUNCH="mpiexec|-n|2": a launcher before EXE (empty: none);
# -DSKIP_IF_NO_GPU=1: says 'SKIPPED: no usable GPU' (ctest: skipped) when the library reports no CUDA or no
# device, or fails when QMMM_REQUIRE_GPU is set (gpu_skip.cmake).
# -DEXPECT_CHECK_FAIL=regex: the runs must succeed and the check must fail saying regex.
include(${CMAKE_CURRENT_LIST_DIR}/gpu_skip.cmake)
foreach(i 1 2)
  if(DEFINED IN${i})
    file(REMOVE ${OUT${i}})
    string(REPLACE "|" ";" launch "${LAUNCH}")
    execute_process(COMMAND ${launch} ${EXE} ${IN${i}} ${OUT${i}} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    message("${out}${err}")
    if(NOT rc EQUAL 0)
      if(SKIP_IF_NO_GPU)
        vmc_gpu_skip_or_fail("${out}${err}")
      endif()
      message(FATAL_ERROR "qmmm_vmc ${IN${i}} failed with ${rc}")
    endif()
  endif()
endforeach()
string(REPLACE "OUT1" "${OUT1}" ARGS "${ARGS}")
string(REPLACE "OUT2" "${OUT2}" ARGS "${ARGS}")
# Several checks of the same results: ARGS = "mode|args|&&|mode|args..."
string(REPLACE "|&&|" ";" checks "${ARGS}")
set(failed 0)
foreach(check ${checks})
  string(REPLACE "|" ";" cargs "${check}")
  execute_process(COMMAND ${CHECK} ${cargs} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("---- vmc_check ${check}\n${out}${err}")
  if(NOT rc EQUAL 0)
    set(failed 1)
  endif()
endforeach()
if(DEFINED EXPECT_CHECK_FAIL)
  # A negative test: the check must fail, and for the reason given (EXPECT_CHECK_FAIL: regex on its output).
  if(NOT failed OR NOT out MATCHES "${EXPECT_CHECK_FAIL}")
    message(FATAL_ERROR "expected the check to fail with '${EXPECT_CHECK_FAIL}'")
  endif()
elseif(failed)
  message(FATAL_ERROR "check failed")
endif()
