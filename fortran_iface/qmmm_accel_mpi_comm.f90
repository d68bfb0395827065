! qmmm_accel_mpi_comm.f90 -- the MPI form of the device choice for Fortran codes: link the library
! qmmm_accel_mpi (CMake target qmmm_accel::qmmm_accel_mpi) and `use qmmm_accel_mpi_comm`.
! The communicator is the integer handle of `use mpi` (from mpi_f08 pass comm%MPI_VAL), so this module
! needs no MPI module itself and works with any MPI whose C library libqmmm_accel_mpi was built against.
module qmmm_accel_mpi_comm
  use, intrinsic :: iso_c_binding, only: c_char, c_null_char, c_null_ptr, c_loc, c_int
  use qmmm_accel_mpi_c, only: c_qmmm_mpi_select_device   ! generated from qmmm_accel_mpi.h
  implicit none
  private
  public :: qmmm_mpi_select_device

contains

  ! Collective over comm. device: this rank's CUDA device (-1: none); local_rank/local_size: its place
  ! among the ranks of its node. spec as in qmmm_pick_device (absent: QMMM_DEVICE from the environment).
  integer function qmmm_mpi_select_device(comm, device, local_rank, local_size, spec) result(s)
    integer, intent(in) :: comm
    integer, intent(out) :: device
    integer, intent(out), optional :: local_rank, local_size
    character(len=*), intent(in), optional :: spec
    character(kind=c_char, len=:), allocatable, target :: cs
    integer(c_int), target :: d, lr, ls
    lr = 0; ls = 1
    if (present(spec)) then
      cs = trim(spec) // c_null_char
      s = c_qmmm_mpi_select_device(comm, c_loc(cs), c_loc(d), c_loc(lr), c_loc(ls))
    else
      s = c_qmmm_mpi_select_device(comm, c_null_ptr, c_loc(d), c_loc(lr), c_loc(ls))
    end if
    device = d
    if (present(local_rank)) local_rank = lr
    if (present(local_size)) local_size = ls
  end function

end module qmmm_accel_mpi_comm
