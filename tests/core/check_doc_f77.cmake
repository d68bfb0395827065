# check_doc_f77.cmake -- the fixed-form call site of docs/integrating.md compiles as printed: the first ```fortran
# block whose code starts in column 7 is taken from the page, every line must fit columns 1-72 (a longer line is
# cut at 72 by a fixed-form compiler: the page's lines of 73 and 75 did not compile), and it is compiled inside a
# routine that declares the page's variables, with the module-free interface's include file.
#   cmake -DDOC=<docs/integrating.md> -DFC=<Fortran compiler> -DINCLUDE=<folder of qmmm_accel_f77.fi> -DWORK=<dir>
#         -P check_doc_f77.cmake
cmake_minimum_required(VERSION 3.25)
file(STRINGS ${DOC} lines)
set(in_block OFF)
set(block "")
set(found OFF)
foreach(line IN LISTS lines)
  if(NOT in_block AND line STREQUAL "```fortran")
    set(in_block ON)
    set(block "")
  elseif(in_block AND line STREQUAL "```")
    set(in_block OFF)
    if(block MATCHES "^      [A-Z]")
      set(found ON)
      break()
    endif()
  elseif(in_block)
    string(APPEND block "${line}\n")
  endif()
endforeach()
if(NOT found)
  message(FATAL_ERROR "${DOC}: no fixed-form ```fortran block (code from column 7)")
endif()
string(REPLACE "\n" ";" block_lines "${block}")
foreach(line IN LISTS block_lines)
  string(LENGTH "${line}" n)
  if(n GREATER 72)
    message(FATAL_ERROR "${DOC}: a fixed-form line of ${n} columns (at most 72):\n${line}")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/doc_call_site.f
"      SUBROUTINE DOCSITE(NCHG, X, Y, Z, Q, NELEC, COORD, ENERGY)
      IMPLICIT NONE
      INCLUDE 'qmmm_accel_f77.fi'
      INTEGER NCHG, NELEC, STATUS
      DOUBLE PRECISION X(*), Y(*), Z(*), Q(*), COORD(3, *), ENERGY
      DOUBLE PRECISION DUM(1)
${block}      END
")
execute_process(COMMAND ${FC} -ffixed-form -Werror=line-truncation -Wall -c -I${INCLUDE} doc_call_site.f
                WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the call site of ${DOC} does not compile:\n${out}${err}")
endif()
file(REMOVE_RECURSE ${WORK})
message("doc f77 call site: compiles")
