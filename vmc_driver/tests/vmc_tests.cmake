# ctest tests of qmmm_vmc. References: psi4's reference.json in data/ (HF energies, the
# nucleus-environment energy), finite differences (vmc_fd_check), the run itself (same seed, CPU vs CUDA).
set(VMC_T ${CMAKE_CURRENT_LIST_DIR})
set(VMC_SRC ${CMAKE_CURRENT_SOURCE_DIR}/vmc_rng.f90 ${CMAKE_CURRENT_SOURCE_DIR}/vmc_orbitals.f90
  ${CMAKE_CURRENT_SOURCE_DIR}/vmc_cusp.f90 ${CMAKE_CURRENT_SOURCE_DIR}/vmc_wavefunction.f90)
add_executable(vmc_fd_check ${VMC_T}/vmc_fd_check.f90 ${VMC_SRC})
target_link_libraries(vmc_fd_check PRIVATE qmmm_vmc_readers)
set_target_properties(vmc_fd_check PROPERTIES Fortran_MODULE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/modules_fd)
target_compile_options(vmc_fd_check PRIVATE $<$<Fortran_COMPILER_ID:GNU>:-fwrapv -std=gnu>)
add_executable(vmc_check ${VMC_T}/vmc_check.f90)
set_target_properties(vmc_check PROPERTIES Fortran_MODULE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/modules_check)

# hydrogen (one electron, one atom): the quadrature energies are asserted too, the uncorrected one against
# psi4's HF energy
file(READ ${PROJECT_SOURCE_DIR}/data/hydrogen/reference.json h_ref)
string(JSON h_energy GET "${h_ref}" total_energy)
foreach(sys water/water.molden glycine_trimer/frag1_embedded.molden hydrogen/hydrogen.molden)
  get_filename_component(n ${sys} NAME_WE)
  set(extra)
  if(n STREQUAL "hydrogen")
    set(extra ${h_energy})
  endif()
  add_test(NAME vmc_fd_${n} COMMAND vmc_fd_check ${PROJECT_SOURCE_DIR}/data/${sys} ${extra})
  set_tests_properties(vmc_fd_${n} PROPERTIES LABELS "vmc;quick")
endforeach()

# The JSON writer's arrays of reals against the text written number by number (runs of 64, NaN and Inf).
add_executable(vmc_json_check ${VMC_T}/vmc_json_check.f90 ${CMAKE_CURRENT_SOURCE_DIR}/vmc_json.f90)
target_link_libraries(vmc_json_check PRIVATE qmmm_vmc_readers)
set_target_properties(vmc_json_check PROPERTIES Fortran_MODULE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/modules_json)
qmmm_add_run_test(vmc_json_arrays EXPECT "vmc_json_check: all passed" LABELS vmc quick
  COMMAND $<TARGET_FILE:vmc_json_check>)

# The Molden conventions against psi4: C^T S C = 1 with the analytic AO overlap (cartesian 6-31G* for
# glycine, spherical cc-pVDZ/cc-pVTZ for water, the dimer and hydrogen), plus controls that must fail.
add_executable(vmc_overlap_check ${VMC_T}/vmc_overlap_check.f90)
target_link_libraries(vmc_overlap_check PRIVATE qmmm_vmc_readers)
set_target_properties(vmc_overlap_check PROPERTIES Fortran_MODULE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/modules_ovl)
foreach(sys water/water.molden glycine_trimer/frag1_embedded.molden hydrogen/hydrogen.molden
    water_dimer/water1_embedded.molden)
  get_filename_component(n ${sys} NAME_WE)
  qmmm_add_run_test(vmc_overlap_${n} EXPECT "vmc_overlap_check: all passed" LABELS vmc quick
    COMMAND $<TARGET_FILE:vmc_overlap_check> ${PROJECT_SOURCE_DIR}/data/${sys} 1e-10)
endforeach()

set(VMC_OUT ${CMAKE_CURRENT_BINARY_DIR}/test_results)
file(MAKE_DIRECTORY ${VMC_OUT})
# vmc_case(NAME IN1 [IN2] ARGS mode args...) -- runs in the repository root (inputs use data/ paths)
# LAUNCH: a launcher before the program (e.g. mpiexec -n 2; the test then asks ctest for 2 processors)
function(vmc_case name)
  cmake_parse_arguments(A "GPU" "IN1;IN2;EXPECT_CHECK_FAIL" "ARGS;LABELS;LAUNCH" ${ARGN})
  string(REPLACE ";" "|" launch "${A_LAUNCH}")
  set(defs -DEXE=$<TARGET_FILE:qmmm_vmc> -DCHECK=$<TARGET_FILE:vmc_check> "-DLAUNCH=${launch}"
    -DIN1=${VMC_T}/inputs/${A_IN1} -DOUT1=${VMC_OUT}/${name}_1.json)
  if(A_IN2)
    list(APPEND defs -DIN2=${VMC_T}/inputs/${A_IN2} -DOUT2=${VMC_OUT}/${name}_2.json)
  endif()
  if(A_GPU)
    list(APPEND defs -DSKIP_IF_NO_GPU=1)
  endif()
  if(A_EXPECT_CHECK_FAIL)
    list(APPEND defs "-DEXPECT_CHECK_FAIL=${A_EXPECT_CHECK_FAIL}")
  endif()
  string(REPLACE ";" "|" args "${A_ARGS}")
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} ${defs} "-DARGS=${args}" -P ${VMC_T}/run_check.cmake
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(${name} PROPERTIES LABELS "vmc;${A_LABELS}" SKIP_REGULAR_EXPRESSION "SKIPPED: no usable GPU")
  if(A_LAUNCH)
    set_tests_properties(${name} PROPERTIES PROCESSORS 2)
  endif()
