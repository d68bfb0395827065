# Test helpers shared by every family (included before the families).
if(NOT QMMM_BUILD_TESTS)
  function(qmmm_add_gtest name)
  endfunction()
  function(qmmm_add_valgrind name)
  endfunction()
  function(qmmm_add_skip_test name)
  endfunction()
  function(qmmm_quick)
  endfunction()
  function(qmmm_add_compute_sanitizer name)
  endfunction()
  return()
endif()
enable_testing()
find_package(GTest REQUIRED)
find_program(QMMM_VALGRIND valgrind)

# qmmm_add_gtest(NAME SOURCES src... [LABELS l...] [LIBS lib...] [QUICK_EXCLUDE regex] [WHOLE_SUITES regex]
#                [SELFTEST_DIR dir])
# The sources' folder (tests/<family>/) and tests/core/ (gpu_test.hpp) are on the include path. Each googletest
# test becomes a ctest test, listed after every build of the program (cmake/qmmm_gtest_discover.cmake, not CMake's
# gtest_discover_tests: see there). Tests that need a GPU use QMMM_REQUIRE_GPU_OR_SKIP (tests/core/gpu_test.hpp):
# it prints "qmmm-skip: <reason>", which alone makes ctest report a skip -- a test that fails in its set-up (and so
# is "[  SKIPPED ]" in gtest's words) is a failure, and so is a GTEST_SKIP without that line (the harness's own test:
# harness_selftest, tests/core/test_harness.cpp). LABELS "quick" puts the tests in `ctest -L quick` but those whose
# full name (Suite.Test) matches QUICK_EXCLUDE. WHOLE_SUITES: suites (by name) that run as one ctest test, so that
# an expensive SetUpTestSuite serves them all (only suites that never skip: cmake/qmmm_gtest_discover.cmake). SELFTEST_DIR: the tests go into a ctest folder of their own (dir,
# with its CTestTestfile.cmake), not into the build's. Compiled-in QMMM_SOURCE_DIR points at the repository.
function(qmmm_add_gtest name)
  cmake_parse_arguments(A "" "QUICK_EXCLUDE;WHOLE_SUITES;SELFTEST_DIR" "SOURCES;LABELS;LIBS" ${ARGN})
  list(GET A_SOURCES 0 first)
  get_filename_component(dir ${first} DIRECTORY)
  add_executable(${name} ${A_SOURCES})
  target_link_libraries(${name} PRIVATE qmmm_accel GTest::gtest GTest::gtest_main ${A_LIBS})
  target_include_directories(${name} PRIVATE ${dir} ${PROJECT_SOURCE_DIR}/tests/core)
  target_compile_definitions(${name} PRIVATE QMMM_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  if(A_SELFTEST_DIR)
    set(ctest_file ${A_SELFTEST_DIR}/${name}_tests.cmake)
    file(MAKE_DIRECTORY ${A_SELFTEST_DIR})
    file(WRITE ${A_SELFTEST_DIR}/CTestTestfile.cmake "include(\"${ctest_file}\" OPTIONAL)\n")
  else()
    set(ctest_file ${CMAKE_CURRENT_BINARY_DIR}/${name}_tests.cmake)
  endif()
  string(REPLACE ";" "|" labels "${A_LABELS}")
  add_custom_command(TARGET ${name} POST_BUILD BYPRODUCTS ${ctest_file}
    COMMAND ${CMAKE_COMMAND} -DTEST_EXECUTABLE=$<TARGET_FILE:${name}> -DCTEST_FILE=${ctest_file}
      -DWORKING_DIR=${CMAKE_CURRENT_BINARY_DIR} -DLABELS=${labels} -DQUICK_EXCLUDE=${A_QUICK_EXCLUDE}
      -DWHOLE_SUITES=${A_WHOLE_SUITES} -DTIMEOUT=60
      -P ${PROJECT_SOURCE_DIR}/cmake/qmmm_gtest_discover.cmake
    VERBATIM)
  if(NOT A_SELFTEST_DIR)
    # Until the program is built, one failing placeholder stands for its tests (as gtest_discover_tests does).
    set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${name}_include.cmake)
    file(WRITE ${include_file} "if(EXISTS \"${ctest_file}\")\n  include(\"${ctest_file}\")\nelse()\n"
      "  add_test(${name}_NOT_BUILT ${name}_NOT_BUILT)\nendif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
  endif()
endfunction()

# qmmm_quick(TEST...): adds the label "quick" to tests registered by name (`ctest -L quick`: every family, no long
# statistics, about 2 min on 2 cores -- the edit-compile-test loop; the whole suite is scripts/run_tests.sh).
function(qmmm_quick)
  set_property(TEST ${ARGN} APPEND PROPERTY LABELS quick)
endfunction()

# qmmm_add_skip_test(NAME REASON [LABELS l...]): a test that cannot run in this build (a tool or library missing)
# reported as skipped with its reason ("qmmm-skip: REASON"; scripts/test_summary.py lists it), never left out.
function(qmmm_add_skip_test name reason)
  cmake_parse_arguments(A "" "" "LABELS" ${ARGN})
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -E echo "qmmm-skip: ${reason}")
  set_tests_properties(${name} PROPERTIES LABELS "${A_LABELS}" SKIP_REGULAR_EXPRESSION "qmmm-skip: ")
