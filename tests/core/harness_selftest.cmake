# harness_selftest.cmake -- runs the harness's own googletest program (tests/core/test_harness.cpp, registered by
# qmmm_add_gtest into a ctest folder of its own) through ctest, and checks that each test comes out as its
# comment says: a failing SetUpTestSuite and a reasonless GTEST_SKIP are failures, QMMM_SKIP a skip with its
# reason, a passing test a pass; then that scripts/test_summary.py counts the same and exits non-zero.
#   cmake -DCTEST=ctest -DDIR=<selftest ctest folder> [-DPYTHON=python3 -DSUMMARY=scripts/test_summary.py]
#         -P harness_selftest.cmake
set(junit ${DIR}/junit.xml)
file(REMOVE ${junit})
if(NOT EXISTS ${DIR}/test_harness_tests.cmake)
  message(FATAL_ERROR "harness self-test: ${DIR}/test_harness_tests.cmake is missing (test_harness not built)")
endif()
execute_process(COMMAND ${CTEST} --test-dir ${DIR} --output-junit ${junit} RESULT_VARIABLE rc OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
message("${out}${err}")
set(failed 0)
if(rc EQUAL 0)
  message("FAILED: ctest exited 0 on a run with failures")
  set(failed 1)
endif()
foreach(expect "HarnessFailingFixture.TestAfterAFailedSetUp:Failed" "HarnessFail.FailsInItsBody:Failed"
    "HarnessSkip.WithItsReason:Skipped" "HarnessSkip.WithoutAReason:Failed" "HarnessPass.Passes:Passed")
  string(REPLACE ":" ";" e "${expect}")
  list(GET e 0 test)
  list(GET e 1 result)
  string(REPLACE "." "\\." re "${test}")
  # ctest's line: " 2/5 Test #2: HarnessFail.FailsInItsBody ......***Failed    0.01 sec"
  if(result STREQUAL "Passed")
    set(re "Test +#[0-9]+: ${re} [.]+ +Passed")
  else()
    set(re "Test +#[0-9]+: ${re} [.]+[*]+${result}")
  endif()
  if(out MATCHES "${re}")
    message("ok:     ${test} ${result}")
  else()
    message("FAILED: ${test} is not reported ${result}")
    set(failed 1)
  endif()
endforeach()
if(PYTHON AND SUMMARY)
  execute_process(COMMAND ${PYTHON} ${SUMMARY} ${junit} RESULT_VARIABLE src OUTPUT_VARIABLE sout ERROR_VARIABLE serr)
  message("${sout}${serr}")
  if(src EQUAL 0 OR NOT sout MATCHES "1 passed, 1 skipped, 3 failed"
     OR NOT sout MATCHES "1  harness self-test: a skip with its reason")
    message("FAILED: test_summary.py does not report 1 passed, 1 skipped (with its reason), 3 failed, exit 1")
    set(failed 1)
  else()
    message("ok:     test_summary.py: 1 passed, 1 skipped with its reason, 3 failed, exit 1")
  endif()
endif()
if(failed)
  message(FATAL_ERROR "harness self-test: failed")
endif()
message("harness self-test: ok")
