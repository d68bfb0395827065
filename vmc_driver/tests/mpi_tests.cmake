# MPI tests of qmmm_vmc, label "mpi": same energies for 1, 2, 3 ranks (3 on 2 cores is
# oversubscribed: MPICH's hydra allows it), uneven shares (7 walkers), bitwise repeat, more ranks than
# walkers, a failing rank, several ranks sharing a GPU (label gpu), the device choice over a communicator.
# Set QMMM_MPIEXEC to use another launcher than ${MPIEXEC_EXECUTABLE} (e.g. hydra's mpiexec).
# Without MPI (no MPICH found) each test is registered as a skip that says so.
set(MPI_T ${CMAKE_CURRENT_LIST_DIR})
set(VMC_NO_MPI "no MPICH (mpicc.mpich, mpif90.mpich, mpiexec.mpich): apt-get install mpich libmpich-dev")
function(vmc_mpi_case name)
  cmake_parse_arguments(A "GPU" "IN;IN_FIRST;MODE;TOL" "RANKS;LABELS" ${ARGN})
  if(NOT QMMM_HAVE_MPI)
    qmmm_add_skip_test(${name} "${VMC_NO_MPI}" LABELS vmc mpi ${A_LABELS})
    return()
  endif()
  set(defs -DEXE=$<TARGET_FILE:qmmm_vmc> -DNOMPI=$<TARGET_FILE:qmmm_vmc_nompi> -DCHECK=$<TARGET_FILE:vmc_check>
    -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DIN=${MPI_T}/inputs/${A_IN} -DOUT=${VMC_OUT}/${name} -DMODE=${A_MODE})
  if(A_TOL)
    list(APPEND defs -DTOL=${A_TOL})
  endif()
  if(A_IN_FIRST)
    list(APPEND defs -DIN_FIRST=${MPI_T}/inputs/${A_IN_FIRST})
  endif()
  if(A_GPU)
    list(APPEND defs -DSKIP_IF_NO_GPU=1)
  endif()
  string(REPLACE ";" "|" ranks "${A_RANKS}")
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} ${defs} "-DRANKS=${ranks}" -P ${MPI_T}/mpi_check.cmake
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(${name} PROPERTIES LABELS "vmc;mpi;${A_LABELS}" TIMEOUT 300 PROCESSORS 2
    SKIP_REGULAR_EXPRESSION "SKIPPED: no usable GPU")
endfunction()

# Without MPI, 1, 2 (4+3 walkers) and 3 ranks (3+2+2): the same configurations and, with the CPU field (its values
# do not depend on the batch) and block sums added in walker order on rank 0, bitwise the same energies, as
# docs/user-guide/mpi-and-mps.md promises.
vmc_mpi_case(vmc_mpi_ranks IN mpi_7walkers.nml RANKS 0 1 2 3 MODE same)
vmc_mpi_case(vmc_mpi_nompi_same IN mpi_7walkers.nml RANKS 0 1 MODE same)      # one rank: bitwise both builds
vmc_mpi_case(vmc_mpi_repeat IN mpi_7walkers.nml RANKS 3 3 MODE same)
# Key forces: each rank's accumulator holds its walkers' sums, added on rank 0 in rank order: the same forces as one
# process to rounding (not bitwise), bitwise on a repeat.
vmc_mpi_case(vmc_mpi_forces IN forces_small.nml RANKS 0 1 2 3 MODE forces_close TOL 1e-12)
vmc_mpi_case(vmc_mpi_forces_repeat IN forces_small.nml RANKS 2 2 MODE forces_close)   # no TOL: bitwise
# Key pol_file: the block field at the sites meets on rank 0, which solves and broadcasts the dipoles: the same
# dipoles and energies as one rank (the ranks' sums add in another order: to rounding), bitwise on a repeat.
vmc_mpi_case(vmc_mpi_pol IN pol_small.nml RANKS 0 1 2 3 MODE pol_close TOL 1e-12)
vmc_mpi_case(vmc_mpi_pol_repeat IN pol_small.nml RANKS 2 2 MODE pol_close)
# ... with forces: the field-gradient sums meet on rank 0 with the field's (the dipoles' force term), likewise.
vmc_mpi_case(vmc_mpi_pol_forces IN pol_small_forces.nml RANKS 0 1 2 3 MODE forces_close TOL 1e-12)
# balance_walkers: shares by measured speed (timing-dependent), walkers moved between ranks after the
# equilibration: the results must not change by a bit (CPU field: values independent of the batch).
vmc_mpi_case(vmc_mpi_balance IN mpi_7walkers_balance.nml IN_FIRST mpi_7walkers.nml RANKS 0 2 3 MODE same)          # same rank count: bitwise
# Several ranks sharing one GPU (device = local rank mod GPUs): CPU double reference vs CUDA double.
vmc_mpi_case(vmc_mpi_gpu_shared IN mpi_gpu_cuda.nml IN_FIRST mpi_gpu_cpu.nml RANKS 0 1 3 MODE close TOL 1e-10
  GPU LABELS gpu)

