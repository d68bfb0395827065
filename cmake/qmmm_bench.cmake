# Benchmark helpers shared by the families (included before them).

# qmmm_bench_cuda_baseline(TARGET DEFINE def SOURCES src...): in a CUDA build, compiles a benchmark's baseline
# kernels (bench/<family>/*.cu, kept outside the library) into TARGET and defines def so the benchmark runs them; in a
# build without CUDA it does nothing and the benchmark leaves the baseline out.
function(qmmm_bench_cuda_baseline target)
  cmake_parse_arguments(A "" "DEFINE" "SOURCES" ${ARGN})
  if(NOT QMMM_HAVE_CUDA)
    return()
  endif()
  target_sources(${target} PRIVATE ${A_SOURCES})
  target_compile_definitions(${target} PRIVATE ${A_DEFINE})
  target_link_libraries(${target} PRIVATE CUDA::cudart_static)
  set_target_properties(${target} PROPERTIES CUDA_RUNTIME_LIBRARY Static)
endfunction()
