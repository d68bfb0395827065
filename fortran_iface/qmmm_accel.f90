! qmmm_accel.f90 -- the module a Fortran code uses: `use qmmm_accel` brings every family of the
! library (core and field, cube reader, DCS, RDF, MPI helpers).
module qmmm_accel
  use qmmm_accel_core
  use qmmm_accel_charges
  use qmmm_accel_cube
  use qmmm_accel_dcs
  use qmmm_accel_rdf
  use qmmm_accel_mpi
  implicit none
  public
end module qmmm_accel
