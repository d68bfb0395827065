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
