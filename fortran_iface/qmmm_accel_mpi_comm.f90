! qmmm_accel_mpi_comm.f90 -- the MPI form of the device choice for Fortran codes: link the library
! qmmm_accel_mpi (CMake target qmmm_accel::qmmm_accel_mpi) and `use qmmm_accel_mpi_comm`.
! The communicator is the integer handle of `use mpi` (from mpi_f08 pass comm%MPI_VAL), so this module
! needs no MPI module itself and works with any MPI whose C library libqmmm_accel_mpi was built against.
module qmmm_accel_mpi_comm
  use, intrinsic :: iso_c_binding
  use qmmm_accel_core
  implicit none
  private
  public :: qmmm_mpi_select_device

  interface
    function c_qmmm_mpi_select_device(comm, spec, device, local_rank, local_size) &
         bind(c, name='qmmm_mpi_select_device') result(s)
      import :: c_int, c_ptr
      integer(c_int), value :: comm
      type(c_ptr), value :: spec
      integer(c_int) :: device, local_rank, local_size
      integer(c_int) :: s
    end function
  end interface

contains

  ! Collective over comm. device: this rank's CUDA device (-1: none); local_rank/local_size: its place
  ! among the ranks of its node. spec as in qmmm_pick_device (absent: QMMM_DEVICE from the environment).
  integer function qmmm_mpi_select_device(comm, device, local_rank, local_size, spec) result(s)
    integer, intent(in) :: comm
    integer, intent(out) :: device
    integer, intent(out), optional :: local_rank, local_size
    character(len=*), intent(in), optional :: spec
    character(kind=c_char, len=:), allocatable, target :: cs
    integer(c_int) :: d, lr, ls
    lr = 0; ls = 1
    if (present(spec)) then
      cs = trim(spec) // c_null_char
      s = c_qmmm_mpi_select_device(comm, c_loc(cs), d, lr, ls)
    else
      s = c_qmmm_mpi_select_device(comm, c_null_ptr, d, lr, ls)
    end if
    device = d
    if (present(local_rank)) local_rank = lr
    if (present(local_size)) local_size = ls
  end function

end module qmmm_accel_mpi_comm
