# qmmm_gtest_discover.cmake -- lists a googletest program's tests (--gtest_list_tests) and writes one ctest test per
# test into a file ctest includes. Run after each build of the program (qmmm_add_gtest, cmake/qmmm_testing.cmake).
#   cmake -DTEST_EXECUTABLE=prog -DCTEST_FILE=out.cmake -DWORKING_DIR=dir -DLABELS="a|b" [-DQUICK_EXCLUDE=regex]
#         [-DWHOLE_SUITES=regex] [-DTIMEOUT=seconds] -P qmmm_gtest_discover.cmake
# CMake's gtest_discover_tests is not used: it gives every test SKIP_REGULAR_EXPRESSION "\[  SKIPPED \]" (and a
# second SKIP_REGULAR_EXPRESSION adds to it, it does not replace it), so a test whose SetUpTestSuite fails -- which
# googletest 1.12 prints as "[  SKIPPED ]" -- reads as skipped. Here a skip comes only from the project's reason line
# "qmmm-skip: " (tests/core/gpu_test.hpp), and "[  SKIPPED ]" without it fails: a failing fixture, or a GTEST_SKIP
# that gives ctest no reason. ctest checks the skip expression before the fail expression, so QMMM_SKIP still skips.
# LABELS: every test's labels; with "quick" among them, tests whose full name matches QUICK_EXCLUDE lose "quick".
# WHOLE_SUITES: suites whose name matches run as one ctest test named after the suite (--gtest_filter=Suite.*), so
# an expensive SetUpTestSuite runs once, not once per test process. Only for suites that never skip: ctest would
# report the whole suite skipped, failures included, if one of its tests printed the skip line.
cmake_minimum_required(VERSION 3.25)  # script mode: IN_LIST and the other policies of the project
if(NOT TIMEOUT)
  set(TIMEOUT 60)
endif()
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests WORKING_DIRECTORY "${WORKING_DIR}"
  TIMEOUT ${TIMEOUT} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  file(REMOVE "${CTEST_FILE}")
  message(FATAL_ERROR "qmmm_gtest_discover: '${TEST_EXECUTABLE} --gtest_list_tests' failed (${rc}):\n${out}${err}")
endif()
string(REPLACE "|" ";" labels "${LABELS}")
set(quick_labels "${labels}")
set(slow_labels "${labels}")
list(REMOVE_ITEM slow_labels quick)
# Comments (# GetParam() = ..., # TypeParam = ...) may hold any text: drop them before splitting into lines.
string(REGEX REPLACE "#[^\n]*" "" out "${out}")
string(REPLACE ";" "" out "${out}")
string(REPLACE "\n" ";" lines "${out}")
set(script "# Written by cmake/qmmm_gtest_discover.cmake from ${TEST_EXECUTABLE} --gtest_list_tests\n")
set(names "")
set(suite "")
foreach(line IN LISTS lines)
  string(STRIP "${line}" name)
  if(name STREQUAL "")
    continue()
  endif()
  if(NOT line MATCHES "^ ")
    set(suite "${name}")  # "Suite." (its dot kept)
    continue()
  endif()
  set(test "${suite}${name}")
  if(WHOLE_SUITES AND suite MATCHES "^(${WHOLE_SUITES})\\.$")
    string(REGEX REPLACE "\\.$" "" whole "${suite}")
    if(whole IN_LIST names)
      continue()
    endif()
    set(test "${whole}")
    set(filter "${suite}*")
  else()
    set(filter "${test}")
  endif()
  set(l "${quick_labels}")
  if(QUICK_EXCLUDE AND test MATCHES "${QUICK_EXCLUDE}")
    set(l "${slow_labels}")
  endif()
  string(APPEND script
    "add_test([==[${test}]==] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${filter}]==] --gtest_also_run_disabled_tests)\n"
    "set_tests_properties([==[${test}]==] PROPERTIES WORKING_DIRECTORY [==[${WORKING_DIR}]==] LABELS [==[${l}]==]\n"
    "  SKIP_REGULAR_EXPRESSION [==[qmmm-skip: ]==] FAIL_REGULAR_EXPRESSION [==[\\[  SKIPPED \\]]==])\n")
  if(test MATCHES "(^|\\.)DISABLED_")
    string(APPEND script "set_tests_properties([==[${test}]==] PROPERTIES DISABLED TRUE)\n")
  endif()
  list(APPEND names "${test}")
endforeach()
if(NOT names)
  # A program with no test is a mistake in its registration: say so in ctest rather than run nothing.
  string(APPEND script "add_test([==[${TEST_EXECUTABLE}_has_no_tests]==] false)\n")
endif()
file(WRITE "${CTEST_FILE}" "${script}")
