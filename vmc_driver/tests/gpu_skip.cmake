# gpu_skip.cmake -- when a GPU case of qmmm_vmc may be skipped (included by run_check.cmake and mpi_check.cmake).
# vmc_gpu_skip_or_fail(OUTPUT): if qmmm_vmc stopped on the library's status QMMM_ERR_NO_CUDA (a build without
# CUDA) or QMMM_ERR_NO_DEVICE (no usable GPU), as its error line prints it ("qmmm_vmc: error: <what>: <status>:
# <message>"), the test is skipped: "SKIPPED: no usable GPU (<status>)" matches the tests'
# SKIP_REGULAR_EXPRESSION. Only that status does: text that merely mentions a device is another failure, left to
# the caller. With the environment variable QMMM_REQUIRE_GPU set (not "0"), as on the GPU machine
# (bench/common/gpu_verify.sh), the would-be skip is a failure that quotes the error line.
function(vmc_gpu_skip_or_fail output)
  if(NOT output MATCHES "qmmm_vmc: error: [^\n]*: (QMMM_ERR_NO_CUDA|QMMM_ERR_NO_DEVICE): [^\n]*")
    return()
  endif()
  set(line "${CMAKE_MATCH_0}")
  set(status "${CMAKE_MATCH_1}")
  if(DEFINED ENV{QMMM_REQUIRE_GPU} AND NOT "$ENV{QMMM_REQUIRE_GPU}" STREQUAL "" AND
     NOT "$ENV{QMMM_REQUIRE_GPU}" STREQUAL "0")
    message(FATAL_ERROR "QMMM_REQUIRE_GPU is set, but the run found no usable GPU: ${line}")
  endif()
  message(FATAL_ERROR "SKIPPED: no usable GPU (${status})")
endfunction()
