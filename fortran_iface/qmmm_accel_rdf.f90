! qmmm_accel_rdf.f90 -- Fortran interface to the rdf family of qmmm-accel (re-exported by qmmm_accel).
module qmmm_accel_rdf
  use, intrinsic :: iso_c_binding
  use qmmm_accel_core
  implicit none
  private
end module qmmm_accel_rdf
