# DCS potential maps: library sources, the qmmm-dcs tool, tests and the benchmark.
target_sources(qmmm_accel PRIVATE src_cxx/dcs_api.cpp src_cxx/dcs_cpu.cpp src_cxx/dcs_gpu_pool.cpp)
if(QMMM_HAVE_CUDA)
  target_sources(qmmm_accel PRIVATE src_cuda/dcs_kernels.cu)
  set_source_files_properties(src_cxx/dcs_api.cpp PROPERTIES COMPILE_DEFINITIONS QMMM_DCS_HAVE_CUDA)
  target_include_directories(qmmm_accel PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src_cuda)
  target_link_libraries(qmmm_accel PRIVATE CUDA::cudart_static)
else()
  target_sources(qmmm_accel PRIVATE src_cxx/dcs_cuda_stub.cpp)
endif()
find_package(Threads REQUIRED)
target_link_libraries(qmmm_accel PRIVATE Threads::Threads)

# File formats (PQR, PDB, XYZ in; OpenDX, cube out; .dx in for tests) as a static helper library.
add_library(qmmm_dcs_io STATIC src_cxx/tools/dcs_io.cpp)
target_include_directories(qmmm_dcs_io PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/src_cxx/tools)
target_link_libraries(qmmm_dcs_io PUBLIC qmmm_accel)

find_package(CLI11 CONFIG QUIET)
add_executable(qmmm-dcs src_cxx/tools/dcs_main.cpp)
target_link_libraries(qmmm-dcs PRIVATE qmmm_dcs_io qmmm_accel)
if(TARGET CLI11::CLI11)
  target_link_libraries(qmmm-dcs PRIVATE CLI11::CLI11)
endif()
install(TARGETS qmmm-dcs RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

if(QMMM_BUILD_TESTS)
  qmmm_add_gtest(test_dcs_cpu SOURCES tests/test_dcs_cpu.cpp LABELS cpu)
  qmmm_add_gtest(test_dcs_errors SOURCES tests/test_dcs_errors.cpp LABELS cpu)
  qmmm_add_gtest(test_dcs_io SOURCES tests/test_dcs_io.cpp LABELS cpu LIBS qmmm_dcs_io)
  qmmm_add_gtest(test_dcs_gpu SOURCES tests/test_dcs_gpu.cpp LABELS gpu)
  add_executable(test_fortran_dcs tests/test_fortran_dcs.f90)
  target_link_libraries(test_fortran_dcs PRIVATE qmmm_accel_f90)
  add_test(NAME fortran_dcs COMMAND test_fortran_dcs)
  set_tests_properties(fortran_dcs PROPERTIES LABELS "cpu;fortran" PASS_REGULAR_EXPRESSION "fortran_dcs: all passed")
  # The tool end to end: a PQR to a .dx and placed ions, checked by a test reading them back.
  add_test(NAME dcs_tool_cli COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:qmmm-dcs>
    -DDATA=${CMAKE_CURRENT_SOURCE_DIR}/tests/data/dcs -DWORK=${CMAKE_CURRENT_BINARY_DIR}/dcs_tool_cli
    -P ${CMAKE_CURRENT_SOURCE_DIR}/tests/data/dcs/tool_cli.cmake)
  set_tests_properties(dcs_tool_cli PROPERTIES LABELS cpu PASS_REGULAR_EXPRESSION "dcs tool: ok" ENVIRONMENT "QMMM_BACKEND=cpu")
  find_program(QMMM_VALGRIND valgrind)
  if(QMMM_VALGRIND)
    add_test(NAME valgrind_dcs COMMAND ${QMMM_VALGRIND} --error-exitcode=3 --leak-check=full
      --errors-for-leak-kinds=definite,indirect $<TARGET_FILE:test_dcs_errors>)
    add_test(NAME valgrind_dcs_cpu COMMAND ${QMMM_VALGRIND} --error-exitcode=3 --leak-check=full
      --errors-for-leak-kinds=definite,indirect $<TARGET_FILE:test_dcs_cpu>)
    add_test(NAME valgrind_dcs_io COMMAND ${QMMM_VALGRIND} --error-exitcode=3 --leak-check=full
      --errors-for-leak-kinds=definite,indirect $<TARGET_FILE:test_dcs_io>)
    set_tests_properties(valgrind_dcs valgrind_dcs_cpu valgrind_dcs_io PROPERTIES LABELS "cpu;memcheck"
      ENVIRONMENT "OMP_NUM_THREADS=2")
  endif()
endif()

if(QMMM_BUILD_BENCH)
  add_executable(dcs_bench bench/dcs_bench.cpp)
  target_link_libraries(dcs_bench PRIVATE qmmm_accel)
  if(TARGET CLI11::CLI11)
    target_link_libraries(dcs_bench PRIVATE CLI11::CLI11)
  endif()
endif()
