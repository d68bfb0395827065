# Writes the call site of docs/integrating.md (the first ```fortran block after "## The call site") into a module
# procedure, as the page prints it: its use and declaration lines first, then its statements, on the caller's
# x, y, z, q, nelec, coord (the names the page uses). Test integrating_call_site compiles and runs it, so the page
# cannot drift from the module's interface.
# cmake -DDOC=docs/integrating.md -DOUT=integrating_call_site_gen.f90 -P integrating_call_site.cmake
file(READ ${DOC} text)
string(FIND "${text}" "## The call site" at)
if(at LESS 0)
  message(FATAL_ERROR "${DOC}: no section '## The call site'")
endif()
string(SUBSTRING "${text}" ${at} -1 text)
if(NOT text MATCHES "```fortran\n([^`]*)```")
  message(FATAL_ERROR "${DOC}: no ```fortran block after '## The call site'")
endif()
set(block "${CMAKE_MATCH_1}")
if(block MATCHES ";")
  message(FATAL_ERROR "${DOC}: the call site has a ';' (this script splits it into lines at them)")
endif()
string(REPLACE "\n" ";" lines "${block}")
set(uses "")
set(decls "")
set(body "")
foreach(l IN LISTS lines)
  if(l MATCHES "^[ \t]*use[ \t]")
    string(APPEND uses "    ${l}\n")
  elseif(l MATCHES "^[ \t]*(type|integer|real|double|character|logical)[ \t(*].*::")
    string(APPEND decls "    ${l}\n")
  else()
    string(APPEND body "    ${l}\n")
  endif()
endforeach()
file(WRITE ${OUT} "! Generated from ${DOC} by tests/field/integrating_call_site.cmake: do not edit.
module integrating_call_site_m
  implicit none
contains
  subroutine call_site(x, y, z, q, nelec, coord, e_mm, st)
${uses}    double precision, intent(in) :: x(:), y(:), z(:), q(:), coord(:, :)
    integer, intent(in) :: nelec
    double precision, intent(out) :: e_mm
    integer, intent(out) :: st
${decls}${body}  end subroutine

  subroutine die(msg)
    character(len=*), intent(in) :: msg
    write(*, '(a)') 'integrating_call_site: FAILED: ' // msg
    stop 1
  end subroutine
end module integrating_call_site_m
")
