# The fuzz targets in the ordinary test build (any compiler, no libFuzzer, no sanitizer): each target's source
# with standalone_main.cpp replays the committed regression inputs and seed corpus, so every crash the fuzzers
# found stays fixed in plain ctest. Included from tests/CMakeLists.txt. The sanitized replay and the fuzzing
# itself: tests/fuzz/run_fuzz.sh.
set(_qmmm_fz ${PROJECT_SOURCE_DIR}/tests/fuzz)

# fuzz_capi, fuzz_magnitudes and fuzz_tool_cli draw their calls through LLVM's header-only FuzzedDataProvider, which
# comes with clang (any version).
file(GLOB _qmmm_fdp /usr/lib/llvm-*/lib/clang/*/include/fuzzer/FuzzedDataProvider.h
                    /usr/lib/clang/*/include/fuzzer/FuzzedDataProvider.h)

# qmmm_fuzz_replay(NAME SOURCES src... [LIBS lib...]): NAME_replay and the test fuzz_replay_NAME.
function(qmmm_fuzz_replay name)
  cmake_parse_arguments(A "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name}_replay ${_qmmm_fz}/standalone_main.cpp ${A_SOURCES})
  target_include_directories(${name}_replay PRIVATE ${_qmmm_fz})
  target_link_libraries(${name}_replay PRIVATE ${A_LIBS})
  set(dirs "")
  foreach(d regressions corpus)
    if(IS_DIRECTORY ${_qmmm_fz}/${d}/${name})
      list(APPEND dirs ${_qmmm_fz}/${d}/${name})
    endif()
  endforeach()
  # Passes on exit status 0 AND at least one input replayed (run_expect.cmake: ctest's PASS_REGULAR_EXPRESSION alone
  # would pass a replay of no input, or a crash after the line).
  qmmm_add_run_test(fuzz_replay_${name} EXPECT "replayed [1-9][0-9]* inputs" LABELS cpu fuzz quick
    COMMAND $<TARGET_FILE:${name}_replay> ${dirs})
  # No GPU for the replays: the targets' invariants assume AUTO means CPU, as in the fuzz build.
  set_tests_properties(fuzz_replay_${name} PROPERTIES ENVIRONMENT "CUDA_VISIBLE_DEVICES=;OMP_NUM_THREADS=1")
endfunction()

qmmm_fuzz_replay(fuzz_cube SOURCES ${_qmmm_fz}/fuzz_cube.cpp LIBS qmmm_accel)
qmmm_fuzz_replay(fuzz_pot SOURCES ${_qmmm_fz}/fuzz_pot.cpp LIBS qmmm_accel)
qmmm_fuzz_replay(fuzz_dcs_io SOURCES ${_qmmm_fz}/fuzz_dcs_io.cpp LIBS qmmm_dcs_io)
qmmm_fuzz_replay(fuzz_rdf_io SOURCES ${_qmmm_fz}/fuzz_rdf_io.cpp LIBS qmmm_rdf_io)
qmmm_fuzz_replay(fuzz_rdf_select SOURCES ${_qmmm_fz}/fuzz_rdf_select.cpp LIBS qmmm_rdf_io)
qmmm_fuzz_replay(fuzz_vmc_readers SOURCES ${_qmmm_fz}/fuzz_vmc_readers.cpp LIBS qmmm_vmc_readers)
if(_qmmm_fdp)
  # Only that header, copied: clang's include folder also holds clang's own intrinsics headers, not for gcc.
  list(GET _qmmm_fdp 0 _qmmm_fdp)
  configure_file(${_qmmm_fdp} ${CMAKE_CURRENT_BINARY_DIR}/fuzz_include/fuzzer/FuzzedDataProvider.h COPYONLY)
  qmmm_fuzz_replay(fuzz_capi SOURCES ${_qmmm_fz}/fuzz_capi.cpp LIBS qmmm_accel)
  qmmm_fuzz_replay(fuzz_magnitudes SOURCES ${_qmmm_fz}/fuzz_magnitudes.cpp LIBS qmmm_accel)
  # The tools' main() compiled in under other names (as in tests/fuzz/CMakeLists.txt); CLI11 and nlohmann_json are
  # header-only packages, found again in this folder's scope.
  find_package(CLI11 CONFIG REQUIRED)
  find_package(nlohmann_json CONFIG REQUIRED)
  qmmm_fuzz_replay(fuzz_tool_cli SOURCES ${_qmmm_fz}/fuzz_tool_cli.cpp ${_qmmm_fz}/fuzz_tool_dcs_main.cpp
    ${_qmmm_fz}/fuzz_tool_rdf_main.cpp
    LIBS qmmm_dcs_io qmmm_rdf_io qmmm_cli_checks qmmm_accel CLI11::CLI11 nlohmann_json::nlohmann_json OpenMP::OpenMP_CXX)
  foreach(t fuzz_capi fuzz_magnitudes fuzz_tool_cli)
    target_include_directories(${t}_replay PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/fuzz_include)
  endforeach()
else()
  message(STATUS "qmmm-accel: no FuzzedDataProvider.h (comes with clang): the inputs of fuzz_capi, fuzz_magnitudes "
                 "and fuzz_tool_cli are replayed by tests/fuzz/run_fuzz.sh only")
  foreach(t fuzz_capi fuzz_magnitudes fuzz_tool_cli)
    qmmm_add_skip_test(fuzz_replay_${t} "no FuzzedDataProvider.h (comes with clang: apt-get install clang-14); \
tests/fuzz/run_fuzz.sh replays ${t}'s inputs" LABELS cpu fuzz quick)
  endforeach()
endif()
# The replay itself must fail on no input (a folder emptied by mistake, a wrong path): an empty folder, exit 1.
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fuzz_empty)
qmmm_add_run_test(fuzz_replay_no_input_fails EXIT 1 EXPECT "replayed 0 inputs" LABELS cpu fuzz quick
  COMMAND $<TARGET_FILE:fuzz_cube_replay> ${CMAKE_CURRENT_BINARY_DIR}/fuzz_empty)