endfunction()

# qmmm_add_valgrind(NAME TARGET [ARGS...]): the program under valgrind's memcheck (no leaks, no invalid access).
function(qmmm_add_valgrind name target)
  if(NOT QMMM_VALGRIND)
    qmmm_add_skip_test(${name} "valgrind is not installed (apt-get install valgrind)" LABELS cpu memcheck)
    return()
  endif()
  add_test(NAME ${name} COMMAND ${QMMM_VALGRIND} --error-exitcode=3 --leak-check=full
    --errors-for-leak-kinds=definite,indirect $<TARGET_FILE:${target}> ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "cpu;memcheck" ENVIRONMENT "OMP_NUM_THREADS=2")
endfunction()

# qmmm_add_run_test(NAME EXPECT regex [EXIT status] [LABELS l...] [ENV VAR=value...] COMMAND program args...):
# passes when the program exits with EXIT (default 0) AND its output matches EXPECT (tests/core/run_expect.cmake).
function(qmmm_add_run_test name)
  cmake_parse_arguments(A "" "EXPECT;EXIT" "LABELS;ENV;COMMAND" ${ARGN})
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} "-DEXPECT=${A_EXPECT}" "-DEXIT=${A_EXIT}" "-DENV=${A_ENV}"
    -P ${PROJECT_SOURCE_DIR}/tests/core/run_expect.cmake -- ${A_COMMAND})
  set_tests_properties(${name} PROPERTIES LABELS "${A_LABELS}")
endfunction()

# qmmm_add_fortran_test(NAME SOURCE [ARGS...]): a Fortran test program against the module; passes when it exits 0
# and prints "NAME: all passed".
function(qmmm_add_fortran_test name source)
  add_executable(test_${name} ${source})
  target_link_libraries(test_${name} PRIVATE qmmm_accel_f90)
  qmmm_add_run_test(${name} EXPECT "${name}: all passed" LABELS cpu fortran COMMAND $<TARGET_FILE:test_${name}> ${ARGN})
endfunction()

# qmmm_add_compute_sanitizer(NAME TARGET FILTER): the gtest program's tests matching FILTER under compute-sanitizer
# memcheck with the leak check (tests/core/compute_sanitizer.cmake; labels gpu and memcheck; a visible skip without
# a GPU or a CUDA toolkit).
# An optional TOOL racecheck runs that tool instead (label racecheck).
function(qmmm_add_compute_sanitizer name target filter)
  cmake_parse_arguments(A "" "TOOL" "" ${ARGN})
  if(NOT A_TOOL)
    set(A_TOOL memcheck)
  endif()
  set(san "")
  if(CUDAToolkit_BIN_DIR)
    set(san ${CUDAToolkit_BIN_DIR}/compute-sanitizer)
  endif()
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:${target}> "-DFILTER=${filter}" -DSAN=${san}
    -DTOOL=${A_TOOL} -P ${PROJECT_SOURCE_DIR}/tests/core/compute_sanitizer.cmake)
  set_tests_properties(${name} PROPERTIES LABELS "gpu;${A_TOOL}" SKIP_REGULAR_EXPRESSION "qmmm-skip: " TIMEOUT 900)
endfunction()
