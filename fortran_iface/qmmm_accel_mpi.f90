! qmmm_accel_mpi.f90 -- Fortran interface to the mpi family of qmmm-accel (re-exported by qmmm_accel):
! which GPU a rank should use when several ranks share a node (rule in qmmm_accel_mpi.h).
! qmmm_pick_device is the rule as a pure function of the node layout (this library, no MPI needed).
! The MPI form, qmmm_mpi_select_device(comm, ...), lives in module qmmm_accel_mpi_comm and library
! qmmm_accel_mpi (built where MPI is found), so that codes without MPI never depend on it.
module qmmm_accel_mpi
  use, intrinsic :: iso_c_binding, only: c_char, c_null_char, c_null_ptr, c_loc, c_int
  use qmmm_accel_core
  use qmmm_accel_mpi_c
  implicit none
  ! Public by default: the generated interfaces pass through.
  public
  private :: c_char, c_null_char, c_null_ptr, c_loc, c_int

contains

  ! device: the CUDA device for this rank, -1 for none. spec absent: QMMM_DEVICE from the environment;
  ! spec = '': round robin (local_rank mod n_devices); '2' or '0,2': that device / that list dealt round robin.
  integer function qmmm_pick_device(local_rank, local_size, n_devices, device, spec) result(s)
    integer, intent(in) :: local_rank, local_size, n_devices
    integer, intent(out) :: device
    character(len=*), intent(in), optional :: spec
    character(kind=c_char, len=:), allocatable, target :: cs
    integer(c_int), target :: d
    if (present(spec)) then
      cs = trim(spec) // c_null_char
      s = c_qmmm_pick_device(local_rank, local_size, n_devices, c_loc(cs), c_loc(d))
    else
      s = c_qmmm_pick_device(local_rank, local_size, n_devices, c_null_ptr, c_loc(d))
    end if
    device = d
  end function

end module qmmm_accel_mpi
