! qmmm_accel.f90 -- the module a Fortran code uses: `use qmmm_accel` brings every family of the library (core,
! field and point charges, cube reader, DCS, RDF, MPI helpers, polarizable sites), each with its generated
! constants, bind(C) types and raw interfaces c_qmmm_*.
module qmmm_accel
  use qmmm_accel_core
  use qmmm_accel_field
  use qmmm_accel_cube
  use qmmm_accel_dcs
  use qmmm_accel_rdf
  use qmmm_accel_mpi
  use qmmm_accel_pol
  implicit none
  public
end module qmmm_accel
