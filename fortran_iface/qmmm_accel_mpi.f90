! qmmm_accel_mpi.f90 -- Fortran interface to the mpi family of qmmm-accel (re-exported by qmmm_accel).
module qmmm_accel_mpi
  use, intrinsic :: iso_c_binding
  use qmmm_accel_core
  implicit none
  private
end module qmmm_accel_mpi