endfunction()

set(REF ${PROJECT_SOURCE_DIR}/data)
set(launch_2)
if(QMMM_HAVE_MPI)
  set(launch_2 ${MPIEXEC_EXECUTABLE} -n 2)
endif()
# The cusp-corrected MOs leave the Gaussian basis: their determinant's energy is psi4's HF energy plus an offset.
# The tests expect that offset with its error bar, as measured by long runs of the current wavefunction at the
# default radii (bench/vmc/cusp_bias.sh; the result, with its date, commit and host, is the JSON read here).
set(CUSP_BIAS_JSON ${PROJECT_SOURCE_DIR}/data/cusp_bias.json)
file(READ ${CUSP_BIAS_JSON} cusp_json)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CUSP_BIAS_JSON})
foreach(sys water glycine)
  string(TOUPPER ${sys} SYS)
  string(JSON ${SYS}_CUSP_BIAS GET "${cusp_json}" systems ${sys} offset)
  string(JSON ${SYS}_CUSP_BIAS_ERR GET "${cusp_json}" systems ${sys} offset_error)
endforeach()
# The test asks for an error bar <= 2 mHa here (vmc_check ref: |E - E_psi4 - bias| <= 3 combined sigma,
# sigma <= 0.002, reblocking converged); 5.84e7 walker-sweeps on 2 MPI ranks (sigma 1.85 mHa; 1.67 mHa at 7.2e7).
vmc_case(vmc_water_hf IN1 water_hf.nml LAUNCH ${launch_2}
  ARGS ref OUT1 ${REF}/water/reference.json total_energy 0.002 ${WATER_CUSP_BIAS} ${WATER_CUSP_BIAS_ERR})
# hydrogen: the correction's bias is known exactly (radial quadrature, vmc_fd_hydrogen asserts it)
vmc_case(vmc_hydrogen IN1 hydrogen.nml ARGS ref OUT1 ${REF}/hydrogen/reference.json total_energy 0.0002 -6.45e-5 0)
# The embedding where it shows: the electrons' energy in the environment against psi4's to <= 0.2 mHa, the
# nuclei's exactly; the embedded total (environment effect -10.9 mHa) with an error bar <= 2.5 mHa. Water 1's
# embedded orbitals are water's up to the polarisation: the same cusp bias is expected.
vmc_case(vmc_water_dimer_environment IN1 water_dimer_env.nml LAUNCH ${launch_2}
  ARGS part OUT1 electron_environment ${REF}/water_dimer/reference.json electron_environment_energy 0.0002
  && exact OUT1 parts.nucleus_environment ${REF}/water_dimer/reference.json nucleus_environment_energy 1e-10
  && parts OUT1 1e-9)
# Forces on MM charges against psi4 (data/water_mm): the electrons' field at the 300 sites, every component within
# 4.5 error bars and at most 9 of 900 beyond 3 (0.27 % expected: 2.4; the sites' fields are strongly correlated, so
# such counts come in lumps), each error bar <= 1 % of the largest field, the summed force within 3 error bars; the
# exact parts to 1e-10. On 2 MPI ranks: the ranks' accumulators meet on rank 0.
vmc_case(vmc_water_mm_forces IN1 water_mm_forces.nml LAUNCH ${launch_2}
  ARGS forces OUT1 ${REF}/water_mm/reference.json 4.5 9 0.01)
# The control: the unpolarised (gas-phase) orbitals must fail it (146 of 900 components beyond 3 error bars).
vmc_case(vmc_water_mm_forces_unpolarised IN1 water_mm_forces_unpolarised.nml LAUNCH ${launch_2}
  ARGS forces OUT1 ${REF}/water_mm/reference.json 4.5 9 0.01
  EXPECT_CHECK_FAIL "FAILED: (at most 9 components|every component within)")
# Polarizable MM (key pol_file) against the independent reference of data/water_pol: the fixed HF density's dipoles
# from psi4's field at the 300 sites, solved densely with numpy. The dipoles solved from the run's field, every
# component within 4.5 error bars and at most 9 of 900 beyond 3 (as the forces above: they come in lumps); E_pol of
# the fixed and of the run's dipoles and the fixed dipoles' energy with the QM charges within 3 error bars; the
# library's permanent field at the sites against the reference's own sums to 1e-10; the loop converged. On 2 ranks.
# Key forces: the electrons' field gradient at the sites against psi4's (central differences of GRID_FIELD, less the
# density's contact term that point electrons do not sample: field_gradient.json), every component within 4.5 error
# bars and at most 18 of 1800 beyond 3, the QM nuclei's to 1e-10, and the electrons' (mu . grad) E with the run's
# dipoles against the same dipoles times psi4's gradient (at most 18 of 900 beyond 3).
vmc_case(vmc_water_pol IN1 water_pol.nml LAUNCH ${launch_2} ARGS pol OUT1 ${REF}/water_pol/reference.json 4.5 9
  && pol_grad OUT1 ${REF}/water_pol/field_gradient.json 4.5 18)
