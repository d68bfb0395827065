# tool_outputs.cmake -- the outputs of qmmm-dcs and qmmm-rdf are written all or nothing (atomic_output.hpp): an
# existing output is kept without --force; /dev/full is refused and nothing is made; a write that fails
# (`ulimit -f`) or a SIGTERM during the run leaves the old file intact and no temporary file; every qmmm-rdf output
# is checked before the trajectory is read (--png in a folder that cannot exist: an error, nothing on stdout, no -o
# written), and gnuplot's PNG never reaches stdout.
#   cmake -DDCS=<qmmm-dcs> -DRDF=<qmmm-rdf> -DDATA=<tests/data> -DWORK=<scratch dir> -P tool_outputs.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(pqr ${DATA}/dcs/small.pqr)
set(traj ${DATA}/rdf/water.pdb)
set(failures "")
set(n 0)

# run(<expected exit code> <stderr regex> command...): sets `out` and `err` in the caller.
function(run code regex)
  math(EXPR i "${n} + 1")
  set(n ${i} PARENT_SCOPE)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  set(out "${o}" PARENT_SCOPE)
  set(err "${e}" PARENT_SCOPE)
  if(NOT "${rc}" STREQUAL "${code}" OR NOT e MATCHES "${regex}")
    set(failures "${failures}\n  ${ARGN}: exit ${rc} (expected ${code}), stderr '${e}' (expected '${regex}')" PARENT_SCOPE)
  endif()
endfunction()

# expect_content(<file> <regex> <what>): the file exists and matches.
function(expect_content path regex what)
  set(c "")
  if(EXISTS ${path})
    file(READ ${path} c LIMIT 1000000)
  endif()
  if(NOT c MATCHES "${regex}")
    set(failures "${failures}\n  ${what}: ${path} does not match '${regex}'" PARENT_SCOPE)
  endif()
endfunction()

# expect_no_temporaries(<folder>): no ".<name>.XXXXXX" left behind.
function(expect_no_temporaries dir what)
  file(GLOB left LIST_DIRECTORIES false ${dir}/.*)
  if(left)
    set(failures "${failures}\n  ${what}: temporary files left: ${left}" PARENT_SCOPE)
  endif()
endfunction()

set(dcs_args ${pqr} -s 1 -p 3 -q --backend cpu)
# 1. An existing output is kept without --force, replaced with it (qmmm-dcs -o and --ions-out).
file(WRITE ${WORK}/old.dx "OLD\n")
run(9 "qmmm-dcs: error: .*old.dx: exists; add --force to replace it" ${DCS} ${dcs_args} -o ${WORK}/old.dx)
expect_content(${WORK}/old.dx "^OLD\n$" "dcs without --force")
file(WRITE ${WORK}/ions.pdb "OLD\n")
run(9 "ions.pdb: exists; add --force" ${DCS} ${dcs_args} -o ${WORK}/new.dx --place-ions 1 --ions-out ${WORK}/ions.pdb)
expect_content(${WORK}/ions.pdb "^OLD\n$" "dcs --ions-out without --force")
if(EXISTS ${WORK}/new.dx)
  string(APPEND failures "\n  new.dx was written although --ions-out was refused")
endif()
run(0 "" ${DCS} ${dcs_args} -o ${WORK}/old.dx --place-ions 1 --ions-out ${WORK}/ions.pdb --force)
expect_content(${WORK}/old.dx "object 1 class gridpositions" "dcs --force")
expect_content(${WORK}/ions.pdb "HETATM" "dcs --force ions")
run(2 "-o and --ions-out name the same file" ${DCS} ${dcs_args} -o ${WORK}/same.dx --place-ions 1 --ions-out ${WORK}/same.dx)
# The same file by two spellings (absolute -o, relative --ions-out from the same folder): refused before any work.
execute_process(COMMAND ${DCS} ${dcs_args} -o ${WORK}/twice.pdb --output-format cube --place-ions 1
                        --ions-out ./twice.pdb WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc ERROR_VARIABLE e)
if(NOT rc EQUAL 2 OR NOT e MATCHES "name the same file" OR EXISTS ${WORK}/twice.pdb)
  string(APPEND failures "\n  -o and --ions-out spelt differently: exit ${rc}, '${e}'")
endif()
# A dangling symbolic link as -o: refused before the structure is read (a malformed one is not reached), with what it
# is; the link stays as it was and nothing is made. Before: the map was computed, then "exists (made while this
# program ran)".
file(CREATE_LINK ${WORK}/nowhere.dx ${WORK}/dangling.dx SYMBOLIC)
run(9 "qmmm-dcs: error: .*dangling.dx: a symbolic link to '.*nowhere.dx', which does not exist"
    ${DCS} ${DATA}/dcs/bad_coord.pqr -s 1 -p 3 -q --backend cpu -o ${WORK}/dangling.dx)
if(NOT IS_SYMLINK ${WORK}/dangling.dx OR EXISTS ${WORK}/nowhere.dx)
  string(APPEND failures "\n  dangling -o: the link changed or its target was made")
endif()
expect_no_temporaries(${WORK} "dangling -o")
file(REMOVE ${WORK}/dangling.dx)
# 2. /dev/full: refused (a rename would replace the device), nothing made in /dev.
file(GLOB before LIST_DIRECTORIES false /dev/.full*)
run(9 "/dev/full: not a regular file" ${DCS} ${dcs_args} --output-format dx -o /dev/full)
run(9 "/dev/full: not a regular file" ${DCS} ${dcs_args} --output-format dx -o /dev/full --force)
file(GLOB after LIST_DIRECTORIES false /dev/.full*)
if(NOT "${before}" STREQUAL "${after}")
  string(APPEND failures "\n  /dev/full: files made in /dev: ${after}")
