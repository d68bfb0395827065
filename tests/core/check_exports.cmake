# cmake -DNM=nm -DLIB=libqmmm_accel.so -P check_exports.cmake: every qmmm_ function the shared library exports has C
# linkage. A source that defines a QMMM_API function without its family's header in sight (extern "C") exports it
# under a C++-mangled name (_Z<len>qmmm_...), which no C or Fortran caller finds.
execute_process(COMMAND ${NM} -D --defined-only ${LIB} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exports: ${NM} failed on ${LIB}: ${err}")
endif()
string(REGEX MATCHALL "[ \t]_Z[0-9]+qmmm_[A-Za-z0-9_]*" mangled "${out}")
string(REGEX MATCHALL "[ \t]qmmm_[A-Za-z0-9_]*" c_names "${out}")
list(LENGTH c_names n)
if(mangled)
  message(FATAL_ERROR "exports: C API functions with C++ linkage (their definition does not see the header):${mangled}")
endif()
if(n EQUAL 0)
  message(FATAL_ERROR "exports: ${LIB} exports no qmmm_ function")
endif()
message("exports: ok (${n} C functions)")
