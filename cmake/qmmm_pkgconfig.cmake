# pkg-config file, relocatable: paths are relative to the .pc file's own place (${pcfiledir}), so the file is
# right for whatever `cmake --install --prefix` is given, not only for the configure-time CMAKE_INSTALL_PREFIX.
# The .pc lands in <libdir>/pkgconfig; the prefix is as many ".." above it as that path has parts
# (lib/pkgconfig: ../..; lib/x86_64-linux-gnu/pkgconfig: ../../..). Absolute install dirs are kept as given.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(QMMM_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH QMMM_PC_UP "/qmmm_root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/qmmm_root")
  string(REGEX REPLACE "/$" "" QMMM_PC_UP "${QMMM_PC_UP}")
  set(QMMM_PC_PREFIX "\${pcfiledir}/${QMMM_PC_UP}")
endif()
foreach(d LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
    set(QMMM_PC_${d} "${CMAKE_INSTALL_${d}}")
  else()
    set(QMMM_PC_${d} "\${prefix}/${CMAKE_INSTALL_${d}}")
  endif()
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/qmmm_accel.pc.in ${CMAKE_CURRENT_BINARY_DIR}/qmmm_accel.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/qmmm_accel.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
configure_file(${CMAKE_CURRENT_LIST_DIR}/qmmm_accel_f90.pc.in ${CMAKE_CURRENT_BINARY_DIR}/qmmm_accel_f90.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/qmmm_accel_f90.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