# The loop on an analytic case (pol_two_sites.nml): one polarizable site in a charge's field, far from a hydrogen
# atom: E_pol = -1/2 alpha q^2 / d^4, the nucleus' energy with the charge and the induced dipole, the electrostatic
# part zero within its error bar while the dipole's energy with the electron (-2.5e-4) is in the local energy,
# convergence at the second update, and (key forces) the force on the nucleus with the induced dipole's field and
# the sites' force from the nucleus with the dipole's (mu . grad) E, q/100^2 - 2 mu/106^3 (Newton: the two balance);
# the electrons' (mu . grad) E on the dipole cancels the nucleus' (the atom is neutral and spherical) within 4 error
# bars while it is ~800 of them; pol_mode = 'first' stops after one.
vmc_case(vmc_pol_two_sites IN1 pol_two_sites.nml LABELS quick
  ARGS value OUT1 pol.e_pol_mm -0.038580246913580245 2e-6
  && value OUT1 parts.nucleus_environment 0.009752778766662711 1e-8
  && value OUT1 pol.e_electrostatic 0 3e-5 && value OUT1 pol.updates 2 0 && parts OUT1 1e-9
  && value OUT1 forces.qm_nuclei_force -9.533544842759833e-05 2e-10
  && value OUT1 forces.sum_site_force_qm_nuclei 9.533544842759833e-05 2e-10 && pol_forces OUT1 4 100)
vmc_case(vmc_pol_two_sites_first IN1 pol_two_sites_first.nml LABELS quick
  ARGS value OUT1 pol.e_pol_mm -0.038580246913580245 2e-6
  && value OUT1 parts.nucleus_environment 0.009752778766662711 1e-8 && value OUT1 pol.updates 1 0)
# The dipoles and energies of the loop on 1 and 3 threads: bitwise the same.
vmc_case(vmc_pol_threads IN1 pol_small.nml IN2 pol_small_3threads.nml ARGS pol_close OUT1 OUT2 0 LABELS quick)
# Key pol_file with forces (the dipoles' (mu . grad) E from the accumulator's field-gradient sums): bitwise the
# same on 1 and 3 threads.
vmc_case(vmc_pol_forces_threads IN1 pol_small_forces.nml IN2 pol_small_forces_3threads.nml ARGS forces_close OUT1 OUT2 0
  LABELS quick)
