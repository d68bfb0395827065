# The key table of vmc_driver/README.md is what `qmmm_vmc --keys-markdown` prints (from the key table in
# vmc_input_keys.f90), between the README's lines "<!-- keys: begin ... -->" and "<!-- keys: end -->".
# cmake -DEXE=qmmm_vmc -DREADME=vmc_driver/README.md [-DUPDATE=ON] -P readme_keys.cmake
# Fails when they differ; with UPDATE=ON writes the driver's table into the README instead.
execute_process(COMMAND ${EXE} --keys-markdown RESULT_VARIABLE rc OUTPUT_VARIABLE table ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT table MATCHES "^\\| key \\|")
  message(FATAL_ERROR "qmmm_vmc --keys-markdown: exit status ${rc}, no table\n${table}${err}")
endif()
file(READ ${README} text)
string(FIND "${text}" "<!-- keys: begin" b)
string(FIND "${text}" "<!-- keys: end -->" e)
if(b LESS 0 OR e LESS b)
  message(FATAL_ERROR "${README}: no '<!-- keys: begin ... -->' ... '<!-- keys: end -->' section")
endif()
# The table starts on the line after the begin marker.
string(SUBSTRING "${text}" ${b} -1 from_begin)
string(FIND "${from_begin}" "\n" nl)
math(EXPR start "${b} + ${nl} + 1")
math(EXPR n "${e} - ${start}")
string(SUBSTRING "${text}" ${start} ${n} current)
if(current STREQUAL table)
  message("${README}: the key table is the driver's")
elseif(UPDATE)
  string(SUBSTRING "${text}" 0 ${start} head)
  string(SUBSTRING "${text}" ${e} -1 tail)
  file(WRITE ${README} "${head}${table}${tail}")
  message("${README}: key table updated")
else()
  message("README:\n${current}\nqmmm_vmc --keys-markdown:\n${table}")
  message(FATAL_ERROR "${README}: the key table differs from `qmmm_vmc --keys-markdown` (the table in "
    "vmc_driver/vmc_input_keys.f90). Update it with\n  cmake -DEXE=${EXE} -DREADME=${README} -DUPDATE=ON "
    "-P ${CMAKE_CURRENT_LIST_FILE}")
endif()
