# ctest tests of qmmm_vmc (issue 5); data from data/ (psi4 references), checks in vmc_check.cmake.
add_executable(vmc_fd_check ${CMAKE_CURRENT_LIST_DIR}/vmc_fd_check.f90
  ${CMAKE_CURRENT_SOURCE_DIR}/vmc_util.f90 ${CMAKE_CURRENT_SOURCE_DIR}/vmc_rng.f90
  ${CMAKE_CURRENT_SOURCE_DIR}/vmc_molden.f90 ${CMAKE_CURRENT_SOURCE_DIR}/vmc_orbitals.f90
  ${CMAKE_CURRENT_SOURCE_DIR}/vmc_wavefunction.f90)
set_target_properties(vmc_fd_check PROPERTIES Fortran_MODULE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/modules_fd)
target_compile_options(vmc_fd_check PRIVATE $<$<Fortran_COMPILER_ID:GNU>:-fwrapv -std=gnu>)
foreach(sys water/water.molden glycine_trimer/frag1_embedded.molden hydrogen/hydrogen.molden)
  get_filename_component(n ${sys} NAME_WE)
  add_test(NAME vmc_fd_${n} COMMAND vmc_fd_check ${PROJECT_SOURCE_DIR}/data/${sys})
  set_tests_properties(vmc_fd_${n} PROPERTIES LABELS "vmc")
endforeach()
