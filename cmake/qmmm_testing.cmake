# Test helpers shared by the core and every family (included before the families).
if(NOT QMMM_BUILD_TESTS)
  function(qmmm_add_gtest name)
  endfunction()
  return()
endif()
enable_testing()
find_package(GTest REQUIRED)
include(GoogleTest)

# qmmm_add_gtest(NAME SOURCES src... [LABELS l...] [LIBS lib...])
# Tests that need a GPU call GTEST_SKIP() << "reason"; ctest then reports them as skipped, not passed.
# Compiled-in QMMM_SOURCE_DIR points at the repository (for data/ files).
function(qmmm_add_gtest name)
  cmake_parse_arguments(A "" "" "SOURCES;LABELS;LIBS" ${ARGN})
  add_executable(${name} ${A_SOURCES})
  target_link_libraries(${name} PRIVATE qmmm_accel GTest::gtest GTest::gtest_main ${A_LIBS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE QMMM_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  gtest_discover_tests(${name} PROPERTIES LABELS "${A_LABELS}" SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]"
    DISCOVERY_TIMEOUT 60)
endfunction()
