# Runs qmmm_vmc with ARG (--help, -h): it must exit 0 and print the usage line on stdout.
# cmake -DEXE=... -DARG=... -P expect_usage.cmake
execute_process(COMMAND ${EXE} ${ARG} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("exit status ${rc}; stdout: ${out}; stderr: ${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "qmmm_vmc ${ARG}: expected exit status 0")
endif()
if(NOT out MATCHES "^usage: qmmm_vmc input.nml \\[result.json\\]")
  message(FATAL_ERROR "qmmm_vmc ${ARG}: no usage line on stdout")
endif()
