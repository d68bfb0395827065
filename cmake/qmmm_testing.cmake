# Test helpers shared by every family (included before the families).
if(NOT QMMM_BUILD_TESTS)
  function(qmmm_add_gtest name)
  endfunction()
  function(qmmm_add_valgrind name)
  endfunction()
  return()
endif()
enable_testing()
find_package(GTest REQUIRED)
include(GoogleTest)
find_program(QMMM_VALGRIND valgrind)

# qmmm_add_gtest(NAME SOURCES src... [LABELS l...] [LIBS lib...])
# The sources' folder (tests/<family>/) and tests/core/ (gpu_test.hpp) are on the include path. Tests that need
# a GPU use QMMM_REQUIRE_GPU_OR_SKIP (tests/core/gpu_test.hpp): it prints "qmmm-skip: <reason>", which alone
# makes ctest report a skip -- a test that fails in its set-up (and so is "[  SKIPPED ]" in gtest's words)
# is a failure. Compiled-in QMMM_SOURCE_DIR points at the repository (for data/ files).
function(qmmm_add_gtest name)
  cmake_parse_arguments(A "" "" "SOURCES;LABELS;LIBS" ${ARGN})
  list(GET A_SOURCES 0 first)
  get_filename_component(dir ${first} DIRECTORY)
  add_executable(${name} ${A_SOURCES})
  target_link_libraries(${name} PRIVATE qmmm_accel GTest::gtest GTest::gtest_main ${A_LIBS})
  target_include_directories(${name} PRIVATE ${dir} ${PROJECT_SOURCE_DIR}/tests/core)
  target_compile_definitions(${name} PRIVATE QMMM_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  gtest_discover_tests(${name} PROPERTIES LABELS "${A_LABELS}" SKIP_REGULAR_EXPRESSION "qmmm-skip: "
    DISCOVERY_TIMEOUT 60)
endfunction()

# qmmm_add_valgrind(NAME TARGET [ARGS...]): the program under valgrind's memcheck (no leaks, no invalid access).
function(qmmm_add_valgrind name target)
  if(NOT QMMM_VALGRIND)
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
