# RDF: library sources, the qmmm-rdf tool with its trajectory readers, tests and the benchmark.
target_sources(qmmm_accel PRIVATE src_cxx/rdf_api.cpp src_cxx/rdf_prepare.cpp src_cxx/rdf_cpu.cpp
  src_cxx/rdf_gpu_pool.cpp)
# The pair bins must be the GPU's to the last bit: no FMA contraction in the CPU counter (rdf_pair.cuh).
set_source_files_properties(src_cxx/rdf_cpu.cpp src_cxx/rdf_prepare.cpp PROPERTIES COMPILE_OPTIONS "-ffp-contract=off")
if(QMMM_HAVE_CUDA)
  target_sources(qmmm_accel PRIVATE src_cuda/rdf_kernels.cu)
  set_source_files_properties(src_cxx/rdf_api.cpp PROPERTIES COMPILE_DEFINITIONS QMMM_RDF_HAVE_CUDA)
  target_include_directories(qmmm_accel PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src_cuda)
  target_link_libraries(qmmm_accel PRIVATE CUDA::cudart_static)
else()
  target_sources(qmmm_accel PRIVATE src_cxx/rdf_cuda_stub.cpp)
endif()
find_package(Threads REQUIRED)
target_link_libraries(qmmm_accel PRIVATE Threads::Threads)

if(QMMM_BUILD_TESTS)
  qmmm_add_gtest(test_rdf_cpu SOURCES tests/test_rdf_cpu.cpp LABELS cpu)
  qmmm_add_gtest(test_rdf_errors SOURCES tests/test_rdf_errors.cpp LABELS cpu)
  qmmm_add_gtest(test_rdf_gpu SOURCES tests/test_rdf_gpu.cpp LABELS gpu)
  find_program(QMMM_VALGRIND valgrind)
  if(QMMM_VALGRIND)
    add_test(NAME valgrind_rdf COMMAND ${QMMM_VALGRIND} --error-exitcode=3 --leak-check=full
      --errors-for-leak-kinds=definite,indirect $<TARGET_FILE:test_rdf_errors>)
    set_tests_properties(valgrind_rdf PROPERTIES LABELS "cpu;memcheck" ENVIRONMENT "OMP_NUM_THREADS=2")
  endif()
endif()

# Trajectory readers and selections as a static helper library; the qmmm-rdf tool.
add_library(qmmm_rdf_io STATIC src_cxx/tools/rdf_io.cpp)
target_include_directories(qmmm_rdf_io PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/src_cxx/tools)
target_link_libraries(qmmm_rdf_io PUBLIC qmmm_accel)
find_package(CLI11 CONFIG QUIET)
find_package(nlohmann_json CONFIG QUIET)
add_executable(qmmm-rdf src_cxx/tools/rdf_main.cpp)
target_link_libraries(qmmm-rdf PRIVATE qmmm_rdf_io qmmm_accel)
foreach(t CLI11::CLI11 nlohmann_json::nlohmann_json)
  if(TARGET ${t})
    target_link_libraries(qmmm-rdf PRIVATE ${t})
  endif()
endforeach()
install(TARGETS qmmm-rdf RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

if(QMMM_BUILD_TESTS)
  qmmm_add_gtest(test_rdf_io SOURCES tests/test_rdf_io.cpp LABELS cpu LIBS qmmm_rdf_io)
  add_executable(test_rdf_fortran tests/test_rdf_fortran.f90)
  target_link_libraries(test_rdf_fortran PRIVATE qmmm_accel_f90)
  add_test(NAME fortran_rdf COMMAND test_rdf_fortran)
  set_tests_properties(fortran_rdf PROPERTIES LABELS "cpu;fortran" PASS_REGULAR_EXPRESSION "fortran_rdf: all passed")
  # The tool end to end (runs the readers, selections, exclusions, text and JSON output).
  add_test(NAME rdf_tool_cli COMMAND qmmm-rdf ${CMAKE_CURRENT_SOURCE_DIR}/tests/data/rdf/water.gro
    --sel1 "name OW" --rmax 6 --bins 60 --exclude-same-molecule --backend cpu --no-progress
    -o ${CMAKE_CURRENT_BINARY_DIR}/rdf_tool_cli.dat --json ${CMAKE_CURRENT_BINARY_DIR}/rdf_tool_cli.json)
  set_tests_properties(rdf_tool_cli PROPERTIES LABELS cpu PASS_REGULAR_EXPRESSION "qmmm-rdf: 3 frames.*cpu brute")
  add_test(NAME rdf_tool_bad_selection COMMAND qmmm-rdf ${CMAKE_CURRENT_SOURCE_DIR}/tests/data/rdf/water.pdb
    --sel1 "name XX" --backend cpu --no-progress)
  set_tests_properties(rdf_tool_bad_selection PROPERTIES LABELS cpu WILL_FAIL ON)
endif()

if(QMMM_BUILD_BENCH)
  add_executable(rdf_bench bench/rdf_bench.cpp)
  target_link_libraries(rdf_bench PRIVATE qmmm_accel)
  if(TARGET CLI11::CLI11)
    target_link_libraries(rdf_bench PRIVATE CLI11::CLI11)
  endif()
endif()
