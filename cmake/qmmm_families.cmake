# Reads cmake/qmmm_families.txt, the one list of the families (the layout check, tests/core/check_layout.sh, reads
# it too). Sets QMMM_FAMILIES (the names, in the list's dependency order) and, for each family F,
# QMMM_FAMILY_F_DEPS (a list), QMMM_FAMILY_F_HEADER (its public C header, empty for none) and QMMM_FAMILY_F_KIND:
#   library   part of libqmmm_accel: src_cxx/F (and src_cuda/F), its public header installed;
#   internal  static libraries inside the build for the programs, tests and benchmarks (not installed, no public
#             header), built when any of those is;
#   programs  command-line programs (and what they share with the benchmarks), built with QMMM_BUILD_TOOLS.
set(QMMM_FAMILY_LIST ${CMAKE_CURRENT_LIST_DIR}/qmmm_families.txt)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${QMMM_FAMILY_LIST})
file(STRINGS ${QMMM_FAMILY_LIST} _qmmm_lines REGEX "^[a-z]")
set(QMMM_FAMILIES "")
foreach(_qmmm_line IN LISTS _qmmm_lines)
  string(REGEX REPLACE "[ \t]+" ";" _qmmm_cols "${_qmmm_line}")
  list(LENGTH _qmmm_cols _qmmm_n)
  if(NOT _qmmm_n EQUAL 4)
    message(FATAL_ERROR "${QMMM_FAMILY_LIST}: '${_qmmm_line}' has ${_qmmm_n} columns, not 4 (name deps header kind)")
  endif()
  list(GET _qmmm_cols 0 _qmmm_name)
  list(GET _qmmm_cols 1 _qmmm_deps)
  list(GET _qmmm_cols 2 _qmmm_header)
  list(GET _qmmm_cols 3 _qmmm_kind)
  if(NOT _qmmm_kind MATCHES "^(library|internal|programs)$")
    message(FATAL_ERROR "${QMMM_FAMILY_LIST}: family ${_qmmm_name}: kind '${_qmmm_kind}' is not library, internal or programs")
  endif()
  string(REPLACE "," ";" _qmmm_deps "${_qmmm_deps}")
  list(REMOVE_ITEM _qmmm_deps "-")
  foreach(_qmmm_dep IN LISTS _qmmm_deps)
    if(NOT _qmmm_dep IN_LIST QMMM_FAMILIES)
      message(FATAL_ERROR "${QMMM_FAMILY_LIST}: family ${_qmmm_name} depends on '${_qmmm_dep}', not listed above it")
    endif()
  endforeach()
  if(_qmmm_header STREQUAL "-")
    set(_qmmm_header "")
  endif()
  list(APPEND QMMM_FAMILIES ${_qmmm_name})
  set(QMMM_FAMILY_${_qmmm_name}_DEPS ${_qmmm_deps})
  set(QMMM_FAMILY_${_qmmm_name}_HEADER ${_qmmm_header})
  set(QMMM_FAMILY_${_qmmm_name}_KIND ${_qmmm_kind})
endforeach()

# qmmm_publish_header(PATH): a public header, installed and copied into ${PROJECT_BINARY_DIR}/include, the only
# include folder qmmm_accel gives the users of the build tree (so they see what an install holds, and no internal
# header). Once per file name; the property QMMM_PUBLIC_HEADERS lists the names (the header tests run on them).
function(qmmm_publish_header path)
  get_filename_component(name ${path} NAME)
  get_property(done GLOBAL PROPERTY QMMM_PUBLIC_HEADERS)
  if(name IN_LIST done)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY QMMM_PUBLIC_HEADERS ${name})
  if(NOT path STREQUAL "${PROJECT_BINARY_DIR}/include/${name}")
    configure_file(${path} ${PROJECT_BINARY_DIR}/include/${name} COPYONLY)
  endif()
  install(FILES ${PROJECT_BINARY_DIR}/include/${name} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()
