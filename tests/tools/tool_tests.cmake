# Tests of the command-line programs' bad input, the installed pkg-config file and the main job's install.
# Included by tests/CMakeLists.txt's tools folder (tests/tools/CMakeLists.txt; the tools and the benchmarks, from
# bench/CMakeLists.txt, are defined before the tests).
set(_qmmm_tt ${PROJECT_SOURCE_DIR}/tests/tools)

# qmmm-dcs: every number option, the lattice size, the map format, file errors; exit codes and messages.
add_test(NAME dcs_tool_bad_input COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:qmmm-dcs>
  -DDATA=${PROJECT_SOURCE_DIR}/tests/data/dcs -DWORK=${CMAKE_CURRENT_BINARY_DIR}/dcs_tool_bad_input
  -P ${_qmmm_tt}/dcs_bad_input.cmake)
set_tests_properties(dcs_tool_bad_input PROPERTIES LABELS "cpu;quick" PASS_REGULAR_EXPRESSION "dcs bad input: [0-9]+ cases ok"
  ENVIRONMENT "QMMM_BACKEND=cpu")

# Both tools' outputs: all or nothing, existing ones kept without --force, checked before any work.
add_test(NAME tool_outputs COMMAND ${CMAKE_COMMAND} -DDCS=$<TARGET_FILE:qmmm-dcs> -DRDF=$<TARGET_FILE:qmmm-rdf>
  -DDATA=${PROJECT_SOURCE_DIR}/tests/data -DWORK=${CMAKE_CURRENT_BINARY_DIR}/tool_outputs
  -P ${_qmmm_tt}/tool_outputs.cmake)
set_tests_properties(tool_outputs PROPERTIES LABELS "cpu;quick" PASS_REGULAR_EXPRESSION "tool outputs: [0-9]+ cases ok"
  ENVIRONMENT "QMMM_BACKEND=cpu")

# The benchmarks' command lines (same checks; nothing is timed).
if(TARGET dcs_bench AND TARGET rdf_bench)
  set(_qmmm_field_benches "")   # field_bench only in CUDA builds
  foreach(b field_bench field_split_bench)
    if(TARGET ${b})
      string(TOUPPER ${b} _qmmm_b)
      list(APPEND _qmmm_field_benches -D${_qmmm_b}=$<TARGET_FILE:${b}>)
    endif()
  endforeach()
  add_test(NAME bench_bad_input COMMAND ${CMAKE_COMMAND} -DDCS_BENCH=$<TARGET_FILE:dcs_bench>
    -DRDF_BENCH=$<TARGET_FILE:rdf_bench> ${_qmmm_field_benches} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/bench_bad_input
    -P ${_qmmm_tt}/bench_bad_input.cmake)
  set_tests_properties(bench_bad_input PROPERTIES LABELS cpu PASS_REGULAR_EXPRESSION "bench bad input: ok")
endif()

# A C program built with `pkg-config --cflags --libs qmmm_accel` against an install in a scratch prefix.
find_program(QMMM_PKG_CONFIG NAMES pkg-config pkgconf)
add_test(NAME install_pkgconfig_c COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR}
  -DSRC=${_qmmm_tt}/pkgconfig_consumer.c -DCC=${CMAKE_C_COMPILER} -DPKG_CONFIG=${QMMM_PKG_CONFIG}
  -DWORK=${CMAKE_CURRENT_BINARY_DIR}/install_pkgconfig_c -P ${_qmmm_tt}/pkgconfig_c.cmake)
set_tests_properties(install_pkgconfig_c PROPERTIES LABELS "cpu;install" PASS_REGULAR_EXPRESSION "pkgconfig c: ok")

# scripts/run_example.sh in a fresh build directory (CPU build: what is tested is the script, not CUDA), then
# `cmake --install` of it. About 1 min on 2 cores: the only test that builds the project again (a CPU build of
# what the install needs, in its own folder); it takes 2 processors of a parallel ctest, so a 2-core CI runs it
# alone rather than beside other tests.
add_test(NAME run_example_install COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR}
  -DWORK=${CMAKE_CURRENT_BINARY_DIR}/run_example_install "-DCMAKE_ARGS=-DQMMM_CUDA=OFF"
  -P ${_qmmm_tt}/run_example_install.cmake)
set_tests_properties(run_example_install PROPERTIES LABELS "cpu;install;slow" TIMEOUT 1800 PROCESSORS 2
  PASS_REGULAR_EXPRESSION "run_example install: ok")
