# The cube family: Gaussian cube reader, environments, fields from files (needs zlib for .cube.gz).
find_package(ZLIB REQUIRED)
target_sources(qmmm_accel PRIVATE src_cxx/cube_reader.cpp src_cxx/cube_api.cpp)
target_link_libraries(qmmm_accel PRIVATE ZLIB::ZLIB)

if(QMMM_BUILD_TESTS)
  find_package(nlohmann_json 3 REQUIRED)
  qmmm_add_gtest(test_cube_reader SOURCES tests/test_cube_reader.cpp LABELS cpu LIBS ZLIB::ZLIB)
  qmmm_add_gtest(test_cube_psi4 SOURCES tests/test_cube_psi4.cpp LABELS cpu LIBS nlohmann_json::nlohmann_json)
  qmmm_add_gtest(test_cube_glycine SOURCES tests/test_cube_glycine.cpp LABELS cpu LIBS nlohmann_json::nlohmann_json)
  add_executable(test_cube_fortran tests/test_cube_fortran.f90)
  target_link_libraries(test_cube_fortran PRIVATE qmmm_accel_f90)
  add_test(NAME cube_fortran COMMAND test_cube_fortran ${PROJECT_SOURCE_DIR}/data/water_dimer/water2_density.cube.gz)
  set_tests_properties(cube_fortran PROPERTIES LABELS "cpu;fortran" PASS_REGULAR_EXPRESSION "cube_fortran: all passed")
  find_program(QMMM_VALGRIND valgrind)
  if(QMMM_VALGRIND)
    add_test(NAME valgrind_cube_reader
      COMMAND ${QMMM_VALGRIND} --error-exitcode=3 --leak-check=full --errors-for-leak-kinds=definite,indirect
              $<TARGET_FILE:test_cube_reader>)
    set_tests_properties(valgrind_cube_reader PROPERTIES LABELS "cpu;memcheck" ENVIRONMENT "OMP_NUM_THREADS=2")
  endif()
endif()
