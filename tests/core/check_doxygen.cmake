# check_doxygen.cmake -- the API reference (docs/Doxyfile, over the public headers src_cxx/*/qmmm_accel*.h) builds
# without a single Doxygen warning: every function documents its parameters, statuses and threading; every enum
# value, macro and struct field is documented. Without doxygen the test says why and is reported as skipped.
#   cmake -DDOXYGEN=<doxygen, or empty> -DSOURCE_DIR=<repository> -DOUT_DIR=<output folder> -P check_doxygen.cmake
if(NOT DOXYGEN)
  message("qmmm-skip: doxygen is not installed (Debian: apt-get install doxygen; scripts/install_deps.sh)")
  return()
endif()
file(MAKE_DIRECTORY ${OUT_DIR})
# docs/Doxyfile with the paths made absolute, so that it runs from any folder.
file(WRITE ${OUT_DIR}/Doxyfile "@INCLUDE = ${SOURCE_DIR}/docs/Doxyfile
INPUT = ${SOURCE_DIR}/src_cxx
STRIP_FROM_PATH = ${SOURCE_DIR}/src_cxx
OUTPUT_DIRECTORY = ${OUT_DIR}
")
execute_process(COMMAND ${DOXYGEN} ${OUT_DIR}/Doxyfile WORKING_DIRECTORY ${OUT_DIR}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR err MATCHES "(warning|error):")
  message(FATAL_ERROR "doxygen (exit ${rc}) on the public headers:\n${out}${err}")
endif()
message("docs: API reference without warnings: ${OUT_DIR}/html/index.html")