endif()
# 3. A write that fails (ulimit -f: the map is larger than one block) leaves the old file intact.
file(WRITE ${WORK}/old.dx "OLD\n")
run(9 "old.dx: write failed \\(File too large\\)" sh -c "ulimit -f 1
exec \"$0\" \"$@\"" ${DCS} ${dcs_args}
    -o ${WORK}/old.dx --force)
expect_content(${WORK}/old.dx "^OLD\n$" "dcs under ulimit -f")
expect_no_temporaries(${WORK} "dcs under ulimit -f")
# 4. SIGTERM while the map is computed (20000 atoms on 10^6 points: seconds): the temporary file goes, the old
# file stays, and the program ends by the signal (sh reports 128 + 15).
execute_process(COMMAND awk "BEGIN { for (i = 0; i < 20000; i++) printf \"ATOM  %5d  C   MOL     1    %8.3f%8.3f%8.3f  0.1000 1.5000\\n\", i % 99999 + 1, (i % 37) * 0.3, (i % 41) * 0.3, (i % 43) * 0.3 }"
  OUTPUT_FILE ${WORK}/many.pqr)
file(WRITE ${WORK}/sig.dx "OLD\n")
# (No ';' in the scripts: run() passes its arguments as a CMake list.)
run(0 "" sh -c "\"$0\" \"$1\" -o \"$2\" --force -q --backend cpu --origin 0 0 0 --counts 100 100 100 -s 0.1 &
  p=$!
  k=0
  while [ -z \"$(ls -A \"$3\" | grep '^\\.sig\\.dx\\.')\" ] && [ $k -lt 400 ]
  do
    sleep 0.05
    k=$((k+1))
  done
  kill -TERM $p
  wait $p
  echo \"status $?\"" ${DCS} ${WORK}/many.pqr ${WORK}/sig.dx ${WORK})
if(NOT out MATCHES "status 143")
  string(APPEND failures "\n  SIGTERM: '${out}', expected status 143 (ended by SIGTERM)")
endif()
expect_content(${WORK}/sig.dx "^OLD\n$" "dcs after SIGTERM")
expect_no_temporaries(${WORK} "dcs after SIGTERM")

set(rdf_args ${traj} --sel1 "name OW" --rmax 5 --backend cpu --no-progress)
# 5. qmmm-rdf: every output checked before the trajectory is read; -o is not written when --json or --png fails.
run(9 "qmmm-rdf: error: .*/proc/x/y.png.*cannot write into /proc/x" ${RDF} ${rdf_args} -o ${WORK}/r.txt
    --png /proc/x/y.png)
if(NOT out STREQUAL "")
  string(APPEND failures "\n  --png /proc/x/y.png: stdout is not empty (the table or a PNG was written)")
endif()
run(9 "no/such/dir/r.json: cannot write into" ${RDF} ${rdf_args} -o ${WORK}/r.txt
    --json ${WORK}/no/such/dir/r.json)
if(EXISTS ${WORK}/r.txt)
  string(APPEND failures "\n  -o r.txt was written although --json or --png failed")
endif()
run(9 "/dev/full: not a regular file" ${RDF} ${rdf_args} -q -o /dev/full --force)
run(2 "-o, --json and --png name the same file" ${RDF} ${rdf_args} -q -o ${WORK}/same.txt --json ${WORK}/same.txt)
if(EXISTS ${WORK}/same.dx OR EXISTS ${WORK}/same.txt)
  string(APPEND failures "\n  an output was written although two outputs named the same file")
endif()
# 6. Existing outputs kept without --force; a failed write keeps the old file.
file(WRITE ${WORK}/r.txt "OLD\n")
run(9 "r.txt: exists; add --force" ${RDF} ${rdf_args} -q -o ${WORK}/r.txt)
expect_content(${WORK}/r.txt "^OLD\n$" "rdf without --force")
run(9 "r.txt: write failed \\(File too large\\)" sh -c "ulimit -f 1
exec \"$0\" \"$@\"" ${RDF} ${rdf_args} -q
    -o ${WORK}/r.txt --force)
expect_content(${WORK}/r.txt "^OLD\n$" "rdf under ulimit -f")
run(0 "" ${RDF} ${rdf_args} -q -o ${WORK}/r.txt --json ${WORK}/r.json --force)
expect_content(${WORK}/r.txt "^# qmmm-rdf" "rdf --force")
expect_content(${WORK}/r.json "\"tool\": \"qmmm-rdf\"" "rdf --json")
# 7. --png through gnuplot (where installed): the PNG in the file, nothing binary on stdout, no data file left.
find_program(GNUPLOT gnuplot)
if(GNUPLOT)
  run(0 "" ${RDF} ${rdf_args} --png ${WORK}/g.png)
  string(ASCII 1 2 3 4 5 6 7 8 11 12 14 15 16 26 27 control)
  if(out MATCHES "PNG|IHDR|[${control}]")
    string(APPEND failures "\n  --png: binary data on stdout")
  endif()
  expect_content(${WORK}/g.png "PNG" "rdf --png")
endif()
expect_no_temporaries(${WORK} "qmmm-rdf")

if(failures)
  message(FATAL_ERROR "tool outputs:${failures}")
endif()
file(REMOVE_RECURSE ${WORK})
message("tool outputs: ${n} cases ok")
