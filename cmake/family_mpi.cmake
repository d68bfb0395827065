# MPI family: the GPU choice for ranks sharing a node. The rule (qmmm_pick_device) is in the library
# itself and needs no MPI; the communicator form (qmmm_mpi_select_device) is a separate small library,
# qmmm_accel_mpi, built only where MPI (MPICH, found by the top-level CMakeLists) is available.
target_sources(qmmm_accel PRIVATE src_cxx/mpi_device.cpp)

if(QMMM_HAVE_MPI)
  add_library(qmmm_accel_mpi SHARED src_cxx/mpi_select.cpp fortran_iface/qmmm_accel_mpi_comm.f90)
  set_target_properties(qmmm_accel_mpi PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
    Fortran_MODULE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fortran_modules EXPORT_NAME qmmm_accel_mpi)
  target_include_directories(qmmm_accel_mpi PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src_cxx)
  # PUBLIC qmmm_accel_f90: its module qmmm_accel_core is used by qmmm_accel_mpi_comm.
  target_link_libraries(qmmm_accel_mpi PUBLIC qmmm_accel_f90 PRIVATE MPI::MPI_C)
  add_library(qmmm_accel::qmmm_accel_mpi ALIAS qmmm_accel_mpi)
  install(TARGETS qmmm_accel_mpi EXPORT qmmm_accelTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES fortran_iface/qmmm_accel_mpi_comm.f90 DESTINATION ${CMAKE_INSTALL_DATADIR}/qmmm_accel/fortran)
endif()

if(QMMM_BUILD_TESTS)
  # The rule on made-up node layouts (no MPI, no GPU needed).
  qmmm_add_gtest(test_mpi_device SOURCES tests/test_mpi_device.cpp LABELS "cpu;mpi")
endif()
