# The CUDA backend of the embedding field (included only when the build has CUDA): sources into
# qmmm_accel, its GPU tests (label gpu) and the benchmark bench/field_bench.
target_sources(qmmm_accel PRIVATE src_cuda/device.cu src_cuda/field_cuda.cu src_cuda/field_kernels.cu)
# -lineinfo: compute-sanitizer reports name source lines; no fast-math (rsqrtf is asked for explicitly).
target_compile_options(qmmm_accel PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo -Xptxas=-warn-spills>)

if(QMMM_BUILD_TESTS)
  qmmm_add_gtest(test_field_cuda SOURCES tests/test_field_cuda.cpp LABELS gpu)
endif()

if(QMMM_BUILD_BENCH)
  find_package(CLI11 REQUIRED)
  find_package(nlohmann_json REQUIRED)
  # The seed's published algorithm (seed 004) as a baseline, outside the library.
  add_executable(field_bench bench/field_bench.cpp bench/field_seed.cu)
  target_include_directories(field_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests ${PROJECT_SOURCE_DIR}/bench)
  target_link_libraries(field_bench PRIVATE qmmm_accel OpenMP::OpenMP_CXX CLI11::CLI11 nlohmann_json::nlohmann_json CUDA::cudart_static)
  set_target_properties(field_bench PROPERTIES CUDA_RUNTIME_LIBRARY Static)
endif()