# ... and with the per-step field calls ('batched'), whose kept values are taken again after each dipole update.
vmc_case(vmc_pol_field_calls IN1 pol_small.nml IN2 pol_small_batched.nml ARGS pol_close OUT1 OUT2 0 LABELS quick)
# The polarizable driver's cost benchmark (bench/pol/vmc_pol_cost.sh) at its smallest: it runs and writes its table.
add_test(NAME vmc_pol_cost_script COMMAND bash ${PROJECT_SOURCE_DIR}/bench/pol/vmc_pol_cost.sh ${CMAKE_BINARY_DIR}
  ${CMAKE_CURRENT_BINARY_DIR}/vmc_pol_cost cpu 100 8 2 WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(vmc_pol_cost_script PROPERTIES LABELS "cpu;quick"
  PASS_REGULAR_EXPRESSION "[|] scf [|] [0-9]+ [|] [0-9.]+ [|] [0-9.]+ [|] [0-9.]+ [|] [0-9.]+ [|]")
vmc_case(vmc_water_dimer_embedded IN1 water_dimer_hf.nml LAUNCH ${launch_2}
  ARGS ref OUT1 ${REF}/water_dimer/reference.json total_energy 0.0025 ${WATER_CUSP_BIAS} ${WATER_CUSP_BIAS_ERR}
  && parts OUT1 1e-9 && exact OUT1 parts.nucleus_environment ${REF}/water_dimer/reference.json
     nucleus_environment_energy 1e-10)
# Glycine fragment 1, HF/6-31G* with cartesian d functions, against psi4 without the environment terms, plus
# glycine's own measured offset (N, C, 5 H: not water's). Error bar <= 10 mHa (8.6 in a CI run).
vmc_case(vmc_glycine_hf IN1 glycine_hf.nml LAUNCH ${launch_2}
  ARGS ref OUT1 ${REF}/glycine_trimer/reference.json energy_without_environment_terms 0.010 ${GLYCINE_CUSP_BIAS}
  ${GLYCINE_CUSP_BIAS_ERR})
vmc_case(vmc_glycine_environment IN1 glycine_env.nml
  ARGS exact OUT1 parts.nucleus_environment ${REF}/glycine_trimer/reference.json nucleus_environment_energy 1e-9
  && parts OUT1 1e-9)
# An error bar from too few blocks must not pass: a run far shorter than its correlation time.
vmc_case(vmc_reblock_fallback IN1 reblock_short.nml ARGS ref OUT1 ${REF}/hydrogen/reference.json total_energy 1.0
  EXPECT_CHECK_FAIL "FAILED: (reblocking criterion met|at least 8 blocks)")
vmc_case(vmc_jastrow_lowers IN1 water_jastrow.nml IN2 water_hf_short.nml ARGS lower OUT1 OUT2 2)
vmc_case(vmc_same_seed IN1 small.nml IN2 small.nml ARGS same OUT1 OUT2)
# Key forces: the same configurations on 1 and 3 threads give bitwise the same forces and error bars.
vmc_case(vmc_forces_threads IN1 forces_small.nml IN2 forces_small_3threads.nml ARGS forces_close OUT1 OUT2 0
  LABELS quick)
# Forces change no energy: the run with them is bitwise the run without.
vmc_case(vmc_forces_energy_same IN1 forces_small.nml IN2 forces_small_off.nml ARGS same OUT1 OUT2 LABELS quick)
# ... and the per-step field calls ('batched') the same as 'measured' (the accumulator is fed at the measurements).
vmc_case(vmc_forces_field_calls IN1 forces_small.nml IN2 forces_small_batched.nml ARGS forces_close OUT1 OUT2
  LABELS quick)
# The field only where it is measured ('measured', one call per measurement) against the per-step modes:
# the same values summed in the same order, so on the CPU field bitwise the same results.
vmc_case(vmc_field_measured_batched IN1 field_batched.nml IN2 field_measured.nml ARGS same OUT1 OUT2)
vmc_case(vmc_field_measured_per_walker IN1 field_per_walker.nml IN2 field_measured.nml ARGS same OUT1 OUT2)
# The range-split field (tolerance 1e-8) against the direct one, same seed: the same configurations and
# energies within 1e-6 hartree; the split run reports its field (field_split.*) and evaluated every point through
# it (256 walkers x 10 electrons x (4 x 10 sweeps + the first evaluation) = 104,960), its electron-environment
# energy differs from the direct one (a split handle silently summing directly would give the same bits), and the
# nuclei's constant is the direct sum's in both (bitwise).
vmc_case(vmc_field_split_vs_direct IN1 field_method_split.nml IN2 field_method_direct.nml
  ARGS close OUT1 OUT2 1e-6 && is OUT1 field_method split && value OUT1 field_split.n_points 104960 0
  && differ OUT1 OUT2 parts.electron_environment
  && exact OUT1 parts.nucleus_environment OUT2 parts.nucleus_environment 0)
# Walkers on threads: 1, 2, 3 threads (OMP_NUM_THREADS, and the key n_threads = 3 overriding it), per-step
# field calls on 2 threads, and (with MPI) 2 ranks x 2 threads: all bitwise the same.
set(thr_runs "1:${VMC_T}/inputs/threads_env.nml:0|2:${VMC_T}/inputs/threads_env.nml:0|3:${VMC_T}/inputs/threads_env.nml:0|1:${VMC_T}/inputs/threads_key.nml:0|2:${VMC_T}/inputs/threads_batched.nml:0")
set(thr_nompi $<TARGET_FILE:qmmm_vmc>)
if(QMMM_HAVE_MPI)
  set(thr_runs "${thr_runs}|2:${VMC_T}/inputs/threads_env.nml:2")
  set(thr_nompi $<TARGET_FILE:qmmm_vmc_nompi>)
endif()
add_test(NAME vmc_threads COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:qmmm_vmc> -DNOMPI=${thr_nompi}
  -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DCHECK=$<TARGET_FILE:vmc_check> -DOUT=${VMC_OUT}/vmc_threads "-DRUNS=${thr_runs}"
  -P ${VMC_T}/threads_check.cmake WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(vmc_threads PROPERTIES LABELS "vmc" PROCESSORS 2 TIMEOUT 300)
# CUDA first: without a GPU the test is skipped before the CPU reference runs.
# Each asserts that the CUDA run used CUDA (the JSON's backend), at the precision asked; single and mixed must
# differ from the CPU's double run (the same numbers would mean the double path ran).
vmc_case(vmc_gpu_double IN1 gpu_cuda_double.nml IN2 gpu_cpu_double.nml GPU LABELS gpu
  ARGS close OUT1 OUT2 1e-10 && is OUT1 backend cuda && is OUT1 precision double && is OUT2 backend cpu)
vmc_case(vmc_gpu_single IN1 gpu_cuda_single.nml IN2 gpu_cpu_double.nml GPU LABELS gpu
  ARGS close OUT1 OUT2 1e-5 && is OUT1 backend cuda && is OUT1 precision single
  && differ OUT1 OUT2 parts.electron_environment)
vmc_case(vmc_gpu_mixed IN1 gpu_cuda_mixed.nml IN2 gpu_cpu_double.nml GPU LABELS gpu
  ARGS close OUT1 OUT2 1e-8 && is OUT1 backend cuda && is OUT1 precision mixed
  && differ OUT1 OUT2 parts.electron_environment)
vmc_case(vmc_gpu_measured IN1 gpu_cuda_measured.nml IN2 gpu_cpu_double.nml GPU LABELS gpu
  ARGS close OUT1 OUT2 1e-10 && is OUT1 backend cuda && is OUT1 field_calls measured)
# Key forces on the CUDA field (the accumulator on the device): MM charges ('measured', asynchronous) and cube cells
# ('batched', asynchronous per step) against CPU double, within 1e-10 of the largest force.
vmc_case(vmc_gpu_forces IN1 forces_small_cuda.nml IN2 forces_small.nml GPU LABELS gpu
  ARGS forces_close OUT1 OUT2 1e-10 && is OUT1 backend cuda)
vmc_case(vmc_gpu_forces_cubes IN1 forces_cubes_cuda.nml IN2 forces_cubes_cpu.nml GPU LABELS gpu
  ARGS forces_close OUT1 OUT2 1e-10 && is OUT1 backend cuda)
# Key pol_file on the CUDA field against the CPU: the dipoles and energies of the loop within 1e-10.
vmc_case(vmc_gpu_pol IN1 pol_small_cuda.nml IN2 pol_small.nml GPU LABELS gpu
  ARGS pol_close OUT1 OUT2 1e-10 && is OUT1 backend cuda)
# ... with forces: the sites' forces with the dipoles' term (the field-gradient sums on the device) within 1e-10.
vmc_case(vmc_gpu_pol_forces IN1 pol_small_forces_cuda.nml IN2 pol_small_forces.nml GPU LABELS gpu
  ARGS forces_close OUT1 OUT2 1e-10 && pol_close OUT1 OUT2 1e-10 && is OUT1 backend cuda)

# bad inputs: exit status 2, a message naming the key or file:line, no result file
# [LIMIT_AS bytes]: run under that address-space limit (prlimit; skipped without it); [MAX_SECONDS s]: refused
# within that time (expect_fail.cmake); [RESULT path]: the second argument (default: a result file under
# test_results); [NO_RESULT_ARG]: none (the input's output_json); [FORBID files...]: must not exist after the
# run (a temporary file left behind); [ENV var=value...]: the run's environment
find_program(VMC_PRLIMIT prlimit)
function(vmc_bad name input regex)
  cmake_parse_arguments(A "NO_RESULT_ARG" "LIMIT_AS;MAX_SECONDS;RESULT" "FORBID;ENV" ${ARGN})
  set(defs)
  if(A_RESULT)
    list(APPEND defs -DRESULT=${A_RESULT})
  endif()
  if(A_NO_RESULT_ARG)
    list(APPEND defs -DNO_RESULT_ARG=1)
  endif()
  if(A_FORBID)
    string(REPLACE ";" "|" forbid "${A_FORBID}")
    list(APPEND defs "-DFORBID=${forbid}")
  endif()
  if(A_LIMIT_AS)
    if(NOT VMC_PRLIMIT)
      qmmm_add_skip_test(vmc_bad_${name} "no prlimit (util-linux) to run it under an address-space limit"
        LABELS vmc quick)
      return()
    endif()
    list(APPEND defs -DPRLIMIT=${VMC_PRLIMIT} -DLIMIT_AS=${A_LIMIT_AS})
  endif()
  if(A_MAX_SECONDS)
    list(APPEND defs -DMAX_SECONDS=${A_MAX_SECONDS})
  endif()
  add_test(NAME vmc_bad_${name} COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:qmmm_vmc>
    -DINPUT=${VMC_T}/inputs/${input} -DOUT=${VMC_OUT}/bad_${name}.json "-DREGEX=${regex}" ${defs}
    -P ${VMC_T}/expect_fail.cmake WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(vmc_bad_${name} PROPERTIES LABELS "vmc;quick")
  if(A_ENV)
    set_tests_properties(vmc_bad_${name} PROPERTIES ENVIRONMENT "${A_ENV}")
  endif()
endfunction()
vmc_bad(unknown_key bad_unknown_key.nml "bad_unknown_key.nml:4: unknown key 'n_walker'")
vmc_bad(zero_walkers bad_zero_walkers.nml "bad_zero_walkers.nml:3: key 'n_walkers' = 0 must be in \\[1, 10000000\\]")
vmc_bad(energy_every bad_energy_every.nml "key 'energy_every' must divide steps_per_block \\(10\\)")
vmc_bad(electrons bad_electrons.nml "key 'n_electrons' = 9 but .*water.molden occupies 5 alpha \\+ 5 beta")
vmc_bad(missing_molden bad_missing_molden.nml "does_not_exist.molden: cannot open Molden file")
vmc_bad(malformed_molden bad_malformed_molden.nml "malformed.molden:15: expected \"exponent coefficient\"")
vmc_bad(backend bad_backend.nml "key 'backend' must be 'auto', 'cpu' or 'cuda'")
vmc_bad(no_input bad_does_not_exist.nml "cannot open input")
# Each of these says where and what is wrong (gfortran's namelist read alone says "End of file" or nothing).
vmc_bad(not_a_number bad_not_a_number.nml "bad_not_a_number.nml:3: key 'n_walkers' = abc is not an integer")
vmc_bad(group_name bad_group_name.nml "bad_group_name.nml: no &vmc namelist group \\(found '&vmcc' at line 1\\)")
vmc_bad(truncated bad_truncated.nml "bad_truncated.nml:3: the &vmc group \\(line 1\\) has no closing '/'")
# Text after the group's '/' (a namelist read stops there: even n_walkers = -5 went unread), a second group.
vmc_bad(after_group bad_after_group.nml
  "bad_after_group.nml:6: 'n_walkers = -5' after the end of the &vmc group \\(line 1\\): only comments")
vmc_bad(second_group bad_second_group.nml
  "bad_second_group.nml:6: a second &vmc group \\(the first is at line 1\\): one group per file")
# The result path is checked before the run (before: the error came after the whole run and left its temporary
# file): a folder (as the second argument, and output_json = '.' in the input, whose temporary file was ..tmp), a
# path in a missing folder.
vmc_bad(output_folder tiny_run.nml "the result file '.*/test_results' \\(second argument\\) is a folder"
  RESULT ${VMC_OUT} FORBID ${VMC_OUT}.tmp)
vmc_bad(output_dot bad_output_dot.nml "bad_output_dot.nml:3: key 'output_json' = '\\.' is a folder"
  NO_RESULT_ARG FORBID ${PROJECT_SOURCE_DIR}/..tmp)
vmc_bad(output_missing_folder bad_output_missing_folder.nml
  "bad_output_missing_folder.nml:3: key 'output_json' = 'no_such_folder/result.json': cannot create a file in its folder"
  NO_RESULT_ARG FORBID ${PROJECT_SOURCE_DIR}/no_such_folder)
vmc_bad(nan_real bad_nan_real.nml "bad_nan_real.nml:3: key 'b_ee' = NaN is not a finite number")
# A repeat count as a logical's value is refused before the read (libgfortran leaked its line buffer on "2*").
vmc_bad(logical_repeat bad_logical_repeat.nml "bad_logical_repeat.nml:3: key 'jastrow' = 2\\* is not a logical")
vmc_bad(inf_real bad_inf_real.nml "bad_inf_real.nml:3: key 'move_length' = -Inf is not a finite number")
vmc_bad(int_range bad_int_range.nml "bad_int_range.nml:3: key 'n_walkers' = 3000000000 is beyond the range of a 32-bit")
vmc_bad(two_values bad_two_values.nml "bad_two_values.nml:3: key 'n_walkers' takes one value, not '5 6'")
# Null items (commas) beyond any fixed share of the value's length: the trailing ones change nothing, one more
# value after them is a second value.
vmc_bad(null_items bad_null_items.nml "bad_null_items.nml:4: key 'seed' takes one value, not '7,,,")
vmc_bad(sweeps bad_sweeps.nml "bad_sweeps.nml:3: key 'n_blocks' x steps_per_block \\+ n_equil = 10000000100 sweeps")
vmc_bad(threads bad_threads.nml "bad_threads.nml:3: key 'n_threads' = 5000 must be in \\[0, 1024\\]")
# The key's cap holds for OMP_NUM_THREADS too (before: 100,000 crashed libgomp, 50,000 exited, 30,000 started
# 30,000 threads), refused before any parallel region.
vmc_bad(omp_num_threads tiny_run.nml
  "OMP_NUM_THREADS asks for 100000 threads, more than the 1024 that qmmm_vmc runs \\(the cap of key 'n_threads'"
  ENV OMP_NUM_THREADS=100000)
vmc_bad(omp_num_threads_1025 tiny_run.nml "OMP_NUM_THREADS asks for 1025 threads, more than the 1024"
  ENV OMP_NUM_THREADS=1025)
vmc_bad(field_method bad_field_method.nml "bad_field_method.nml:3: key 'field_method' must be 'direct' or 'split'")
vmc_bad(field_tolerance bad_field_tolerance.nml
  "bad_field_tolerance.nml:3: key 'field_tolerance' = 0.0+ must be in \\[1.0E-11, 1.0E-03\\]")
vmc_bad(field_tolerance_nan bad_field_tolerance_nan.nml
  "bad_field_tolerance_nan.nml:3: key 'field_tolerance' = NaN is not a finite number")
vmc_bad(field_split_single bad_field_split_single.nml
  "bad_field_split_single.nml:4: key 'field_method' = 'split' needs precision = 'double' or 'mixed' \\(got 'single'\\)")
vmc_bad(mm_charges_and_cubes bad_mm_charges_and_cubes.nml
  "bad_mm_charges_and_cubes.nml:4: key 'mm_charges' and key 'cubes' cannot both be given")
vmc_bad(forces_no_environment bad_forces_no_environment.nml
  "bad_forces_no_environment.nml:3: key 'forces' needs an environment")
vmc_bad(pol_with_charges bad_pol_with_charges.nml
  "bad_pol_with_charges.nml:4: key 'pol_file' cannot be given with key 'cubes' or 'mm_charges'")
vmc_bad(pol_mode_alone bad_pol_mode_alone.nml "bad_pol_mode_alone.nml:4: key 'pol_mode' applies to pol_file only")
vmc_bad(pol_file_missing bad_pol_file_missing.nml "no_such.pot.*key 'pol_file'")
vmc_bad(pol_sweeps bad_pol_sweeps.nml "key 'n_blocks' x steps_per_block \\+ n_equil \\+ the polarizable loop's sweeps")
vmc_bad(forces_every bad_forces_every.nml
  "bad_forces_every.nml:4: key 'forces_every' must divide steps_per_block / energy_every \\(10 local energies")
vmc_bad(mm_charges_line bad_mm_charges_line.nml "bad_line.charges:4: expected x y z q \\(bohr, e\\)")
vmc_bad(field_margin_direct bad_field_margin_direct.nml
  "bad_field_margin_direct.nml:3: key 'field_margin' applies to field_method = 'split' only")
vmc_bad(nan_molden bad_nan_molden.nml "nan_coordinate.molden:4: coordinate of atom 2 is not a finite number")
# Nuclei on top of each other or 1e-12 bohr apart (before: "non-finite local energy", or energies printed as
# asterisks with exit status 0) and exponents beyond any basis set's (1e300 was "expected exponent coefficient",
# 1e-300 "cannot be normalised"): each refused at its line with the limit.
vmc_bad(molden_nuclei_coincident bad_molden_nuclei_coincident.nml
  "nuclei_coincident.molden:4: atom 2 is 0.000E\\+00 bohr from atom 1 \\(line 3\\): nuclei closer than 0.1000 bohr")
vmc_bad(molden_nuclei_close bad_molden_nuclei_close.nml
  "nuclei_close.molden:5: atom 3 is 1.000E-12 bohr from atom 2 \\(line 4\\): nuclei closer than 0.1000 bohr")
# A repeat count on an atom line ("3*H"): the list-directed read failed on the next item and libgfortran leaked
# its copy of the repeated symbol; the line is refused before the read.
vmc_bad(molden_atom_repeat_count bad_molden_atom_repeat_count.nml
  "atom_repeat_count.molden:4: expected \"symbol index Z x y z\" for atom 2 \\(no \"\\*\"\\)")
vmc_bad(molden_exponent_huge bad_molden_exponent_huge.nml
  "exponent_huge.molden:22: exponent 1.000E\\+300 is outside \\[1.000E-06, 1.000E\\+12\\] bohr\\^-2")
vmc_bad(molden_exponent_tiny bad_molden_exponent_tiny.nml
  "exponent_tiny.molden:22: exponent 1.000E-300 is outside \\[1.000E-06, 1.000E\\+12\\] bohr\\^-2")
# Molden files cut inside an MO, between two MOs (water's first three of five: 6 electrons), with an index given
# twice (line 98 repeats line 97's index 5): each ran before as a smaller or wrong water. The electrons must be
# sum Z - charge (key 'charge', default 0).
vmc_bad(molden_cut_inside bad_molden_cut_inside.nml
  "mo_cut_inside.molden:130: file ends inside MO 3 \\(from line 117\\): 10 of 24 coefficients given, index 11 missing")
vmc_bad(molden_cut_between bad_molden_cut_between.nml
  "mo_cut_between.molden:60: the occupied MOs hold 6 electrons .* sum to 10 and key 'charge' = 0 .*so 10 are expected")
vmc_bad(molden_duplicate_index bad_molden_duplicate_index.nml
  "mo_duplicate_index.molden:98: coefficient 5 of MO 2 already given on line 97")
vmc_bad(charge bad_charge.nml
  "water.molden:60: the occupied MOs hold 10 electrons .* key 'charge' = 1 \\(.*bad_charge.nml:3\\), so 9 are expected")
# A key given twice (the namelist read would keep the last silently); an array key's element likewise.
vmc_bad(duplicate_key bad_duplicate_key.nml "bad_duplicate_key.nml:7: key 'seed' already given on line 3")
vmc_bad(duplicate_cube bad_duplicate_cube.nml "bad_duplicate_cube.nml:5: key 'cubes\\(2\\)' already given on line 3")
# Runs too large for the machine (water, 10^7 walkers: ~37 GB; 10^8 blocks of 20 measurements: ~113 GB): refused
# at once with the estimate. Under an 8 GiB address-space limit, so that they are refused on any machine.
vmc_bad(memory_walkers bad_memory_walkers.nml
  "bad_memory_walkers.nml:3: key 'n_walkers' = 10000000 .*: the run needs about [0-9.]+ GB of memory .* GB available"
  LIMIT_AS 8589934592 MAX_SECONDS 2)
vmc_bad(memory_blocks bad_memory_blocks.nml
  "bad_memory_blocks.nml:4: key 'n_blocks' = 100000000 .*2000000000 measurements.*: the run needs about [0-9.]+ GB"
  LIMIT_AS 8589934592 MAX_SECONDS 2)
# Inputs that run, with what they must (or must not) print (expect_run.cmake): exit status 0 and a result file.
# vmc_run(name input [STDERR regex] [STDERR_EMPTY] [STDOUT_NOT regex] [ENV var=value...])
function(vmc_run name input)
  cmake_parse_arguments(A "STDERR_EMPTY" "STDERR;STDOUT_NOT" "ENV" ${ARGN})
  set(defs)
  if(DEFINED A_STDERR)
    list(APPEND defs "-DSTDERR=${A_STDERR}")
  endif()
  if(A_STDERR_EMPTY)
    list(APPEND defs -DSTDERR_EMPTY=1)
  endif()
  if(DEFINED A_STDOUT_NOT)
    list(APPEND defs "-DSTDOUT_NOT=${A_STDOUT_NOT}")
  endif()
  add_test(NAME vmc_run_${name} COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:qmmm_vmc>
    -DINPUT=${VMC_T}/inputs/${input} -DOUT=${VMC_OUT}/run_${name}.json ${defs}
    -P ${VMC_T}/expect_run.cmake WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(vmc_run_${name} PROPERTIES LABELS "vmc;quick")
  if(A_ENV)
    set_tests_properties(vmc_run_${name} PROPERTIES ENVIRONMENT "${A_ENV}")
  endif()
endfunction()
# Every printed number fits its column or widens it (b_ee = 5000 did not fit F8.4: asterisks in the header).
vmc_run(wide_numbers wide_numbers.nml STDOUT_NOT "\\*\\*")
# A move length that leaves the walkers in place (1e-300 bohr: acceptance 1, error bar 4e-14) or rejects
# nearly every move (99.9 bohr: acceptance 0), untuned: a warning naming the key (before: exit 0 without a word);
# a tuned run gets none.
vmc_run(move_length_tiny move_length_tiny.nml STDERR
  "qmmm_vmc: warning: .*move_length_tiny.nml:4: acceptance 1.0000 over the run .* \\(above 0.95[0-9]*\\).*change key 'move_length'.*qmmm_vmc: warning: .*move_length_tiny.nml:4: the error bar is [-+.0-9E]+ hartree, 0 to ten digits of the energy")
vmc_run(move_length_huge move_length_huge.nml STDERR
  "qmmm_vmc: warning: .*move_length_huge.nml:4: acceptance 0.0[0-4][0-9]* over the run .* \\(below 0.05[0-9]*\\).*change key 'move_length'")
vmc_run(no_warning tiny_run.nml STDERR_EMPTY)
# Key n_threads overrides OMP_NUM_THREADS, whatever that says.
vmc_run(threads_key_over_env threads_key_one.nml STDERR_EMPTY ENV OMP_NUM_THREADS=100000)
foreach(arg --help -h)
  add_test(NAME vmc_usage${arg} COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:qmmm_vmc> -DARG=${arg}
    -P ${VMC_T}/expect_usage.cmake)
  set_tests_properties(vmc_usage${arg} PROPERTIES LABELS "vmc;quick")
endforeach()
# The README's key table is the driver's (qmmm_vmc --keys-markdown, from vmc_input_keys.f90): they cannot drift.
add_test(NAME vmc_readme_keys COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:qmmm_vmc>
  -DREADME=${CMAKE_CURRENT_SOURCE_DIR}/README.md -P ${VMC_T}/readme_keys.cmake)
set_tests_properties(vmc_readme_keys PROPERTIES LABELS "vmc;quick")

# The readers' C entry points (libFuzzer harnesses link qmmm_vmc_readers): status, message, no stop.
add_executable(vmc_fuzz_smoke ${VMC_T}/vmc_fuzz_smoke.c)
target_link_libraries(vmc_fuzz_smoke PRIVATE qmmm_vmc_readers)
set_target_properties(vmc_fuzz_smoke PROPERTIES LINKER_LANGUAGE Fortran)
set(I ${VMC_T}/inputs)
add_test(NAME vmc_fuzz_entry COMMAND vmc_fuzz_smoke
  molden ok ${REF}/water/water.molden  molden bad ${I}/nan_coordinate.molden  molden ok ${REF}/hydrogen/hydrogen.molden
  molden bad ${I}/malformed.molden  molden bad ${REF}/water_dimer/water2_density.cube.gz  molden bad ${I}/bad_sweeps.nml
  molden ok ${REF}/glycine_trimer/frag1_embedded.molden  molden bad ${I}/does_not_exist.molden
  namelist ok ${REF}/water/water_vmc.nml  namelist bad ${I}/bad_not_a_number.nml  namelist ok ${I}/small.nml
  namelist bad ${I}/bad_group_name.nml  namelist bad ${I}/bad_truncated.nml  namelist bad ${I}/bad_nan_real.nml
  namelist bad ${REF}/water/water.molden  namelist bad ${REF}/water_dimer/water2_density.cube.gz
  namelist ok ${REF}/glycine_trimer/frag1_vmc.nml  namelist ok ${I}/comments_after_group.nml
  namelist bad ${I}/bad_after_group.nml  namelist bad ${I}/bad_second_group.nml
  molden bad ${I}/mo_cut_inside.molden  molden bad ${I}/mo_duplicate_index.molden
  molden bad ${I}/nuclei_coincident.molden  molden bad ${I}/nuclei_close.molden
  molden bad ${I}/exponent_huge.molden  molden bad ${I}/exponent_tiny.molden
  molden bad ${I}/atom_repeat_count.molden  namelist bad ${I}/bad_logical_repeat.nml
  namelist bad ${I}/bad_duplicate_key.nml  namelist bad ${I}/bad_duplicate_cube.nml
  # Accepted by the readers, refused by the driver: the electron count needs both files, the memory the machine.
  molden ok ${I}/mo_cut_between.molden  namelist ok ${I}/bad_charge.nml  namelist ok ${I}/bad_memory_walkers.nml)
set_tests_properties(vmc_fuzz_entry PROPERTIES LABELS "vmc;quick")

# `ctest -L quick` (every family, no long statistics): the driver's small runs and checks.
qmmm_quick(vmc_reblock_fallback vmc_same_seed vmc_field_measured_batched vmc_field_measured_per_walker
  vmc_glycine_environment vmc_gpu_double vmc_gpu_single vmc_gpu_mixed vmc_gpu_measured vmc_gpu_forces
  vmc_gpu_forces_cubes vmc_gpu_pol vmc_gpu_pol_forces)
# The long statistical runs first: on 2 cores the rest of the suite fills the other core around them (ctest takes
# COST from its last run when there is one).
set_tests_properties(vmc_water_hf vmc_water_dimer_embedded PROPERTIES COST 1000)
set_tests_properties(vmc_glycine_hf vmc_water_dimer_environment vmc_water_mm_forces vmc_water_mm_forces_unpolarised
  vmc_water_pol
  vmc_jastrow_lowers vmc_hydrogen PROPERTIES COST 500)