function(vmc_mpi_fail name regex)
  if(NOT QMMM_HAVE_MPI)
    qmmm_add_skip_test(${name} "${VMC_NO_MPI}" LABELS vmc mpi)
    return()
  endif()
  string(REPLACE ";" "|" cmd "${ARGN}")
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} "-DCMD=${cmd}" -DOUT=${VMC_OUT}/${name}.json "-DREGEX=${regex}"
    -P ${MPI_T}/mpi_fail.cmake WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(${name} PROPERTIES LABELS "vmc;mpi" TIMEOUT 60 PROCESSORS 2)
endfunction()
vmc_mpi_fail(vmc_mpi_more_ranks_than_walkers "key 'n_walkers' = 2 is less than the 3 MPI ranks"
  ${MPIEXEC_EXECUTABLE} -n 3 $<TARGET_FILE:qmmm_vmc> ${MPI_T}/inputs/mpi_2walkers.nml ${VMC_OUT}/vmc_mpi_more_ranks_than_walkers.json)
# Rank 2 alone meets a missing cube file (MPMD launch: its own input) while ranks 0 and 1 go on into the
# first collective: the job must stop with rank 2's message (MPI_Abort), not hang (TIMEOUT).
vmc_mpi_fail(vmc_mpi_failing_rank "rank 2 of 3 \\([^)]*\\): .*does_not_exist.cube.gz: QMMM_ERR_FILE_OPEN"
  ${MPIEXEC_EXECUTABLE} -n 2 $<TARGET_FILE:qmmm_vmc> ${MPI_T}/inputs/mpi_7walkers.nml ${VMC_OUT}/vmc_mpi_failing_rank.json
  : -n 1 $<TARGET_FILE:qmmm_vmc> ${MPI_T}/inputs/mpi_bad_cube.nml ${VMC_OUT}/vmc_mpi_failing_rank.json)
# Rank 1 alone is told to use a GPU it does not have (QMMM_DEVICE=99 in its environment only: no node
# has 100 GPUs, so this fails alike on CPU and GPU machines): the device error of one rank stops the job.
vmc_mpi_fail(vmc_mpi_device_error_one_rank "rank 1 of 3 \\([^)]*\\): .*QMMM_DEVICE = '99' names device 99"
  ${MPIEXEC_EXECUTABLE} -n 1 $<TARGET_FILE:qmmm_vmc> ${MPI_T}/inputs/mpi_7walkers.nml ${VMC_OUT}/vmc_mpi_device_error_one_rank.json
  : -n 1 -env QMMM_DEVICE 99 $<TARGET_FILE:qmmm_vmc> ${MPI_T}/inputs/mpi_7walkers.nml ${VMC_OUT}/vmc_mpi_device_error_one_rank.json
  : -n 1 $<TARGET_FILE:qmmm_vmc> ${MPI_T}/inputs/mpi_7walkers.nml ${VMC_OUT}/vmc_mpi_device_error_one_rank.json)

# The device choice over a communicator (test_mpi_select) is registered with the mpi family's tests (tests/mpi).


# The same sharing through CUDA MPS: a private daemon started and stopped by the test (root).
if(NOT QMMM_HAVE_MPI)
  qmmm_add_skip_test(vmc_mpi_gpu_mps "${VMC_NO_MPI}" LABELS vmc mpi gpu)
  return()
endif()
add_test(NAME vmc_mpi_gpu_mps COMMAND bash ${MPI_T}/mps_check.sh $<TARGET_FILE:qmmm_vmc_nompi> $<TARGET_FILE:qmmm_vmc>
  $<TARGET_FILE:vmc_check> ${MPIEXEC_EXECUTABLE} ${MPI_T}/inputs/mpi_gpu_cpu.nml ${MPI_T}/inputs/mpi_gpu_cuda.nml
  ${VMC_OUT}/vmc_mpi_gpu_mps 3 WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(vmc_mpi_gpu_mps PROPERTIES LABELS "vmc;mpi;gpu" TIMEOUT 300 PROCESSORS 2
  SKIP_REGULAR_EXPRESSION "SKIPPED: " FAIL_REGULAR_EXPRESSION "FAILED: ")
